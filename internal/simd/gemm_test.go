package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ref is C = op(A) op(B) + bias in float64.
func ref(tA, tB bool, m, n, k int, a, b, bias []float32) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			if bias != nil {
				s = float64(bias[j])
			}
			for p := 0; p < k; p++ {
				x, y := a[i*k+p], b[p*n+j]
				if tA {
					x = a[p*m+i]
				}
				if tB {
					y = b[j*k+p]
				}
				s += float64(x) * float64(y)
			}
			c[i*n+j] = s
		}
	}
	return c
}

func fill(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// TestSgemm checks every path this CPU runs against the float64 reference.
func TestSgemm(t *testing.T) { forEachPath(t, checkSgemm) }

func checkSgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 64, 96, 100}
	var s Scratch
	for _, m := range sizes {
		for _, n := range sizes {
			for _, k := range []int{0, 1, 3, 16, 33, 64} {
				for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					for _, withBias := range []bool{false, true} {
						a, b := fill(r, m*k), fill(r, k*n)
						var bias []float32
						if withBias {
							bias = fill(r, n)
						}
						// Guard cells after c must survive the masked stores.
						c := fill(r, m*n+40)
						guard := append([]float32(nil), c[m*n:]...)
						Sgemm(tr[0], tr[1], m, n, k, a, b, c, bias, &s)
						want := ref(tr[0], tr[1], m, n, k, a, b, bias)
						for i, w := range want {
							if math.Abs(float64(c[i])-w) > 1e-4*(1+math.Sqrt(float64(k))) {
								t.Fatalf("m%d n%d k%d t%v bias %v: c[%d] = %v, want %v", m, n, k, tr, withBias, i, c[i], w)
							}
						}
						for i, g := range guard {
							if c[m*n+i] != g {
								t.Fatalf("m%d n%d k%d: wrote past c", m, n, k)
							}
						}
					}
				}
			}
		}
	}
}

// TestPathsAgree checks the assembly against the Go loops (to rounding).
func TestPathsAgree(t *testing.T) {
	if cur == pathGo {
		t.Skip("no assembly path here")
	}
	r := rand.New(rand.NewPCG(3, 4))
	m, n, k := 64, 96, 32
	a, b, bias := fill(r, m*k), fill(r, k*n), fill(r, n)
	c1, c2 := make([]float32, m*n), make([]float32, m*n)
	Sgemm(false, false, m, n, k, a, b, c1, bias, nil)
	goGemm(m, n, k, a, k, 1, b, n, c2, n, bias)
	for i := range c1 {
		if math.Abs(float64(c1[i]-c2[i])) > 1e-4 {
			t.Fatalf("c[%d]: asm %v, go %v", i, c1[i], c2[i])
		}
	}
}

// BenchmarkSgemm times each path this CPU runs on the model's shapes, two
// with a column tail (n = 10, as a small vocabulary's unembedding gives),
// and squares (mode 1: A transposed, 2: B transposed).
func BenchmarkSgemm(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range runnablePaths() {
		b.Run(p.String(), func(b *testing.B) {
			for _, sh := range [][4]int{{1024, 96, 32, 0}, {1024, 32, 64, 0}, {1024, 32, 96, 2}, {32, 96, 1024, 1}, {1024, 10, 32, 0}, {1024, 32, 10, 2}, {256, 256, 256, 0}, {512, 512, 512, 0}} {
				m, n, k, mode := sh[0], sh[1], sh[2], sh[3]
				b.Run(fmt.Sprintf("%dx%dx%d_t%d", m, n, k, mode), func(bb *testing.B) {
					setPath(bb, p)
					a, bm, c := fill(r, m*k), fill(r, k*n), make([]float32, m*n)
					var s Scratch
					for bb.Loop() {
						Sgemm(mode == 1, mode == 2, m, n, k, a, bm, c, nil, &s)
					}
					bb.ReportMetric(Flops(m, n, k)*float64(bb.N)/bb.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		})
	}
}
