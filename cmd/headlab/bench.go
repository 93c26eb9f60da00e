package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"headlab/backend/gl"
	"headlab/bench"
	"headlab/glctx"
	"headlab/internal/atomicfile"
	"headlab/kernels"
	"headlab/tasks"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newBenchCmd(e, nil) })
}

// defaultGroups is the curve `headlab bench` measures by default.
const defaultGroups = "1,4,16,64,256,1024"

// benchCommon are the flags bench and bench vs-pytorch share.
type benchCommon struct {
	json          bool
	steps         int
	loss, profile string
}

// addFlags declares the shared flags on cmd; steps says what --steps 0
// means.
func (c *benchCommon) addFlags(cmd *cobra.Command, steps string) {
	fs := cmd.Flags()
	fs.BoolVar(&c.json, "json", false, "print one JSON object on stdout")
	fs.IntVar(&c.steps, "steps", 0, "training steps timed per measurement after the warm-up (0: "+steps+")")
	fs.StringVar(&c.profile, "profile", "", "write a CPU profile of the whole benchmark to this file (go tool pprof)")
	fs.StringVar(&c.loss, "loss", tasks.NextToken, "the training loss every step measured trains on: next-token (every row) or answers (the last block's MLP and the unembedding on the answer rows only)")
	_ = cmd.RegisterFlagCompletionFunc("loss", cobra.FixedCompletions(tasks.Losses(), cobra.ShellCompDirectiveNoFileComp))
}

// check refuses a bad --loss or --profile path.
func (c *benchCommon) check() error {
	if err := tasks.CheckLoss(c.loss); err != nil {
		return usageError{err}
	}
	return checkOutputs(fileOut("profile", c.profile))
}

// run runs a benchmark, under a CPU profile with --profile: the profile is
// kept in memory and written whole at the end (to a file through a rename,
// or to stdout for "-", the report then going to stderr).
func (c *benchCommon) run(e *env, run func(*env) error) error {
	if c.profile == "" {
		return run(e)
	}
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return err
	}
	re := *e
	re.stdout = e.reportTo(c.profile)
	err := run(&re)
	pprof.StopCPUProfile()
	werr := atomicfile.WriteStdout(c.profile, e.stdout, func(w io.Writer) error { _, err := w.Write(prof.Bytes()); return err })
	return cmp.Or(err, werr)
}

// benchOptions are bench's flags, and what check makes of them.
type benchOptions struct {
	benchCommon
	backends, parts, groups, stepBatches string
	batch, dispatchGroup                 int
	budget, stepTime, maxStep            time.Duration
	// vsPyTorch is the old spelling of bench vs-pytorch, refused with the new.
	vsPyTorch bool
	// shape holds the model flags (vs-pytorch's): the model every part
	// but kernels' attention shapes trains or models.
	shape benchShape

	own bench.Options
}

