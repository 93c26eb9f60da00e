package bench

import (
	"os"
	"sync"
	"testing"

	"headlab/backend/cpu"
	glb "headlab/backend/gl"
	"headlab/kernels"
)

// The GL device is opened once, on first use, and shared by every test
// and benchmark of the package. With no context the GL tests and
// benchmarks skip, unless CI is set, where they fail.
var (
	glOnce  sync.Once
	glDev   *glb.Device
	glError error
)

// openGL returns the shared GL device or skips (fails under CI).
func openGL(tb testing.TB) *glb.Device {
	tb.Helper()
	glOnce.Do(func() { glDev, glError = glb.New(glb.Options{}) })
	if glDev == nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("CI is set and no OpenGL 4.3 context: %v", glError)
		}
		tb.Skipf("no OpenGL 4.3 context: %v", glError)
	}
	return glDev
}

// openDevice is the CPU device, or the shared GL one.
func openDevice(tb testing.TB, backend string) kernels.Device {
	if backend == "gl" {
		return openGL(tb)
	}
	return cpu.New()
}

// BenchmarkKernels times backend/kernel/shape for one seed: the kernel
// and a Sync, its tensors resident on the device (uploaded once before),
// and reports GFLOP/s by the formula in Flops.
func BenchmarkKernels(b *testing.B) {
	for _, backend := range []string{"cpu", "gl"} {
		b.Run(backend, func(b *testing.B) {
			dev := openDevice(b, backend)
			tens := make([]*Tensors, len(Shapes))
			for i, s := range Shapes {
				t, err := NewTensors(dev, s)
				if err != nil {
					b.Fatal(err)
				}
				defer t.Free()
				tens[i] = t
			}
			for _, kc := range KernelCalls {
				b.Run(kc.Name, func(b *testing.B) {
					for i, s := range Shapes {
						b.Run(ShapeName(s), func(b *testing.B) {
							t := tens[i]
							call := func() {
								if err := kc.Run(dev, s, t); err != nil {
									b.Fatal(err)
								}
								if err := dev.Sync(); err != nil {
									b.Fatal(err)
								}
							}
							// One untimed call: first dispatches compile
							// the shader's machine code on llvmpipe.
							call()
							n := 0
							for b.Loop() {
								call()
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

// TestKernelsOnDevice: every kernel runs on resident tensors and the
// timings are positive, on the CPU and (when a context exists) on GL.
func TestKernelsOnDevice(t *testing.T) {
	s := kernels.Shape{B: 2, T: 4, H: 2, Dh: 4, Causal: true}
	for _, backend := range []string{"cpu", "gl"} {
		t.Run(backend, func(t *testing.T) {
			dev := openDevice(t, backend)
			before := dev.Stats()
			rs, err := Kernels([]kernels.Device{dev}, []kernels.Shape{s}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != len(KernelCalls) {
				t.Fatalf("%d results", len(rs))
			}
			for _, r := range rs {
				if r.Backend != backend || r.MicrosPerOp <= 0 || r.GFLOPs <= 0 {
					t.Errorf("%+v", r)
				}
			}
			// Uploaded once (q, k, v, dO), never read back.
			after := dev.Stats()
			if up, want := after.Uploaded-before.Uploaded, int64(4*4*s.QKVLen()); up != want {
				t.Errorf("uploaded %d bytes, want %d", up, want)
			}
			if rb := after.ReadBack - before.ReadBack; rb != 0 {
				t.Errorf("read back %d bytes", rb)
			}
		})
	}
}
