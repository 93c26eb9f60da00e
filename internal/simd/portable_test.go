package simd

import (
	"math"
	"math/rand/v2"
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

// refGeluGo is geluGo as it was before it was sped up.
func refGeluGo(x32 float32) (y, d float32) {
	x := float64(x32)
	ax := math.Abs(x)
	e := math.Exp(-0.5 * x * x)
	u := 1 / (1 + ax*(0.5/math.Sqrt2))
	q := erfcxQ[0]
	for _, c := range erfcxQ[1:] {
		q = float64(q*u) + c
	}
	h := 0.5 * e * q
	phi := h
	if x > 0 {
		phi = 1 - h
	}
	return float32(x * phi), float32(phi + x*e/math.Sqrt(2*math.Pi))
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

// TestGeluGoBits checks geluGo bit for bit against the unhurried version
// on a dense grid, the specials and random float32 bit patterns.
func TestGeluGoBits(t *testing.T) {
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
	for _, x := range xs {
		y, d := geluGo(x)
		wy, wd := refGeluGo(x)
		if math.Float32bits(y) != math.Float32bits(wy) || math.Float32bits(d) != math.Float32bits(wd) {
			if x != x && y != y && d != d && wy != wy && wd != wd {
				continue // NaN in, NaN out (payloads may differ)
			}
			t.Fatalf("geluGo(%v) = %v, %v, want %v, %v", x, y, d, wy, wd)
		}
	}
}
