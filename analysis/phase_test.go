package analysis

import (
	"math"
	"testing"
)

func TestFastestRise(t *testing.T) {
	v := []float64{0, 0, 0.1, 0.2, 0.9, 1, 1}
	r := FastestRise(v, 1)
	if r.Start != 3 || r.End != 4 || math.Abs(r.Amount-0.7) > 1e-12 {
		t.Fatalf("%+v", r)
	}
	if r := FastestRise([]float64{5}, 3); r.Start != 0 || r.End != 0 {
		t.Fatalf("one sample: %+v", r)
	}
	// Ties go to the earliest window.
	if r := FastestRise([]float64{0, 1, 1, 2}, 1); r.Start != 0 {
		t.Fatalf("tie: %+v", r)
	}
}

// TestPhaseChangeOnSigmoids plants a phase change at step 3000 in a
// synthetic induction curve and at 3000 or 6000 in the accuracy.
func TestPhaseChangeOnSigmoids(t *testing.T) {
	sig := func(x, at float64) float64 { return 1 / (1 + math.Exp(-(x-at)/100)) }
	var steps []int
	var ind, acc, late []float64
	for s := 0; s <= 10000; s += 100 {
		steps = append(steps, s)
		ind = append(ind, 0.1+0.8*sig(float64(s), 3000))
		acc = append(acc, 0.2+0.75*sig(float64(s), 3000))
		late = append(late, 0.2+0.75*sig(float64(s), 6000))
	}
	p := PhaseChange(steps, ind, acc)
	if p.InductionFrom > 3000 || p.InductionTo < 3000 || p.AccuracyFrom > 3000 || p.AccuracyTo < 3000 || !p.Together {
		t.Fatalf("planted together at 3000: %+v", p)
	}
	p = PhaseChange(steps, ind, late)
	if p.AccuracyFrom > 6000 || p.AccuracyTo < 6000 || p.Together {
		t.Fatalf("accuracy planted at 6000: %+v", p)
	}
}