func newBenchCmd(e *env, runF func(*benchOptions) error) *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark training groups of S models, training steps and kernels on each backend",
		Long: `Measures, on each backend of --backends, in the order of --parts:

  kernels  each attention kernel alone, for one seed, on each shape:
           microseconds per call (the kernel and a Sync; its tensors are
           uploaded once beforehand), GFLOP/s counted as 2*T*T*Dh per
           sequence-head, and the ratio to the CPU's time; then, on gl,
           every dispatch of one training step of --dispatch-group models
           timed on the GPU (GL timer queries) beside the cost model's
           FLOPs, bytes and predicted H200 time for it;
  steps    one model's training steps (train.Trainer, which reads the loss
           back every step) at each batch of --step-batches (32 and 64);
  groups   S induction models of the model flags (the default: 18,704
           parameters) trained in
           lockstep at --batch, for each S of --groups: seed-steps/s,
           ms per step, kernel dispatches, bytes uploaded and read back per
           step (the device's own counters: a step uploads each model's
           tokens and targets and reads nothing back), GFLOP/s (the step's
           matrix-product FLOPs x seed-steps/s) and GB/s (each kernel
           reading its inputs and writing its output once, plus Adam's
           7 x 4 bytes per parameter, x seed-steps/s). The CPU uses every
           core: GOMAXPROCS groups, each of its share of the S models, all
           stepping at once, their figures summed. GL runs one group of S
           on one device. Then one line says from which S the GPU beat the
           CPU in this run. An S too large for the device is skipped with
           one line on stderr, and so is an S whose step, at the
           seed-steps/s of the S measured before it, would take longer
           than --max-step. Each row also carries the cost model's FLOPs
           and bytes per seed-step and its predicted H200 seed-steps/s at
           that S. With HEADLAB_GL_PROFILE=1, every dispatch of one more
           gl step at each S is timed as in the kernels part (the cpu
           backend ignores it, saying so in one line);
  model    the cost model alone (bench/costmodel.go, no device needed):
           every dispatch of the GL training step at --batch and each S
           of --groups, its FLOPs and global-memory bytes, and its
           predicted time on an H200 (optimistic and pessimistic rates,
           the bound that holds), then the step and seed-steps/s. Its
           calls are recorded from one CPU step of the model, a few
           seconds at --layers 4 --heads 8 --d-model 256 --d-ff 1024
           --seq-len 64 --vocab 64 (about 39 GFLOP a seed-step at
           --batch 32).

The model flags --layers, --heads, --d-model, --d-ff, --seq-len, --vocab
and --no-mlp (the default induction model unless given) size the model of
steps, groups, model and the kernels part's per-dispatch profile.

Every measurement warms up (one to three steps) and then times --steps
steps, or with --steps 0 (the default) as many as take about --step-time,
at least one. On Mesa's llvmpipe (no GPU; 2 vCPUs) a GL seed-step costs
about 40-50 ms, so --max-step skips GL's S = 256 and above there, and the
default command takes about a minute; on a GPU the whole curve is
measured. Under llvmpipe GL is expected to be slower than the CPU.

Every step trains on --loss: under next-token (the default) it computes
every row; under answers, the last block's MLP and the unembedding on the
answer rows alone. The JSON says which ("loss").

headlab bench vs-pytorch times headlab's CPU training against PyTorch's
(its own --help).`,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, func(e *env, o *benchOptions) error { return o.run(e, func(e *env) error { return runBench(e, o) }) }),
	}
	o.register(cmd)
	vs := newBenchVsCmd(e, nil)
	cmd.AddCommand(vs)
	cmd.SetFlagErrorFunc(flagOf(vs))
	vs.SetFlagErrorFunc(flagOf(cmd))
	return cmd
}

// register declares bench's flags on cmd.
func (o *benchOptions) register(cmd *cobra.Command) {
	o.addFlags(cmd, "about --step-time of them")
	fs := cmd.Flags()
	fs.StringVar(&o.backends, "backends", "all", "which backends: all (cpu, and gl when a context can be made), or a list of cpu and gl (gl then must work)")
	fs.StringVar(&o.parts, "parts", "all", "what to measure: all, or a list of kernels, steps, groups and model")
	fs.StringVar(&o.groups, "groups", defaultGroups, "group sizes S (models trained in lockstep) to measure, comma-separated")
	fs.IntVar(&o.batch, "batch", 64, "groups: the batch each model trains on")
	fs.StringVar(&o.stepBatches, "step-batches", "32,64", "steps: the batches to time, comma-separated")
	fs.DurationVar(&o.budget, "budget", 200*time.Millisecond, "kernels: time spent measuring each kernel and shape")
	fs.IntVar(&o.dispatchGroup, "dispatch-group", 64, "kernels: on gl, the models of the training step whose dispatches are timed")
	fs.DurationVar(&o.stepTime, "step-time", bench.DefaultTarget, "with --steps 0: about how long each measurement of steps or groups is timed")
	fs.DurationVar(&o.maxStep, "max-step", 10*time.Second, "groups: skip an S whose step would take longer, at the speed of the S measured before it (0: never skip)")
	fs.BoolVar(&o.vsPyTorch, "vs-pytorch", false, "")
	o.shape.register(cmd)
	_ = fs.MarkHidden("vs-pytorch")
}

