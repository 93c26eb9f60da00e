package inspect

import (
	"math"
	"strings"
	"testing"

	"headlab/analysis"
	"headlab/backend/cpu"
	"headlab/tasks"
	"headlab/train"
)

// trained is the default induction model after steps steps on the
// answers loss, which forms the circuit in fewer steps than next-token
// (these tests are of reading heads, not of the loss).
func trained(t *testing.T, steps int) *train.Model {
	t.Helper()
	c := train.Defaults("induction")
	c.Steps, c.Loss = steps, tasks.Answers
	m, _, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnalyze(t *testing.T) {
	m := trained(t, 300)
	rep, att, err := Analyze(m, cpu.New(), Options{})
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
	off, _, err := Analyze(m, cpu.New(), Options{Off: all})
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
	_, attOff, err := Analyze(m, cpu.New(), Options{Off: all})
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

func TestParseOrders(t *testing.T) {
	if o, err := ParseOrders("all"); err != nil || len(o) != 4 {
		t.Fatalf("all: %v %v", o, err)
	}
	if o, err := ParseOrders("greedy, random,greedy"); err != nil || len(o) != 2 || o[0] != OrderGreedy {
		t.Fatalf("greedy,random: %v %v", o, err)
	}
	if _, err := ParseOrders("oneshot,backwards"); err == nil {
		t.Fatal("an unknown order was accepted")
	}
}

// whyOneShot names the removal that cost most within the first half when
// one-shot falls below random there, and stays quiet otherwise.
func TestWhyOneShot(t *testing.T) {
	r := &PruneReport{Heads: 4, Intact: 1, Importance: []HeadImportance{{Name: "L1H0"}, {Name: "L1H1", Layer: 1, Head: 1, Importance: 0.0001}, {Name: "L0H0"}, {Name: "L0H1"}},
		Orders: []OrderCurve{
			{Order: OrderOneShot, Steps: []PruneStep{{Accuracy: 1}, {Accuracy: 0.99}, {Accuracy: 0.14}, {Accuracy: 0.1}, {Accuracy: 0.07}}},
			{Order: OrderRandom, Steps: []PruneStep{{Accuracy: 1}, {Accuracy: 0.96}, {Accuracy: 0.73}, {Accuracy: 0.13}, {Accuracy: 0.07}}},
		}}
	why := r.whyOneShot(func(l, h int) (float64, error) {
		if l != 1 || h != 1 {
			t.Errorf("asked for L%dH%d alone", l, h)
		}
		return 0.996, nil
	})
	for _, want := range []string{"14.0% against random's 73.0%", "removed L1H1", "after L1H0", "cost 85.0 points", "alone costs 0.4", "duplicate is still running"} {
		if !strings.Contains(why, want) {
			t.Errorf("why lacks %q: %s", want, why)
		}
	}
	// A head that is load-bearing alone had no duplicate: the loss was
	// flat to first order.
	why = r.whyOneShot(func(int, int) (float64, error) { return 0.12, nil })
	for _, want := range []string{"alone costs 88.0", "L1H1 is load-bearing alone", "nearly flat to first order"} {
		if !strings.Contains(why, want) {
			t.Errorf("why lacks %q: %s", want, why)
		}
	}
	if strings.Contains(why, "duplicate") {
		t.Errorf("a load-bearing head explained as a duplicate: %s", why)
	}
	r.Orders[1].Steps[2].Accuracy = 0.1
	if why := r.whyOneShot(nil); why != "" {
		t.Errorf("one-shot above random, yet: %s", why)
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
	c.Steps, c.Loss = 200, tasks.Answers // as trained's
	var rec Recorder
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

	r, err := Prune(m, cpu.New(), 16, 3, Orders)
	if err != nil {
		t.Fatal(err)
	}
	if r.Intact != res.Accuracy || r.Heads != 4 || len(r.Orders) != 4 {
		t.Fatalf("intact %v (final %v), %d heads, %d orders", r.Intact, res.Accuracy, r.Heads, len(r.Orders))
	}
	for i, c := range r.Orders {
		if c.Order != Orders[i] || len(c.Steps) != 5 || c.Steps[0].Accuracy != res.Accuracy {
			t.Fatalf("order %s: steps %+v, intact %v", c.Order, c.Steps, res.Accuracy)
		}
		// All heads off is the same set whatever the order.
		if c.Steps[4].Accuracy != r.Orders[0].Steps[4].Accuracy || c.Steps[4].Accuracy > 0.5 {
			t.Fatalf("%s, all heads off: %+v", c.Order, c.Steps[4])
		}
		// Removable is the last prefix within a point of intact.
		last := 0
		for k, s := range c.Steps {
			if s.Accuracy >= r.Intact-CostTolerance {
				last = k
			}
		}
		if c.Removable != last || c.RemovableFraction != float64(last)/4 {
			t.Errorf("%s: removable %d (%v), want %d", c.Order, c.Removable, c.RemovableFraction, last)
		}
		// Adaptive orders remove every head exactly once.
		if c.Order != OrderRandom {
			seen := map[string]bool{}
			for _, s := range c.Steps[1:] {
				seen[s.Head] = true
			}
			if len(seen) != 4 {
				t.Errorf("%s removed %v", c.Order, seen)
			}
		}
	}
	// Greedy removes first the head whose removal alone costs least on the
	// selection examples; iterative's first choice is one-shot's.
	if r.Orders[1].Steps[1].Head != r.Importance[0].Name {
		t.Errorf("iterative starts with %s, one-shot with %s", r.Orders[1].Steps[1].Head, r.Importance[0].Name)
	}
	e, err := train.NewEvaluator(m, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sel := firstExamples(train.HeldOut(m), 16)
	bestAcc, bestName := -1.0, ""
	for l := 0; l < 2; l++ {
		for h := 0; h < 2; h++ {
			acc, _, err := e.Accuracy(sel, analysis.NewMask(m.Shape.Layers, m.Shape.Heads, nil).With(l, h))
			if err != nil {
				t.Fatal(err)
			}
			if acc > bestAcc {
				bestAcc, bestName = acc, analysis.HeadNames(analysis.NewMask(m.Shape.Layers, m.Shape.Heads, nil).With(l, h))[0]
			}
		}
	}
	if g := r.Orders[2].Steps[1]; g.Head != bestName || *g.SelectAccuracy != bestAcc {
		t.Errorf("greedy starts with %s at %v, want %s at %v", g.Head, *g.SelectAccuracy, bestName, bestAcc)
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
	rep, att, err := Analyze(m, cpu.New(), Options{Relation: 0})
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
	rep, att, err = Analyze(ind, cpu.New(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ByKind != nil || att.Relations != nil || rep.Heads[0].Relations != nil {
		t.Errorf("induction got relations or kinds")
	}
}
