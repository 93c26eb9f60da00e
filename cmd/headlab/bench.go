package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"headlab/backend/gl"
	"headlab/bench"
	"headlab/glctx"
	"headlab/internal/atomicfile"
	"headlab/internal/simd"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

func init() { commands = append(commands, benchCmd) }

// benchReport is what `headlab bench --json` prints.
type benchReport struct {
	// SIMD is the CPU's vector path that ran (internal/simd.Path).
	SIMD string `json:"simd"`
	// Loss is the training loss every step measured trains on: it says
	// which rows the step computes (tasks.LossPositions).
	Loss      string `json:"loss"`
	Renderer  string `json:"gl_renderer,omitempty"`
	GLContext string `json:"gl_context,omitempty"`
	GLError   string `json:"gl_error,omitempty"`
	// Steps is the groups curve: one row per backend and group size, at
	// Batch, with the CPU on CPUWorkers concurrent groups.
	Steps      []bench.GroupResult `json:"steps,omitempty"`
	Batch      int                 `json:"batch,omitempty"`
	CPUWorkers int                 `json:"cpu_workers,omitempty"`
	// Skipped says, one line each, which group sizes were not measured.
	Skipped []string `json:"skipped,omitempty"`
	// GPUPaysFrom is the smallest group size from which on GL beat the CPU
	// in this run, 0 when it never did; absent unless both were measured.
	GPUPaysFrom *int                 `json:"gpu_pays_from,omitempty"`
	Kernels     []bench.KernelResult `json:"kernels,omitempty"`
	// Dispatches is the kernels part's per-dispatch profile of one GL
	// training step of DispatchGroup models.
	Dispatches    []bench.DispatchProfile `json:"dispatches,omitempty"`
	DispatchGroup int                     `json:"dispatch_group,omitempty"`
	// Model is the model part: the cost model's step at each S.
	Model      []modelReport      `json:"model,omitempty"`
	TrainSteps []bench.StepResult `json:"train_steps,omitempty"`
	Peak       *bench.PeakResult  `json:"sgemm_peak,omitempty"`
	PyTorch    *vsPyTorch         `json:"vs_pytorch,omitempty"`
}

// modelReport is the model part at one S: every dispatch of the GL step
// as the cost model predicts it on an H200 (optimistic, pessimistic).
type modelReport struct {
	Group         int                     `json:"group"`
	Dispatches    []bench.DispatchProfile `json:"dispatches"`
	FLOP          float64                 `json:"flop_per_seed_step"`
	Bytes         float64                 `json:"bytes_per_seed_step"`
	MsPerStep     [2]float64              `json:"h200_ms_per_step"`
	SeedStepsPerS [2]float64              `json:"h200_seed_steps_per_s"`
}

