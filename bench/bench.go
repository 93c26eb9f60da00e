// Package bench measures headlab: whole training steps of groups of S
// models on each device (groups.go), one model's training steps, and the
// attention kernels alone. `headlab bench` prints what it measures; the
// go test benchmarks beside it time the same calls.
package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// Shapes are the default training batch, a longer one and a large one.
var Shapes = []kernels.Shape{
	{B: 32, T: 16, H: 2, Dh: 16, Causal: true},
	{B: 64, T: 24, H: 2, Dh: 16, Causal: true},
	{B: 256, T: 64, H: 4, Dh: 32, Causal: true},
}

// ShapeName names a shape in tables and benchmark names.
func ShapeName(s kernels.Shape) string {
	name := fmt.Sprintf("B%d_T%d_H%d_Dh%d", s.B, s.T, s.H, s.Dh)
	if s.Causal {
		name += "_causal"
	}
	return name
}

// Flops is the work counted for every kernel: 2*T*T*Dh per sequence-head,
// the multiply-adds of one [T,T]x[T,Dh] (or [T,Dh]x[Dh,T]) product. It
// ignores the causal mask (which halves the real work), softmax's exp and
// the dS row sums, so figures compare across kernels and masks.
func Flops(s kernels.Shape) float64 {
	return 2 * float64(s.T) * float64(s.T) * float64(s.Dh) * float64(s.B*s.H)
}

// Tensors are one shape's inputs and outputs, resident on one device:
// uploaded once, so that timing a kernel times the kernel alone.
type Tensors struct {
	dev                              kernels.Device
	q, k, v, dO, p, dP, outQKV, outP kernels.Tensor
	bufs                             []kernels.Buffer
}

// NewTensors puts random inputs for s on dev, with a genuine P and dP (as
// training feeds the backward kernels) computed there.
func NewTensors(dev kernels.Device, s kernels.Shape) (t *Tensors, err error) {
	r := rand.New(rand.NewPCG(1, 2))
	t = &Tensors{dev: dev}
	defer func() {
		if err != nil {
			t.Free()
		}
	}()
	alloc := func(n int, random bool) (kernels.Tensor, error) {
		b, err := dev.Alloc(n)
		if err != nil {
			return kernels.Tensor{}, err
		}
		t.bufs = append(t.bufs, b)
		x := kernels.Dense(b, n)
		if !random {
			return x, nil
		}
		h := make([]float32, n)
		for i := range h {
			h[i] = float32(r.NormFloat64())
		}
		return x, dev.Upload(x, 1, h)
	}
	n, np := s.QKVLen(), s.ProbsLen()
	for _, x := range []struct {
		t      *kernels.Tensor
		n      int
		random bool
	}{{&t.q, n, true}, {&t.k, n, true}, {&t.v, n, true}, {&t.dO, n, true},
		{&t.p, np, false}, {&t.dP, np, false}, {&t.outQKV, n, false}, {&t.outP, np, false}} {
		if *x.t, err = alloc(x.n, x.random); err != nil {
			return nil, err
		}
	}
	if err := dev.Probs(1, s, t.q, t.k, t.p); err != nil {
		return nil, err
	}
	if err := dev.MixGradP(1, s, t.dO, t.v, t.dP); err != nil {
		return nil, err
	}
	return t, dev.Sync()
}

// Free releases the tensors.
func (t *Tensors) Free() {
	for _, b := range t.bufs {
		t.dev.Free(b)
	}
	t.bufs = nil
}

// Kernel is one attention kernel as a call, for one seed, over prepared
// tensors.
type Kernel struct {
	Name string
	Run  func(dev kernels.Device, s kernels.Shape, t *Tensors) error
}

// KernelCalls are the six kernels.
var KernelCalls = []Kernel{
	{"Probs", func(d kernels.Device, s kernels.Shape, t *Tensors) error { return d.Probs(1, s, t.q, t.k, t.outP) }},
	{"Mix", func(d kernels.Device, s kernels.Shape, t *Tensors) error { return d.Mix(1, s, t.p, t.v, t.outQKV) }},
	{"MixGradP", func(d kernels.Device, s kernels.Shape, t *Tensors) error { return d.MixGradP(1, s, t.dO, t.v, t.outP) }},
	{"MixGradV", func(d kernels.Device, s kernels.Shape, t *Tensors) error {
		return d.MixGradV(1, s, t.p, t.dO, t.outQKV)
	}},
	{"ProbsGradQ", func(d kernels.Device, s kernels.Shape, t *Tensors) error {
		return d.ProbsGradQ(1, s, t.p, t.dP, t.k, t.outQKV)
	}},
	{"ProbsGradK", func(d kernels.Device, s kernels.Shape, t *Tensors) error {
		return d.ProbsGradK(1, s, t.p, t.dP, t.q, t.outQKV)
	}},
}

// KernelResult is one kernel timed on one backend and shape.
type KernelResult struct {
	Backend     string  `json:"backend"`
	Kernel      string  `json:"kernel"`
	Shape       string  `json:"shape"`
	MicrosPerOp float64 `json:"us_per_call"`
	GFLOPs      float64 `json:"gflop_per_s"`
	// RatioToCPU is this backend's time over the CPU's (below 1: faster).
	RatioToCPU float64 `json:"ratio_to_cpu"`
}

// timeCall runs f once untimed (first GL dispatches compile shader machine
// code), then repeatedly for at least budget, and returns seconds per call.
func timeCall(budget time.Duration, f func() error) (float64, error) {
	if err := f(); err != nil {
		return 0, err
	}
	n, start := 0, time.Now()
	for n < 3 || time.Since(start) < budget {
		if err := f(); err != nil {
			return 0, err
		}
		n++
	}
	return time.Since(start).Seconds() / float64(n), nil
}

