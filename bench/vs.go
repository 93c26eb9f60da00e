package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"headlab/graph"
	"headlab/internal/simd"
	"headlab/kernels"
	"headlab/train"
)

// DefaultPython is Debian's interpreter (where python3-torch installs)
// when present: a python3 earlier on PATH may be another one without torch.
func DefaultPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// VsOptions are a `headlab bench vs-pytorch`.
type VsOptions struct {
	Python string
	// Steps are the steps timed per measurement (0: 50).
	Steps, Rounds, Workers, RSSSteps int
	Batches                          []int
	Window                           time.Duration
	Callgrind                        bool
	Loss                             string
	// Model is the model timed (the model flags, checked).
	Model train.Config
	// Dev is the CPU device headlab trains on.
	Dev kernels.Device
	// Log receives the progress lines.
	Log io.Writer
}

// RunVsPyTorch is `headlab bench vs-pytorch`: one default training run
// (its peak memory), the sgemm peak, headlab's steps against PyTorch's
// (headlab's alone without PyTorch), the sweep throughput of both, and
// callgrind's instruction counts for the default model.
func RunVsPyTorch(o VsOptions) (*Report, error) {
	steps := o.Steps
	if steps == 0 {
		steps = 50
	}
	shape := graph.Config{Vocab: o.Model.Vocab, SeqLen: o.Model.SeqLen, Arch: o.Model.Arch}
	defaults := BenchConfig(32, o.Loss)
	rep := &Report{SIMD: simd.Path(), Loss: o.Loss, PyTorch: &VsPyTorch{Shape: &shape}}
	vs := rep.PyTorch
	fmt.Fprintf(o.Log, "one default training run of %d steps (memory)...\n", o.RSSSteps)
	c := train.Defaults("induction")
	c.Steps, c.Loss = o.RSSSteps, o.Loss
	if _, _, err := train.Run(c, o.Dev, 0, nil); err != nil {
		return nil, err
	}
	_, vs.TrainRSSMB = ResidentMB()
	fmt.Fprintln(o.Log, "sgemm peak...")
	peak := SgemmPeak(512, time.Second)
	rep.Peak = &peak
	pt, err := NewPyTorch(o.Python)
	switch {
	case errors.Is(err, ErrNoPyTorch):
		vs.Error = err.Error()
		fmt.Fprintf(o.Log, "headlab: %v; timing headlab alone\n", err)
	case err != nil:
		return nil, err
	default:
		defer pt.Close()
	}
	if pt == nil {
		err = o.stepsAlone(rep, steps)
	} else {
		err = o.compare(pt, vs, peak, steps)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case o.Callgrind && (shape.Arch != defaults.Arch || shape.SeqLen != defaults.SeqLen || shape.Vocab != defaults.Vocab):
		vs.InstructionsError = "instructions are counted for the default model only"
		fmt.Fprintln(o.Log, "headlab: no instruction counts: the model flags ask for another shape")
	case o.Callgrind:
		o.countInstructions(vs)
	}
	return rep, nil
}

// stepsAlone times headlab's steps at each batch, with no PyTorch.
func (o VsOptions) stepsAlone(rep *Report, steps int) error {
	for _, batch := range o.Batches {
		m := o.Model
		m.Batch = batch
		r, err := TrainSteps(o.Dev, m, Timing{Steps: steps})
		if err != nil {
			return err
		}
		rep.TrainSteps = append(rep.TrainSteps, r)
	}
	return nil
}

// compare times headlab's steps and sweep against PyTorch's.
func (o VsOptions) compare(pt *PyTorch, vs *VsPyTorch, peak PeakResult, steps int) error {
	progress := func(batch, round int) {
		fmt.Fprintf(o.Log, "timing training steps at batch %d: round %d of %d (headlab, PyTorch default BLAS, PyTorch Haswell BLAS)\n", batch, round+1, o.Rounds)
	}
	var err error
	if vs.Steps, err = CompareSteps(pt, o.Model, o.Batches, steps, o.Rounds, progress); err != nil {
		return err
	}
	SetPeak(vs.Steps, peak)
	fmt.Fprintf(o.Log, "sweep throughput, %d workers, %v each side...\n", o.Workers, o.Window)
	m := o.Model
	m.Batch = o.Batches[0]
	sw, err := CompareSweep(pt, vs.Steps[0].FasterBLAS, m, o.Workers, o.Window)
	if err != nil {
		return err
	}
	vs.Sweep = &sw
	return nil
}

// countInstructions fills vs.Instructions from callgrind runs of this
// binary, or says in vs.InstructionsError (and on the log) why it cannot.
func (o VsOptions) countInstructions(vs *VsPyTorch) {
	exe, err := os.Executable()
	for _, batch := range []int{32, 64} {
		if err != nil {
			break
		}
		fmt.Fprintf(o.Log, "instructions per step at batch %d (callgrind)...\n", batch)
		var n InstructionCount
		if n, err = CountInstructions(exe, o.Loss, batch, 5, 25); err == nil {
			vs.Instructions = append(vs.Instructions, n)
		}
	}
	if err != nil {
		vs.Instructions, vs.InstructionsError = nil, err.Error()
		fmt.Fprintf(o.Log, "headlab: no instruction counts: %v\n", err)
	}
}
