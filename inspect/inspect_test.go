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
