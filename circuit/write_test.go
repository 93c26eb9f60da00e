package circuit

import (
	"bytes"
	"testing"
)

// TestWriteReport: circuit's text lists the circuit's edges in its order,
// then the other edges with an effect (those that round to zero left
// out), and the faithfulness curve ten to a line.
func TestWriteReport(t *testing.T) {
	r := &Report{Corruption: "first-half", Direction: Noising, Examples: 8, Threshold: 0.8, Clean: 2, Corrupted: 0.5,
		Edges: []EdgeResult{
			{Edge: "a->b", Effect: 0.3, Attribution: 0.25, InCircuit: true},
			{Edge: "c->d", Effect: 0.6, Attribution: 0.5, InCircuit: true},
			{Edge: "e->f", Effect: -0.02, Attribution: 0.001},
			{Edge: "g->h", Effect: 0.004},
		},
		Circuit: []string{"c->d", "a->b"}, Faithfulness: 0.9, RankCorrelation: 0.75,
		Curve: []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9}}
	var b bytes.Buffer
	WriteReport(&b, r)
	want := `Corruption first-half, noising, on 8 held-out examples. Clean logit difference 2.000; corrupted 0.500.
Circuit: 2 of 4 edges keep 90.0% of the logit difference (threshold 80%) with every other edge patched.

| Edge | Path patching | Attribution | In circuit |
|---|---|---|---|
| c->d | 0.60 | 0.50 | yes |
| a->b | 0.30 | 0.25 | yes |
| e->f | -0.02 | 0.00 | no |

Effects are shares of the logit difference, (M_clean - M) / (M_clean - M_corrupted) noising, (M - M_corrupted) / (M_clean - M_corrupted) denoising; other edges' effects round to 0.00.
Attribution patching against path patching: rank correlation 0.750 over every edge.
Faithfulness curve (share kept by the first k edges of the attribution ranking):
  k=0: 0.00 0.10 0.20 0.30 0.40 0.50 0.60 0.70 0.80 0.85
  k=10: 0.90
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
