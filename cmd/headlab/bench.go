package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"headlab/backend/gl"
	"headlab/bench"
	"headlab/glctx"
	"headlab/graph"
	"headlab/internal/atomicfile"
	"headlab/internal/simd"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newBenchCmd(e, nil) })
}

// defaultGroups is the curve `headlab bench` measures by default.
const defaultGroups = "1,4,16,64,256,1024"

// benchParts are what --parts may name, in the order they run.
var benchParts = []string{"kernels", "steps", "groups", "model"}

// parseList splits a comma-separated flag value, refusing empty items and
// repeats.
func parseList(flag, v string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, usagef("--%s %q: an empty item", flag, v)
		}
		if slices.Contains(out, f) {
			return nil, usagef("--%s %q: %s is listed twice", flag, v, f)
		}
		out = append(out, f)
	}
	return out, nil
}

// parseSizes reads a list flag of sizes in 1..most (what names one).
func parseSizes(flag, what, v string, most int) ([]int, error) {
	items, err := parseList(flag, v)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(items))
	for i, f := range items {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n > most {
			return nil, usagef("--%s %q: %q is not a %s in 1..%d", flag, v, f, what, most)
		}
		out[i] = n
	}
	return out, nil
}

// parseBackends reads --backends: all, or a list of cpu and gl. With all,
// gl is optional (benched when a context can be made).
func parseBackends(v string) (names []string, glOptional bool, err error) {
	if v == "all" {
		return []string{"cpu", "gl"}, true, nil
	}
	if names, err = parseList("backends", v); err != nil {
		return nil, false, err
	}
	for _, n := range names {
		if n != "cpu" && n != "gl" {
			return nil, false, usagef("unknown backend %q in --backends %q (want all, or a list of cpu and gl)", n, v)
		}
	}
	return names, false, nil
}

// parseParts reads --parts.
func parseParts(v string) (map[string]bool, error) {
	out := map[string]bool{}
	if v == "all" {
		for _, p := range benchParts {
			out[p] = true
		}
		return out, nil
	}
	items, err := parseList("parts", v)
	if err != nil {
		return nil, err
	}
	for _, p := range items {
		if !slices.Contains(benchParts, p) {
			return nil, usagef("unknown part %q in --parts %q (want all, or a list of %s)", p, v, strings.Join(benchParts, ", "))
		}
		out[p] = true
	}
	return out, nil
}

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

	own benchRun
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
		RunE: runE(e, o, runF, func(e *env, o *benchOptions) error { return o.run(e, func(e *env) error { return runBench(e, o.own) }) }),
	}
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
	vs := newBenchVsCmd(e, nil)
	cmd.AddCommand(vs)
	cmd.SetFlagErrorFunc(flagOf(vs))
	vs.SetFlagErrorFunc(flagOf(cmd))
	return cmd
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
	if r.names, r.glOptional, err = parseBackends(o.backends); err != nil {
		return err
	}
	if r.groups, err = parseSizes("groups", "group size", o.groups, math.MaxInt32); err != nil {
		return err
	}
	if r.stepBatches, err = parseSizes("step-batches", "batch", o.stepBatches, 4096); err != nil {
		return err
	}
	if r.parts, err = parseParts(o.parts); err != nil {
		return err
	}
	if err := o.benchCommon.check(); err != nil {
		return err
	}
	if o.dispatchGroup <= 0 {
		return usagef("--dispatch-group must be positive, got %d", o.dispatchGroup)
	}
	if r.model, err = o.shape.config(cmd, o.loss); err != nil {
		return err
	}
	r.batch, r.loss, r.budget, r.maxStep, r.asJSON, r.dispatchGroup = o.batch, o.loss, o.budget, o.maxStep, o.json, o.dispatchGroup
	r.timing = bench.Timing{Steps: o.steps, Target: o.stepTime}
	return nil
}

// benchRun is a parsed `headlab bench`.
type benchRun struct {
	names      []string
	glOptional bool
	parts      map[string]bool
	groups     []int
	batch      int
	loss       string
	// stepBatches are the batches the steps part measures.
	stepBatches []int
	budget      time.Duration
	timing      bench.Timing
	maxStep     time.Duration
	asJSON      bool
	// dispatchGroup is the S of the kernels part's per-dispatch profile.
	dispatchGroup int
	// model is the model flags' training configuration (its batch is
	// each part's: config).
	model train.Config
}

// config is the model of the flags training at batch.
func (r benchRun) config(batch int) train.Config {
	c := r.model
	c.Batch = batch
	return c
}

// benchDevice is one backend to measure: a device for the kernels and
// steps parts, and how the groups part gets its devices.
type benchDevice struct {
	dev     kernels.Device
	backend bench.Backend
}

