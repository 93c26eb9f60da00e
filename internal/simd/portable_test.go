package simd

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// refGoGemm is the portable path as it was before register blocking: one
// row of c at a time, p outer, j inner. goGemm must give its bits.
func refGoGemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		if bias != nil {
			copy(ci, bias[:n])
		} else {
			clear(ci)
		}
		for p := 0; p < k; p++ {
			x := a[i*ai+p*ap]
			bp := b[p*ldb : p*ldb+n]
			for j, v := range bp {
				ci[j] += float32(x * v)
			}
		}
	}
}

// portFill is fill with some zeros of both signs, large and tiny values
// mixed in, so that signed zeros and rounding of every kind are exercised.
func portFill(r *rand.Rand, n int) []float32 {
	x := fill(r, n)
	for i := range x {
		switch r.IntN(16) {
		case 0:
			x[i] = 0
		case 1:
			x[i] = float32(math.Copysign(0, -1))
		case 2:
			x[i] *= 1e20
		case 3:
			x[i] *= 1e-20
		}
	}
	return x
}

// portFirstDiff reports the first index where got and want differ in bits.
func portFirstDiff(got, want []float32) (int, bool) {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i, false
		}
	}
	return 0, true
}

// TestGoGemmBits checks the blocked goGemm bit for bit against the plain
// loop on every shape up to 40 and some larger odd ones, for all four
// transposes (as Sgemm lays them out) and with and without bias; the
// padding around c must be left alone.
func TestGoGemmBits(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 3))
	var dims []int
	for d := 1; d <= 40; d++ {
		dims = append(dims, d)
	}
	// k crosses the micro-kernel's 16-step chunks and its tail.
	ks := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 47, 63, 300, 517}
	if testing.Short() {
		dims = []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 31, 33, 40}
		ks = []int{1, 2, 3, 5, 8, 17, 33, 300}
	}
	check := func(m, n, k int) {
		for tr := 0; tr < 4; tr++ {
			tA, tB := tr&1 != 0, tr&2 != 0
			a, b := portFill(r, m*k), portFill(r, k*n)
			if tB { // Sgemm hands Gemm the transpose of b
				bt := make([]float32, k*n)
				for j := 0; j < n; j++ {
					for p := 0; p < k; p++ {
						bt[p*n+j] = b[j*k+p]
					}
				}
				b = bt
			}
			ai, ap := k, 1
			if tA {
				ai, ap = 1, m
			}
			for _, withBias := range []bool{false, true} {
				var bias []float32
				if withBias {
					bias = portFill(r, n)
				}
				// c has a leading dimension wider than n, with guards.
				ldc := n + tr
				size := (m-1)*ldc + n + 7
				got, want := fill(r, size), make([]float32, size)
				copy(want, got)
				goGemm(m, n, k, a, ai, ap, b, n, got, ldc, bias)
				refGoGemm(m, n, k, a, ai, ap, b, n, want, ldc, bias)
				if i, ok := portFirstDiff(got, want); !ok {
					t.Fatalf("m%d n%d k%d tA %v tB %v bias %v: c[%d] = %v (%#x), want %v (%#x)",
						m, n, k, tA, tB, withBias, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range ks {
				check(m, n, k)
			}
		}
	}
	for _, s := range [][3]int{{97, 63, 129}, {1024, 33, 64}, {33, 1024, 17}, {5, 7, 1030}, {129, 129, 600}} {
		check(s[0], s[1], s[2])
	}
}

// TestGoGemmStrided checks goGemm with leading dimensions wider than the
// block (a sub-block of a, b and c) and ai, ap that are neither 1 nor k.
func TestGoGemmStrided(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 4))
	for _, s := range [][3]int{{1, 1, 1}, {5, 9, 3}, {17, 13, 29}, {40, 37, 40}, {64, 48, 300}} {
		m, n, k := s[0], s[1], s[2]
		for _, lay := range [][2]int{{3 * k, 2}, {2, 3 * m}, {k + 5, 1}, {1, m + 3}} {
			ai, ap := lay[0], lay[1]
			a := portFill(r, (m-1)*ai+(k-1)*ap+1)
			ldb, ldc := n+3, n+5
			b := portFill(r, (k-1)*ldb+n)
			bias := portFill(r, n)
			for _, bs := range [][]float32{nil, bias} {
				size := (m-1)*ldc + n
				got := fill(r, size)
				want := append([]float32(nil), got...)
				goGemm(m, n, k, a, ai, ap, b, ldb, got, ldc, bs)
				refGoGemm(m, n, k, a, ai, ap, b, ldb, want, ldc, bs)
				if i, ok := portFirstDiff(got, want); !ok {
					t.Fatalf("m%d n%d k%d ai %d ap %d bias %v: c[%d] = %v, want %v", m, n, k, ai, ap, bs != nil, i, got[i], want[i])
				}
			}
		}
	}
}

