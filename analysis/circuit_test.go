package analysis

import (
	"slices"
	"testing"
)

// TestFormsCircuit holds the circuit rule (docs/sweeps.md) to each of its
// clauses at their boundaries: the drop exactly at CircuitDrop and just
// below it, for either half; the layers of the two halves equal, in order
// and reversed; a half missing or not measured.
func TestFormsCircuit(t *testing.T) {
	acc := func(v float64) *float64 { return &v }
	head := func(layer int, label string) HeadScore { return HeadScore{Layer: layer, Label: label} }
	prev0, ind1 := head(0, LabelPreviousToken), head(1, LabelInduction)
	pair := []HeadScore{prev0, ind1}
	cases := []struct {
		name            string
		heads           []HeadScore
		intact          float64
		indOff, prevOff *float64
		want            bool
	}{
		// The drop.
		{"both halves cost 30 points", pair, 0.9, acc(0.6), acc(0.6), true},
		{"both exactly 20 points (1.0-0.8 rounds below 0.2)", pair, 1.0, acc(0.8), acc(0.8), true},
		{"both exactly 20 points (0.9-0.7 rounds above 0.2)", pair, 0.9, acc(0.7), acc(0.7), true},
		{"exactly 20 points from a low intact accuracy", pair, 0.35, acc(0.15), acc(0.15), true},
		{"within the rounding tolerance below 20 points", pair, 1.0, acc(0.8 + 5e-10), acc(0.8 + 5e-10), true},
		{"just past the rounding tolerance", pair, 1.0, acc(0.8 + 2e-9), acc(0.5), false},
		{"induction 19.9 points", pair, 1.0, acc(0.801), acc(0.5), false},
		{"previous-token 19.9 points", pair, 1.0, acc(0.5), acc(0.801), false},
		{"induction exactly 20, previous-token 19.9", pair, 1.0, acc(0.8), acc(0.801), false},
		{"switching off helps", pair, 0.5, acc(0.9), acc(0.9), false},
		{"no cost at all", pair, 0.9, acc(0.9), acc(0.9), false},
		{"to zero accuracy", pair, 0.2, acc(0), acc(0), true},
		// Not measured.
		{"induction joint ablation not measured", pair, 1.0, nil, acc(0.5), false},
		{"previous-token joint ablation not measured", pair, 1.0, acc(0.5), nil, false},
		{"neither measured", pair, 1.0, nil, nil, false},
		// Layer order.
		{"previous-token one layer earlier", pair, 1.0, acc(0.1), acc(0.1), true},
		{"previous-token two layers earlier", []HeadScore{head(0, LabelPreviousToken), head(2, LabelInduction)}, 1.0, acc(0.1), acc(0.1), true},
		{"same layer", []HeadScore{head(1, LabelPreviousToken), ind1}, 1.0, acc(0.1), acc(0.1), false},
		{"same layer, deeper", []HeadScore{head(2, LabelPreviousToken), head(2, LabelInduction)}, 1.0, acc(0.1), acc(0.1), false},
		{"induction earlier than previous-token", []HeadScore{head(1, LabelPreviousToken), head(0, LabelInduction)}, 1.0, acc(0.1), acc(0.1), false},
		{"heads listed induction first", []HeadScore{ind1, prev0}, 1.0, acc(0.1), acc(0.1), true},
		{"one earlier previous-token head is enough",
			[]HeadScore{head(2, LabelPreviousToken), head(0, LabelPreviousToken), ind1}, 0.9, acc(0.5), acc(0.5), true},
		{"one later induction head is enough",
			[]HeadScore{head(0, LabelInduction), head(1, LabelPreviousToken), head(2, LabelInduction)}, 0.9, acc(0.5), acc(0.5), true},
		{"both halves in both layers", []HeadScore{prev0, head(0, LabelInduction), head(1, LabelPreviousToken), ind1}, 0.9, acc(0.5), acc(0.5), true},
		// A half missing.
		{"no previous-token head", []HeadScore{ind1, head(0, "attention-sink")}, 1.0, acc(0.1), acc(0.1), false},
		{"no induction head", []HeadScore{prev0, head(1, "uniform")}, 1.0, acc(0.1), acc(0.1), false},
		{"only an induction head, in layer 2", []HeadScore{head(2, LabelInduction)}, 1.0, acc(0.1), acc(0.1), false},
		{"only a previous-token head", []HeadScore{prev0}, 1.0, acc(0.1), acc(0.1), false},
		{"no heads", nil, 1.0, acc(0.1), acc(0.1), false},
		{"labels other than the circuit's", []HeadScore{head(0, "offset -1"), head(1, "matching"), head(1, NoClearPattern)}, 1.0, acc(0.1), acc(0.1), false},
		{"a label is matched whole", []HeadScore{head(0, "previous-token shifted"), ind1}, 1.0, acc(0.1), acc(0.1), false},
	}
	for _, c := range cases {
		if got := FormsCircuit(c.heads, c.intact, c.indOff, c.prevOff); got != c.want {
			t.Errorf("%s: FormsCircuit = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCircuitLabelsArePatterns: the circuit's halves are named by the
// pattern names heads are labelled with.
func TestCircuitLabelsArePatterns(t *testing.T) {
	for _, l := range []string{LabelPreviousToken, LabelInduction} {
		if !slices.Contains(Patterns, l) {
			t.Errorf("%q is not in Patterns %v", l, Patterns)
		}
	}
}
