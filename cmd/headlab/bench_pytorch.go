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
	shape benchShape
	model train.Config
}

// benchShape is the model flags of bench vs-pytorch: the induction
// model's size, train's flags of the same names.
type benchShape struct {
	layers, heads, dModel, dFF, seqLen, vocab int
	noMLP                                     bool
}

func (s *benchShape) register(cmd *cobra.Command) {
	d := train.Defaults("induction")
	fs := cmd.Flags()
	fs.IntVar(&s.layers, "layers", d.Layers, "transformer blocks of the model timed")
	fs.IntVar(&s.heads, "heads", d.Heads, "attention heads per block (must divide --d-model)")
	fs.IntVar(&s.dModel, "d-model", d.DModel, "residual stream width")
	fs.IntVar(&s.dFF, "d-ff", d.DFF, "feed-forward hidden width")
	fs.IntVar(&s.seqLen, "seq-len", d.SeqLen, "sequence length (even; induction)")
	fs.IntVar(&s.vocab, "vocab", d.Vocab, "vocabulary size (induction needs at least --seq-len/2)")
	fs.BoolVar(&s.noMLP, "no-mlp", false, "attention-only: no MLP (and no LayerNorm before it) in any block")
}

// config is the induction model of the flags at batch 32 on loss,
// checked as train checks its own (train.Config.Validate).
func (s *benchShape) config(cmd *cobra.Command, loss string) (train.Config, error) {
	c := bench.BenchConfig(32, loss)
	c.Layers, c.Heads, c.DModel, c.DFF, c.SeqLen, c.Vocab, c.NoMLP = s.layers, s.heads, s.dModel, s.dFF, s.seqLen, s.vocab, s.noMLP
	if c.NoMLP && !cmd.Flags().Changed("d-ff") {
		c.DFF = 0 // an attention-only model has no MLP to size
	}
	if err := c.Validate(); err != nil {
		return c, usageError{err}
	}
	return c.Sized(), nil
}

func newBenchVsCmd(e *env, runF func(*benchVsOptions) error) *cobra.Command {
	o := &benchVsOptions{}
	cmd := &cobra.Command{
		Use:   "vs-pytorch",
		Short: "Compare CPU training steps and sweep throughput with PyTorch eager",
		Long: `Measures headlab's CPU training against the same model in PyTorch
eager on one thread (bench/pytorch/train_step.py, run with --python,
the same --loss, so both sides compute the same rows, and the same model
flags: --layers, --heads, --d-model, --d-ff, --seq-len, --vocab, --no-mlp,
the default model unless given): one default
training run first (its peak resident memory), the single-core sgemm
peak, ms per step at each of --batches (default 32 and 64; medians of
--rounds rounds, each
timing headlab, then PyTorch with OpenBLAS's own kernel choice, then with
OPENBLAS_CORETYPE=Haswell; --steps steps each), the ratio against the
faster PyTorch (named), achieved GFLOP/s and its share of the sgemm
peak, and sweep throughput with --workers trainers (goroutines) against
as many PyTorch processes (with the faster BLAS), each side training for
--window. Then, where valgrind is installed, instructions per step under
callgrind at both batches, for the default model only: a figure that
does not move with the machine's load (valgrind has no AVX-512, so that
count is of the avx2 path). Without PyTorch it says so in one line and
reports headlab alone.`,
		Args: cobra.NoArgs,
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
	o.shape.register(cmd)
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
	o.model, err = o.shape.config(cmd, o.loss)
	return err
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
