package findings

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// head makes a head of layer l with a label, its scores and the accuracy
// with it off.
func head(l, h int, label string, off float64, scores map[string]float64) inspect.Head {
	return inspect.Head{HeadScore: analysis.HeadScore{Name: fmt.Sprintf("L%dH%d", l, h), Layer: l, Head: h, Label: label, Scores: scores}, AblatedAccuracy: off}
}

// fake puts a finished run of c with seed s into in.
func fake(in *Input, c train.Config, s uint64, acc float64, heads ...inspect.Head) *sweep.Record {
	c.Seed = s
	r := &sweep.Record{Key: sweep.Key(c), Config: c, Status: sweep.StatusOK, Accuracy: acc, Heads: heads}
	in.ByID[r.ID()] = r
	return r
}

func newInput() *Input {
	return &Input{Plan: NewPlan(8, 8, 1, false, tasks.NextToken), ByID: map[sweep.RunID]*sweep.Record{}, Extras: map[sweep.RunID]*Extra{}}
}

// TestPlanClaims: the claims' configurations, at either loss: every
// configuration of the plan carries its loss, claim 7 trains the whole
// default run, and the regime grid runs its 9 cells at the plan's loss,
// the same 9 at the other loss, then the default on a finite training set
// and with weight decay at the plan's loss.
func TestPlanClaims(t *testing.T) {
	for _, c := range []struct{ loss, other string }{{tasks.NextToken, tasks.Answers}, {tasks.Answers, tasks.NextToken}} {
		p := NewPlan(32, 8, 1, false, c.loss)
		if p.Loss != c.loss || p.Wide.Heads != 8 || p.Wide.DModel != 64 || p.Wide.Layers != 2 || !p.UnseenTied.TiedEmbeddings || p.Unseen.TiedEmbeddings || p.Copy.Task != "copy" || p.Agreement.Task != "agreement" {
			t.Fatalf("claims' plan %+v", p)
		}
		if p.Dynamics != p.Induction || p.Dynamics.Steps != 2500 || p.dynamicsEarly() != 500 {
			t.Errorf("%s: claim 7 trains %+v for %d steps, its first rule watching %d; want the default run, 2500 and 500", c.loss, p.Dynamics, p.Dynamics.Steps, p.dynamicsEarly())
		}
		all := append([]train.Config{p.Induction, p.OneLayer, p.ReverseNoMask, p.Copy, p.Wide, p.Agreement, p.Unseen, p.UnseenTied, p.Dynamics}, p.positions()...)
		for _, cfg := range all {
			if cfg.Loss != c.loss || !strings.Contains(sweep.ConfigName(cfg), ", "+c.loss+" loss") {
				t.Errorf("plan at %s: %s is at %q", c.loss, sweep.ConfigName(cfg), cfg.Loss)
			}
		}
		for _, cfg := range []train.Config{p.Wide, p.Agreement, p.Unseen, p.UnseenTied} {
			if !p.NeedsExtra(cfg) {
				t.Errorf("%s needs no extra", sweep.Key(cfg))
			}
		}
		if p.NeedsExtra(p.Copy) {
			t.Error("copy needs an extra")
		}
		// The default model's circuit seeds need one (section 6), a seed
		// of the small set beyond them none.
		for _, c := range []struct {
			plan Plan
			seed uint64
			want bool
		}{{p, 1, true}, {p, 32, true}, {p, 33, false}, {NewPlan(4, 8, 1, false, c.loss), 4, true}, {NewPlan(4, 8, 1, false, c.loss), 5, false}} {
			ind := c.plan.Induction
			ind.Seed = c.seed
			if got := c.plan.NeedsExtra(ind); got != c.want {
				t.Errorf("seed %d of the default model of %d circuit seeds: needs an extra %v", c.seed, len(c.plan.CircuitSeeds), got)
			}
		}
		// 32 induction seeds, then 8 of the wide model, copy, agreement, the
		// two unseen variants, the four position runs, no mask and one layer.
		if n := len(p.Pairs()); n != 32+8*(1+4+4+1+1) {
			t.Errorf("%d pairs", n)
		}
		if len(p.Regime) != 0 {
			t.Errorf("regime grid: %d cells without --regime", len(p.Regime))
		}
		r := NewPlan(32, 8, 1, true, c.loss)
		if len(r.Regime) != 20 {
			t.Fatalf("regime grid at %s: %d cells, want 20", c.loss, len(r.Regime))
		}
		for i, cfg := range r.Regime {
			want := c.loss
			if i >= 9 && i < 18 {
				want = c.other
			}
			if cfg.Loss != want {
				t.Errorf("regime grid at %s: cell %d (%s) at %q, want %q", c.loss, i, sweep.ConfigName(cfg), cfg.Loss, want)
			}
		}
		// The grid's default cell is the default model: its 32 seeds are
		// trained once; the other 19 cells add 32 each.
		if r.Regime[0] != r.Induction {
			t.Errorf("regime grid at %s: default cell %+v, default model %+v", c.loss, r.Regime[0], r.Induction)
		}
		if n := len(r.Pairs()); n != 32+8*(1+4+4+1+1)+19*32 {
			t.Errorf("with the regime grid at %s: %d pairs", c.loss, n)
		}
	}
}

// TestRegimeGrid: the 20 cells at the plan's loss and at the other one,
// each moving one setting alone from the default at its loss; the last
// two move the training set and the weight decay at the plan's loss.
func TestRegimeGrid(t *testing.T) {
	for _, c := range []struct{ loss, other string }{{tasks.NextToken, tasks.Answers}, {tasks.Answers, tasks.NextToken}} {
		g := RegimeGrid(func(n int) int { return n / 10 }, c.loss)
		if len(g) != 20 {
			t.Fatalf("%s: %d cells", c.loss, len(g))
		}
		want := []string{"the default itself", "d-model 16", "d-model 64", "lr 0.001", "lr 0.01", "batch 8", "batch 128", "100 steps", "500 steps"}
		for half, loss := range []string{c.loss, c.other} {
			base := train.Defaults("induction")
			base.Loss, base.Steps = loss, 250
			for i, w := range want {
				cell := g[9*half+i]
				if got := regimeChange(base, cell); got != w || cell.TrainExamples != 0 || cell.WeightDecay != 0 {
					t.Errorf("%s: cell %d at %s changes %q (%+v), want %q", c.loss, 9*half+i, loss, got, cell, w)
				}
			}
		}
		base := g[0]
		if got := regimeChange(base, g[9]); got != "the "+c.other+" loss" {
			t.Errorf("%s: the other loss's default changes %q", c.loss, got)
		}
		if got := regimeChange(base, g[18]); got != "a set of 2000 training sequences" || g[18].Loss != c.loss {
			t.Errorf("%s: cell 18 changes %q at %s", c.loss, got, g[18].Loss)
		}
		if got := regimeChange(base, g[19]); got != "weight decay 0.1" || g[19].Loss != c.loss {
			t.Errorf("%s: cell 19 changes %q at %s", c.loss, got, g[19].Loss)
		}
		if got := regimeCellName(g[18]); got != c.loss+" loss, d-model 32, lr 0.003, batch 32, 250 steps, 2000 training sequences" {
			t.Errorf("cell 18 named %q", got)
		}
		if got := regimeCellName(g[19]); got != c.loss+" loss, d-model 32, lr 0.003, batch 32, 250 steps, weight decay 0.1" {
			t.Errorf("cell 19 named %q", got)
		}
		if got := regimeChange(base, g[12]); got != "the "+c.other+" loss with lr 0.001" {
			t.Errorf("%s: cell 12 changes %q", c.loss, got)
		}
	}
}

func TestClaimCountRules(t *testing.T) {
	if need(8, 6) != 6 || need(8, 7) != 7 || need(2, 6) != 2 || need(4, 7) != 4 {
		t.Fatal("need")
	}
	// Claim 2: 7 of 8 majority seeds within 2 points agree, 6 do not.
	for _, within := range []int{7, 6} {
		in := newInput()
		for s := uint64(1); s <= 8; s++ {
			off := 0.99
			if int(s) > within {
				off = 0.95
			}
			fake(in, in.Plan.Majority, s, 1, head(0, 0, "uniform", off, nil), head(0, 1, "uniform", 0.985, nil))
		}
		if c := in.claim2(); c.Agrees != (within == 7) || !strings.HasPrefix(c.Measured, fmt.Sprint(within, " of 8")) {
			t.Errorf("claim 2 with %d within: agrees %v, %q", within, c.Agrees, c.Measured)
		}
	}
}

