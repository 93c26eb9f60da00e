package bench

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"headlab/graph"
	"headlab/internal/simd"
	"headlab/kernels"
	"headlab/train"
)

// Parts are what `headlab bench --parts` may name, in the order they run.
var Parts = []string{"kernels", "steps", "groups", "model"}

// ParseList splits a comma-separated flag value, refusing empty items and
// repeats.
func ParseList(flag, v string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--%s %q: an empty item", flag, v)
		}
		if slices.Contains(out, f) {
			return nil, fmt.Errorf("--%s %q: %s is listed twice", flag, v, f)
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseSizes reads a list flag of sizes in 1..most (what names one).
func ParseSizes(flag, what, v string, most int) ([]int, error) {
	items, err := ParseList(flag, v)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(items))
	for i, f := range items {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n > most {
			return nil, fmt.Errorf("--%s %q: %q is not a %s in 1..%d", flag, v, f, what, most)
		}
		out[i] = n
	}
	return out, nil
}

// ParseBackends reads --backends: all, or a list of cpu and gl. With all,
// gl is optional (benched when a context can be made).
func ParseBackends(v string) (names []string, glOptional bool, err error) {
	if v == "all" {
		return []string{"cpu", "gl"}, true, nil
	}
	if names, err = ParseList("backends", v); err != nil {
		return nil, false, err
	}
	for _, n := range names {
		if n != "cpu" && n != "gl" {
			return nil, false, fmt.Errorf("unknown backend %q in --backends %q (want all, or a list of cpu and gl)", n, v)
		}
	}
	return names, false, nil
}

// ParseParts reads --parts.
func ParseParts(v string) (map[string]bool, error) {
	out := map[string]bool{}
	if v == "all" {
		for _, p := range Parts {
			out[p] = true
		}
		return out, nil
	}
	items, err := ParseList("parts", v)
	if err != nil {
		return nil, err
	}
	for _, p := range items {
		if !slices.Contains(Parts, p) {
			return nil, fmt.Errorf("unknown part %q in --parts %q (want all, or a list of %s)", p, v, strings.Join(Parts, ", "))
		}
		out[p] = true
	}
	return out, nil
}

// Options are a `headlab bench`: which backends and parts, at which sizes.
type Options struct {
	// Backends are the backends' names, in order; GLOptional says gl may
	// be left out when it cannot open (a SkipError).
	Backends   []string
	GLOptional bool
	Parts      map[string]bool
	Groups     []int
	Batch      int
	Loss       string
	// StepBatches are the batches the steps part measures.
	StepBatches []int
	Budget      time.Duration
	Timing      Timing
	MaxStep     time.Duration
	// DispatchGroup is the S of the kernels part's per-dispatch profile.
	DispatchGroup int
	// Model is the model flags' training configuration (its batch is
	// each part's: config).
	Model train.Config
	// Profile times every dispatch of the groups part on a device that
	// can (HEADLAB_GL_PROFILE).
	Profile bool
	// Open opens a backend by name (the command's one device factory).
	Open func(name string) (kernels.Device, func(), error)
	// Log receives the progress lines.
	Log io.Writer
}

// SkipError is a backend Open could not open that the run goes on
// without (gl when optional); Reason says why.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return e.Reason }

// Config is the model of the flags training at batch.
func (o Options) Config(batch int) train.Config {
	c := o.Model
	c.Batch = batch
	return c
}

// device is one backend to measure: a device for the kernels and steps
// parts, and how the groups part gets its devices.
type device struct {
	dev     kernels.Device
	backend Backend
}

// openDevices opens each backend through o.Open. The CPU's groups each get
// a fresh CPU device; GL's one group uses the device opened here, released
// when done.
func openDevices(o Options, rep *Report) ([]device, func(), error) {
	var out []device
	var releases []func()
	done := func() {
		for _, f := range slices.Backward(releases) {
			f()
		}
	}
	for _, name := range o.Backends {
		dev, release, err := o.Open(name)
		var skip *SkipError
		if errors.As(err, &skip) {
			rep.GLError = skip.Reason
			fmt.Fprintf(o.Log, "headlab: benchmarking the cpu backend only: %s\n", skip.Reason)
			continue
		}
		if err != nil {
			done()
			return nil, nil, err
		}
		releases = append(releases, release)
		b := Backend{Name: name, Workers: 1, Open: func() (kernels.Device, func(), error) { return dev, func() {}, nil }}
		if _, ok := dev.(kernels.Host); ok {
			// Groups on the host run in parallel, one a worker.
			b.Workers = runtime.GOMAXPROCS(0)
			b.Open = func() (kernels.Device, func(), error) { return o.Open(name) }
			rep.CPUWorkers = b.Workers
		}
		if dr, ok := dev.(kernels.Driver); ok {
			rep.Renderer, rep.GLContext = dr.Renderer(), dr.Context()
		}
		out = append(out, device{dev: dev, backend: b})
	}
	return out, done, nil
}

