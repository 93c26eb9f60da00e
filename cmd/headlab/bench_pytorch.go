package main

import (
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"headlab/bench"
	"headlab/train"
)

// benchVsOptions are bench vs-pytorch's flags.
type benchVsOptions struct {
	benchCommon
	python                    string
	rounds, workers, rssSteps int
	batches                   []int
	window                    time.Duration
	callgrind                 bool
	// shape holds the model flags; model is the checked model of them.
	shape bench.ShapeFlags
	model train.Config
}

func newBenchVsCmd(e *env, runF func(*benchVsOptions) error) *cobra.Command {
	o := &benchVsOptions{}
	cmd := &cobra.Command{
		Use:   "vs-pytorch",
		Short: "Compare CPU training steps and sweep throughput with PyTorch eager",
		Long:  longHelp("bench-vs-pytorch"),
		Args:  cobra.NoArgs,
		RunE: runE(e, o, runF, func(e *env, o *benchVsOptions) error {
			return o.run(e, func(e *env) error { return benchVsPyTorch(e, o) })
		}),
	}
	o.addFlags(cmd, "50")
	fs := cmd.Flags()
	fs.StringVar(&o.python, "python", defaultPython(), "Python interpreter with torch")
	fs.IntVar(&o.rounds, "rounds", 5, "alternating rounds per batch size (medians kept)")
	fs.BoolVar(&o.callgrind, "callgrind", true, "also count instructions per step under valgrind's callgrind (when installed)")
	fs.DurationVar(&o.window, "window", 5*time.Second, "how long each side of the sweep trains")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "concurrent trainers (and PyTorch processes) in the sweep")
	fs.IntVar(&o.rssSteps, "rss-steps", 1000, "steps of the training run whose peak resident memory is reported")
	fs.IntSliceVar(&o.batches, "batches", []int{32, 64}, "batch sizes timed (the sweep runs at the first)")
	o.shape.AddFlags(fs)
	return cmd
}

func (o *benchVsOptions) check(cmd *cobra.Command, _ []string) error {
	if o.steps < 0 || o.rounds <= 0 || o.window <= 0 || o.workers <= 0 || o.rssSteps < 0 {
		return usagef("--rounds, --window and --workers must be positive, --steps and --rss-steps not negative")
	}
	if len(o.batches) == 0 {
		return usagef("--batches needs at least one batch size")
	}
	for _, b := range o.batches {
		if b < 1 || b > 4096 {
			return usagef("--batches must be in 1..4096, got %d", b)
		}
	}
	if err := o.benchCommon.check(); err != nil {
		return err
	}
	var err error
	if o.model, err = o.shape.Config(o.loss, cmd.Flags().Changed); err != nil {
		return usageError{err}
	}
	return nil
}

// defaultPython is --python's default (bench.DefaultPython).
var defaultPython = bench.DefaultPython

// benchVsPyTorch is `headlab bench vs-pytorch`, on the CPU device.
func benchVsPyTorch(e *env, o *benchVsOptions) error {
	dev, release, err := (&backendFlag{name: "cpu"}).open(e.stderr)
	if err != nil {
		return err
	}
	defer release()
	rep, err := bench.RunVsPyTorch(bench.VsOptions{Python: o.python, Steps: o.steps, Rounds: o.rounds, Workers: o.workers, RSSSteps: o.rssSteps,
		Batches: o.batches, Window: o.window, Callgrind: o.callgrind, Loss: o.loss, Model: o.model, Dev: dev, Log: e.stderr})
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, rep)
	}
	return rep.WriteVsPyTorch(e.stdout, o.python, o.rounds, o.rssSteps)
}
