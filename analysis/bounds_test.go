package analysis

import (
	"math"
	"math/rand"
	"strings"
	"testing"
)

// TestMainRiseBoundaries: the rise starts at the last sample at or below
// 20% of the way up and ends at the first at or above 80%, both
// inclusive; fewer than two samples, or no climb, is no rise.
func TestMainRiseBoundaries(t *testing.T) {
	cases := []struct {
		values []float64
		want   Rise
	}{
		{[]float64{0, 0.2, 0.5, 0.8, 1}, Rise{1, 3, 0.6}}, // 20% and 80% exactly
		{[]float64{0, 0.25, 0.5, 0.75, 1}, Rise{0, 4, 1}},
		{[]float64{0.5, 0, 1, 0.3, 1}, Rise{1, 2, 1}}, // measured from the first value
		{[]float64{0, 1}, Rise{0, 1, 1}},              // two samples are enough
		{[]float64{5}, Rise{}},
		{nil, Rise{}},
		{[]float64{3, 3, 3}, Rise{}},
		{[]float64{1, 0.5, 0}, Rise{}},
	}
	for _, c := range cases {
		if got := MainRise(c.values); got.Start != c.want.Start || got.End != c.want.End || math.Abs(got.Amount-c.want.Amount) > 1e-12 {
			t.Errorf("MainRise(%v) = %+v, want %+v", c.values, got, c.want)
		}
	}
}

// TestPhaseChangeTogether: ranges that share a single step rise
// together; one step apart they do not.
func TestPhaseChangeTogether(t *testing.T) {
	steps := []int{0, 10, 20, 30, 40, 50}
	ind := []float64{0, 0.2, 0.5, 0.8, 1, 1} // rises over steps 10-30
	touch := []float64{0, 0, 0, 0.2, 0.9, 1} // 30-40: shares step 30
	apart := []float64{0, 0, 0, 0, 0.1, 0.9} // 40-50
	p := PhaseChange(steps, ind, touch)
	if p.InductionFrom != 10 || p.InductionTo != 30 || p.AccuracyFrom != 30 || p.AccuracyTo != 40 || !p.Together {
		t.Errorf("touching: %+v", p)
	}
	if p := PhaseChange(steps, ind, apart); p.AccuracyFrom != 40 || p.AccuracyTo != 50 || p.Together {
		t.Errorf("apart: %+v", p)
	}
	if p := PhaseChange(steps[:2], ind[:2], touch[:2]); p.InductionTo != 10 {
		t.Errorf("two samples: %+v", p)
	}
	if p := PhaseChange(steps[:1], ind[:1], touch[:1]); p != (Phase{}) {
		t.Errorf("one sample: %+v", p)
	}
}

// TestScoreHeadRange: the last head scores; one past it, or -1, panics.
func TestScoreHeadRange(t *testing.T) {
	a := randomAttention(rand.New(rand.NewSource(4)), true, 2, 2, 3, 4, 5)
	ScoreHead(a, a.L-1, a.H-1)
	for _, lh := range [][2]int{{a.L, 0}, {0, a.H}, {-1, 0}, {0, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ScoreHead(L%dH%d) of %d layers of %d heads did not panic", lh[0], lh[1], a.L, a.H)
				}
			}()
			ScoreHead(a, lh[0], lh[1])
		}()
	}
}

// TestValidateDimensions: a zero dimension, and dimensions whose product
// overflows, are invalid even with slices that match them.
func TestValidateDimensions(t *testing.T) {
	for _, a := range []*Attention{
		{N: 0, L: 1, H: 1, T: 1}, {N: 1, L: 0, H: 1, T: 1, Tokens: []int{0}},
		{N: 1, L: 1, H: 0, T: 1, Tokens: []int{0}}, {N: 1, L: 1, H: 1, T: 0},
		{N: math.MaxInt / 2, L: 1, H: 1, T: 4},
		{N: 1 << 20, L: 1 << 20, H: 1 << 20, T: 1 << 10},
	} {
		if err := a.Validate(); err == nil {
			t.Errorf("N=%d L=%d H=%d T=%d validated", a.N, a.L, a.H, a.T)
		}
	}
	// N*T and N*L*H*T*T both wrap around to 0, which empty slices match:
	// only the overflow check can refuse this.
	a := &Attention{N: 1 << 32, L: 1, H: 1, T: 1 << 32}
	if err := a.Validate(); err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("wrapped-around dimensions: %v, want an overflow error", err)
	}
}
