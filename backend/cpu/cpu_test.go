package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"headlab/kernels"
)

// TestKernelsMatchReference holds every kernel to its plain-loop original
// (reference_test.go) on causal and full shapes, including odd sizes.
func TestKernelsMatchReference(t *testing.T) {
	be := attn{}
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	for _, s := range []kernels.Shape{
		{B: 2, T: 16, H: 2, Dh: 16, Causal: true},
		{B: 3, T: 5, H: 3, Dh: 7, Causal: false},
		{B: 1, T: 40, H: 1, Dh: 33, Causal: true},
		{B: 2, T: 9, H: 4, Dh: 8, Causal: false},
	} {
		n, np := s.QKVLen(), s.ProbsLen()
		q, k, v, dO := fill(n), fill(n), fill(n), fill(n)
		p, dP := make([]float32, np), make([]float32, np)
		if err := refProbs(s, q, k, p); err != nil {
			t.Fatal(err)
		}
		if err := refMixGradP(s, dO, v, dP); err != nil {
			t.Fatal(err)
		}
		type call struct {
			name      string
			size      int
			fast, ref func(out []float32) error
		}
		for _, c := range []call{
			{"Probs", np, func(o []float32) error { return be.Probs(s, q, k, o) }, func(o []float32) error { return refProbs(s, q, k, o) }},
			{"Mix", n, func(o []float32) error { return be.Mix(s, p, v, o) }, func(o []float32) error { return refMix(s, p, v, o) }},
			{"MixGradP", np, func(o []float32) error { return be.MixGradP(s, dO, v, o) }, func(o []float32) error { return refMixGradP(s, dO, v, o) }},
			{"MixGradV", n, func(o []float32) error { return be.MixGradV(s, p, dO, o) }, func(o []float32) error { return refMixGradV(s, p, dO, o) }},
			{"ProbsGradQ", n, func(o []float32) error { return be.ProbsGradQ(s, p, dP, k, o) }, func(o []float32) error { return refProbsGradQ(s, p, dP, k, o) }},
			{"ProbsGradK", n, func(o []float32) error { return be.ProbsGradK(s, p, dP, q, o) }, func(o []float32) error { return refProbsGradK(s, p, dP, q, o) }},
		} {
			got, want := fill(c.size), fill(c.size) // garbage: kernels overwrite all
			if err := c.fast(got); err != nil {
				t.Fatal(err)
			}
			if err := c.ref(want); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Abs(float64(got[i]-want[i])) > 2e-5*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%s %s [%d]: %v, reference %v", c.name, fmt.Sprintf("%+v", s), i, got[i], want[i])
				}
			}
		}
	}
}

// TestRowSums: the four-rows-at-once sums have the bits of one row at a
// time, summed left to right, on every row length a mask leaves.
func TestRowSums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for T := 1; T <= 11; T++ {
		for _, causal := range []bool{true, false} {
			s := kernels.Shape{B: 1, T: T, H: 1, Dh: 1, Causal: causal}
			a, b := make([]float32, T*T), make([]float32, T*T)
			for i := range a {
				// Magnitudes far apart, so that another order rounds differently.
				a[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(8))))
				b[i] = float32(r.NormFloat64())
			}
			got, gotDot := make([]float32, T), make([]float32, T)
			rowSums(s, a, nil, got)
			rowSums(s, a, b, gotDot)
			for i := 0; i < T; i++ {
				var want, wantDot float32
				for j := 0; j < keys(s, i); j++ {
					want += a[i*T+j]
					wantDot += float32(a[i*T+j] * b[i*T+j])
				}
				if math.Float32bits(got[i]) != math.Float32bits(want) || math.Float32bits(gotDot[i]) != math.Float32bits(wantDot) {
					t.Fatalf("T %d causal %v row %d: sums %v, %v; one row at a time %v, %v", T, causal, i, got[i], gotDot[i], want, wantDot)
				}
			}
		}
	}
}
