package main

import (
	"io"

	"github.com/spf13/cobra"

	"headlab/analysis"
	"headlab/train"
	"headlab/viz"
)

// runFlag is --run DIR: the checkpoint a command reads.
type runFlag struct{ dir string }

func (f *runFlag) register(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&f.dir, "run", "", usage)
}

// required refuses a command without --run.
func (f *runFlag) required() error {
	if f.dir == "" {
		return usagef("--run DIR is required")
	}
	return nil
}

// load reads the checkpoint: one that cannot be read is bad input.
func (f *runFlag) load() (*train.Model, error) {
	m, _, err := train.Load(f.dir)
	if err != nil {
		return nil, usageError{err}
	}
	return m, nil
}

// checkExamples refuses --examples outside least..train.HeldOutExamples.
func checkExamples(n, least int) error {
	if n < least || n > train.HeldOutExamples {
		return usagef("--examples %d: want %d to %d", n, least, train.HeldOutExamples)
	}
	return nil
}

// loadOff loads the checkpoint and reads --ablate, the heads to switch
// off, against its shape.
func (f *runFlag) loadOff(ablate string) (*train.Model, [][]bool, error) {
	m, err := f.load()
	if err != nil {
		return nil, nil, err
	}
	off, err := analysis.ParseHeads(ablate, m.Shape.Layers, m.Shape.Heads)
	if err != nil {
		return nil, nil, usagef("--ablate: %v", err)
	}
	return m, off, nil
}

// openEvaluator opens the backend and an evaluator of m on it; done
// releases both.
func openEvaluator(e *env, m *train.Model, bf *backendFlag) (ev *train.Evaluator, done func(), err error) {
	be, closeBackend, err := bf.open(e.stderr)
	if err != nil {
		return nil, nil, err
	}
	if ev, err = train.NewEvaluator(m, be); err != nil {
		closeBackend()
		return nil, nil, err
	}
	return ev, func() { ev.Close(); closeBackend() }, nil
}

// evalFlags are the flags of a command that measures a checkpoint's
// model on held-out examples and reports what it found, drawn or not
// (attribute, patch): --run, --examples, --png, --json and --backend.
type evalFlags struct {
	run      runFlag
	out      reportFlags
	examples int
	backend  backendFlag
}

// register adds the flags: examples is --examples' default, what its
// usage, and figure what --png draws.
func (f *evalFlags) register(cmd *cobra.Command, examples int, what, figure string) {
	f.run.register(cmd, "checkpoint directory written by train --save")
	cmd.Flags().IntVar(&f.examples, "examples", examples, what)
	f.out.register(cmd, figure, "print one JSON object on stdout")
	f.backend.register(cmd)
}

// check refuses a missing --run, a figure that cannot be written, and
// --examples outside least..train.HeldOutExamples.
func (f *evalFlags) check(least int) error {
	if err := f.run.required(); err != nil {
		return err
	}
	if err := checkFigure("png", f.out.png); err != nil {
		return err
	}
	return checkExamples(f.examples, least)
}

// measurement is what a command of evalFlags measures, and how it
// reports it; R is its report of one model.
type measurement[R any] struct {
	// fits, when not nil, refuses options the model cannot take, before
	// the backend opens.
	fits func(*train.Model) error
	// measure measures the model with its evaluator: one report a model,
	// the checkpoint's first.
	measure func(*train.Evaluator) ([]R, error)
	// figure draws a report, titled after the run (runTitle).
	figure func(run string, r R) (*viz.Figure, error)
	text   func(io.Writer, R)
}

// evaluate is the run of a command of evalFlags: load the checkpoint,
// refuse what it cannot take, open an evaluator of its model on the
// backend, measure, and report (reportFlags.write).
func evaluate[R any](e *env, f *evalFlags, how measurement[R]) error {
	m, err := f.run.load()
	if err != nil {
		return err
	}
	if how.fits != nil {
		if err := how.fits(m); err != nil {
			return err
		}
	}
	ev, done, err := openEvaluator(e, m, &f.backend)
	if err != nil {
		return err
	}
	defer done()
	reps, err := how.measure(ev)
	if err != nil {
		return err
	}
	r := reps[0]
	return f.out.write(e, func() (*viz.Figure, error) { return how.figure(runTitle(m.Train), r) }, r, func(w io.Writer) { how.text(w, r) })
}
