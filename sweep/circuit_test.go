package sweep

import (
	"testing"

	"headlab/analysis"
	"headlab/inspect"
)

// TestRecordFormsCircuit: a record hands analysis.FormsCircuit (whose
// boundaries analysis tests) its heads, its intact accuracy and each
// half's joint ablation, not swapped: only the half that costs too little
// breaks the circuit.
func TestRecordFormsCircuit(t *testing.T) {
	acc := func(v float64) *float64 { return &v }
	head := func(layer int, label string) inspect.Head {
		return inspect.Head{HeadScore: analysis.HeadScore{Layer: layer, Label: label}}
	}
	heads := []inspect.Head{head(0, analysis.LabelPreviousToken), head(1, analysis.LabelInduction)}
	cases := []struct {
		name            string
		heads           []inspect.Head
		intact          float64
		indOff, prevOff *float64
		want            bool
	}{
		{"both halves cost 30 points", heads, 0.9, acc(0.6), acc(0.6), true},
		{"induction costs 10 points", heads, 0.9, acc(0.8), acc(0.6), false},
		{"previous-token costs 10 points", heads, 0.9, acc(0.6), acc(0.8), false},
		{"intact accuracy is the reference", heads, 0.7, acc(0.6), acc(0.6), false},
		{"induction not measured", heads, 0.9, nil, acc(0.6), false},
		{"layers reversed", []inspect.Head{head(1, analysis.LabelPreviousToken), head(0, analysis.LabelInduction)}, 0.9, acc(0.6), acc(0.6), false},
	}
	for _, c := range cases {
		r := Record{Heads: c.heads, Ablation: Ablation{Intact: c.intact,
			Induction: Joint{Accuracy: c.indOff}, PreviousToken: Joint{Accuracy: c.prevOff}}}
		if got := r.FormsCircuit(); got != c.want {
			t.Errorf("%s: FormsCircuit = %v, want %v", c.name, got, c.want)
		}
	}
}