// TestPortableGELUNearKernels: geluGo and exp32 are the kernels'
// formulas with every step rounded on its own, so on a dense grid, the
// specials and random bit patterns they stay within a few float32 steps
// of every vector kernel this CPU runs (NaN in, NaN out; results
// near the subnormals within 2^-136).
func TestPortableGELUNearKernels(t *testing.T) {
	var xs []float32
	for v := -20.0; v <= 20; v += 1.0 / 8192 {
		xs = append(xs, float32(v))
	}
	inf := float32(math.Inf(1))
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-45, -1e-45,
		100, -100, 1e30, -1e30, math.MaxFloat32, -math.MaxFloat32, inf, -inf, float32(math.NaN()))
	r := rand.New(rand.NewPCG(12, 5))
	for range 1 << 18 {
		xs = append(xs, math.Float32frombits(r.Uint32()))
	}
	// ulps is how many float32 steps apart a and b are (0 for two NaNs).
	ulps := func(a, b float32) int64 {
		if a != a || b != b {
			if a != a && b != b {
				return 0
			}
			return math.MaxInt64
		}
		key := func(x float32) int64 { // orders floats, -0 and +0 one apart
			u := int64(math.Float32bits(x))
			if u>>31 != 0 {
				return -(u &^ (1 << 31)) - 1
			}
			return u
		}
		d := key(a) - key(b)
		if d < 0 {
			d = -d
		}
		if a == 0 && b == 0 {
			return 0 // zero signs: the fused and unfused forms may differ
		}
		if abs32(a-b) <= 0x1p-136 {
			return 0 // results near the subnormals hold fewer bits: absolute error
		}
		return d
	}
	vectors := 0
	for _, p := range runnablePaths() {
		if p == pathGo {
			continue
		}
		vectors++
		t.Run(p.String(), func(t *testing.T) {
			setPath(t, p)
			y, d := make([]float32, len(xs)), make([]float32, len(xs))
			GELU(xs, y, d)
			// GELU: the error scale of TestGELUAccuracy (absolute below 1,
			// relative above), where d's cancellation near x = -0.75 makes
			// float32 steps the wrong unit.
			diff := func(a, b float32) float64 {
				switch {
				case a == b || (a != a && b != b):
					return 0
				case a != a || b != b:
					return math.Inf(1)
				}
				return math.Abs(float64(a)-float64(b)) / max(1, math.Abs(float64(b)))
			}
			var worstY, worstD float64
			for i, x := range xs {
				gy, gd := geluGo(x)
				worstY, worstD = max(worstY, diff(gy, y[i])), max(worstD, diff(gd, d[i]))
				if worstY > 2.5e-7 || worstD > 4e-7 {
					t.Fatalf("x %v: geluGo %v, %v; kernel %v, %v", x, gy, gd, y[i], d[i])
				}
			}
			e := make([]float32, 0, len(xs))
			for _, x := range xs {
				e = append(e, x*6) // through exp's whole range, subnormal results too
			}
			Exp(e)
			var worstE int64
			for i, x := range xs {
				if x != x {
					continue // the kernels give 0 for NaN, exp32 NaN (below)
				}
				g := exp32(x * 6)
				worstE = max(worstE, ulps(g, e[i]))
				if worstE > 200 {
					t.Fatalf("exp(%v): exp32 %v, kernel %v", x*6, g, e[i])
				}
			}
			t.Logf("GELU within %.3g and %.3g, exp within %d steps", worstY, worstD, worstE)
		})
	}
	if g := exp32(float32(math.NaN())); g == g {
		t.Errorf("exp32(NaN) = %v", g)
	}
	if vectors == 0 && os.Getenv("CI") != "" {
		t.Fatal("no vector path to compare with on CI")
	}
}