// flagOf is a FlagErrorFunc that names the command an unknown flag
// belongs to when it is other's.
func flagOf(other *cobra.Command) func(*cobra.Command, error) error {
	return func(_ *cobra.Command, err error) error {
		var name string
		if _, serr := fmt.Sscanf(err.Error(), "unknown flag: --%s", &name); serr == nil {
			if f := other.Flags().Lookup(name); f != nil && !f.Hidden {
				err = fmt.Errorf("--%s is for %s", name, other.CommandPath())
			}
		}
		return usageError{err}
	}
}

func (o *benchOptions) check(cmd *cobra.Command, _ []string) error {
	if o.vsPyTorch {
		return usagef("bench --vs-pytorch is a command of its own now: headlab bench vs-pytorch (its --help says which flags it takes)")
	}
	if o.budget <= 0 || o.stepTime <= 0 || o.steps < 0 || o.maxStep < 0 {
		return usagef("--budget and --step-time must be positive, --steps and --max-step not negative")
	}
	if o.batch <= 0 || o.batch > 4096 {
		return usagef("--batch must be in 1..4096, got %d", o.batch)
	}
	r := &o.own
	var err error
	if r.Backends, r.GLOptional, err = bench.ParseBackends(o.backends); err != nil {
		return usageError{err}
	}
	if r.Groups, err = bench.ParseSizes("groups", "group size", o.groups, math.MaxInt32); err != nil {
		return usageError{err}
	}
	if r.StepBatches, err = bench.ParseSizes("step-batches", "batch", o.stepBatches, 4096); err != nil {
		return usageError{err}
	}
	if r.Parts, err = bench.ParseParts(o.parts); err != nil {
		return usageError{err}
	}
	if err := o.benchCommon.check(); err != nil {
		return err
	}
	if o.dispatchGroup <= 0 {
		return usagef("--dispatch-group must be positive, got %d", o.dispatchGroup)
	}
	if r.Model, err = o.shape.config(cmd, o.loss); err != nil {
		return err
	}
	r.Batch, r.Loss, r.Budget, r.MaxStep, r.DispatchGroup = o.batch, o.loss, o.budget, o.maxStep, o.dispatchGroup
	r.Timing = bench.Timing{Steps: o.steps, Target: o.stepTime}
	return nil
}

// runBench is `headlab bench`: bench.Run on the devices of the one
// factory, gl left out (saying why) when optional and it cannot open.
func runBench(e *env, o *benchOptions) error {
	r := o.own
	r.Profile, r.Log = gl.EnvProfile(), e.stderr
	r.Open = func(name string) (kernels.Device, func(), error) {
		dev, release, err := (&backendFlag{name: name}).open(e.stderr)
		if err == nil {
			return dev, release, nil
		}
		var ue usageError
		isUsage := errors.As(err, &ue)
		// A bad HEADLAB_EGL_DEVICE is refused even where GL is optional.
		if name == "gl" && r.GLOptional && !(isUsage && errors.Is(ue.error, glctx.ErrDeviceChoice)) {
			msg := err.Error()
			if isUsage && errors.Unwrap(ue.error) != nil {
				msg = errors.Unwrap(ue.error).Error()
			}
			return nil, nil, &bench.SkipError{Reason: msg}
		}
		if name == "gl" {
			return nil, nil, usagef("--backends gl: %s", strings.TrimPrefix(err.Error(), "--backend gl: "))
		}
		return nil, nil, err
	}
	rep, err := bench.Run(r)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}