func TestClaim3PinnedAndUsed(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		u := 0.98
		if s > 6 {
			u = 0.96 // pinned too loosely
		}
		fake(in, in.Plan.ReverseNoPositions, s, 0.9,
			head(0, 0, "uniform", 0.75, map[string]float64{"uniform": u}),
			head(0, 1, "previous-token", 0.88, map[string]float64{"uniform": 0.5}),
			head(1, 0, "uniform", 0.2, map[string]float64{"uniform": 0.99})) // layer 1 does not count
	}
	c := in.claim3()
	if !c.Agrees || !strings.HasPrefix(c.Measured, "6 of 8") || c.First == nil || !c.First.Agrees || !strings.HasPrefix(c.First.Measured, "6 of 8") {
		t.Errorf("claim 3: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	// The other layer-0 head costs as much: used, but not more than it.
	// The revised rule asks only that it costs 10 points.
	seed1 := in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.ReverseNoPositions), Seed: 1}]
	seed1.Heads[1].AblatedAccuracy = 0.75
	if c := in.claim3(); !c.Agrees || !strings.HasPrefix(c.Measured, "6 of 8") || c.First.Agrees || !strings.HasPrefix(c.First.Measured, "5 of 8") {
		t.Errorf("claim 3 with a layer-0 twin: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	// Seed 1's uniform head now costs 5 points: used by neither rule.
	seed1.Heads[1].AblatedAccuracy, seed1.Heads[0].AblatedAccuracy = 0.88, 0.85
	if c := in.claim3(); c.Agrees || !strings.HasPrefix(c.Measured, "5 of 8") || c.First.Agrees {
		t.Errorf("claim 3 agrees with 5 seeds: %q, first %+v", c.Measured, c.First)
	}
}

func TestClaim4Sinks(t *testing.T) {
	in := newInput()
	fake(in, in.Plan.Induction, 1, 1, head(0, 0, "previous-token", 0.9, nil), head(1, 0, "induction", 0.8, nil))
	if c := in.claim4(); c.Agrees || !c.Untested || c.Measured != "no sink heads" {
		t.Errorf("no sinks: %v %v %q", c.Agrees, c.Untested, c.Measured)
	}
	fake(in, in.Plan.Wide, 1, 1, head(0, 0, "attention-sink", 1, nil), head(0, 1, "attention-sink", 0.995, nil), head(1, 0, "uniform", 0.97, nil))
	if c := in.claim4(); !c.Agrees || c.Untested || !strings.HasPrefix(c.Measured, "2 sinks") || c.First == nil || !c.First.Agrees || c.First.Measured != c.Measured {
		t.Errorf("free sinks: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	// The other heads cost nothing either: a sink is not below them.
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Wide), Seed: 1}].Heads[2].AblatedAccuracy = 1
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Induction), Seed: 1}].Heads[0].AblatedAccuracy = 1
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Induction), Seed: 1}].Heads[1].AblatedAccuracy = 1
	if c := in.claim4(); c.Agrees || c.Untested || c.First.Agrees {
		t.Errorf("sinks no cheaper than the rest: %q, first %+v", c.Measured, c.First)
	}
}

// TestClaim4Untested: with no head labelled attention-sink the revised
// rule has nothing to test: "untested", never "differs", and no line
// under "Where we differ"; the rule first fixed had no such verdict and
// differs. The heads whose sink score is at least 0.4 (exactly 0.4 is,
// 0.3999 is not) are reported apart, with the distribution of every
// head's sink score, and decide nothing.
func TestClaim4Untested(t *testing.T) {
	in := newInput()
	p := in.Plan
	sunk := func(h inspect.Head, sink float64) inspect.Head {
		h.Sink = sink
		return h
	}
	fake(in, p.Wide, 1, 1, sunk(head(0, 0, "uniform", 0.97, nil), 0.4), sunk(head(0, 1, "previous-token", 0.5, nil), 0.3999),
		sunk(head(1, 0, "induction", 0.9, nil), 0.05))
	fake(in, p.Induction, 1, 1, sunk(head(0, 0, "previous-token", 1, nil), 1), sunk(head(1, 0, "induction", 0.9, nil), 0.95))
	failed(in, p.Copy, 1) // a failed run's heads are not in the grid
	c := in.claim4()
	if c.Agrees || !c.Untested || c.Measured != "no sink heads" || c.First == nil || c.First.Agrees || c.First.Untested || c.First.Measured != "no sink heads" {
		t.Errorf("no labelled sink: agrees %v untested %v %q, first %+v", c.Agrees, c.Untested, c.Measured, c.First)
	}
	body := strings.Join(c.Body, "\n")
	wantIn(t, "no labelled sink", body,
		"Sink scores (mean attention on key 0) of every head in the grid:\n\n"+
			"| Sink score | 0.0-0.1 | 0.1-0.2 | 0.2-0.3 | 0.3-0.4 | 0.4-0.5 | 0.5-0.6 | 0.6-0.7 | 0.7-0.8 | 0.8-0.9 | 0.9-1.0 |\n"+
			"|---|---|---|---|---|---|---|---|---|---|---|\n"+
			"| Heads | 1 | 0 | 0 | 1 | 1 | 0 | 0 | 0 | 0 | 2 |\n\n"+
			"Median 0.400, max 1.000 over 5 heads.",
		// 0.4, 1 and 0.95: costs 3, 0 and 10 points; every head is "not
		// labelled attention-sink": costs 3, 50, 10, 0, 10.
		"Heads with a sink score of 0.4 or more, labelled or not: 3 ("+sweep.ConfigName(p.Induction)+": 2; "+sweep.ConfigName(p.Wide)+": 1); median cost 3.00 points (max 10.0), against 10.00 for the heads not labelled attention-sink.",
		"No head of the 5 heads in the grid is labelled attention-sink.")
	md, got := write(func(b *strings.Builder, t *tally) { claimSection(b, t, p.Loss, c) })
	wantIn(t, "no labelled sink", md, "Verdict under the rule first fixed: **differs** (no sink heads). Verdict under the revised rule: untested (no sink heads).")
	wantRows(t, "no labelled sink", got, [][4]string{{"claim 4: attention sinks are no-ops", "99.7% with the sink off, 99.7% intact", "no sink heads", "untested"}})

	// No head scores 0.4 or more either.
	in = newInput()
	fake(in, p.Wide, 1, 1, sunk(head(0, 0, "uniform", 0.97, nil), 0.3999))
	c = in.claim4()
	wantIn(t, "no sink score", strings.Join(c.Body, "\n"), "No head has a sink score of 0.4 or more.", "| Heads | 0 | 0 | 0 | 1 | 0 |")
	if !c.Untested || strings.Contains(strings.Join(c.Body, "\n"), "labelled or not") {
		t.Errorf("no sink score: untested %v\n%s", c.Untested, strings.Join(c.Body, "\n"))
	}

	// A labelled sink tests the rule, whatever its sink score; the heads
	// scored 0.4 or more are still reported apart.
	in = newInput()
	fake(in, p.Wide, 1, 1, sunk(head(0, 0, "attention-sink", 0.995, nil), 0.2), sunk(head(0, 1, "uniform", 0.9, nil), 0.6))
	c = in.claim4()
	if !c.Agrees || c.Untested || !c.First.Agrees || c.Measured != "1 sinks, median cost 0.50 vs 10.00 points" {
		t.Errorf("a labelled sink: %v %v %q, first %+v", c.Agrees, c.Untested, c.Measured, c.First)
	}
	wantIn(t, "a labelled sink", strings.Join(c.Body, "\n"), "Heads with a sink score of 0.4 or more, labelled or not: 1 ("+sweep.ConfigName(p.Wide)+": 1); median cost 10.00 points")
}

