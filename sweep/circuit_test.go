package sweep

import (
	"testing"

	"headlab/analysis"
	"headlab/inspect"
)

// TestFormsCircuitRule holds the circuit rule (docs/sweeps.md) to each
// of its clauses and to the 20-point boundary of both joint ablations.
func TestFormsCircuitRule(t *testing.T) {
	acc := func(v float64) *float64 { return &v }
	head := func(layer int, label string) inspect.Head {
		return inspect.Head{HeadScore: analysis.HeadScore{Layer: layer, Label: label}}
	}
	prev0, ind1 := head(0, LabelPreviousToken), head(1, LabelInduction)
	both := func(intact, indOff, prevOff *float64) Ablation {
		a := Ablation{Induction: Joint{Accuracy: indOff}, PreviousToken: Joint{Accuracy: prevOff}}
		if intact != nil {
			a.Intact = *intact
		}
		return a
	}
	cases := []struct {
		name  string
		heads []inspect.Head
		a     Ablation
		want  bool
	}{
		{"both halves cost 30 points", []inspect.Head{prev0, ind1}, both(acc(0.9), acc(0.6), acc(0.6)), true},
		{"both exactly 20 points", []inspect.Head{prev0, ind1}, both(acc(1.0), acc(0.8), acc(0.8)), true},
		{"induction 19.9 points", []inspect.Head{prev0, ind1}, both(acc(1.0), acc(0.801), acc(0.5)), false},
		{"previous-token 19.9 points", []inspect.Head{prev0, ind1}, both(acc(1.0), acc(0.5), acc(0.801)), false},
		{"no joint ablation measured", []inspect.Head{prev0, ind1}, both(acc(1.0), nil, acc(0.5)), false},
		{"same layer", []inspect.Head{head(1, LabelPreviousToken), ind1}, both(acc(1.0), acc(0.1), acc(0.1)), false},
		{"induction below previous-token", []inspect.Head{head(1, LabelPreviousToken), head(0, LabelInduction)}, both(acc(1.0), acc(0.1), acc(0.1)), false},
		{"no previous-token head", []inspect.Head{ind1, head(0, "attention-sink")}, both(acc(1.0), acc(0.1), acc(0.1)), false},
		{"no induction head", []inspect.Head{prev0, head(1, "uniform")}, both(acc(1.0), acc(0.1), acc(0.1)), false},
		{"one earlier previous-token head is enough",
			[]inspect.Head{head(2, LabelPreviousToken), head(0, LabelPreviousToken), ind1}, both(acc(0.9), acc(0.5), acc(0.5)), true},
		{"one later induction head is enough",
			[]inspect.Head{head(0, LabelInduction), head(1, LabelPreviousToken), head(2, LabelInduction)}, both(acc(0.9), acc(0.5), acc(0.5)), true},
		{"no heads", nil, both(acc(1.0), acc(0.1), acc(0.1)), false},
		{"same layer, deeper", []inspect.Head{head(2, LabelPreviousToken), head(2, LabelInduction)}, both(acc(1.0), acc(0.1), acc(0.1)), false},
		{"only an induction head, in layer 2", []inspect.Head{head(2, LabelInduction)}, both(acc(1.0), acc(0.1), acc(0.1)), false},
	}
	for _, c := range cases {
		if got := FormsCircuit(c.heads, c.a); got != c.want {
			t.Errorf("%s: FormsCircuit = %v, want %v", c.name, got, c.want)
		}
	}
}
