package inspect

import (
	"math"
	"testing"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/train"
)

func trained(t *testing.T, steps int) *train.Model {
	t.Helper()
	c := train.Defaults("induction")
	c.Steps = steps
	m, _, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseHeads(t *testing.T) {
	c := graph.Config{Layers: 2, Heads: 3}
	off, err := ParseHeads("L0H2, l1h0", c)
	if err != nil {
		t.Fatal(err)
	}
	if !off[0][2] || !off[1][0] || off[0][0] || off[1][2] {
		t.Fatalf("mask %v", off)
	}
	if got := HeadNames(off); len(got) != 2 || got[0] != "L0H2" || got[1] != "L1H0" {
		t.Fatalf("names %v", got)
	}
	for _, bad := range []string{"L2H0", "L0H3", "head1", "L0H", "L-1H0"} {
		if _, err := ParseHeads(bad, c); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAnalyze(t *testing.T) {
	m := trained(t, 300)
	rep, att, err := Analyze(m, cpu.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if att.N != ScoredExamples || att.L != 2 || att.H != 2 || att.T != 16 {
		t.Fatalf("attention of %d examples, %dx%d heads, T %d", att.N, att.L, att.H, att.T)
	}
	if err := att.Validate(); err != nil {
		t.Fatalf("captured attention is not valid: %v", err)
	}
	if len(rep.Heads) != 4 {
		t.Fatalf("%d heads reported", len(rep.Heads))
	}
	if rep.Accuracy < 0.9 {
		t.Fatalf("intact accuracy %.3f after 300 steps", rep.Accuracy)
	}
	// A trained induction model has a load-bearing induction head in L1.
	found := false
	for _, h := range rep.Heads {
		if h.Layer == 1 && h.Label == "induction" {
			found = true
		}
	}
	if !found {
		t.Errorf("no induction head in layer 1: %+v", rep.Heads)
	}

	// Switching every head off breaks the model; the report says which.
	all := [][]bool{{true, true}, {true, true}}
	off, _, err := Analyze(m, cpu.New(), all)
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Ablated) != 4 || off.Accuracy > 0.5 {
		t.Fatalf("all heads off: ablated %v, accuracy %.3f", off.Ablated, off.Accuracy)
	}
	// With every head already off, switching one more off changes nothing.
	for _, h := range off.Heads {
		if h.AblatedAccuracy != off.Accuracy {
			t.Errorf("%s: %.4f with all heads off, %.4f", h.Name, h.AblatedAccuracy, off.Accuracy)
		}
	}
	// Ablation zeroes the head's output, not its attention: layer-0
	// patterns do not change.
	_, attOff, err := Analyze(m, cpu.New(), all)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 4; n++ {
		for h := 0; h < 2; h++ {
			for i := 0; i < att.T; i++ {
				for j := 0; j < att.T; j++ {
					if math.Abs(float64(att.At(n, 0, h, i, j)-attOff.At(n, 0, h, i, j))) > 0 {
						t.Fatalf("layer 0 attention changed under ablation")
					}
				}
			}
		}
	}
}

func TestPruneOrder(t *testing.T) {
	imp := []HeadImportance{{Name: "L0H0", Importance: 0.5}, {Name: "L0H1", Importance: 0.1},
		{Name: "L1H0", Importance: 0.9}, {Name: "L1H1", Importance: 0.1}}
	got := PruneOrder(imp)
	want := []string{"L0H1", "L1H1", "L0H0", "L1H0"}
	for i, h := range got {
		if h.Name != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
	if imp[0].Name != "L0H0" {
		t.Fatal("PruneOrder sorted its input in place")
	}
}

func TestPruneAndHistory(t *testing.T) {
	c := train.Defaults("induction")
	c.Steps = 200
	rec := NewRecorder(cpu.New())
	defer rec.Close()
	m, res, err := train.Run(c, cpu.New(), 0, nil, rec.Hook(50))
	if err != nil {
		t.Fatal(err)
	}
	steps := []int{0, 50, 100, 150, 200}
	if len(rec.History) != len(steps) {
		t.Fatalf("%d records, want %d", len(rec.History), len(steps))
	}
	for k, s := range rec.History {
		if s.Step != steps[k] || len(s.Heads) != 4 || (k == 0) != (s.Loss == nil) {
			t.Fatalf("record %d: step %d, %d heads, loss %v", k, s.Step, len(s.Heads), s.Loss)
		}
	}
	if last := rec.History[len(rec.History)-1]; last.Accuracy != res.Accuracy {
		t.Fatalf("last record accuracy %v, final %v", last.Accuracy, res.Accuracy)
	}
	if rec.History[0].Accuracy > 0.5 || res.Accuracy < 0.8 {
		t.Fatalf("accuracy %v at step 0, %v at the end", rec.History[0].Accuracy, res.Accuracy)
	}

	r, err := Prune(m, cpu.New(), 16, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Steps) != 5 || r.Steps[0].Accuracy != res.Accuracy || r.Steps[0].RandomAccuracy != res.Accuracy {
		t.Fatalf("steps %+v, intact %v", r.Steps, res.Accuracy)
	}
	// All heads off is the same set whatever the order.
	if r.Steps[4].Accuracy != r.Steps[4].RandomAccuracy || r.Steps[4].Accuracy > 0.5 {
		t.Fatalf("all heads off: %+v", r.Steps[4])
	}
	for k := 1; k < len(r.Importance); k++ {
		if r.Importance[k].Importance < r.Importance[k-1].Importance {
			t.Fatalf("importance not increasing: %+v", r.Importance)
		}
	}
}

func TestAgreementRelationsAndKinds(t *testing.T) {
	c := train.Defaults("agreement")
	c.Steps = 300
	m, _, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, att, err := AnalyzeRelation(m, cpu.New(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(att.Relations) != 2 || att.Relations[0].Name != "verb->subject" {
		t.Fatalf("captured relations %v", len(att.Relations))
	}
	for _, h := range rep.Heads {
		if len(h.Relations) != 2 || h.Relations[1].Relation != "adjective->noun" {
			t.Fatalf("%s: relations %+v", h.Name, h.Relations)
		}
		// The subject's position varies: no fixed competitor finds it in
		// more than a third of the examples; an adjective's noun is mostly
		// the token before it.
		if r := h.Relations[0]; r.Baseline > 0.34 || r.Baseline <= 0 {
			t.Errorf("verb->subject baseline %v by %s", r.Baseline, r.BaselineBy)
		}
		if r := h.Relations[1]; r.BaselineBy != "offset -1" {
			t.Errorf("adjective->noun baseline %v by %s", r.Baseline, r.BaselineBy)
		}
	}
	b := rep.ByKind
	if b == nil || len(b.Kinds) != 2 || b.Relation != "verb->subject" {
		t.Fatalf("by kind: %+v", b)
	}
	// The kinds split the held-out set: their accuracies, weighted by
	// their counts, are the overall accuracy, intact and with the head off.
	var best Head
	for _, h := range rep.Heads {
		if h.Name == b.Head {
			best = h
		}
	}
	for _, h := range rep.Heads {
		if h.Relations[0].Argmax > best.Relations[0].Argmax {
			t.Errorf("%s follows verb->subject better than %s", h.Name, b.Head)
		}
	}
	n, intact, off := 0, 0.0, 0.0
	for _, k := range b.Kinds {
		n += k.Examples
		intact += k.Accuracy * float64(k.Examples)
		off += k.HeadOff * float64(k.Examples)
	}
	if n != train.HeldOutExamples || math.Abs(intact/float64(n)-rep.Accuracy) > 1e-9 || math.Abs(off/float64(n)-best.AblatedAccuracy) > 1e-9 {
		t.Errorf("kinds of %d examples: intact %v vs %v, head off %v vs %v", n, intact/float64(n), rep.Accuracy, off/float64(n), best.AblatedAccuracy)
	}
	// A task without relations gets neither.
	ind := trained(t, 20)
	rep, att, err = Analyze(ind, cpu.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ByKind != nil || att.Relations != nil || rep.Heads[0].Relations != nil {
		t.Errorf("induction got relations or kinds")
	}
}