// vsPyTorch is the --vs-pytorch part of the report.
type vsPyTorch struct {
	Error string `json:"error,omitempty"` // set when PyTorch is not installed
	Torch string `json:"torch,omitempty"`
	// TrainRSSMB is this process's peak resident memory after one default
	// training run of --rss-steps steps (the first thing --vs-pytorch does;
	// it includes the binary and its shared libraries).
	TrainRSSMB float64                `json:"train_peak_rss_mb"`
	Steps      []bench.StepComparison `json:"steps,omitempty"`
	Sweep      *bench.SweepComparison `json:"sweep,omitempty"`
	// Instructions is headlab's instructions per step under callgrind
	// (absent without valgrind, or with --callgrind=false).
	Instructions []bench.InstructionCount `json:"instructions,omitempty"`
	// InstructionsError says why Instructions is absent.
	InstructionsError string `json:"instructions_error,omitempty"`
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

func benchCmd(e *env) *cobra.Command {
	var (
		asJSON      bool
		backends    string
		parts       string
		groups      string
		batch       int
		budget      time.Duration
		stepTime    time.Duration
		maxStep     time.Duration
		steps       int
		profile     string
		vs          bool
		python      string
		rounds      int
		window      time.Duration
		workers     int
		rssSteps    int
		callgrind   bool
		stepBatches string
		loss        string
		dispGroup   int
	)
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
  groups   S default induction models (18,704 parameters) trained in
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
           every dispatch of the GL training step at each S of --groups,
           its FLOPs and global-memory bytes, and its predicted time on an
           H200 (optimistic and pessimistic rates, the bound that holds),
           then the step and seed-steps/s.

Every measurement warms up (one to three steps) and then times --steps
steps, or with --steps 0 (the default) as many as take about --step-time,
at least one. On Mesa's llvmpipe (no GPU; 2 vCPUs) a GL seed-step costs
about 40-50 ms, so --max-step skips GL's S = 256 and above there, and the
default command takes about a minute; on a GPU the whole curve is
measured. Under llvmpipe GL is expected to be slower than the CPU.

Every step trains on --loss: under next-token (the default) it computes
every row; under answers, the last block's MLP and the unembedding on the
answer rows alone. The JSON says which ("loss").

With --vs-pytorch it instead measures headlab's CPU training against the
same model in PyTorch eager on one thread (bench/pytorch/train_step.py,
run with --python and the same --loss, so both sides compute the same
rows): one default training run first (its peak resident memory), the
single-core sgemm peak,
ms per step at batch 32 and 64 (medians of --rounds rounds, each timing
headlab, then PyTorch with OpenBLAS's own kernel choice, then with
OPENBLAS_CORETYPE=Haswell; --steps steps each, 50 when 0), the ratio
against the faster PyTorch (named), achieved GFLOP/s and its share of the
sgemm peak, and sweep throughput with --workers trainers (goroutines)
against as many PyTorch processes (with the faster BLAS), each side
training for --window. Then, where valgrind is installed, instructions per
step under callgrind at both batches: a figure that does not move with the
machine's load (valgrind has no AVX-512, so that count is of the avx2
path). Without PyTorch it says so in one line and reports headlab alone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if budget <= 0 || stepTime <= 0 || steps < 0 || maxStep < 0 {
				return usagef("--budget and --step-time must be positive, --steps and --max-step not negative")
			}
			if batch <= 0 || batch > 4096 {
				return usagef("--batch must be in 1..4096, got %d", batch)
			}
			names, glOptional, err := parseBackends(backends)
			if err != nil {
				return err
			}
			sizes, err := parseSizes("groups", "group size", groups, math.MaxInt32)
			if err != nil {
				return err
			}
			batches, err := parseSizes("step-batches", "batch", stepBatches, 4096)
			if err != nil {
				return err
			}
			want, err := parseParts(parts)
			if err != nil {
				return err
			}
			if vs && (rounds <= 0 || window <= 0 || workers <= 0 || rssSteps < 0) {
				return usagef("--rounds, --window and --workers must be positive, --rss-steps not negative")
			}
			if err := tasks.CheckLoss(loss); err != nil {
				return usageError{err}
			}
			if err := checkOutputs(fileOut("profile", profile)); err != nil {
				return err
			}
			if dispGroup <= 0 {
				return usagef("--dispatch-group must be positive, got %d", dispGroup)
			}
			run := func(e *env) error {
				if vs {
					if steps == 0 {
						steps = 50
					}
					return benchVsPyTorch(e, asJSON, python, loss, steps, rounds, rssSteps, window, workers, callgrind)
				}
				return runBench(e, benchRun{names: names, glOptional: glOptional, parts: want, groups: sizes, batch: batch, loss: loss,
					stepBatches: batches, budget: budget, timing: bench.Timing{Steps: steps, Target: stepTime}, maxStep: maxStep, asJSON: asJSON,
					dispatchGroup: dispGroup})
			}
			if profile == "" {
				return run(e)
			}
			// The profile is kept in memory and written whole at the end
			// (to a file through a rename, or to stdout for "-", the report
			// then going to stderr).
			var prof bytes.Buffer
			if err := pprof.StartCPUProfile(&prof); err != nil {
				return err
			}
			re := *e
			re.stdout = e.reportTo(profile)
			err = run(&re)
			pprof.StopCPUProfile()
			werr := atomicfile.WriteStdout(profile, e.stdout, func(w io.Writer) error { _, err := w.Write(prof.Bytes()); return err })
			return cmp.Or(err, werr)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	cmd.Flags().StringVar(&backends, "backends", "all", "which backends: all (cpu, and gl when a context can be made), or a list of cpu and gl (gl then must work)")
	cmd.Flags().StringVar(&parts, "parts", "all", "what to measure: all, or a list of kernels, steps and groups")
	cmd.Flags().StringVar(&groups, "groups", defaultGroups, "group sizes S (models trained in lockstep) to measure, comma-separated")
	cmd.Flags().IntVar(&batch, "batch", 64, "groups: the batch each model trains on")
	cmd.Flags().StringVar(&stepBatches, "step-batches", "32,64", "steps: the batches to time, comma-separated")
	cmd.Flags().DurationVar(&budget, "budget", 200*time.Millisecond, "kernels: time spent measuring each kernel and shape")
	cmd.Flags().IntVar(&dispGroup, "dispatch-group", 64, "kernels: on gl, the models of the training step whose dispatches are timed")
	cmd.Flags().IntVar(&steps, "steps", 0, "training steps timed per measurement after the warm-up (0: about --step-time of them)")
	cmd.Flags().DurationVar(&stepTime, "step-time", bench.DefaultTarget, "with --steps 0: about how long each measurement of steps or groups is timed")
	cmd.Flags().DurationVar(&maxStep, "max-step", 10*time.Second, "groups: skip an S whose step would take longer, at the speed of the S measured before it (0: never skip)")
	cmd.Flags().StringVar(&profile, "profile", "", "write a CPU profile of the whole benchmark to this file (go tool pprof)")
	cmd.Flags().BoolVar(&vs, "vs-pytorch", false, "compare CPU training steps and sweep throughput with PyTorch eager")
	cmd.Flags().StringVar(&python, "python", defaultPython(), "Python interpreter with torch, for --vs-pytorch")
	cmd.Flags().IntVar(&rounds, "rounds", 5, "--vs-pytorch: alternating rounds per batch size (medians kept)")
	cmd.Flags().BoolVar(&callgrind, "callgrind", true, "--vs-pytorch: also count instructions per step under valgrind's callgrind (when installed)")
	cmd.Flags().DurationVar(&window, "window", 5*time.Second, "--vs-pytorch: how long each side of the sweep trains")
	cmd.Flags().IntVar(&workers, "workers", runtime.NumCPU(), "--vs-pytorch: concurrent trainers (and PyTorch processes) in the sweep")
	cmd.Flags().IntVar(&rssSteps, "rss-steps", 1000, "--vs-pytorch: steps of the training run whose peak resident memory is reported")
	cmd.Flags().StringVar(&loss, "loss", tasks.NextToken, "the training loss every step measured trains on (both sides of --vs-pytorch): next-token (every row) or answers (the last block's MLP and the unembedding on the answer rows only)")
	_ = cmd.RegisterFlagCompletionFunc("loss", cobra.FixedCompletions(tasks.Losses(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// benchRun is a parsed `headlab bench` without --vs-pytorch.
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
func openBenchDevices(e *env, r benchRun, rep *benchReport) ([]benchDevice, func(), error) {
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

// runBench is `headlab bench` without --vs-pytorch.
func runBench(e *env, r benchRun) error {
	rep := benchReport{SIMD: simd.Path(), Loss: r.loss}
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
			if rep.Dispatches, err = bench.ProfileGroup(d.dev, bench.BenchConfig(r.batch, r.loss), r.dispatchGroup); err != nil {
				return err
			}
			rep.DispatchGroup = r.dispatchGroup
		}
	}
	if r.parts["steps"] {
		for _, d := range devs {
			for _, batch := range r.stepBatches {
				fmt.Fprintf(e.stderr, "timing training steps on %s at batch %d...\n", d.backend.Name, batch)
				s, err := bench.TrainSteps(d.dev, bench.BenchConfig(batch, r.loss), r.timing)
				if err != nil {
					return err
				}
				rep.TrainSteps = append(rep.TrainSteps, s)
			}
		}
	}
	if r.parts["groups"] {
		rep.Batch = r.batch
		c := bench.BenchConfig(r.batch, r.loss)
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
		calls, err := bench.StepCalls(bench.BenchConfig(r.batch, r.loss))
		if err != nil {
			return err
		}
		for _, S := range r.groups {
			m, err := bench.ModelStep(calls, S)
			if err != nil {
				return err
			}
			rep.Model = append(rep.Model, modelReport{Group: S, Dispatches: m.Rows(), FLOP: m.FLOPs, Bytes: m.Bytes,
				MsPerStep: [2]float64{1e3 * m.Seconds[0], 1e3 * m.Seconds[1]}, SeedStepsPerS: m.SeedStepsPerS()})
		}
	}
	if r.asJSON {
		return writeJSON(e.stdout, rep)
	}
	return printBench(e.stdout, rep)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// printBench writes the report as tables.
func printBench(w io.Writer, rep benchReport) error {
	fmt.Fprintf(w, "CPU vector path: %s\n", rep.SIMD)
	if rep.Renderer != "" {
		fmt.Fprintf(w, "GL renderer: %s (%s)\n\n", rep.Renderer, rep.GLContext)
	}
	if len(rep.Kernels) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "backend\tkernel\tshape\tus/call\tGFLOP/s\tx CPU time\t")
		for _, k := range rep.Kernels {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.2f\t%.2f\t\n", k.Backend, k.Kernel, k.Shape, k.MicrosPerOp, k.GFLOPs, k.RatioToCPU)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if len(rep.TrainSteps) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "backend\tbatch\tms/step\tsteps/s\tallocs/step\tMB/step\t")
		for _, s := range rep.TrainSteps {
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f\t%.0f\t%.1f\t\n", s.Backend, s.Batch, s.MsPerStep, s.StepsPerSec, s.AllocsPerStep, s.BytesPerStep/(1<<20))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if len(rep.Dispatches) > 0 {
		fmt.Fprintf(w, "every dispatch of one gl training step of %d models, timed on the GPU, beside the cost model:\n", rep.DispatchGroup)
		printDispatches(w, rep.Dispatches, true)
		fmt.Fprintln(w)
	}
	if rep.Batch > 0 {
		if err := printGroups(w, rep); err != nil {
			return err
		}
	}
	for _, m := range rep.Model {
		fmt.Fprintf(w, "\nthe cost model's gl training step of %d models at batch %d on an H200 (optimistic, pessimistic):\n", m.Group, rep.Batch)
		printDispatches(w, m.Dispatches, false)
		fmt.Fprintf(w, "%d dispatches; per seed-step %.1f MFLOP, %.1f MB; step %.2f-%.2f ms: %.0f-%.0f seed-steps/s\n",
			len(m.Dispatches), m.FLOP/1e6, m.Bytes/1e6, m.MsPerStep[0], m.MsPerStep[1], m.SeedStepsPerS[1], m.SeedStepsPerS[0])
	}
	return nil
}

// printDispatches writes a per-dispatch table: the device's time when
// measured, then the model's figures.
func printDispatches(w io.Writer, rows []bench.DispatchProfile, measured bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "#\tkernel\tprogram\tworkgroups\tsize\t"
	if measured {
		head += "us\t"
	}
	fmt.Fprintln(tw, head+"GFLOP\tMB\tH200 us\tbound\t")
	var us, lo, hi float64
	for i, d := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t", i, d.Kernel, d.Program, d.Workgroups, d.GroupSize)
		if measured {
			fmt.Fprintf(tw, "%.1f\t", d.Micros)
		}
		fmt.Fprintf(tw, "%.3f\t%.2f\t%.1f-%.1f\t%s\t\n", d.FLOP/1e9, d.Bytes/1e6, d.H200Micros[0], d.H200Micros[1], d.H200Bound)
		us, lo, hi = us+d.Micros, lo+d.H200Micros[0], hi+d.H200Micros[1]
	}
	fmt.Fprintf(tw, "\tall\t\t\t\t")
	if measured {
		fmt.Fprintf(tw, "%.1f\t", us)
	}
	fmt.Fprintf(tw, "\t\t%.0f-%.0f\t\t\n", lo, hi)
	tw.Flush()
}

// printGroups writes the groups curve.
func printGroups(w io.Writer, rep benchReport) error {
	fmt.Fprintf(w, "groups of S default models at batch %d (cpu: %d groups stepping at once):\n", rep.Batch, rep.CPUWorkers)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "backend\tS\tseed-steps/s\tms/step\tdispatches/step\tupload B/step\treadback B/step\tGFLOP/s\tGB/s\t")
	for _, s := range rep.Steps {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t\n", s.Backend, s.Group, s.SeedStepsPerS, s.MsPerStep,
			s.DispatchesPerStep, s.UploadBytesPerStep, s.ReadbackBytesPerStep, s.GFLOPs, s.GBs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.GPUPaysFrom != nil {
		if *rep.GPUPaysFrom > 0 {
			fmt.Fprintf(w, "gl beats the cpu from S = %d on, in this run\n", *rep.GPUPaysFrom)
		} else {
			fmt.Fprintf(w, "gl never beat the cpu in this run (at the largest S both measured; renderer %s)\n", rep.Renderer)
		}
	}
	for _, s := range rep.Steps {
		if len(s.Dispatches) > 0 {
			fmt.Fprintf(w, "\nevery dispatch of one more %s step of %d models, timed on the device, beside the cost model:\n", s.Backend, s.Group)
			printDispatches(w, s.Dispatches, true)
		}
	}
	return nil
}

// defaultPython is Debian's interpreter (where python3-torch installs)
// when present: a python3 earlier on PATH may be another one without torch.
func defaultPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// benchVsPyTorch is `headlab bench --vs-pytorch`.
func benchVsPyTorch(e *env, asJSON bool, python, loss string, steps, rounds, rssSteps int, window time.Duration, workers int, callgrind bool) error {
	rep := benchReport{SIMD: simd.Path(), Loss: loss, PyTorch: &vsPyTorch{}}
	vs := rep.PyTorch
	fmt.Fprintf(e.stderr, "one default training run of %d steps (memory)...\n", rssSteps)
	c := train.Defaults("induction")
	c.Steps, c.Loss = rssSteps, loss
	dev, release, err := (&backendFlag{name: "cpu"}).open(e.stderr)
	if err != nil {
		return err
	}
	defer release()
	if _, _, err := train.Run(c, dev, 0, nil); err != nil {
		return err
	}
	_, vs.TrainRSSMB = bench.ResidentMB()
	fmt.Fprintln(e.stderr, "sgemm peak...")
	peak := bench.SgemmPeak(512, time.Second)
	rep.Peak = &peak
	pt, err := bench.NewPyTorch(python)
	switch {
	case errors.Is(err, bench.ErrNoPyTorch):
		vs.Error = err.Error()
		fmt.Fprintf(e.stderr, "headlab: %v; timing headlab alone\n", err)
	case err != nil:
		return err
	default:
		defer pt.Close()
	}
	if pt == nil {
		for _, batch := range []int{32, 64} {
			r, err := bench.TrainSteps(dev, bench.BenchConfig(batch, loss), bench.Timing{Steps: steps})
			if err != nil {
				return err
			}
			rep.TrainSteps = append(rep.TrainSteps, r)
		}
	} else {
		progress := func(batch, round int) {
			fmt.Fprintf(e.stderr, "timing training steps at batch %d: round %d of %d (headlab, PyTorch default BLAS, PyTorch Haswell BLAS)\n", batch, round+1, rounds)
		}
		if vs.Steps, err = bench.CompareSteps(pt, loss, []int{32, 64}, steps, rounds, progress); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "sweep throughput, %d workers, %v each side...\n", workers, window)
		sw, err := bench.CompareSweep(pt, vs.Steps[0].FasterBLAS, loss, workers, 32, window)
		if err != nil {
			return err
		}
		vs.Sweep = &sw
	}
	if callgrind {
		countInstructions(e, vs, loss)
	}
	if asJSON {
		return writeJSON(e.stdout, rep)
	}
	fmt.Fprintf(e.stdout, "loss: %s (both sides compute the same rows)\n", loss)
	fmt.Fprintf(e.stdout, "sgemm peak (one core, %s, %d^3): %.1f GFLOP/s\n", peak.Kernel, peak.Size, peak.GFLOPs)
	fmt.Fprintf(e.stdout, "peak resident memory after one default training run (%d steps): %.1f MB\n", rssSteps, vs.TrainRSSMB)
	if pt == nil {
		fmt.Fprintf(e.stdout, "PyTorch: not installed (%s); headlab alone:\n", python)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "batch\tms/step\tsteps/s\tGFLOP/s\tallocs/step\t")
		for _, s := range rep.TrainSteps {
			fmt.Fprintf(tw, "%d\t%.2f\t%.1f\t%.1f\t%.0f\t\n", s.Batch, s.MsPerStep, s.StepsPerSec, s.GFLOPs, s.AllocsPerStep)
		}
		err := tw.Flush()
		printInstructions(e, vs)
		return err
	}
	fmt.Fprintln(e.stdout)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(e.stdout, "medians of %d alternating rounds; ratio against the faster PyTorch (its BLAS named)\n", rounds)
	fmt.Fprintln(tw, "batch\theadlab ms/step\tPyTorch default\tPyTorch Haswell\tfaster\tratio\theadlab GFLOP/s\t% of peak\t")
	for _, s := range vs.Steps {
		fmt.Fprintf(tw, "%d\t%.2f\t%.2f\t%.2f\t%s\t%.2f\t%.1f\t%.0f%%\t\n", s.Batch, s.HeadlabMsPerStep, s.PyTorchDefaultMs, s.PyTorchHaswellMs,
			s.FasterBLAS, s.Ratio, s.HeadlabGFLOPs, 100*s.HeadlabGFLOPs/peak.GFLOPs)
	}
	tw.Flush()
	sw := vs.Sweep
	fmt.Fprintf(e.stdout, "\nsweep, batch %d, %d workers for %.0f s: headlab %.0f steps/s, PyTorch (%s BLAS) %.0f steps/s, ratio %.2f\n",
		sw.Batch, sw.Workers, sw.Seconds, sw.HeadlabStepsPerS, sw.BLAS, sw.PyTorchStepsPerS, sw.Ratio)
	printInstructions(e, vs)
	return nil
}

// countInstructions fills vs.Instructions from callgrind runs of this
// binary, or says in vs.InstructionsError (and on stderr) why it cannot.
func countInstructions(e *env, vs *vsPyTorch, loss string) {
	exe, err := os.Executable()
	for _, batch := range []int{32, 64} {
		if err != nil {
			break
		}
		fmt.Fprintf(e.stderr, "instructions per step at batch %d (callgrind)...\n", batch)
		var n bench.InstructionCount
		if n, err = bench.CountInstructions(exe, loss, batch, 5, 25); err == nil {
			vs.Instructions = append(vs.Instructions, n)
		}
	}
	if err != nil {
		vs.Instructions, vs.InstructionsError = nil, err.Error()
		fmt.Fprintf(e.stderr, "headlab: no instruction counts: %v\n", err)
	}
}

func printInstructions(e *env, vs *vsPyTorch) {
	for _, n := range vs.Instructions {
		fmt.Fprintf(e.stdout, "instructions per step at batch %d (callgrind, %s path): %.2fM\n", n.Batch, n.SIMD, n.PerStep/1e6)
	}
}