// TestClaims1And5: claim 1 asks each task's signature in 6 of 8 seeds;
// first on plain copy, revised on induction (the note's rotated copy
// task), where the signature is a previous-token head in layer 0 and an
// induction head in layer 1.
func TestClaims1And5(t *testing.T) {
	in := newInput()
	p := in.Plan
	for s := uint64(1); s <= 8; s++ {
		fake(in, p.Reverse, s, 1, head(0, 0, "mirror shifted", 1, nil))
		fake(in, p.Majority, s, 1, head(0, 0, "uniform", 1, nil))
		copyHeads := []inspect.Head{head(0, 0, "previous-token", 1, map[string]float64{"offset": 0.9, "induction": 0.3}), head(1, 0, "induction", 1, map[string]float64{"induction": 0.5})}
		if s > 6 {
			copyHeads[1].Label = "offset -7"
		}
		fake(in, p.Copy, s, 1, copyHeads...)
		indHeads := []inspect.Head{head(0, 0, "previous-token", 1, nil), head(1, 0, "induction", 1, map[string]float64{"induction": 0.99, "position": 0.2})}
		switch s {
		case 7: // both halves, in the wrong layers
			indHeads[0].Layer, indHeads[1].Layer = 1, 0
		case 8: // no previous-token head
			indHeads[0].Label = "uniform"
		}
		fake(in, p.Induction, s, 1, indHeads...)
	}
	if c := in.claim1(); !c.Agrees || c.Measured != "reverse 8/8, majority 8/8, induction 6/8" || c.First == nil || !c.First.Agrees || c.First.Measured != "reverse 8/8, majority 8/8, copy 6/8" {
		t.Errorf("claim 1: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	if c := in.claim5(); !c.Agrees || c.Measured != "copy: shortcut wins 8/8; induction: induction wins 8/8" {
		t.Errorf("claim 5: %v %q", c.Agrees, c.Measured)
	}
	in.ByID[sweep.RunID{Key: sweep.Key(p.Copy), Seed: 1}].Heads[0].Label = "uniform"
	if c := in.claim1(); !c.Agrees || c.First.Agrees || c.First.Measured != "reverse 8/8, majority 8/8, copy 5/8" {
		t.Errorf("claim 1 with copy 5/8: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	in.ByID[sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}].Heads[1].Label = "offset -7"
	if c := in.claim1(); c.Agrees || c.Measured != "reverse 8/8, majority 8/8, induction 5/8" {
		t.Errorf("claim 1 with induction 5/8: %v %q", c.Agrees, c.Measured)
	}
	// Copy back at 6 of 8: the first rule does not look at induction.
	in.ByID[sweep.RunID{Key: sweep.Key(p.Copy), Seed: 1}].Heads[0].Label = "previous-token"
	if c := in.claim1(); c.Agrees || !c.First.Agrees {
		t.Errorf("claim 1 with copy 6/8, induction 5/8: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	// Reverse at 5 of 8 fails both rules.
	for s := uint64(1); s <= 3; s++ {
		in.ByID[sweep.RunID{Key: sweep.Key(p.Reverse), Seed: s}].Heads[0].Label = "uniform"
	}
	in.ByID[sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}].Heads[1].Label = "induction"
	if c := in.claim1(); c.Agrees || c.First.Agrees || c.Measured != "reverse 5/8, majority 8/8, induction 6/8" {
		t.Errorf("claim 1 with reverse 5/8: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
}

// TestClaim6Fraction: among the seeds that learned, first the fraction
// with every head labelled, revised the fraction that forms the circuit;
// each agrees when not every learned seed is readable.
func TestClaim6Fraction(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		label := "induction"
		if s == 3 {
			label = analysis.NoClearPattern
		}
		acc := 1.0
		if s == 8 {
			acc = 0.9 // not learned: left out
		}
		fake(in, in.Plan.Induction, s, acc, head(0, 0, label, 1, nil)).Circuit = s != 5
	}
	c := in.claim6()
	if !c.Agrees || !strings.HasPrefix(c.Measured, "6/7") || c.First == nil || !c.First.Agrees || !strings.HasPrefix(c.First.Measured, "6/7") {
		t.Errorf("claim 6: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	wantIn(t, "claim 6", strings.Join(c.Body, "\n"), "Seeds with an unlabelled head: 3.", "Seeds that learned the task without it: 5.")
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Induction), Seed: 3}].Heads[0].Label = "induction"
	if c := in.claim6(); !c.Agrees || c.First.Agrees || !strings.HasPrefix(c.First.Measured, "7/7") {
		t.Errorf("every learned seed labelled, yet %q", c.First.Measured)
	}
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Induction), Seed: 5}].Circuit = true
	if c := in.claim6(); c.Agrees || !strings.HasPrefix(c.Measured, "7/7") {
		t.Errorf("every learned seed forms the circuit, yet %q", c.Measured)
	}
}

// TestClaim6WilsonUpperBound: the revised rule agrees when the upper end
// of the readable fraction's Wilson interval is below 1: with every
// learned seed readable it is exactly 1, with one not it is below, over
// few seeds or the 32 of the default; with no learned seed there is no
// fraction.
func TestClaim6WilsonUpperBound(t *testing.T) {
	for _, c := range []struct {
		seeds, circuit int
		want           bool
		measured       string
	}{
		{1, 1, false, "1/1 = 100.0% [20.7%, 100.0%]"},
		{2, 1, true, "1/2 = 50.0% [9.5%, 90.5%]"},
		{8, 8, false, "8/8 = 100.0% [67.6%, 100.0%]"},
		{8, 7, true, "7/8 = 87.5% [52.9%, 97.8%]"},
		{32, 32, false, "32/32 = 100.0% [89.3%, 100.0%]"},
		{32, 31, true, "31/32 = 96.9% [84.3%, 99.4%]"},
		{0, 0, false, "0/0 = 0.0% [0.0%, 100.0%]"},
	} {
		in := newInput()
		in.Plan = NewPlan(max(c.seeds, 1), 8, 1, false, tasks.NextToken)
		for s := 1; s <= c.seeds; s++ {
			fake(in, in.Plan.Induction, uint64(s), 1, head(1, 0, "induction", 0.5, nil)).Circuit = s <= c.circuit
		}
		got := in.claim6()
		if got.Agrees != c.want || got.Measured != c.measured {
			t.Errorf("%d of %d seeds form the circuit: agrees %v %q, want %v %q", c.circuit, c.seeds, got.Agrees, got.Measured, c.want, c.measured)
		}
	}
}

// TestClaim7Burst: each DynamicsSeed carries the whole default run's
// phase (the revised rule's) and that of its first steps (the first
// rule's); each rule reads its own, against its own step count.
func TestClaim7Burst(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		whole := analysis.Phase{InductionFrom: 1000, InductionTo: 1200, AccuracyFrom: 1100, AccuracyTo: 1250, Together: true}
		early := analysis.Phase{InductionFrom: 200, InductionTo: 240, AccuracyFrom: 220, AccuracyTo: 250, Together: true}
		if s == 8 {
			early.AccuracyTo = 300 // a slow rise: 80 steps of 500
		}
		in.Dynamics = append(in.Dynamics, DynamicsSeed{Seed: s, Steps: 2500, Phase: whole, EarlySteps: 500, Early: early})
	}
	if c := in.claim7(); !c.Agrees || c.Measured != "8 of 8 seeds" || c.First == nil || !c.First.Agrees || c.First.Measured != "7 of 8 seeds" {
		t.Errorf("claim 7: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	in.Dynamics[0].Early.Together = false
	if c := in.claim7(); !c.Agrees || c.First.Agrees || c.First.Measured != "6 of 8 seeds" {
		t.Errorf("claim 7 with 6 early: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	// The whole run's rises apart in one seed, slow in another: 6 of 8.
	in.Dynamics[1].Phase.Together = false
	in.Dynamics[2].Phase.AccuracyTo = 1400 // 300 steps of 2500
	if c := in.claim7(); c.Agrees || c.Measured != "6 of 8 seeds" {
		t.Errorf("claim 7 with 6 over the whole run: %v %q", c.Agrees, c.Measured)
	}
	wantIn(t, "claim 7", strings.Join(in.claim7().Body, "\n"),
		"| 1 | 1000-1200 | 1100-1250 | yes | yes (8%) | yes | 200-240 | 220-250 | no | yes (8%) | no |",
		"| 2 | 1000-1200 | 1100-1250 | no | yes (8%) | no | 200-240 | 220-250 | yes | yes (8%) | yes |",
		"| 3 | 1000-1200 | 1100-1400 | yes | no (12%) | no | 200-240 | 220-250 | yes | yes (8%) | yes |",
		"| 8 | 1000-1200 | 1100-1250 | yes | yes (8%) | yes | 200-240 | 220-300 | yes | no (16%) | no |")
}

func TestClaims8To10FromExtras(t *testing.T) {
	in := newInput()
	p := in.Plan
	curve := func(order string, removable float64) inspect.OrderCurve {
		return inspect.OrderCurve{Order: order, RemovableFraction: removable}
	}
	yes, no := 0.95, 0.9
	for s := uint64(1); s <= 8; s++ {
		id := func(c train.Config) sweep.RunID { return sweep.RunID{Key: sweep.Key(c), Seed: s} }
		g := 0.5
		if s > 6 {
			g = 0.4375
		}
		in.Extras[id(p.Wide)] = &Extra{Prune: &inspect.PruneReport{Orders: []inspect.OrderCurve{curve(inspect.OrderOneShot, 0.25), curve(inspect.OrderGreedy, g)}}}
		fake(in, p.Agreement, s, 1)
		att := 0.84 // 11 points above the heads' 0.73 when off together
		if s > 6 {
			att = 0.82
		}
		joint := 0.73
		in.Extras[id(p.Agreement)] = &Extra{AttractorIntact: &att, SyntaxOff: &joint,
			Syntax: []SyntaxHead{{Name: "L1H0", Argmax: 0.7, Baseline: 0.25, AttractorOff: 0.8}, {Name: "L1H1", Argmax: 0.8, Baseline: 0.25, AttractorOff: 0.73}}}
		fake(in, p.Unseen, s, 1)
		fake(in, p.UnseenTied, s, 1)
		u := 0.0
		in.Extras[id(p.Unseen)] = &Extra{Unseen: &u}
		tied := &no
		if s <= 6 {
			tied = &yes
		}
		in.Extras[id(p.UnseenTied)] = &Extra{Unseen: tied}
	}
	if c := in.claim8(); !c.Agrees || c.Measured != "6 of 8 seeds" {
		t.Errorf("claim 8: %v %q", c.Agrees, c.Measured)
	}
	if c := in.claim9(); !c.Agrees || c.Measured != "6 of 8 seeds" || c.First == nil || !c.First.Agrees || c.First.Measured != "6 of 8 seeds" {
		t.Errorf("claim 9: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	wantIn(t, "claim 9", strings.Join(in.claim9().Body, "\n"), "| 1 | 100.0% | 84.0% | L1H0 0.70 / 0.25 / 80.0%, L1H1 0.80 / 0.25 / 73.0% | yes | 73.0% | yes |",
		"| 7 | 100.0% | 82.0% | L1H0 0.70 / 0.25 / 80.0%, L1H1 0.80 / 0.25 / 73.0% | no | 73.0% | no |")
	// No single head costs 10 points, all of them together do: only the
	// revised rule holds.
	for s := uint64(1); s <= 8; s++ {
		x := in.Extras[sweep.RunID{Key: sweep.Key(p.Agreement), Seed: s}]
		x.Syntax[1].AttractorOff = 0.8
	}
	if c := in.claim9(); !c.Agrees || c.First.Agrees || c.First.Measured != "0 of 8 seeds" {
		t.Errorf("claim 9 with the heads load-bearing only together: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	// Chance 1/7: 0.95 is 81 points above, 0.9 76; both pass, so 8 of 8.
	if c := in.claim10(); !c.Agrees || !strings.HasPrefix(c.Measured, "tied 8 of 8") || !strings.Contains(c.Measured, "untied mean 0.0%") {
		t.Errorf("claim 10: %v %q", c.Agrees, c.Measured)
	}
	low := 0.3 // 15.7 points above chance
	for s := uint64(1); s <= 3; s++ {
		in.Extras[sweep.RunID{Key: sweep.Key(p.UnseenTied), Seed: s}] = &Extra{Unseen: &low}
	}
	if c := in.claim10(); c.Agrees {
		t.Errorf("claim 10 with 5 seeds: %q", c.Measured)
	}
}

// TestRegimeClosestCell: the cell with the published model's heads is
// named by every setting, its loss first, at either half of the grid.
func TestRegimeClosestCell(t *testing.T) {
	for _, c := range []struct {
		loss string
		cell int
		name string
	}{
		{tasks.NextToken, 4, "next-token loss, d-model 32, lr 0.01, batch 32, 2500 steps"}, // lr 1e-2 at the plan's loss
		{tasks.Answers, 13, "next-token loss, d-model 32, lr 0.01, batch 32, 2500 steps"},  // lr 1e-2 at the other loss
		{tasks.NextToken, 18, "next-token loss, d-model 32, lr 0.003, batch 32, 2500 steps, 2000 training sequences"},
		{tasks.Answers, 19, "answers loss, d-model 32, lr 0.003, batch 32, 2500 steps, weight decay 0.1"},
	} {
		in := newInput()
		in.Plan = NewPlan(3, 2, 1, true, c.loss)
		in.Plan.CircuitSeeds = []uint64{1, 2, 3}
		for i, cfg := range in.Plan.Regime {
			for s := uint64(1); s <= 3; s++ {
				r := fake(in, cfg, s, 1, head(0, 0, "previous-token", 0.99, nil), head(1, 0, "induction", 0.99, nil))
				// The cell: load-bearing heads, a sink, a circuit in 1 of 3.
				if i == c.cell {
					r.Heads[1].AblatedAccuracy = 0.3
					r.Heads = append(r.Heads, head(1, 1, "attention-sink", 1, nil))
					r.Circuit = s == 1
				}
			}
		}
		cells := in.RegimeCells()
		if len(cells) != 20 || cells[c.cell].Config != in.Plan.Regime[c.cell] || cells[c.cell].LoadBearing != 1 || cells[c.cell].Sinks != 1 || cells[c.cell].Circuit.Count != 1 {
			t.Fatalf("%s: cells %+v", c.loss, cells[c.cell])
		}
		var b strings.Builder
		var got tally
		in.regimeSection(&b, &got)
		if !strings.Contains(b.String(), "**Closest cell: "+c.name+"**") || len(got.rows) != 1 || got.rows[0][3] != "agrees" || got.rows[0][2] != "closest "+c.name+": circuit 33.3%, load-bearing 100.0%, sink 100.0%" || len(got.differs) != 0 {
			t.Errorf("%s, cell %d: regime section %q, rows %v", c.loss, c.cell, b.String(), got.rows)
		}
	}
}

// TestRegimeReading: the words under the grid follow its numbers.
func TestRegimeReading(t *testing.T) {
	grid := RegimeGrid(func(n int) int { return n }, tasks.NextToken)
	cells := make([]RegimeCell, len(grid))
	for i, c := range grid {
		cells[i] = RegimeCell{Config: c, Seeds: 8, Circuit: sweep.NewProportion(7, 8), LoadBearing: 0.25}
	}
	cells[3].Circuit = sweep.NewProportion(4, 8)                              // lr 1e-3: nearest a third, interval above it
	cells[6].LoadBearing = 0.75                                               // batch 128
	cells[9].Circuit, cells[9].LoadBearing = sweep.NewProportion(6, 8), 0.625 // the answers loss's default
	got := regimeReading(cells)
	for _, want := range []string{"no cell grows an attention-sink head (160 seeds in all)", "not a matter of the loss, d-model, learning rate, batch, steps, a finite training set or weight decay",
		"The answers loss changes the default's circuit fraction from 87.5% to 75.0%, its load-bearing single heads from 25.0% to 62.5% and its sinks from 0.0% to 0.0%.",
		"nearest a third is lr 0.001 (50.0%, against 87.5% at the default)",
		"commonest at batch 128 (75.0% of seeds, against 25.0%)", "No cell gives all three of the published model's properties at once"} {
		if !strings.Contains(got, want) {
			t.Errorf("reading lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "still above a third") {
		t.Errorf("4 of 8 has a third inside its interval:\n%s", got)
	}
	cells[3].Circuit = sweep.NewProportion(7, 8)
	cells[1].Circuit, cells[1].Sinks, cells[1].LoadBearing = sweep.NewProportion(3, 8), 0.25, 0.75 // d-model 16: the published heads
	got = regimeReading(cells)
	for _, want := range []string{"What the grid shows: 1 of 20 cells grow an attention-sink head", "nearest a third is d-model 16", "The published model's heads appear at d-model 16."} {
		if !strings.Contains(got, want) {
			t.Errorf("reading lacks %q:\n%s", want, got)
		}
	}
	cells[1].Circuit = sweep.NewProportion(8, 8)
	if got = regimeReading(cells); !strings.Contains(got, "still above a third by its whole interval") {
		t.Errorf("every fraction far above a third:\n%s", got)
	}
	// An interval that starts at a third holds it.
	cells[1].Circuit = sweep.Proportion{Count: 3, Of: 8, Fraction: 0.375, Low: 1.0 / 3, High: 0.7}
	if got = regimeReading(cells); !strings.Contains(got, "nearest a third is d-model 16") || strings.Contains(got, "still above") {
		t.Errorf("an interval from a third:\n%s", got)
	}
	// A cell at the other loss is named by both changes; without a run of
	// the other loss's default there is no sentence on it.
	cells[1].Circuit, cells[1].Sinks = sweep.NewProportion(7, 8), 0
	cells[12].Circuit, cells[12].Sinks, cells[12].LoadBearing = sweep.NewProportion(3, 8), 0.125, 0.5 // answers, lr 1e-3
	cells[9] = RegimeCell{Config: grid[9]}
	got = regimeReading(cells)
	for _, want := range []string{"What the grid shows: 1 of 19 cells grow an attention-sink head", "nearest a third is the answers loss with lr 0.001 (37.5%, against 87.5% at the default)",
		"The published model's heads appear at the answers loss with lr 0.001."} {
		if !strings.Contains(got, want) {
			t.Errorf("reading lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "loss changes the default's") {
		t.Errorf("a sentence on the other loss's default without its runs:\n%s", got)
	}
}

func TestMeasuredRoundTrip(t *testing.T) {
	p := NewPlan(4, 2, 1, false, tasks.NextToken)
	one, two := 0.5, 0.25
	extras := map[sweep.RunID]*Extra{
		{Key: sweep.Key(p.UnseenTied), Seed: 2}: {Unseen: &one},
		{Key: sweep.Key(p.Unseen), Seed: 1}:     {Unseen: &two},
	}
	dyn := []DynamicsSeed{{Seed: 2, Steps: 2500, EarlySteps: 500}, {Seed: 1, Steps: 2500, EarlySteps: 500}}
	m := NewMeasured(p, extras, dyn)
	if len(m.Extras) != 2 || m.Extras[0].Key > m.Extras[1].Key {
		t.Fatalf("extras not in key order: %+v", m.Extras)
	}
	back := m.Map()
	if len(back) != 2 || *back[sweep.RunID{Key: sweep.Key(p.UnseenTied), Seed: 2}].Unseen != 0.5 {
		t.Fatalf("map %+v", back)
	}
	// The stored seeds come back in plan order, and only for the same
	// setting with every seed present.
	if d := m.DynamicsFor(p); len(d) != 2 || d[0].Seed != 1 || d[1].Seed != 2 {
		t.Fatalf("dynamics %+v", d)
	}
	if d := m.DynamicsFor(NewPlan(4, 3, 1, false, tasks.NextToken)); d != nil {
		t.Errorf("a missing seed gave %+v", d)
	}
	if d := m.DynamicsFor(NewPlan(4, 2, 0.5, false, tasks.NextToken)); d != nil {
		t.Errorf("another step count gave %+v", d)
	}
	if d := m.DynamicsFor(NewPlan(4, 2, 1, false, tasks.Answers)); d != nil {
		t.Errorf("another loss gave %+v", d)
	}
}

// TestClaimsWithoutRuns: no claim agrees on no runs, and claim 5 needs
// runs of both its tasks.
func TestClaimsWithoutRuns(t *testing.T) {
	for _, c := range newInput().Claims() {
		if c.Agrees {
			t.Errorf("claim %d agrees with no runs: %q", c.N, c.Measured)
		}
	}
	for _, task := range []string{"copy", "induction"} {
		in := newInput()
		for s := uint64(1); s <= 8; s++ {
			if task == "copy" {
				fake(in, in.Plan.Copy, s, 1, head(0, 0, "previous-token", 1, map[string]float64{"offset": 0.9, "induction": 0.1}))
			} else {
				fake(in, in.Plan.Induction, s, 1, head(1, 0, "induction", 1, map[string]float64{"induction": 0.9}))
			}
		}
		if c := in.claim5(); c.Agrees {
			t.Errorf("claim 5 with only %s runs: %q", task, c.Measured)
		}
	}
}

// TestClaimRuleSentences: the rules and differences state the thresholds
// the verdicts use; a revised claim states the rule first fixed beside
// the revised one, and a claim with one rule has no first.
func TestClaimRuleSentences(t *testing.T) {
	cs := newInput().Claims()
	if len(cs) != 11 {
		t.Fatalf("%d claims, want 11", len(cs))
	}
	for _, c := range []struct {
		n                    int
		first, rule, differs string
	}{
		{1, "previous-token and induction (both) on copy", "on the note's copy task, which is its rotated copy task (headlab's induction), a previous-token head in layer 0 and an induction head in layer 1; plain copy stays claim 5's leaky task",
			"seeds with the signature: reverse 0/0, majority 0/0, induction 0/0; the rule asks 6 of 8 for each task."},
		{2, "", "every single-head ablation costs at most 2 points", "have every single-head ablation within 2 points; the rule asks 7 of 8."},
		{3, "scores at least 0.97, and switching it off costs at least 10 points more than switching off the other layer-0 head, in at least 6 of 8 seeds",
			"the most uniform layer-0 head scores at least 0.97 and switching it off costs at least 10 points, in at least 6 of 8 seeds", "it asks 6 of 8."},
		{4, "over every head labelled attention-sink in the grid, the median ablation cost is at most 1 point, and below the median cost of the other heads",
			"sink heads are the heads labelled attention-sink and, reported apart, the heads whose sink score is at least 0.4; over the labelled ones, the median ablation cost is at most 1 point and below the median cost of the other heads; with no labelled sink head the claim is untested",
			"no head anywhere"},
		{5, "", "on copy, the best offset or position score beats the best induction score in at least 6 of 8 seeds", "the rule asks 6 of 8 each."},
		{6, "the fraction whose every head carries a label (score at least 0.4) is below 1",
			"a seed's solution is readable when it forms the induction circuit (the rule of section 3); among seeds that reach 99% accuracy, the upper end of the 95% Wilson interval of the readable fraction is below 1",
			"of the 0 seeds that reach 99%, 0 form the circuit; the interval 0.0% to 100.0% reaches 1."},
		{7, "with history every 5 steps over the first 500, the 20-80% rise of the best induction score and that of accuracy overlap in at least 7 of 8 seeds, and each rise spans at most 10% of the run",
			"with history every 5 steps over the whole default run (2500 steps), each 20-80% rise (of the best induction score and of accuracy) spans at most 10% of the run's steps and the two rises overlap, in at least 7 of 8 seeds",
			"the rises overlap within 10% of the run in 0 of 0 seeds; the rule asks 7 of 8."},
		{8, "", "at least half the heads of a 2-layer, 8-head, d-model 64 model can be removed at a cost of at most 1 point, in at least 6 of 8 seeds", "the rule asks 6 of 8."},
		{9, "some head's verb->subject argmax accuracy beats the baseline by at least 0.2, and switching it off costs at least 10 points on attractor examples",
			"in at least 6 of 8 agreement seeds, switching off every head named after verb->subject together (its argmax accuracy beats the baseline by at least 0.2; together, as the circuit rule switches induction heads off) costs at least 10 points on attractor examples",
			"switching off every verb->subject head together costs 10 points on attractors in 0 of 0 agreement seeds; the rule asks 6 of 8."},
		{10, "", "accuracy on unseen tokens is at least 20 points above chance", "0 of 0 seeds reach 20 points above chance"},
		{11, "", "per seed of the default model, the most harmful single head switched off leaves 30% or less in at least half the seeds",
			"Claim 11 (one head is load-bearing): the most harmful single head leaves 30% or less in 0 of 0 seeds; the rule asks half."},
	} {
		got := cs[c.n-1]
		if got.N != c.n || !strings.Contains(got.Rule, c.rule) || !strings.Contains(got.Differs, c.differs) {
			t.Errorf("claim %d: rule %q\ndiffers %q", c.n, got.Rule, got.Differs)
		}
		switch {
		case c.first == "" && got.First != nil:
			t.Errorf("claim %d has a first rule %q", c.n, got.First.Rule)
		case c.first != "" && (got.First == nil || !strings.Contains(got.First.Rule, c.first)):
			t.Errorf("claim %d: first rule %+v, want %q", c.n, got.First, c.first)
		}
	}
}

// TestScaledSettings: claim 7's history interval and the stretch its
// first rule watches, and the regime grid's feed-forward width, follow
// the plan.
func TestScaledSettings(t *testing.T) {
	for _, c := range []struct {
		scale        float64
		every, early int
	}{{1, 5, 500}, {0.5, 3, 250}, {2, 10, 1000}, {0.01, 1, 5}, {0.001, 1, 1}} {
		p := NewPlan(2, 2, c.scale, false, tasks.NextToken)
		if got := p.dynamicsEvery(); got != c.every {
			t.Errorf("scale %v: history every %d steps, want %d", c.scale, got, c.every)
		}
		if got := p.dynamicsEarly(); got != c.early {
			t.Errorf("scale %v: the first rule watches %d steps, want %d", c.scale, got, c.early)
		}
		if p.Dynamics != p.Induction {
			t.Errorf("scale %v: claim 7 trains %+v, not the default run %+v", c.scale, p.Dynamics, p.Induction)
		}
	}
	g := RegimeGrid(func(n int) int { return n }, tasks.NextToken)
	for _, i := range []int{0, 9} {
		if g[i+1].DModel != 16 || g[i+1].DFF != 32 || g[i+2].DModel != 64 || g[i+2].DFF != 128 {
			t.Errorf("d-model cells %+v %+v", g[i+1], g[i+2])
		}
	}
}

// TestClaim2Boundary: exactly 2 points (1.0 - 0.98) is within, 2.1 not.
func TestClaim2Boundary(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		off := 0.98
		if s == 8 {
			off = 0.979
		}
		fake(in, in.Plan.Majority, s, 1, head(0, 0, "uniform", off, nil), head(0, 1, "uniform", 0.99, nil))
	}
	c := in.claim2()
	if !c.Agrees || c.Measured != "7 of 8 seeds" {
		t.Errorf("claim 2: %v %q", c.Agrees, c.Measured)
	}
	wantIn(t, "claim 2", strings.Join(c.Body, "\n"), "| 1 | 100.0% | 2.0 | yes |", "| 8 | 100.0% | 2.1 | no |",
		"Largest single-head cost over seeds: median 2.0, min 2.0, max 2.1 points.")
	if c.Differs != "Claim 2 (majority redundancy): 7 of 8 majority seeds have every single-head ablation within 2 points; the rule asks 7 of 8." {
		t.Errorf("claim 2: %q", c.Differs)
	}
}

// TestClaim3Boundary: a score of exactly 0.97 pins, 0.9699 not; a cost
// of exactly 10 points (0.9 - 0.8 in floats) is used, 9.9 not, under the
// revised rule; a cost exactly 10 points above the other head's (0.15 -
// 0.05 in floats) is used, 9.9 not, under the first; of two equally
// uniform heads the first is the one. Exactly 6 of 8 agrees, 5 not.
func TestClaim3Boundary(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		u, off, otherOff, otherU := 0.97, 0.75, 0.85, 0.5
		switch s {
		case 1:
			otherU = 0.97 // a tie: L0H0 is the most uniform
		case 5:
			off, otherOff = 0.801, 0.9 // costs 9.9 points, the other head nothing
		case 6:
			off, otherOff = 0.8, 0.9 // costs exactly 10 points, the other head nothing
		case 7:
			u = 0.9699
		case 8:
			otherOff = 0.849 // 15 points, 9.9 above the other head's
		}
		fake(in, in.Plan.ReverseNoPositions, s, 0.9,
			head(0, 0, "uniform", off, map[string]float64{"uniform": u}),
			head(0, 1, "previous-token", otherOff, map[string]float64{"uniform": otherU}))
	}
	c := in.claim3()
	if !c.Agrees || c.Measured != "6 of 8 seeds (median score 0.970)" {
		t.Errorf("claim 3: %v %q", c.Agrees, c.Measured)
	}
	if c.First == nil || c.First.Agrees || c.First.Measured != "5 of 8 seeds (median score 0.970)" {
		t.Errorf("claim 3 under the rule first fixed: %+v", c.First)
	}
	wantIn(t, "claim 3", strings.Join(c.Body, "\n"), "| 1 | L0H0 | 0.970 | 15.0 | 5.0 | yes | yes |", "| 2 | L0H0 | 0.970 | 15.0 | 5.0 | yes | yes |",
		"| 5 | L0H0 | 0.970 | 9.9 | 0.0 | no | no |", "| 6 | L0H0 | 0.970 | 10.0 | 0.0 | yes | yes |",
		"| 7 | L0H0 | 0.970 | 15.0 | 5.0 | no | no |", "| 8 | L0H0 | 0.970 | 15.0 | 5.1 | no | yes |")
	// Seed 6 at 9.9 points: 5 of 8 under the revised rule too.
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.ReverseNoPositions), Seed: 6}].Heads[0].AblatedAccuracy = 0.801
	if c := in.claim3(); c.Agrees || c.Measured != "5 of 8 seeds (median score 0.970)" || c.First.Measured != "4 of 8 seeds (median score 0.970)" {
		t.Errorf("claim 3 with 5 seeds: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
}

// TestClaim4Boundary: a median sink cost of exactly 1 point agrees, 1.05
// does not, and a sink no cheaper than the other heads does not; with
// labelled sinks, the rule first fixed gives the same verdict.
func TestClaim4Boundary(t *testing.T) {
	p := newInput().Plan
	for _, c := range []struct {
		name              string
		sinkOff, otherOff []float64
		want              bool
		sink, other, body string
	}{
		{"exactly 1 point", []float64{0.99, 0.99}, []float64{0.97, 0.95, 0.8}, true, "1.00", "5.00",
			"2 heads labelled attention-sink (" + sweep.ConfigName(p.Wide) + ": 2); median cost 1.00 points (max 1.0); the other 3 heads' median cost 5.00 points."},
		{"1.05 points", []float64{0.99, 0.989}, []float64{0.97, 0.95, 0.8}, false, "1.05", "5.00", "median cost 1.05 points (max 1.1)"},
		{"as cheap as the rest", []float64{0.995, 0.995}, []float64{0.995}, false, "0.50", "0.50", "the other 1 heads' median cost 0.50 points."},
	} {
		in := newInput()
		var hs []inspect.Head
		for i, off := range c.sinkOff {
			hs = append(hs, head(0, i, "attention-sink", off, nil))
		}
		for i, off := range c.otherOff {
			hs = append(hs, head(1, i, "uniform", off, nil))
		}
		fake(in, p.Wide, 1, 1, hs...)
		got := in.claim4()
		measured := fmt.Sprintf("2 sinks, median cost %s vs %s points", c.sink, c.other)
		differs := fmt.Sprintf("Claim 4 (sinks): 2 sink heads with median cost %s points against %s for the other heads;", c.sink, c.other)
		if got.Agrees != c.want || got.Untested || got.Measured != measured || !strings.HasPrefix(got.Differs, differs) {
			t.Errorf("%s: %v %q %q", c.name, got.Agrees, got.Measured, got.Differs)
		}
		if got.First == nil || got.First.Agrees != c.want || got.First.Untested || got.First.Measured != measured {
			t.Errorf("%s: under the rule first fixed %+v", c.name, got.First)
		}
		wantIn(t, c.name, strings.Join(got.Body, "\n"), c.body)
	}
}

// TestClaim5Boundary: 6 of 8 each agrees, 5 does not; a tie is no
// shortcut win on copy, and counts for induction on induction.
func TestClaim5Boundary(t *testing.T) {
	for _, c := range []struct {
		name                       string
		copyWins, indWins, indTies int
		want                       bool
		measured                   string
	}{
		{"6 and 6", 6, 6, 0, true, "copy: shortcut wins 6/8; induction: induction wins 6/8"},
		{"copy 5", 5, 6, 0, false, "copy: shortcut wins 5/8; induction: induction wins 6/8"},
		{"induction 5", 6, 5, 0, false, "copy: shortcut wins 6/8; induction: induction wins 5/8"},
		{"induction 5 and a tie", 6, 5, 1, true, "copy: shortcut wins 6/8; induction: induction wins 6/8"},
	} {
		in := newInput()
		for s := 1; s <= 8; s++ {
			cp := map[string]float64{"offset": 0.5, "induction": 0.5} // a tie
			if s <= c.copyWins {
				cp = map[string]float64{"offset": 0.9, "induction": 0.3}
			}
			fake(in, in.Plan.Copy, uint64(s), 1, head(0, 0, "previous-token", 1, cp))
			ind := map[string]float64{"position": 0.9, "induction": 0.3}
			switch {
			case s <= c.indWins:
				ind = map[string]float64{"position": 0.2, "induction": 0.9}
			case s <= c.indWins+c.indTies:
				ind = map[string]float64{"position": 0.6, "induction": 0.6}
			}
			fake(in, in.Plan.Induction, uint64(s), 1, head(1, 0, "induction", 1, ind))
		}
		got := in.claim5()
		if got.Agrees != c.want || got.Measured != c.measured {
			t.Errorf("%s: %v %q", c.name, got.Agrees, got.Measured)
		}
		wantIn(t, c.name, strings.Join(got.Body, "\n"), "| copy | 1 | 0.900 | 0.300 | offset/position |", "| copy | 8 | 0.500 | 0.500 | induction |",
			"| induction | 1 | 0.200 | 0.900 | induction |", "| induction | 8 | 0.900 | 0.300 | offset/position |")
	}
}

// TestClaim6Boundary: a seed at exactly 99% has learned, one at 98.9%
// has not, under both rules.
func TestClaim6Boundary(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		label, acc, circuit := "induction", 1.0, true
		switch s {
		case 7:
			label, acc, circuit = analysis.NoClearPattern, 0.989, false
		case 8:
			label, acc, circuit = analysis.NoClearPattern, 0.99, false
		}
		fake(in, in.Plan.Induction, s, acc, head(0, 0, label, 1, nil)).Circuit = circuit
	}
	c := in.claim6()
	if !c.Agrees || !strings.HasPrefix(c.Measured, "6/7 = 85.7%") || c.First == nil || !c.First.Agrees || !strings.HasPrefix(c.First.Measured, "6/7 = 85.7%") {
		t.Errorf("claim 6: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	wantIn(t, "claim 6", strings.Join(c.Body, "\n"), "7 of 8 seeds reach 99%.", "Seeds with an unlabelled head: 8.", "Seeds that learned the task without it: 8.")
	// Seed 8 at 98.9% has not learned: every learned seed is readable.
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Induction), Seed: 8}].Accuracy = 0.989
	if c := in.claim6(); c.Agrees || c.Measured != "6/6 = 100.0% [61.0%, 100.0%]" || c.First.Agrees || c.First.Measured != c.Measured {
		t.Errorf("claim 6 with seed 8 at 98.9%%: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
}

// TestClaim7Boundary: a rise of exactly 10% of the whole run (250 of 2500
// steps) is within, 251 steps not; of the first 500 steps, 50 is within,
// 51 not. Each rule counts its own seeds: 7 of 8 agrees, 6 not.
func TestClaim7Boundary(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		ph := analysis.Phase{InductionFrom: 1000, InductionTo: 1250, AccuracyFrom: 1010, AccuracyTo: 1240, Together: true}
		ea := analysis.Phase{InductionFrom: 200, InductionTo: 250, AccuracyFrom: 210, AccuracyTo: 240, Together: true}
		switch s {
		case 7:
			ea.InductionTo = 251
		case 8:
			ph.InductionTo, ea.AccuracyTo = 1251, 261
		}
		in.Dynamics = append(in.Dynamics, DynamicsSeed{Seed: s, Steps: 2500, Phase: ph, EarlySteps: 500, Early: ea})
	}
	c := in.claim7()
	if !c.Agrees || c.Measured != "7 of 8 seeds" || !strings.Contains(c.Differs, "in 7 of 8 seeds") {
		t.Errorf("claim 7: %v %q %q", c.Agrees, c.Measured, c.Differs)
	}
	if c.First == nil || c.First.Agrees || c.First.Measured != "6 of 8 seeds" {
		t.Errorf("claim 7 under the rule first fixed: %+v", c.First)
	}
	wantIn(t, "claim 7", strings.Join(c.Body, "\n"),
		"| 1 | 1000-1250 | 1010-1240 | yes | yes (10%) | yes | 200-250 | 210-240 | yes | yes (10%) | yes |",
		"| 7 | 1000-1250 | 1010-1240 | yes | yes (10%) | yes | 200-251 | 210-240 | yes | no (10%) | no |",
		"| 8 | 1000-1251 | 1010-1240 | yes | no (10%) | no | 200-250 | 210-261 | yes | no (10%) | no |")
	// Seed 7's early rise back at 50 steps: 7 of 8 under the first rule.
	in.Dynamics[6].Early.InductionTo = 250
	if c := in.claim7(); !c.First.Agrees || c.First.Measured != "7 of 8 seeds" {
		t.Errorf("claim 7 under the rule first fixed with 7: %+v", c.First)
	}
}

// TestClaims8To10Boundaries: half the heads removable is enough; exactly
// 10 points on attractors (0.83 - 0.73), alone and together, is enough,
// 9.99 not; exactly 20
// points above chance is enough, 19.9 not; an untied seed without its
// measurement is shown failed and left out of the mean.
func TestClaims8To10Boundaries(t *testing.T) {
	in := newInput()
	p := in.Plan
	chance := 0.0
	if tk, err := tasks.New(p.Unseen.Task); err == nil {
		chance = tk.Chance()
	}
	for s := uint64(1); s <= 8; s++ {
		id := func(c train.Config) sweep.RunID { return sweep.RunID{Key: sweep.Key(c), Seed: s} }
		g, att, tied, untied := 0.5, 0.83, chance+unseenAbove, 0.1
		if s > 6 {
			g, att, tied = 0.4375, 0.8299, chance+unseenAbove-0.001
		}
		in.Extras[id(p.Wide)] = &Extra{Prune: &inspect.PruneReport{Intact: 0.99, Orders: []inspect.OrderCurve{
			{Order: inspect.OrderOneShot, RemovableFraction: 0.25}, {Order: inspect.OrderGreedy, RemovableFraction: g}, {Order: inspect.OrderRandom, RemovableFraction: 0.3125}}}}
		fake(in, p.Agreement, s, 1)
		joint := 0.73
		in.Extras[id(p.Agreement)] = &Extra{AttractorIntact: &att, SyntaxOff: &joint, Syntax: []SyntaxHead{{Name: "L1H1", Argmax: 0.8, Baseline: 0.25, AttractorOff: 0.73}}}
		fake(in, p.Unseen, s, 1)
		fake(in, p.UnseenTied, s, 0.97)
		if s != 8 {
			in.Extras[id(p.Unseen)] = &Extra{Unseen: &untied}
		}
		in.Extras[id(p.UnseenTied)] = &Extra{Unseen: &tied}
	}
	c8 := in.claim8()
	if !c8.Agrees || c8.Measured != "6 of 8 seeds" {
		t.Errorf("claim 8: %v %q", c8.Agrees, c8.Measured)
	}
	wantIn(t, "claim 8", strings.Join(c8.Body, "\n"), "| 1 | 99.0% | 50% | 25% | 31% |", "| 8 | 99.0% | 44% | 25% | 31% |")
	c9 := in.claim9()
	if !c9.Agrees || c9.Measured != "6 of 8 seeds" || c9.First == nil || !c9.First.Agrees || c9.First.Measured != "6 of 8 seeds" {
		t.Errorf("claim 9: %v %q, first %+v", c9.Agrees, c9.Measured, c9.First)
	}
	wantIn(t, "claim 9", strings.Join(c9.Body, "\n"), "| 1 | 100.0% | 83.0% | L1H1 0.80 / 0.25 / 73.0% | yes | 73.0% | yes |",
		"| 8 | 100.0% | 83.0% | L1H1 0.80 / 0.25 / 73.0% | no | 73.0% | no |")
	c10 := in.claim10()
	if !c10.Agrees || !strings.HasPrefix(c10.Measured, "tied 6 of 8") || !strings.HasSuffix(c10.Measured, "untied mean 10.0%") {
		t.Errorf("claim 10: %v %q", c10.Agrees, c10.Measured)
	}
	wantIn(t, "claim 10", strings.Join(c10.Body, "\n"), "| 1 | 100.0% | 10.0% | 97.0% | "+pc(chance+unseenAbove)+" | yes |", "| 8 | failed | failed | 97.0% |")
	// 5 of 8 no longer agrees.
	low := chance
	in.Extras[sweep.RunID{Key: sweep.Key(p.UnseenTied), Seed: 1}] = &Extra{Unseen: &low}
	if c := in.claim10(); c.Agrees {
		t.Errorf("claim 10 with 5 seeds: %q", c.Measured)
	}
}

// TestRegimeCellPublished: the published model's heads are a third
// inside the circuit interval, a load-bearing head in at least half the
// seeds and a sink in some.
func TestRegimeCellPublished(t *testing.T) {
	for _, c := range []struct {
		name        string
		circuit     sweep.Proportion
		load, sinks float64
		want        bool
	}{
		{"all three", sweep.NewProportion(1, 3), 0.5, 0.125, true},
		{"load-bearing in fewer than half", sweep.NewProportion(1, 3), 0.4375, 0.125, false},
		{"no sink", sweep.NewProportion(1, 3), 0.5, 0, false},
		{"circuit in every seed", sweep.NewProportion(8, 8), 1, 1, false},
	} {
		if got := (RegimeCell{Circuit: c.circuit, LoadBearing: c.load, Sinks: c.sinks}).Published(); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

// TestRegimeCellsAndClosest: a single head costing exactly 20 points
// (1.0 - 0.8) is load-bearing; the distance adds its three terms; a cell
// without runs has zero fractions; a tie names the first cell.
func TestRegimeCellsAndClosest(t *testing.T) {
	in := newInput()
	in.Plan = NewPlan(8, 2, 1, true, tasks.NextToken)
	for _, i := range []int{0, 2} { // the default and d-model 64, alike
		for s := uint64(1); s <= 8; s++ {
			off := 0.8
			if s > 6 {
				off = 0.81
			}
			r := fake(in, in.Plan.Regime[i], s, 1, head(1, 0, "induction", off, nil))
			r.Circuit = s <= 4
			if s <= 2 {
				r.Heads = append(r.Heads, head(1, 1, "attention-sink", 1, nil))
			}
		}
	}
	for s := uint64(1); s <= 8; s++ { // d-model 16: a circuit in 1 of 8, nothing load-bearing
		r := fake(in, in.Plan.Regime[1], s, 1, head(1, 0, "induction", 0.9, nil))
		r.Circuit = s == 1
	}
	cells := in.RegimeCells()
	third := 1.0 / 3
	for _, c := range []struct {
		i                     int
		seeds                 int
		load, sinks, distance float64
	}{
		{0, 8, 0.75, 0.25, 0.5 - third + 0.25 + 0.75},
		{1, 8, 0, 0, third - 0.125 + 1 + 1},
		{3, 0, 0, 0, third + 1 + 1},
	} {
		got := cells[c.i]
		if got.Seeds != c.seeds || got.LoadBearing != c.load || got.Sinks != c.sinks || math.Abs(got.Distance-c.distance) > 1e-12 {
			t.Errorf("cell %d: %+v, want load %v sinks %v distance %v", c.i, got, c.load, c.sinks, c.distance)
		}
	}
	if math.Abs(cells[0].SingleCost-0.2) > 1e-12 {
		t.Errorf("median single-head cost %v", cells[0].SingleCost)
	}
	md, got := write(in.regimeSection)
	wantIn(t, "regime", md, "(one costing at least 20 points)",
		"| Loss | Training set | Weight decay | d-model | lr | batch | steps | Seeds | Circuit |",
		"| next-token | fresh | 0 | 32 | 0.003 | 32 | 2500 | 8 | 50.0% [21.5%, 78.5%] | 20.0 | 75.0% | 25.0% | 1.17 |",
		"| next-token | fresh | 0 | 16 | 0.003 | 32 | 2500 | 8 | 12.5% [2.2%, 47.1%] | 10.0 | 0.0% | 0.0% | 2.21 |",
		"| answers | fresh | 0 | 32 | 0.003 | 32 | 2500 | 0 | 0.0% [0.0%, 100.0%] | 0.0 | 0.0% | 0.0% | 2.33 |",
		"| answers | fresh | 0 | 32 | 0.003 | 32 | 5000 | 0 |",
		"| next-token | 2000 | 0 | 32 | 0.003 | 32 | 2500 | 0 |",
		"| next-token | fresh | 0.1 | 32 | 0.003 | 32 | 2500 | 0 |",
		"trains the default on a finite set of 2000 sequences and with weight decay 0.1, 8 seeds each.",
		"**Closest cell: next-token loss, d-model 32, lr 0.003, batch 32, 2500 steps** (distance 1.17)",
		"nearest a third is the default itself", "commonest at the default itself",
		"The published model's heads appear at the default itself, d-model 64.")
	if len(got.rows) != 1 || got.rows[0][3] != "agrees" || strings.Contains(md, "No cell finished") || strings.Contains(md, "loss changes the default's") {
		t.Errorf("regime rows %q\n%s", got.rows, md)
	}
	if n := strings.Count(md, "\n| next-token |"); n != 11 {
		t.Errorf("%d rows at the next-token loss, want 11:\n%s", n, md)
	}
	if n := strings.Count(md, "\n| answers |"); n != 9 {
		t.Errorf("%d rows at the answers loss, want 9:\n%s", n, md)
	}
}

// TestMeasuredOrder: the file lists extras by key, then seed.
func TestMeasuredOrder(t *testing.T) {
	p := NewPlan(8, 8, 1, false, tasks.NextToken)
	extras := map[sweep.RunID]*Extra{}
	for _, c := range []train.Config{p.Wide, p.Agreement, p.Unseen} {
		for s := uint64(1); s <= 8; s++ {
			extras[sweep.RunID{Key: sweep.Key(c), Seed: s}] = &Extra{}
		}
	}
	m := NewMeasured(p, extras, nil)
	for i := 1; i < len(m.Extras); i++ {
		a, b := m.Extras[i-1], m.Extras[i]
		if a.Key > b.Key || a.Key == b.Key && a.Seed >= b.Seed {
			t.Fatalf("extras %d and %d out of order: %+v %+v", i-1, i, a, b)
		}
	}
}

// TestClaim11Boundary: per seed of the default model, the most harmful
// single head of any label; a head that leaves exactly 30% is within,
// 30.1% not; exactly half the seeds agrees, one fewer not. Seeds outside
// the circuit seeds (all the default model's, not the small set of the
// other comparisons) and failed runs do not count.
func TestClaim11Boundary(t *testing.T) {
	in := newInput()
	in.Plan = NewPlan(8, 2, 1, false, tasks.NextToken)
	p := in.Plan
	for s := uint64(1); s <= 8; s++ {
		worst := 0.301
		if s <= 4 {
			worst = 0.3
		}
		// The most harmful head is not the induction head.
		fake(in, p.Induction, s, 1, head(0, 0, "previous-token", 0.9, nil), head(0, 1, analysis.NoClearPattern, worst, nil), head(1, 0, "induction", 0.5, nil))
	}
	fake(in, p.Induction, 9, 1, head(1, 0, "induction", 0.1, nil)) // seed 9 is no circuit seed
	fake(in, p.Wide, 1, 1, head(1, 0, "induction", 0.1, nil))      // nor is the wide model the default
	c := in.claim11()
	if !c.Agrees || !strings.HasPrefix(c.Measured, "4 of 8 seeds (median ") || c.First != nil {
		t.Errorf("claim 11: %v %q, first %+v", c.Agrees, c.Measured, c.First)
	}
	if c.Differs != "Claim 11 (one head is load-bearing): the most harmful single head leaves 30% or less in 4 of 8 seeds; the rule asks half." {
		t.Errorf("claim 11: %q", c.Differs)
	}
	wantIn(t, "claim 11", strings.Join(c.Body, "\n"), sweep.ConfigName(p.Induction)+" over seeds 1-8.",
		"| 1 | 100.0% | L0H1 | no clear pattern 0.00 | 30.0% | yes |", "| 8 | 100.0% | L0H1 | no clear pattern 0.00 | 30.1% | no |",
		"Accuracy left with the most harmful single head off: median ")
	if strings.Contains(strings.Join(c.Body, "\n"), "| 9 |") {
		t.Errorf("seed 9 counted:\n%s", strings.Join(c.Body, "\n"))
	}
	// Seed 4 at 30.1%: 3 of 8.
	in.ByID[sweep.RunID{Key: sweep.Key(p.Induction), Seed: 4}].Heads[1].AblatedAccuracy = 0.301
	if c := in.claim11(); c.Agrees || !strings.HasPrefix(c.Measured, "3 of 8 seeds") {
		t.Errorf("claim 11 with 3 of 8: %v %q", c.Agrees, c.Measured)
	}
	// Over 7 seeds half is 3.5: 4 agrees, 3 does not; a failed seed is
	// left out.
	failed(in, p.Induction, 8)
	if c := in.claim11(); c.Agrees || !strings.HasPrefix(c.Measured, "3 of 7 seeds") {
		t.Errorf("claim 11 with 3 of 7: %v %q", c.Agrees, c.Measured)
	}
	in.ByID[sweep.RunID{Key: sweep.Key(p.Induction), Seed: 4}].Heads[1].AblatedAccuracy = 0.3
	if c := in.claim11(); !c.Agrees || !strings.HasPrefix(c.Measured, "4 of 7 seeds") {
		t.Errorf("claim 11 with 4 of 7: %v %q", c.Agrees, c.Measured)
	}
	// At the other loss it reads that loss's default runs.
	in = newInput()
	in.Plan = NewPlan(8, 8, 1, false, tasks.Answers)
	fake(in, p.Induction, 1, 1, head(1, 0, "induction", 0.1, nil)) // a next-token run
	if c := in.claim11(); c.Agrees || !strings.HasPrefix(c.Measured, "0 of 0 seeds") {
		t.Errorf("claim 11 of an answers plan on a next-token run: %v %q", c.Agrees, c.Measured)
	}
}

// TestExtraComplete: an extra is complete unless it is missing, or an
// agreement run's lacks the accuracy with its syntax heads off together
// (stored before claim 9 switched them off together); pruning and unseen
// extras have no such part.
func TestExtraComplete(t *testing.T) {
	acc, off := 0.9, 0.7
	for _, c := range []struct {
		name string
		x    *Extra
		want bool
	}{
		{"missing", nil, false},
		{"pruning", &Extra{Prune: &inspect.PruneReport{}}, true},
		{"unseen", &Extra{Unseen: &acc}, true},
		{"agreement before joint ablation", &Extra{AttractorIntact: &acc, Syntax: []SyntaxHead{{Name: "L1H1", AttractorOff: off}}}, false},
		{"agreement without syntax heads, before", &Extra{AttractorIntact: &acc}, false},
		{"agreement", &Extra{AttractorIntact: &acc, Syntax: []SyntaxHead{{Name: "L1H1", AttractorOff: off}}, SyntaxOff: &off}, true},
		{"agreement without syntax heads", &Extra{AttractorIntact: &acc, SyntaxOff: &acc}, true},
		{"nothing", &Extra{}, false},
		{"the circuit by other measures", &Extra{Circuit: &CircuitMeasures{Located: []string{}, LabelRule: analysis.RevisedRule}}, true},
		{"the circuit by other measures, before the revised label rule", &Extra{Circuit: &CircuitMeasures{Located: []string{}}}, false},
	} {
		if got := c.x.Complete(); got != c.want {
			t.Errorf("%s: complete %v, want %v", c.name, got, c.want)
		}
	}
	// The circuit measures survive the claims file.
	p1 := NewPlan(2, 2, 1, false, tasks.NextToken)
	ind := sweep.RunID{Key: sweep.Key(p1.Induction), Seed: 2}
	cm := &CircuitMeasures{LabelRule: analysis.RevisedRule, Joint: []MethodJoint{{Method: inspect.AblateMean, Induction: &acc}, {Method: inspect.AblateResample, PreviousToken: &off}},
		Corruption: "first-half", Located: []string{"L1H0", "L0H1"}, Heads: []HeadCircuit{{"L0H0", 0.5, 0.25}, {"L1H0", 1, 0.8}}}
	data, err := json.Marshal(NewMeasured(p1, map[sweep.RunID]*Extra{ind: {Circuit: cm}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	var back Measured
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	x := back.Map()[ind]
	again, err := json.Marshal(x.Circuit)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(cm); !x.Complete() || string(again) != string(want) || *x.Circuit.Joint[0].Induction != acc || x.Circuit.Joint[1].Induction != nil {
		t.Errorf("%s: back %s", want, again)
	}

	// The joint accuracy survives the claims file; an earlier file's
	// extra, without it, comes back incomplete.
	p := NewPlan(2, 2, 1, false, tasks.NextToken)
	id := sweep.RunID{Key: sweep.Key(p.Agreement), Seed: 1}
	for _, c := range []struct {
		x    *Extra
		want bool
	}{{&Extra{AttractorIntact: &acc, SyntaxOff: &off}, true}, {&Extra{AttractorIntact: &acc}, false}} {
		data, err := json.Marshal(NewMeasured(p, map[sweep.RunID]*Extra{id: c.x}, nil))
		if err != nil {
			t.Fatal(err)
		}
		var m Measured
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if back := m.Map()[id]; back.Complete() != c.want || c.want && *back.SyntaxOff != off {
			t.Errorf("%s: back %+v, complete %v", data, back, back.Complete())
		}
	}
}
