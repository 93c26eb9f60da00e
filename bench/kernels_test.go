// Package bench holds benchmarks that compare the attention backends.
package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"headlab/backend/cpu"
	glb "headlab/backend/gl"
	"headlab/kernels"
)

// shapes are the default training batch, a longer one and a large one.
var shapes = []kernels.Shape{
	{B: 32, T: 16, H: 2, Dh: 16, Causal: true},
	{B: 64, T: 24, H: 2, Dh: 16, Causal: true},
	{B: 256, T: 64, H: 4, Dh: 32, Causal: true},
}

// flops is the work counted for every kernel: 2*T*T*Dh per sequence-head,
// the multiply-adds of one [T,T]x[T,Dh] (or [T,Dh]x[Dh,T]) product. It
// ignores the causal mask (which halves the real work), softmax's exp and
// the dS row sums, so figures compare across kernels and masks.
func flops(s kernels.Shape) float64 {
	return 2 * float64(s.T) * float64(s.T) * float64(s.Dh) * float64(s.B*s.H)
}

// The GL backend is opened once, on first use. With no context the GL
// sub-benchmarks skip, unless CI is set, where they fail.
var (
	glOnce  sync.Once
	glBe    *glb.Backend
	glError error
)

// openGL returns the shared GL backend or skips (fails under CI).
func openGL(b *testing.B) *glb.Backend {
	b.Helper()
	glOnce.Do(func() { glBe, glError = glb.New(glb.Options{}) })
	if glBe == nil {
		if os.Getenv("CI") != "" {
			b.Fatalf("CI is set and no OpenGL 4.3 context: %v", glError)
		}
		b.Skipf("no OpenGL 4.3 context: %v", glError)
	}
	return glBe
}

// tensors are one shape's inputs and output buffers.
type tensors struct {
	q, k, v, dO, p, dP, outQKV, outP []float32
}

func makeTensors(s kernels.Shape) tensors {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	n, np := s.QKVLen(), s.ProbsLen()
	t := tensors{q: fill(n), k: fill(n), v: fill(n), dO: fill(n),
		p: make([]float32, np), dP: make([]float32, np),
		outQKV: make([]float32, n), outP: make([]float32, np)}
	// Genuine P and dP, as training feeds the backward kernels.
	c := cpu.New()
	_ = c.Probs(s, t.q, t.k, t.p)
	_ = c.MixGradP(s, t.dO, t.v, t.dP)
	return t
}

// kernelCalls are the six kernels as closures over prepared tensors.
var kernelCalls = []struct {
	name string
	run  func(be kernels.Backend, s kernels.Shape, t *tensors) error
}{
	{"Probs", func(be kernels.Backend, s kernels.Shape, t *tensors) error { return be.Probs(s, t.q, t.k, t.outP) }},
	{"Mix", func(be kernels.Backend, s kernels.Shape, t *tensors) error { return be.Mix(s, t.p, t.v, t.outQKV) }},
	{"MixGradP", func(be kernels.Backend, s kernels.Shape, t *tensors) error { return be.MixGradP(s, t.dO, t.v, t.outP) }},
	{"MixGradV", func(be kernels.Backend, s kernels.Shape, t *tensors) error {
		return be.MixGradV(s, t.p, t.dO, t.outQKV)
	}},
	{"ProbsGradQ", func(be kernels.Backend, s kernels.Shape, t *tensors) error {
		return be.ProbsGradQ(s, t.p, t.dP, t.k, t.outQKV)
	}},
	{"ProbsGradK", func(be kernels.Backend, s kernels.Shape, t *tensors) error {
		return be.ProbsGradK(s, t.p, t.dP, t.q, t.outQKV)
	}},
}

// BenchmarkKernels times backend/kernel/shape, uploads and readbacks
// included for gl (that is what a caller pays), and reports GFLOP/s by the
// formula in flops.
func BenchmarkKernels(b *testing.B) {
	tens := make([]tensors, len(shapes))
	for i, s := range shapes {
		tens[i] = makeTensors(s)
	}
	for _, backend := range []string{"cpu", "gl"} {
		b.Run(backend, func(b *testing.B) {
			var be kernels.Backend = cpu.New()
			if backend == "gl" {
				be = openGL(b)
			}
			for _, kc := range kernelCalls {
				b.Run(kc.name, func(b *testing.B) {
					for i, s := range shapes {
						name := fmt.Sprintf("B%d_T%d_H%d_Dh%d", s.B, s.T, s.H, s.Dh)
						if s.Causal {
							name += "_causal"
						}
						b.Run(name, func(b *testing.B) {
							t := &tens[i]
							// One untimed call: first dispatches compile
							// the shader's machine code on llvmpipe.
							if err := kc.run(be, s, t); err != nil {
								b.Fatal(err)
							}
							n := 0
							for b.Loop() {
								if err := kc.run(be, s, t); err != nil {
									b.Fatal(err)
								}
								n++
							}
							b.ReportMetric(flops(s)*float64(n)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
						})
					}
				})
			}
		})
	}
}
