package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// InstructionCount is the number of instructions one training step of the
// default model executes, counted by valgrind's callgrind: a figure that,
// unlike time, does not move with the machine's load.
type InstructionCount struct {
	Batch   int     `json:"batch"`
	SIMD    string  `json:"simd"`
	PerStep float64 `json:"instructions_per_step"`
}

// ErrNoValgrind is returned when valgrind cannot be run.
var ErrNoValgrind = errors.New("valgrind is not installed")

// CountInstructions runs exe (headlab's own binary) as `bench --parts
// steps --steps N --loss loss` at batch under callgrind for N = short and N = long
// and returns the difference per step: start-up, graph building and the
// fixed warm-up cancel out, and what is left is the step with its batch
// sampling. The runs use GOMAXPROCS=1 (valgrind runs one thread at a time
// anyway; one P keeps the scheduler from spinning a varying amount), which
// makes counts repeat within a few percent. Valgrind's virtual CPU has no
// AVX-512, so a forced HEADLAB_SIMD=avx512 is dropped and the default
// (avx2 where the CPU has it) is counted; SIMD names the path that ran.
// Go's asynchronous preemption signals crash callgrind, so they are
// turned off. Valgrind 3.19 advertises RDTSCP even where the host's
// hypervisor hides it (then it cannot decode it): Go's runtime, which
// reads that instruction in contended lock spins, would die of SIGILL in
// some runs, so it is told to use RDTSC instead (cpu.rdtscp=off).
func CountInstructions(exe, loss string, batch, short, long int) (InstructionCount, error) {
	if short < 0 || long <= short {
		return InstructionCount{}, fmt.Errorf("callgrind: step counts %d and %d", short, long)
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		return InstructionCount{}, ErrNoValgrind
	}
	dir, err := os.MkdirTemp("", "headlab-callgrind")
	if err != nil {
		return InstructionCount{}, err
	}
	defer os.RemoveAll(dir)
	var env []string
	for _, kv := range os.Environ() {
		if kv != "HEADLAB_SIMD=avx512" && !strings.HasPrefix(kv, "GODEBUG=") && !strings.HasPrefix(kv, "GOMAXPROCS=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off", "GOMAXPROCS=1")
	count := func(steps int) (float64, string, error) {
		out := filepath.Join(dir, fmt.Sprintf("callgrind.%d", steps))
		cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+out, exe,
			"bench", "--parts", "steps", "--backends", "cpu", "--step-batches", strconv.Itoa(batch),
			"--steps", strconv.Itoa(steps), "--loss", loss, "--json")
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return 0, "", fmt.Errorf("callgrind: %v: %s", err, lastLine(stderr.String()))
		}
		var rep struct {
			SIMD string `json:"simd"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.SIMD == "" {
			return 0, "", fmt.Errorf("callgrind: bench --json printed no report (%v)", err)
		}
		n, err := callgrindTotal(out)
		return n, rep.SIMD, err
	}
	lo, path, err := count(short)
	if err != nil {
		return InstructionCount{}, err
	}
	hi, _, err := count(long)
	if err != nil {
		return InstructionCount{}, err
	}
	return InstructionCount{Batch: batch, SIMD: path, PerStep: (hi - lo) / float64(long-short)}, nil
}

// callgrindTotal reads the "totals:" line (instructions) of a callgrind
// output file.
func callgrindTotal(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "totals:"); ok {
			return strconv.ParseFloat(strings.Fields(v)[0], 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("callgrind: no totals line in %s", path)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
