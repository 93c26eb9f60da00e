package analysis

import (
	"math"
	"testing"
)

func TestMainRise(t *testing.T) {
	v := []float64{0, 0.1, 0.1, 0.2, 0.9, 1, 1}
	// 20% of the way is 0.2, 80% is 0.8: from index 3 to index 4.
	if r := MainRise(v); r.Start != 3 || r.End != 4 || math.Abs(r.Amount-0.7) > 1e-12 {
		t.Fatalf("%+v", r)
	}
	// A slow climb: the range covers the middle 60%.
	ramp := []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	if r := MainRise(ramp); r.Start != 2 || r.End != 8 {
		t.Fatalf("ramp: %+v", r)
	}
	// Falling or flat curves have no rise.
	for _, c := range [][]float64{{1, 0.5, 0}, {0.3, 0.3}, {5}} {
		if r := MainRise(c); r != (Rise{}) {
			t.Fatalf("%v: %+v", c, r)
		}
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

// TestPhaseSpan: the span runs from the earlier start to the later end,
// whichever rise comes first, and covers both when one holds the other;
// a curve with no rise does not stretch it.
func TestPhaseSpan(t *testing.T) {
	for _, c := range []struct {
		p        Phase
		from, to int
	}{
		{Phase{InductionFrom: 100, InductionTo: 150, AccuracyFrom: 50, AccuracyTo: 150}, 50, 150},
		{Phase{InductionFrom: 100, InductionTo: 160, AccuracyFrom: 80, AccuracyTo: 140}, 80, 160},
		{Phase{InductionFrom: 10, InductionTo: 20, AccuracyFrom: 300, AccuracyTo: 400}, 10, 400},
		{Phase{InductionFrom: 300, InductionTo: 400, AccuracyFrom: 10, AccuracyTo: 20}, 10, 400},
		{Phase{}, 0, 0},
		// A curve that does not rise leaves the other's stretch alone.
		{Phase{AccuracyFrom: 1600, AccuracyTo: 1900, AccuracyRise: 0.9}, 1600, 1900},
		{Phase{InductionFrom: 300, InductionTo: 400, InductionRise: 0.5}, 300, 400},
		{Phase{InductionFrom: 300, InductionTo: 400, InductionRise: 0.5, AccuracyFrom: 350, AccuracyTo: 600, AccuracyRise: 0.9}, 300, 600},
	} {
		if from, to := c.p.Span(); from != c.from || to != c.to {
			t.Errorf("%+v: Span = %d, %d, want %d, %d", c.p, from, to, c.from, c.to)
		}
	}
}
