//go:build amd64 && !purego

package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBlockedBits: the cache-blocked path gives the unblocked walk's bits
// (same summation order), on shapes with partial tiles, k over several
// blocks, a transposed A (ai 1), leading dimensions wider than n, with and
// without bias, and leaves C's cells outside the product alone.
func TestBlockedBits(t *testing.T) {
	if !canRun(pathAVX2) {
		t.Skip("no AVX2 + FMA on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range []struct{ m, n, k int }{{96, 64, 700}, {2048, 256, 64}, {101, 83, 600}, {200, 1024, 257}, {54, 79, 1024}, {131, 64, 512}} {
		for _, tA := range []bool{false, true} {
			for _, withBias := range []bool{false, true} {
				if !useBlocked(s.m, s.n, s.k) {
					t.Fatalf("%+v does not take the blocked path", s)
				}
				ai, ap := s.k, 1
				if tA {
					ai, ap = 1, s.m
				}
				ldb, ldc := s.n+3, s.n+5
				a, b := fill(r, s.m*s.k), fill(r, s.k*ldb)
				var bias []float32
				if withBias {
					bias = fill(r, s.n)
				}
				want, got := fill(r, s.m*ldc), make([]float32, s.m*ldc)
				copy(got, want)
				avx2Tiles(s.m, s.n, s.k, a, ai, ap, b, ldb, want, ldc, bias)
				avx2Blocked(s.m, s.n, s.k, a, ai, ap, b, ldb, got, ldc, bias)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%+v tA %v bias %v: c[%d] = %v, unblocked %v", s, tA, withBias, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkSgemmBig: the products of a training step at 4 layers, d-model
// 256, d-ff 1024, T 64, batch 32 (2048 rows), forward and weight gradient.
func BenchmarkSgemmBig(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, s := range []struct {
		name    string
		tA      bool
		m, n, k int
	}{{"fc1", false, 2048, 1024, 256}, {"fc2", false, 2048, 256, 1024}, {"dW-fc2", true, 1024, 256, 2048}} {
		b.Run(s.name, func(b *testing.B) {
			a, bb, c := fill(r, s.m*s.k), fill(r, s.k*s.n), make([]float32, s.m*s.n)
			for b.Loop() {
				Sgemm(s.tA, false, s.m, s.n, s.k, a, bb, c, nil, nil)
			}
			b.ReportMetric(Flops(s.m, s.n, s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
