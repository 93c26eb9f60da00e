package bench

import (
	"os"
	"sync"
	"testing"

	"headlab/backend/cpu"
	glb "headlab/backend/gl"
	"headlab/kernels"
)

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

// BenchmarkKernels times backend/kernel/shape, uploads and readbacks
// included for gl (that is what a caller pays), and reports GFLOP/s by the
// formula in flops.
func BenchmarkKernels(b *testing.B) {
	tens := make([]*Tensors, len(Shapes))
	for i, s := range Shapes {
		tens[i] = NewTensors(s)
	}
	for _, backend := range []string{"cpu", "gl"} {
		b.Run(backend, func(b *testing.B) {
			var be kernels.Backend = cpu.New()
			if backend == "gl" {
				be = openGL(b)
			}
			for _, kc := range KernelCalls {
				b.Run(kc.Name, func(b *testing.B) {
					for i, s := range Shapes {
						b.Run(ShapeName(s), func(b *testing.B) {
							t := tens[i]
							// One untimed call: first dispatches compile
							// the shader's machine code on llvmpipe.
							if err := kc.Run(be, s, t); err != nil {
								b.Fatal(err)
							}
							n := 0
							for b.Loop() {
								if err := kc.Run(be, s, t); err != nil {
									b.Fatal(err)
								}
								n++
							}
							b.ReportMetric(Flops(s)*float64(n)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
						})
					}
				})
			}
		})
	}
}
