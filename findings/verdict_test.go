package findings

import (
	"math"
	"testing"

	"headlab/sweep"
)

var nan = math.NaN()

// TestVerdictRules holds every verdict rule of the report to its
// boundary: on it agrees (the rules are inclusive), a point past it
// does not, and a rule over seeds ignores failed seeds (NaN) and never
// agrees on none.
func TestVerdictRules(t *testing.T) {
	single := []struct {
		m, p float64
		want bool
	}{
		{0.85, 0.80, true}, {0.75, 0.80, true}, {0.80, 0.80, true}, // exactly 5 points either way
		{0.851, 0.80, false}, {0.749, 0.80, false}, {0.0, 1.0, false}, {nan, 0.80, false},
	}
	for _, c := range single {
		if got := agreesSingle(c.m, c.p); got != c.want {
			t.Errorf("agreesSingle(%v, %v) = %v", c.m, c.p, got)
		}
	}
	mean := []struct {
		vals []float64
		p    float64
		want bool
	}{
		{[]float64{0.6, 0.8}, 0.6, true},        // mean 0.7: exactly 10 points
		{[]float64{0.6, 0.8}, 0.8, true},        // and below
		{[]float64{0.6, 0.802}, 0.6, false},     // 10.1 points
		{[]float64{0.7, nan}, 0.7, true},        // a failed seed is left out
		{[]float64{nan, nan}, 0.5, false},       // no finished seed
		{nil, 0.5, false},                       // no seed
		{[]float64{0.2, 0.2, 0.2}, 0.31, false}, // 11 points
		{nil, 0.05, false},                      // no seed, a published mean near 0
		{[]float64{nan}, 0.05, false},
	}
	for _, c := range mean {
		if got := agreesMean(c.vals, c.p); got != c.want {
			t.Errorf("agreesMean(%v, %v) = %v", c.vals, c.p, got)
		}
	}
	third := 1.0 / 3
	circuit := []struct {
		cp   sweep.Proportion
		want bool
	}{
		{sweep.Proportion{Count: 1, Of: 3, Low: 0.1, High: 0.6}, true},
		{sweep.Proportion{Count: 1, Of: 3, Low: third, High: 0.6}, true}, // on the low end
		{sweep.Proportion{Count: 1, Of: 3, Low: 0.1, High: third}, true}, // on the high end
		{sweep.Proportion{Count: 9, Of: 10, Low: 0.34, High: 0.99}, false},
		{sweep.Proportion{Count: 0, Of: 10, Low: 0, High: 0.33}, false},
		{sweep.Proportion{}, false},        // no seeds
		{sweep.NewProportion(0, 0), false}, // no seeds: the interval is 0 to 1
	}
	for _, c := range circuit {
		if got := circuitAgrees(c.cp); got != c.want {
			t.Errorf("circuitAgrees(%+v) = %v", c.cp, got)
		}
	}
	// The real Wilson interval of 1 of 3 and of 10 of 10.
	if !circuitAgrees(sweep.NewProportion(1, 3)) || circuitAgrees(sweep.NewProportion(10, 10)) {
		t.Errorf("Wilson: 1 of 3 %+v, 10 of 10 %+v", sweep.NewProportion(1, 3), sweep.NewProportion(10, 10))
	}
	layers := []struct {
		one, two []float64
		want     bool
	}{
		{[]float64{0.1, 0.3}, []float64{0.5, 0.9, 0.4}, true},   // median 0.5, best one-layer 0.3: exactly 20
		{[]float64{0.1, 0.31}, []float64{0.5, 0.9, 0.4}, false}, // 19 points
		{[]float64{0.1, nan}, []float64{0.3, 0.9}, true},        // median 0.6
		{[]float64{nan}, []float64{0.9}, false},
		{[]float64{0.1}, []float64{nan}, false},
		{[]float64{0.8}, []float64{0.5}, false},
	}
	for _, c := range layers {
		if got := needsTwoLayers(c.one, c.two); got != c.want {
			t.Errorf("needsTwoLayers(%v, %v) = %v", c.one, c.two, got)
		}
	}
	mask := []struct {
		with, without []float64
		want          bool
	}{
		{[]float64{0.5, 0.7}, []float64{0.4}, true},    // 60 to 40: exactly 20
		{[]float64{0.5, 0.7}, []float64{0.401}, false}, // 19.9
		{[]float64{0.9, nan}, []float64{0.1, nan}, true},
		{[]float64{nan}, []float64{0.1}, false},
		{[]float64{0.9}, nil, false},
		{[]float64{0.3}, []float64{0.6}, false}, // a rise is no fall
	}
	for _, c := range mask {
		if got := maskMatters(c.with, c.without); got != c.want {
			t.Errorf("maskMatters(%v, %v) = %v", c.with, c.without, got)
		}
	}
}

// TestThresholdComparisons: a rule with a threshold is inclusive to
// within slack, whatever the rounding, and a hair past slack is past it.
// Variables, not constants: Go folds constant arithmetic exactly.
func TestThresholdComparisons(t *testing.T) {
	one, eight, twenty, p85, p80, five := 1.0, 0.8, 0.2, 0.85, 0.80, 0.05
	for _, c := range []struct {
		name      string
		got, want bool
	}{
		{"atLeast at the threshold less slack", atLeast(twenty-slack, twenty), true},
		{"atLeast at twice the slack below", atLeast(twenty-2*slack, twenty), false},
		{"atLeast 1.0-0.8 against 0.2", atLeast(one-eight, twenty), true},
		{"atLeast above", atLeast(0.3, twenty), true},
		{"atMost at the threshold plus slack", atMost(five+slack, five), true},
		{"atMost at twice the slack above", atMost(five+2*slack, five), false},
		{"atMost 0.85-0.80 against 0.05", atMost(p85-p80, five), true},
		{"atMost below", atMost(0.01, five), true},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v", c.name, c.got)
		}
	}
}