// Run is `headlab bench`: each part of o.Parts on each backend, in order.
func Run(o Options) (*Report, error) {
	shape := graph.Config{Vocab: o.Model.Vocab, SeqLen: o.Model.SeqLen, Arch: o.Model.Arch}
	rep := &Report{SIMD: simd.Path(), Loss: o.Loss, Shape: &shape}
	var devs []device
	if o.Parts["kernels"] || o.Parts["steps"] || o.Parts["groups"] {
		var release func()
		var err error
		if devs, release, err = openDevices(o, rep); err != nil {
			return nil, err
		}
		defer release()
	}
	for i, d := range devs {
		if _, ok := d.dev.(kernels.Profiler); ok {
			devs[i].backend.Profile = o.Profile
		} else if o.Profile {
			fmt.Fprintf(o.Log, "headlab: HEADLAB_GL_PROFILE times the gl backend's dispatches; the %s backend runs untimed\n", d.backend.Name)
		}
	}
	for _, part := range []struct {
		name string
		run  func(Options, []device, *Report) error
	}{{"kernels", runKernels}, {"steps", runSteps}, {"groups", runGroups}, {"model", runModel}} {
		if !o.Parts[part.name] {
			continue
		}
		if err := part.run(o, devs, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// runKernels is the kernels part.
func runKernels(o Options, devs []device, rep *Report) error {
	fmt.Fprintln(o.Log, "timing kernels...")
	var ds []kernels.Device
	for _, d := range devs {
		ds = append(ds, d.dev)
	}
	var err error
	if rep.Kernels, err = Kernels(ds, Shapes, o.Budget); err != nil {
		return err
	}
	for _, d := range devs {
		if _, ok := d.dev.(kernels.Profiler); !ok {
			continue
		}
		fmt.Fprintf(o.Log, "timing every dispatch of one training step of %d models on %s...\n", o.DispatchGroup, d.backend.Name)
		if rep.Dispatches, err = ProfileGroup(d.dev, o.Config(o.Batch), o.DispatchGroup); err != nil {
			return err
		}
		rep.DispatchGroup = o.DispatchGroup
	}
	return nil
}

// runSteps is the steps part.
func runSteps(o Options, devs []device, rep *Report) error {
	for _, d := range devs {
		for _, batch := range o.StepBatches {
			fmt.Fprintf(o.Log, "timing training steps on %s at batch %d...\n", d.backend.Name, batch)
			s, err := TrainSteps(d.dev, o.Config(batch), o.Timing)
			if err != nil {
				return err
			}
			rep.TrainSteps = append(rep.TrainSteps, s)
		}
	}
	return nil
}

// runGroups is the groups part.
func runGroups(o Options, devs []device, rep *Report) error {
	rep.Batch = o.Batch
	c := o.Config(o.Batch)
	for _, d := range devs {
		fmt.Fprintf(o.Log, "timing groups of %s models on %s (%d concurrent groups) at batch %d...\n",
			joinInts(o.Groups), d.backend.Name, d.backend.Workers, o.Batch)
		rows, err := Curve(d.backend, c, o.Groups, o.Timing, o.MaxStep, func(err error) {
			rep.Skipped = append(rep.Skipped, err.Error())
			fmt.Fprintf(o.Log, "headlab: %v\n", err)
		})
		if err != nil {
			return err
		}
		rep.Steps = append(rep.Steps, rows...)
	}
	if len(devs) == 2 {
		from, _ := GPUPaysFrom(rep.Steps, "gl", "cpu")
		rep.GPUPaysFrom = &from
	}
	return nil
}

// runModel is the model part.
func runModel(o Options, _ []device, rep *Report) error {
	c := o.Config(o.Batch)
	fmt.Fprintf(o.Log, "recording one training step of the %d x %d x %d model (seq-len %d) on the CPU for the cost model...\n", c.Layers, c.Heads, c.DModel, c.SeqLen)
	calls, err := StepCalls(c)
	if err != nil {
		return err
	}
	if rep.Model, err = ModelRows(calls, o.Groups); err != nil {
		return err
	}
	rep.ModelBatch = o.Batch
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