// Kernels times every kernel on every shape on each device, the CPU (the
// kernels.Host, whose times the ratios divide by) first, spending about
// budget on each measurement. A call is timed as the kernel and a Sync
// (waiting for it to finish); its tensors were uploaded beforehand, so
// nothing crosses to or from the device.
func Kernels(devs []kernels.Device, shapes []kernels.Shape, budget time.Duration) ([]KernelResult, error) {
	cpuTime := map[string]float64{}
	var out []KernelResult
	for _, dev := range devs {
		for _, s := range shapes {
			t, err := NewTensors(dev, s)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", dev.Name(), ShapeName(s), err)
			}
			for _, k := range KernelCalls {
				secs, err := timeCall(budget, func() error {
					if err := k.Run(dev, s, t); err != nil {
						return err
					}
					return dev.Sync()
				})
				if err != nil {
					t.Free()
					return nil, fmt.Errorf("%s %s %s: %w", dev.Name(), k.Name, ShapeName(s), err)
				}
				key := k.Name + ShapeName(s)
				if _, host := dev.(kernels.Host); host {
					cpuTime[key] = secs
				}
				r := KernelResult{Backend: dev.Name(), Kernel: k.Name, Shape: ShapeName(s),
					MicrosPerOp: secs * 1e6, GFLOPs: Flops(s) / secs / 1e9}
				if c, ok := cpuTime[key]; ok {
					r.RatioToCPU = secs / c
				}
				out = append(out, r)
			}
			t.Free()
		}
	}
	return out, nil
}

// StepResult is whole training steps of the default induction model.
type StepResult struct {
	Backend       string  `json:"backend"`
	Batch         int     `json:"batch"`
	MsPerStep     float64 `json:"ms_per_step"`
	StepsPerSec   float64 `json:"steps_per_s"`
	AllocsPerStep float64 `json:"allocs_per_step"`
	BytesPerStep  float64 `json:"bytes_per_step"`
	// MFLOP is StepFlops of the step; GFLOPs the rate it was done at.
	MFLOP  float64 `json:"mflop_per_step"`
	GFLOPs float64 `json:"gflop_per_s"`
}

// Timing says how long a measurement runs. Each first warms up: with
// Steps > 0 exactly three steps (so that the work done is the same on any
// machine, as instruction counts need), else one step, then up to two
// more while the warm-up has taken under a second (the first GL
// dispatches compile shader machine code). Then, with Steps > 0, it times
// exactly Steps steps; otherwise as many as take about Target
// (DefaultTarget when 0) at the speed of the last warm-up step, at least
// one and at most MaxAutoSteps.
type Timing struct {
	Steps  int
	Target time.Duration
}

// WarmUpSteps is the most warm-up steps a measurement takes, and exactly
// how many it takes with Timing.Steps > 0.
const WarmUpSteps = 3

// DefaultTarget is how long a measurement with Timing.Steps 0 is timed.
const DefaultTarget = 2 * time.Second

// MaxAutoSteps caps the steps an automatic Timing times.
const MaxAutoSteps = 500

// measure warms up and times run, which takes k steps and returns when
// their work is done (Sync included). begin is called just before the
// timed steps. It returns the steps timed and the seconds they took.
func measure(tm Timing, run func(k int) error, begin func()) (int, float64, error) {
	var last time.Duration
	warm := time.Now()
	for i := 0; i < WarmUpSteps && (tm.Steps > 0 || i == 0 || time.Since(warm) < time.Second); i++ {
		t := time.Now()
		if err := run(1); err != nil {
			return 0, 0, err
		}
		last = time.Since(t)
	}
	n := tm.Steps
	if n <= 0 {
		target := tm.Target
		if target <= 0 {
			target = DefaultTarget
		}
		n = int(min(max(target.Seconds()/max(last.Seconds(), 1e-9), 1), MaxAutoSteps))
	}
	if begin != nil {
		begin()
	}
	start := time.Now()
	if err := run(n); err != nil {
		return 0, 0, err
	}
	return n, time.Since(start).Seconds(), nil
}

// TrainSteps times training steps (forward, backward, Adam, and reading
// the loss back, as train.Trainer does) of c (BenchConfig: the default
// induction model at a batch and loss) on dev, after a short warm-up.
func TrainSteps(dev kernels.Device, c train.Config, tm Timing) (StepResult, error) {
	tr, err := train.NewTrainer(c, dev)
	if err != nil {
		return StepResult{}, err
	}
	defer tr.Close()
	var before, after runtime.MemStats
	steps, secs, err := measure(tm, func(k int) error {
		for range k {
			if _, err := tr.TrainStep(); err != nil {
				return err
			}
		}
		return dev.Sync()
	}, func() { runtime.ReadMemStats(&before) })
	if err != nil {
		return StepResult{}, err
	}
	runtime.ReadMemStats(&after)
	flops := StepFlops(tr.Model.Shape, c.Batch, tasks.LossPositions(tr.Model.Task, c.Loss))
	return StepResult{Backend: dev.Name(), Batch: c.Batch, MsPerStep: 1000 * secs / float64(steps),
		StepsPerSec:   float64(steps) / secs,
		AllocsPerStep: float64(after.Mallocs-before.Mallocs) / float64(steps),
		BytesPerStep:  float64(after.TotalAlloc-before.TotalAlloc) / float64(steps),
		MFLOP:         flops / 1e6, GFLOPs: flops * float64(steps) / secs / 1e9}, nil
}