// openBenchDevices opens each backend through the one device factory
// (backendFlag.open). The CPU's groups each get a fresh CPU device; GL's
// one group uses the device opened here, released when done.
func openBenchDevices(e *env, r benchRun, rep *bench.Report) ([]benchDevice, func(), error) {
	var out []benchDevice
	var releases []func()
	done := func() {
		for _, f := range slices.Backward(releases) {
			f()
		}
	}
	for _, name := range r.names {
		bf := backendFlag{name: name}
		dev, release, err := bf.open(e.stderr)
		if err != nil {
			var ue usageError
			isUsage := errors.As(err, &ue)
			// A bad HEADLAB_EGL_DEVICE is refused even where GL is optional.
			if name == "gl" && r.glOptional && !(isUsage && errors.Is(ue.error, glctx.ErrDeviceChoice)) {
				msg := err.Error()
				if isUsage && errors.Unwrap(ue.error) != nil {
					msg = errors.Unwrap(ue.error).Error()
				}
				rep.GLError = msg
				fmt.Fprintf(e.stderr, "headlab: benchmarking the cpu backend only: %s\n", msg)
				continue
			}
			done()
			if name == "gl" {
				return nil, nil, usagef("--backends gl: %s", strings.TrimPrefix(err.Error(), "--backend gl: "))
			}
			return nil, nil, err
		}
		releases = append(releases, release)
		b := bench.Backend{Name: name, Workers: 1, Open: func() (kernels.Device, func(), error) { return dev, func() {}, nil }}
		if _, ok := dev.(kernels.Host); ok {
			// Groups on the host run in parallel, one a worker.
			b.Workers = runtime.GOMAXPROCS(0)
			b.Open = func() (kernels.Device, func(), error) { return bf.open(e.stderr) }
			rep.CPUWorkers = b.Workers
		}
		if dr, ok := dev.(kernels.Driver); ok {
			rep.Renderer, rep.GLContext = dr.Renderer(), dr.Context()
		}
		out = append(out, benchDevice{dev: dev, backend: b})
	}
	return out, done, nil
}

// runBench is `headlab bench`.
func runBench(e *env, r benchRun) error {
	shape := graph.Config{Vocab: r.model.Vocab, SeqLen: r.model.SeqLen, Arch: r.model.Arch}
	rep := bench.Report{SIMD: simd.Path(), Loss: r.loss, Shape: &shape}
	var devs []benchDevice
	if r.parts["kernels"] || r.parts["steps"] || r.parts["groups"] {
		var release func()
		var err error
		if devs, release, err = openBenchDevices(e, r, &rep); err != nil {
			return err
		}
		defer release()
	}
	profile := gl.EnvProfile()
	for i, d := range devs {
		if _, ok := d.dev.(kernels.Profiler); ok {
			devs[i].backend.Profile = profile
		} else if profile {
			fmt.Fprintf(e.stderr, "headlab: HEADLAB_GL_PROFILE times the gl backend's dispatches; the %s backend runs untimed\n", d.backend.Name)
		}
	}
	var err error
	if r.parts["kernels"] {
		fmt.Fprintln(e.stderr, "timing kernels...")
		var ds []kernels.Device
		for _, d := range devs {
			ds = append(ds, d.dev)
		}
		if rep.Kernels, err = bench.Kernels(ds, bench.Shapes, r.budget); err != nil {
			return err
		}
		for _, d := range devs {
			if _, ok := d.dev.(kernels.Profiler); !ok {
				continue
			}
			fmt.Fprintf(e.stderr, "timing every dispatch of one training step of %d models on %s...\n", r.dispatchGroup, d.backend.Name)
			if rep.Dispatches, err = bench.ProfileGroup(d.dev, r.config(r.batch), r.dispatchGroup); err != nil {
				return err
			}
			rep.DispatchGroup = r.dispatchGroup
		}
	}
	if r.parts["steps"] {
		for _, d := range devs {
			for _, batch := range r.stepBatches {
				fmt.Fprintf(e.stderr, "timing training steps on %s at batch %d...\n", d.backend.Name, batch)
				s, err := bench.TrainSteps(d.dev, r.config(batch), r.timing)
				if err != nil {
					return err
				}
				rep.TrainSteps = append(rep.TrainSteps, s)
			}
		}
	}
	if r.parts["groups"] {
		rep.Batch = r.batch
		c := r.config(r.batch)
		for _, d := range devs {
			fmt.Fprintf(e.stderr, "timing groups of %s models on %s (%d concurrent groups) at batch %d...\n",
				joinInts(r.groups), d.backend.Name, d.backend.Workers, r.batch)
			rows, err := bench.Curve(d.backend, c, r.groups, r.timing, r.maxStep, func(err error) {
				rep.Skipped = append(rep.Skipped, err.Error())
				fmt.Fprintf(e.stderr, "headlab: %v\n", err)
			})
			if err != nil {
				return err
			}
			rep.Steps = append(rep.Steps, rows...)
		}
		if len(devs) == 2 {
			from, _ := bench.GPUPaysFrom(rep.Steps, "gl", "cpu")
			rep.GPUPaysFrom = &from
		}
	}
	if r.parts["model"] {
		c := r.config(r.batch)
		fmt.Fprintf(e.stderr, "recording one training step of the %d x %d x %d model (seq-len %d) on the CPU for the cost model...\n", c.Layers, c.Heads, c.DModel, c.SeqLen)
		calls, err := bench.StepCalls(c)
		if err != nil {
			return err
		}
		if rep.Model, err = bench.ModelRows(calls, r.groups); err != nil {
			return err
		}
		rep.ModelBatch = r.batch
	}
	if r.asJSON {
		return writeJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
