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
