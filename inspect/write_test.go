package inspect

import (
	"bytes"
	"strings"
	"testing"

	"headlab/analysis"
)

// TestTwoDecimals: two decimals, and no sign on a value that rounds to
// zero.
func TestTwoDecimals(t *testing.T) {
	for v, want := range map[float64]string{0.004: "0.00", -0.004: "0.00", -0.006: "-0.01", 0.125: "0.12", 1: "1.00", -2.345: "-2.35"} {
		if got := TwoDecimals(v); got != want {
			t.Errorf("TwoDecimals(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestWritePatch: patch's table has a column per position and the sum,
// the heads then the residual streams, and the heads located.
func TestWritePatch(t *testing.T) {
	r := &PatchReport{Corruption: CorruptFirstHalf, Examples: 40, Positions: []int{3, 5},
		Clean: Score{LogitDiff: 2, Accuracy: 0.9}, Corrupted: Score{LogitDiff: 0.5, Accuracy: 0.1},
		Heads:   []Patched{{Name: "L0H0", LogitDiff: []float64{0.5, -0.001}, Total: 0.499}},
		Resid:   []Patched{{Name: "L0 resid", LogitDiff: []float64{1, 0}, Total: 1}},
		Located: []string{"L0H0"}}
	var b bytes.Buffer
	WritePatch(&b, r)
	want := `Corruption first-half on 40 held-out examples. Clean: logit difference 2.000, accuracy 90.0%; corrupted: 0.500, 10.0%.

Share of the logit difference restored, (M - M_corrupted) / (M_clean - M_corrupted), by position patched:

| Patched | 3 | 5 | sum |
|---|---|---|---|
| L0H0 | 0.50 | 0.00 | 0.50 |
| L0 resid | 1.00 | 0.00 | 1.00 |

Heads located by patching (sum at least 0.1): L0H0.
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	r.Located = nil
	b.Reset()
	WritePatch(&b, r)
	if !strings.HasSuffix(b.String(), "(sum at least 0.1): none.\n") {
		t.Errorf("no heads located:\n%s", b.String())
	}
}

// TestWritePrune: prune's table names the head each order removes (not
// random's), the largest fraction each can remove, the best orders, the
// ablation unless zero, and why one-shot lost.
func TestWritePrune(t *testing.T) {
	r := &PruneReport{Heads: 2, Intact: 0.95, Ablation: AblateMean, RandomOrders: 3, Best: []string{OrderGreedy}, Why: "duplicates.",
		Orders: []OrderCurve{
			{Order: OrderGreedy, Removable: 1, RemovableFraction: 0.5, Steps: []PruneStep{{Accuracy: 0.95}, {Head: "L0H1", Accuracy: 0.94}, {Head: "L0H0", Accuracy: 0.2}}},
			{Order: OrderRandom, Steps: []PruneStep{{Accuracy: 0.95}, {Accuracy: 0.5}, {Accuracy: 0.2}}},
		}}
	var b bytes.Buffer
	WritePrune(&b, r)
	want := `| Heads removed | Fraction | greedy: removed | greedy: accuracy | random |
|---|---|---|---|---|
| 0 | 0.00 |  | 95.0% | 95.0% |
| 1 | 0.50 | L0H1 | 94.0% | 50.0% |
| 2 | 1.00 | L0H0 | 20.0% | 20.0% |

Heads switched off by mean ablation.
Intact: 95.0%. Largest fraction of heads removable at a cost of at most 1 point:
- greedy: 1 of 2 heads (50%)
- random: 0 of 2 heads (0%)
Most removed by: greedy.

Why one-shot does worse than random: duplicates.
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := OrderTitle(OrderRandom, 3); got != "random order (mean of 3)" {
		t.Errorf("OrderTitle: %q", got)
	}
	if got := OrderTitle(OrderOneShot, 3); got != "one-shot importance (Michel et al.)" {
		t.Errorf("OrderTitle: %q", got)
	}
}

// TestWriteAttribution: attribute's table has each part's logit, logit
// difference and its logit at each answer position, then the logit lens.
func TestWriteAttribution(t *testing.T) {
	r := &AttributionReport{Examples: 10, Answers: 20, Logit: 3, LogitDiff: 2.5, MaxResidual: 1e-6, Positions: []int{7},
		Parts: []Part{{Name: "L0H0", Logit: 1.5, LogitDiff: 1.25, ByPosition: []float64{1.5}}},
		Lens:  []LensLayer{{Name: "out", Accuracy: 0.5, Probability: 0.25}}}
	var b bytes.Buffer
	WriteAttribution(&b, r)
	want := `Direct logit attribution on 10 held-out examples (20 answers): mean answer logit 3.000, logit difference 2.500; every answer's parts sum to its logit within 1.0e-06.

| Part | Logit | Logit difference | at 7 |
|---|---|---|---|
| L0H0 | 1.500 | 1.250 | 1.50 |

Logit lens: the residual stream entering each block, and the output, through the final LayerNorm and the unembedding.

| Read at | Accuracy | Answer probability |
|---|---|---|
| out | 50.0% | 0.250 |
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWritePhase(t *testing.T) {
	var w strings.Builder
	WritePhase(&w, analysis.Phase{InductionFrom: 10, InductionTo: 40, InductionRise: 0.5, AccuracyFrom: 20, AccuracyTo: 50, AccuracyRise: 0.25})
	want := "phase change: induction score rises (20% to 80% of the way) over steps 10-40 (+0.50), accuracy over steps 20-50 (+0.25): apart\n"
	if w.String() != want {
		t.Errorf("got %q, want %q", w.String(), want)
	}
}
