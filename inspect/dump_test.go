package inspect

import (
	"math"
	"slices"
	"testing"

	"headlab/train"
)

// TestDumped: the dump is the first n held-out examples, their attention
// and logits; a head switched off by its mean changes the logits, and
// resampling one example is refused.
func TestDumped(t *testing.T) {
	m := trained(t, 20)
	e := evaluatorOf(t, m)
	const n = 3
	b, sn, err := Dumped(e, m, n, AblateZero, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := train.HeldOut(m)
	if b.N != n || !slices.Equal(b.Tokens, held.Tokens[:n*b.T]) || !slices.Equal(b.Targets, held.Targets[:n*b.T]) {
		t.Fatalf("batch of %d examples, not the first held-out ones", b.N)
	}
	if sn.Attention.N != n || len(sn.Logits) != n*b.T*m.Shape.Vocab {
		t.Fatalf("attention of %d examples, %d logits", sn.Attention.N, len(sn.Logits))
	}
	off := [][]bool{{false, false}, {true, false}}
	_, ablated, err := Dumped(e, m, n, AblateMean, off)
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for i := range sn.Logits {
		same = same && math.Float32bits(sn.Logits[i]) == math.Float32bits(ablated.Logits[i])
	}
	if same {
		t.Error("switching L1H0 off by its mean changed no logit")
	}
	if _, _, err := Dumped(e, m, 1, AblateResample, off); err == nil {
		t.Error("resampling one example was not refused")
	}
}
