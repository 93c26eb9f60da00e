// Package bench measures headlab: the attention kernels on each backend
// and whole training steps. `headlab bench` prints what it measures; the
// go test benchmarks beside it time the same calls.
package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"headlab/backend/cpu"
	"headlab/kernels"
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

// Tensors are one shape's inputs and output buffers.
type Tensors struct {
	q, k, v, dO, p, dP, outQKV, outP []float32
}

// NewTensors fills random inputs for s, with a genuine P and dP as training
// feeds the backward kernels.
func NewTensors(s kernels.Shape) *Tensors {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	n, np := s.QKVLen(), s.ProbsLen()
	t := &Tensors{q: fill(n), k: fill(n), v: fill(n), dO: fill(n),
		p: make([]float32, np), dP: make([]float32, np),
		outQKV: make([]float32, n), outP: make([]float32, np)}
	c := cpu.New()
	_ = c.Probs(s, t.q, t.k, t.p)
	_ = c.MixGradP(s, t.dO, t.v, t.dP)
	return t
}

// Kernel is one attention kernel as a call over prepared tensors.
type Kernel struct {
	Name string
	Run  func(be kernels.Backend, s kernels.Shape, t *Tensors) error
}

// KernelCalls are the six kernels.
var KernelCalls = []Kernel{
	{"Probs", func(be kernels.Backend, s kernels.Shape, t *Tensors) error { return be.Probs(s, t.q, t.k, t.outP) }},
	{"Mix", func(be kernels.Backend, s kernels.Shape, t *Tensors) error { return be.Mix(s, t.p, t.v, t.outQKV) }},
	{"MixGradP", func(be kernels.Backend, s kernels.Shape, t *Tensors) error { return be.MixGradP(s, t.dO, t.v, t.outP) }},
	{"MixGradV", func(be kernels.Backend, s kernels.Shape, t *Tensors) error {
		return be.MixGradV(s, t.p, t.dO, t.outQKV)
	}},
	{"ProbsGradQ", func(be kernels.Backend, s kernels.Shape, t *Tensors) error {
		return be.ProbsGradQ(s, t.p, t.dP, t.k, t.outQKV)
	}},
	{"ProbsGradK", func(be kernels.Backend, s kernels.Shape, t *Tensors) error {
		return be.ProbsGradK(s, t.p, t.dP, t.q, t.outQKV)
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

// Kernels times every kernel on every shape on each backend, the CPU
// first, spending about budget on each measurement. GL times include
// uploads and readbacks: that is what a caller pays.
func Kernels(bes []kernels.Backend, shapes []kernels.Shape, budget time.Duration) ([]KernelResult, error) {
	cpuTime := map[string]float64{}
	var out []KernelResult
	for _, be := range bes {
		for _, s := range shapes {
			t := NewTensors(s)
			for _, k := range KernelCalls {
				secs, err := timeCall(budget, func() error { return k.Run(be, s, t) })
				if err != nil {
					return nil, fmt.Errorf("%s %s %s: %w", be.Name(), k.Name, ShapeName(s), err)
				}
				key := k.Name + ShapeName(s)
				if be.Name() == "cpu" {
					cpuTime[key] = secs
				}
				r := KernelResult{Backend: be.Name(), Kernel: k.Name, Shape: ShapeName(s),
					MicrosPerOp: secs * 1e6, GFLOPs: Flops(s) / secs / 1e9}
				if c, ok := cpuTime[key]; ok {
					r.RatioToCPU = secs / c
				}
				out = append(out, r)
			}
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

// TrainSteps times steps training steps (forward, backward, Adam) of the
// default induction model at the given batch, after a short warm-up.
func TrainSteps(be kernels.Backend, batch, steps int) (StepResult, error) {
	c := train.Defaults("induction")
	c.Batch = batch
	tr, err := train.NewTrainer(c, be)
	if err != nil {
		return StepResult{}, err
	}
	defer tr.Close()
	for range 3 {
		if _, err := tr.TrainStep(); err != nil {
			return StepResult{}, err
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range steps {
		if _, err := tr.TrainStep(); err != nil {
			return StepResult{}, err
		}
	}
	secs := time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	flops := StepFlops(tr.Model.Shape, batch)
	return StepResult{Backend: be.Name(), Batch: batch, MsPerStep: 1000 * secs / float64(steps),
		StepsPerSec:   float64(steps) / secs,
		AllocsPerStep: float64(after.Mallocs-before.Mallocs) / float64(steps),
		BytesPerStep:  float64(after.TotalAlloc-before.TotalAlloc) / float64(steps),
		MFLOP:         flops / 1e6, GFLOPs: flops * float64(steps) / secs / 1e9}, nil
}
