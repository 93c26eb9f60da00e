package sweep

import (
	"testing"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/train"
)

func head(layer, h int, label string, scores map[string]float64) inspect.Head {
	return inspect.Head{HeadScore: analysis.HeadScore{Layer: layer, Head: h, Label: label, Scores: scores}}
}

// TestAgree: the comparison passes identical sweeps and swapped heads
// within a layer, and catches a seed whose accuracy moved, a confident
// label that changed, and circuit fractions far apart.
func TestAgree(t *testing.T) {
	c := train.Defaults("induction")
	sure := func(l string) map[string]float64 { return map[string]float64{l: 0.9, "uniform": 0.3} }
	unsure := map[string]float64{"induction": 0.5, "uniform": 0.48}
	rec := func(seed uint64, acc float64, circuit bool, heads ...inspect.Head) Record {
		cc := c
		cc.Seed = seed
		return Record{Key: "k", Config: cc, Status: StatusOK, Accuracy: acc, Circuit: circuit, Heads: heads}
	}
	var a []Record
	for s := uint64(1); s <= 10; s++ {
		a = append(a, rec(s, 0.9, s%2 == 0, head(0, 0, "previous-token", sure("previous-token")), head(0, 1, "uniform", unsure), head(1, 0, "induction", sure("induction"))))
	}
	same := Agree(a, a)
	if len(same) != 1 || !same[0].Agree || same[0].Seeds != 10 || same[0].AccuracyWithin != 10 || same[0].LabelsAgree != 10 {
		t.Fatalf("a sweep against itself: %+v", same)
	}
	b := append([]Record(nil), a...)
	// Heads swapped within a layer, and an unconfident head relabelled: still the same.
	b[0] = rec(1, 0.905, false, head(0, 1, "previous-token", sure("previous-token")), head(0, 0, "induction", unsure), head(1, 0, "induction", sure("induction")))
	if g := Agree(a, b)[0]; !g.Agree {
		t.Errorf("swapped heads: %+v", g)
	}
	// One seed of ten off by 2 points is allowed (90%); two are not.
	b[1].Accuracy = 0.88
	if g := Agree(a, b)[0]; !g.Agree || g.AccuracyWithin != 9 {
		t.Errorf("one seed off: %+v", g)
	}
	b[2].Accuracy = 0.95
	if g := Agree(a, b)[0]; g.Agree || g.AccuracyWithin != 8 || len(g.Differences) != 2 {
		t.Errorf("two seeds off: %+v", g)
	}
	b[1].Accuracy, b[2].Accuracy = 0.9, 0.9
	b[3] = rec(4, 0.9, true, head(0, 0, "uniform", sure("uniform")), head(1, 0, "induction", sure("induction")))
	if g := Agree(a, b)[0]; g.Agree || g.LabelsAgree != 9 {
		t.Errorf("a confident label changed: %+v", g)
	}
	b[3] = a[3]
	for i := range b {
		b[i].Circuit = true
	}
	if g := Agree(a, b)[0]; g.Agree || g.CircuitOverlap || g.CircuitA.Count != 5 || g.CircuitB.Count != 10 {
		t.Errorf("circuit 5 of 10 against 10 of 10: %+v", g)
	}
	failed := append([]Record(nil), a...)
	failed[0].Status = StatusFailed
	if g := Agree(failed, a)[0]; g.Seeds != 9 {
		t.Errorf("a failed run is compared: %+v", g)
	}
}
