package bench

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"

	"headlab/tasks"
	"headlab/train"
)

// defaultGroups is the curve `headlab bench` measures by default.
const defaultGroups = "1,4,16,64,256,1024"

// ShapeFlags are the model flags of bench and bench vs-pytorch: the
// induction model's size, train's flags of the same names.
type ShapeFlags struct {
	layers, heads, dModel, dFF, seqLen, vocab int
	noMLP                                     bool
}

// AddFlags declares the model flags on fs, the default model's sizes
// their defaults.
func (s *ShapeFlags) AddFlags(fs *pflag.FlagSet) {
	d := train.Defaults("induction")
	fs.IntVar(&s.layers, "layers", d.Layers, "transformer blocks of the model timed")
	fs.IntVar(&s.heads, "heads", d.Heads, "attention heads per block (must divide --d-model)")
	fs.IntVar(&s.dModel, "d-model", d.DModel, "residual stream width")
	fs.IntVar(&s.dFF, "d-ff", d.DFF, "feed-forward hidden width")
	fs.IntVar(&s.seqLen, "seq-len", d.SeqLen, "sequence length (even; induction)")
	fs.IntVar(&s.vocab, "vocab", d.Vocab, "vocabulary size (induction needs at least --seq-len/2)")
	fs.BoolVar(&s.noMLP, "no-mlp", false, "attention-only: no MLP (and no LayerNorm before it) in any block")
}

// Config is the induction model of the flags at batch 32 on loss,
// checked as train checks its own (train.Config.Validate); changed says
// which flags were given (an attention-only model without --d-ff has
// none).
func (s *ShapeFlags) Config(loss string, changed func(name string) bool) (train.Config, error) {
	c := BenchConfig(32, loss)
	c.Layers, c.Heads, c.DModel, c.DFF, c.SeqLen, c.Vocab, c.NoMLP = s.layers, s.heads, s.dModel, s.dFF, s.seqLen, s.vocab, s.noMLP
	if c.NoMLP && !changed("d-ff") {
		c.DFF = 0 // an attention-only model has no MLP to size
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c.Sized(), nil
}

// Flags are headlab bench's own flags (AddFlags), resolved into Options
// by Options.
type Flags struct {
	Shape                                ShapeFlags
	backends, parts, groups, stepBatches string
	batch, dispatchGroup                 int
	budget, stepTime, maxStep            time.Duration
}

// AddFlags declares the flags on fs, the model flags included.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.backends, "backends", "all", "which backends: all (cpu, and gl when a context can be made), or a list of cpu and gl (gl then must work)")
	fs.StringVar(&f.parts, "parts", "all", "what to measure: all, or a list of kernels, steps, groups and model")
	fs.StringVar(&f.groups, "groups", defaultGroups, "group sizes S (models trained in lockstep) to measure, comma-separated")
	fs.IntVar(&f.batch, "batch", 64, "groups: the batch each model trains on")
	fs.StringVar(&f.stepBatches, "step-batches", "32,64", "steps: the batches to time, comma-separated")
	fs.DurationVar(&f.budget, "budget", 200*time.Millisecond, "kernels: time spent measuring each kernel and shape")
	fs.IntVar(&f.dispatchGroup, "dispatch-group", 64, "kernels: on gl, the models of the training step whose dispatches are timed")
	fs.DurationVar(&f.stepTime, "step-time", DefaultTarget, "with --steps 0: about how long each measurement of steps or groups is timed")
	fs.DurationVar(&f.maxStep, "max-step", 10*time.Second, "groups: skip an S whose step would take longer, at the speed of the S measured before it (0: never skip)")
	f.Shape.AddFlags(fs)
}

// Options resolves the flags, with --steps and --loss (which bench
// shares with vs-pytorch), into a run's options, refusing in one line
// naming the flag whatever is out of range; changed says which flags were
// given.
func (f *Flags) Options(steps int, loss string, changed func(name string) bool) (Options, error) {
	var r Options
	if f.budget <= 0 || f.stepTime <= 0 || steps < 0 || f.maxStep < 0 {
		return r, errors.New("--budget and --step-time must be positive, --steps and --max-step not negative")
	}
	if f.batch <= 0 || f.batch > 4096 {
		return r, fmt.Errorf("--batch must be in 1..4096, got %d", f.batch)
	}
	var err error
	if r.Backends, r.GLOptional, err = ParseBackends(f.backends); err != nil {
		return r, err
	}
	if r.Groups, err = ParseSizes("groups", "group size", f.groups, math.MaxInt32); err != nil {
		return r, err
	}
	if r.StepBatches, err = ParseSizes("step-batches", "batch", f.stepBatches, 4096); err != nil {
		return r, err
	}
	if r.Parts, err = ParseParts(f.parts); err != nil {
		return r, err
	}
	if err := tasks.CheckLoss(loss); err != nil {
		return r, err
	}
	if f.dispatchGroup <= 0 {
		return r, fmt.Errorf("--dispatch-group must be positive, got %d", f.dispatchGroup)
	}
	if r.Model, err = f.Shape.Config(loss, changed); err != nil {
		return r, err
	}
	r.Batch, r.Loss, r.Budget, r.MaxStep, r.DispatchGroup = f.batch, loss, f.budget, f.maxStep, f.dispatchGroup
	r.Timing = Timing{Steps: steps, Target: f.stepTime}
	return r, nil
}
