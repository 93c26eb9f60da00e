// Command goamd64 trains a short induction run on the CPU device and
// prints the bits of every step's loss and a SHA-256 of every weight's
// bits, for train's TestSameBitsOnEveryGOAMD64 to compare across builds.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"

	"headlab/backend/cpu"
	"headlab/train"
)

func main() {
	steps := 50
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n < 0 {
			fmt.Fprintln(os.Stderr, "usage: goamd64 [steps]")
			os.Exit(2)
		}
		steps = n
	}
	if err := run(steps); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(steps int) error {
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	c := train.Defaults("induction")
	c.Steps = steps
	tr, err := train.NewTrainer(c, cpu.New())
	if err != nil {
		return err
	}
	defer tr.Close()
	for tr.Step < c.Steps {
		l, err := tr.TrainStep()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "step %d loss %016x %v\n", tr.Step, math.Float64bits(l), l)
	}
	if err := tr.Sync(); err != nil {
		return err
	}
	all := sha256.New()
	for _, p := range tr.Model.Weights.Params {
		b := make([]byte, 4*len(p.Data))
		for i, v := range p.Data {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		all.Write(b)
		fmt.Fprintf(w, "weight %s %v %x\n", p.Name, p.Shape, sha256.Sum256(b))
	}
	fmt.Fprintf(w, "weights %x\n", all.Sum(nil))
	return nil
}
