package findings

import (
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

func TestPlanClaims(t *testing.T) {
	p := NewPlan(32, 8, 1, false, tasks.NextToken)
	if p.Wide.Heads != 8 || p.Wide.DModel != 64 || p.Wide.Layers != 2 || !p.UnseenTied.TiedEmbeddings || p.Unseen.TiedEmbeddings || p.Dynamics.Steps != 500 || p.Copy.Task != "copy" || p.Agreement.Task != "agreement" {
		t.Fatalf("claims' plan %+v", p)
	}
	for _, c := range []train.Config{p.Wide, p.Agreement, p.Unseen, p.UnseenTied} {
		if !p.NeedsExtra(c) {
			t.Errorf("%s needs no extra", sweep.Key(c))
		}
	}
	if p.NeedsExtra(p.Induction) || p.NeedsExtra(p.Copy) {
		t.Error("the default model or copy needs an extra")
	}
	if len(p.Regime) != 0 || len(NewPlan(32, 8, 1, true, tasks.NextToken).Regime) != 9 {
		t.Errorf("regime grid: %d cells without --regime, %d with", len(p.Regime), len(NewPlan(32, 8, 1, true, tasks.NextToken).Regime))
	}
	// 32 induction seeds, then 8 of the wide model, copy, agreement, the
	// two unseen variants, the four position runs, no mask and one layer.
	if n := len(p.Pairs()); n != 32+8*(1+4+4+1+1) {
		t.Errorf("%d pairs", n)
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
			fake(in, in.Plan.Positions[2], s, 1, head(0, 0, "uniform", off, nil), head(0, 1, "uniform", 0.985, nil))
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
		fake(in, in.Plan.Positions[1], s, 0.9,
			head(0, 0, "uniform", 0.75, map[string]float64{"uniform": u}),
			head(0, 1, "previous-token", 0.88, map[string]float64{"uniform": 0.5}),
			head(1, 0, "uniform", 0.2, map[string]float64{"uniform": 0.99})) // layer 1 does not count
	}
	c := in.claim3()
	if !c.Agrees || !strings.HasPrefix(c.Measured, "6 of 8") {
		t.Errorf("claim 3: %v %q", c.Agrees, c.Measured)
	}
	// The other layer-0 head costs as much: used, but not more than it.
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Positions[1]), Seed: 1}].Heads[1].AblatedAccuracy = 0.75
	if c := in.claim3(); c.Agrees {
		t.Errorf("claim 3 agrees with 5 seeds: %q", c.Measured)
	}
}

func TestClaim4Sinks(t *testing.T) {
	in := newInput()
	fake(in, in.Plan.Induction, 1, 1, head(0, 0, "previous-token", 0.9, nil), head(1, 0, "induction", 0.8, nil))
	if c := in.claim4(); c.Agrees || c.Measured != "no sink heads" {
		t.Errorf("no sinks: %v %q", c.Agrees, c.Measured)
	}
	fake(in, in.Plan.Wide, 1, 1, head(0, 0, "attention-sink", 1, nil), head(0, 1, "attention-sink", 0.995, nil), head(1, 0, "uniform", 0.97, nil))
	if c := in.claim4(); !c.Agrees || !strings.HasPrefix(c.Measured, "2 sinks") {
		t.Errorf("free sinks: %v %q", c.Agrees, c.Measured)
	}
	// The other heads cost nothing either: a sink is not below them.
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Wide), Seed: 1}].Heads[2].AblatedAccuracy = 1
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Induction), Seed: 1}].Heads[0].AblatedAccuracy = 1
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Induction), Seed: 1}].Heads[1].AblatedAccuracy = 1
	if c := in.claim4(); c.Agrees {
		t.Errorf("sinks no cheaper than the rest: %q", c.Measured)
	}
}

func TestClaims1And5(t *testing.T) {
	in := newInput()
	p := in.Plan
	for s := uint64(1); s <= 8; s++ {
		fake(in, p.Positions[0], s, 1, head(0, 0, "mirror shifted", 1, nil))
		fake(in, p.Positions[2], s, 1, head(0, 0, "uniform", 1, nil))
		copyHeads := []inspect.Head{head(0, 0, "previous-token", 1, map[string]float64{"offset": 0.9, "induction": 0.3}), head(1, 0, "induction", 1, map[string]float64{"induction": 0.5})}
		if s > 6 {
			copyHeads[1].Label = "offset -7"
		}
		fake(in, p.Copy, s, 1, copyHeads...)
		fake(in, p.Induction, s, 1, head(1, 0, "induction", 1, map[string]float64{"induction": 0.99, "position": 0.2}))
	}
	if c := in.claim1(); !c.Agrees || c.Measured != "reverse 8/8, majority 8/8, copy 6/8" {
		t.Errorf("claim 1: %v %q", c.Agrees, c.Measured)
	}
	if c := in.claim5(); !c.Agrees || c.Measured != "copy: shortcut wins 8/8; induction: induction wins 8/8" {
		t.Errorf("claim 5: %v %q", c.Agrees, c.Measured)
	}
	in.ByID[sweep.RunID{Key: sweep.Key(p.Copy), Seed: 1}].Heads[0].Label = "uniform"
	if c := in.claim1(); c.Agrees {
		t.Errorf("claim 1 with copy 5/8: %q", c.Measured)
	}
}

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
		fake(in, in.Plan.Induction, s, acc, head(0, 0, label, 1, nil))
	}
	c := in.claim6()
	if !c.Agrees || !strings.HasPrefix(c.Measured, "6/7") {
		t.Errorf("claim 6: %v %q", c.Agrees, c.Measured)
	}
	in.ByID[sweep.RunID{Key: sweep.Key(in.Plan.Induction), Seed: 3}].Heads[0].Label = "induction"
	if c := in.claim6(); c.Agrees {
		t.Errorf("every learned seed readable, yet %q", c.Measured)
	}
}

func TestClaim7Burst(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		ph := analysis.Phase{InductionFrom: 200, InductionTo: 240, AccuracyFrom: 220, AccuracyTo: 250, Together: true}
		if s == 8 {
			ph.AccuracyTo = 300 // a slow rise: 80 steps of 500
		}
		in.Dynamics = append(in.Dynamics, DynamicsSeed{Seed: s, Steps: 500, Phase: ph})
	}
	if c := in.claim7(); !c.Agrees || c.Measured != "7 of 8 seeds" {
		t.Errorf("claim 7: %v %q", c.Agrees, c.Measured)
	}
	in.Dynamics[0].Phase.Together = false
	if c := in.claim7(); c.Agrees {
		t.Errorf("claim 7 with 6: %q", c.Measured)
	}
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
		att := 0.84 // 11 points above the heads' 0.73 when off
		if s > 6 {
			att = 0.82
		}
		in.Extras[id(p.Agreement)] = &Extra{AttractorIntact: &att, Syntax: []SyntaxHead{{Name: "L1H1", Argmax: 0.8, Baseline: 0.25, AttractorOff: 0.73}}}
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
	if c := in.claim9(); !c.Agrees || c.Measured != "6 of 8 seeds" {
		t.Errorf("claim 9: %v %q", c.Agrees, c.Measured)
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

func TestRegimeClosestCell(t *testing.T) {
	in := newInput()
	in.Plan = NewPlan(3, 2, 1, true, tasks.NextToken)
	in.Plan.CircuitSeeds = []uint64{1, 2, 3}
	for i, c := range in.Plan.Regime {
		for s := uint64(1); s <= 3; s++ {
			r := fake(in, c, s, 1, head(0, 0, "previous-token", 0.99, nil), head(1, 0, "induction", 0.99, nil))
			// Cell 4 (lr 1e-2): load-bearing heads, a sink, a circuit in 1 of 3.
			if i == 4 {
				r.Heads[1].AblatedAccuracy = 0.3
				r.Heads = append(r.Heads, head(1, 1, "attention-sink", 1, nil))
				r.Circuit = s == 1
			}
		}
	}
	cells := in.RegimeCells()
	if len(cells) != 9 || cells[4].Config.LR != 1e-2 || cells[4].LoadBearing != 1 || cells[4].Sinks != 1 || cells[4].Circuit.Count != 1 {
		t.Fatalf("cells %+v", cells[4])
	}
	var b strings.Builder
	var got tally
	in.regimeSection(&b, &got)
	if !strings.Contains(b.String(), "**Closest cell: d-model 32, lr 0.01, batch 32, 2500 steps**") || len(got.rows) != 1 || got.rows[0][3] != "agrees" || len(got.differs) != 0 {
		t.Errorf("regime section %q, rows %v", b.String(), got.rows)
	}
}

// TestRegimeReading: the words under the grid follow its numbers.
func TestRegimeReading(t *testing.T) {
	grid := RegimeGrid(func(n int) int { return n }, tasks.NextToken)
	cells := make([]RegimeCell, len(grid))
	for i, c := range grid {
		cells[i] = RegimeCell{Config: c, Seeds: 8, Circuit: sweep.NewProportion(7, 8), LoadBearing: 0.25}
	}
	cells[3].Circuit = sweep.NewProportion(4, 8) // lr 1e-3: nearest a third, interval above it
	cells[6].LoadBearing = 0.75                  // batch 128
	got := regimeReading(cells)
	for _, want := range []string{"no cell grows an attention-sink head (72 seeds in all)", "nearest a third is lr 0.001 (50.0%, against 87.5% at the default)",
		"commonest at batch 128 (75.0% of seeds, against 25.0%)", "No single change gives all three"} {
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
	for _, want := range []string{"What the grid shows: 1 of 9 cells grow an attention-sink head", "nearest a third is d-model 16", "The published model's heads appear at d-model 16."} {
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
}

func TestMeasuredRoundTrip(t *testing.T) {
	p := NewPlan(4, 2, 1, false, tasks.NextToken)
	one, two := 0.5, 0.25
	extras := map[sweep.RunID]*Extra{
		{Key: sweep.Key(p.UnseenTied), Seed: 2}: {Unseen: &one},
		{Key: sweep.Key(p.Unseen), Seed: 1}:     {Unseen: &two},
	}
	dyn := []DynamicsSeed{{Seed: 2, Steps: 500}, {Seed: 1, Steps: 500}}
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
// the verdicts use.
func TestClaimRuleSentences(t *testing.T) {
	cs := newInput().Claims()
	for _, c := range []struct {
		n             int
		rule, differs string
	}{
		{2, "every single-head ablation costs at most 2 points", "have every single-head ablation within 2 points; the rule asks 7 of 8."},
		{3, "scores at least 0.97, and switching it off costs at least 10 points more", "it asks 6 of 8."},
		{4, "the median ablation cost is at most 1 point, and below", "no head anywhere"},
		{7, "with history every 5 steps over the first 500, the 20-80% rise", "the rises overlap within 10% of the run in 0 of 0 seeds"},
		{7, "each rise spans at most 10% of the run", "the rule asks 7 of 8."},
		{9, "beats the baseline by at least 0.2, and switching it off costs at least 10 points on attractor examples", "costs 10 points on attractors when off, in 0 of 0"},
		{10, "accuracy on unseen tokens is at least 20 points above chance", "0 of 0 seeds reach 20 points above chance"},
	} {
		got := cs[c.n-1]
		if got.N != c.n || !strings.Contains(got.Rule, c.rule) || !strings.Contains(got.Differs, c.differs) {
			t.Errorf("claim %d: rule %q\ndiffers %q", c.n, got.Rule, got.Differs)
		}
	}
}

// TestScaledSettings: claim 7's history interval and the regime grid's
// feed-forward width follow the plan.
func TestScaledSettings(t *testing.T) {
	for _, c := range []struct {
		scale float64
		every int
	}{{1, 5}, {0.5, 3}, {2, 10}, {0.01, 1}} {
		if got := NewPlan(2, 2, c.scale, false, tasks.NextToken).dynamicsEvery(); got != c.every {
			t.Errorf("scale %v: history every %d steps, want %d", c.scale, got, c.every)
		}
	}
	g := RegimeGrid(func(n int) int { return n }, tasks.NextToken)
	if g[1].DModel != 16 || g[1].DFF != 32 || g[2].DModel != 64 || g[2].DFF != 128 {
		t.Errorf("d-model cells %+v %+v", g[1], g[2])
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
		fake(in, in.Plan.Positions[2], s, 1, head(0, 0, "uniform", off, nil), head(0, 1, "uniform", 0.99, nil))
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
// exactly 10 points above the other head's (0.15 - 0.05 in floats) is
// used, 9.9 not; of two equally uniform heads the first is the one.
func TestClaim3Boundary(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		u, otherOff, otherU := 0.97, 0.85, 0.5
		switch s {
		case 1:
			otherU = 0.97 // a tie: L0H0 is the most uniform
		case 7:
			u = 0.9699
		case 8:
			otherOff = 0.849
		}
		fake(in, in.Plan.Positions[1], s, 0.9,
			head(0, 0, "uniform", 0.75, map[string]float64{"uniform": u}),
			head(0, 1, "previous-token", otherOff, map[string]float64{"uniform": otherU}))
	}
	c := in.claim3()
	if !c.Agrees || c.Measured != "6 of 8 seeds (median score 0.970)" {
		t.Errorf("claim 3: %v %q", c.Agrees, c.Measured)
	}
	wantIn(t, "claim 3", strings.Join(c.Body, "\n"), "| 1 | L0H0 | 0.970 | 15.0 | 5.0 | yes |", "| 2 | L0H0 | 0.970 | 15.0 | 5.0 | yes |",
		"| 7 | L0H0 | 0.970 | 15.0 | 5.0 | no |", "| 8 | L0H0 | 0.970 | 15.0 | 5.1 | no |")
}

// TestClaim4Boundary: a median sink cost of exactly 1 point agrees, 1.05
// does not, and a sink no cheaper than the other heads does not.
func TestClaim4Boundary(t *testing.T) {
	p := newInput().Plan
	for _, c := range []struct {
		name              string
		sinkOff, otherOff []float64
		want              bool
		sink, other, body string
	}{
		{"exactly 1 point", []float64{0.99, 0.99}, []float64{0.97, 0.95, 0.8}, true, "1.00", "5.00",
			"2 sink heads (" + sweep.ConfigName(p.Wide) + ": 2); median cost 1.00 points (max 1.0); the other 3 heads' median cost 5.00 points."},
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
		if got.Agrees != c.want || got.Measured != measured || !strings.HasPrefix(got.Differs, differs) {
			t.Errorf("%s: %v %q %q", c.name, got.Agrees, got.Measured, got.Differs)
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

// TestClaim6Boundary: a seed at exactly 99% has learned.
func TestClaim6Boundary(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		label, acc := "induction", 1.0
		if s == 1 {
			label = analysis.NoClearPattern
		}
		if s == 8 {
			acc = 0.99
		}
		if s == 7 {
			acc = 0.989
		}
		fake(in, in.Plan.Induction, s, acc, head(0, 0, label, 1, nil))
	}
	if c := in.claim6(); !c.Agrees || !strings.HasPrefix(c.Measured, "6/7 = 85.7%") {
		t.Errorf("claim 6: %v %q", c.Agrees, c.Measured)
	}
}

// TestClaim7Boundary: a rise of exactly 10% of the run (50 of 500 steps)
// is within, 51 steps not.
func TestClaim7Boundary(t *testing.T) {
	in := newInput()
	for s := uint64(1); s <= 8; s++ {
		ph := analysis.Phase{InductionFrom: 200, InductionTo: 250, AccuracyFrom: 210, AccuracyTo: 240, Together: true}
		if s == 8 {
			ph.InductionTo = 251
		}
		in.Dynamics = append(in.Dynamics, DynamicsSeed{Seed: s, Steps: 500, Phase: ph})
	}
	c := in.claim7()
	if !c.Agrees || c.Measured != "7 of 8 seeds" || !strings.Contains(c.Differs, "in 7 of 8 seeds") {
		t.Errorf("claim 7: %v %q %q", c.Agrees, c.Measured, c.Differs)
	}
	wantIn(t, "claim 7", strings.Join(c.Body, "\n"), "| 1 | 200-250 | 210-240 | yes | yes (10%) | yes |", "| 8 | 200-251 | 210-240 | yes | no (10%) | no |")
}

// TestClaims8To10Boundaries: half the heads removable is enough; exactly
// 10 points on attractors (0.83 - 0.73) is enough, 9.99 not; exactly 20
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
		in.Extras[id(p.Agreement)] = &Extra{AttractorIntact: &att, Syntax: []SyntaxHead{{Name: "L1H1", Argmax: 0.8, Baseline: 0.25, AttractorOff: 0.73}}}
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
	if c := in.claim9(); !c.Agrees || c.Measured != "6 of 8 seeds" {
		t.Errorf("claim 9: %v %q", c.Agrees, c.Measured)
	}
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
		"| 32 | 0.003 | 32 | 2500 | 8 | 50.0% [21.5%, 78.5%] | 20.0 | 75.0% | 25.0% | 1.17 |",
		"**Closest cell: d-model 32, lr 0.003, batch 32, 2500 steps** (distance 1.17)",
		"nearest a third is the default itself", "commonest at the default itself",
		"The published model's heads appear at the default itself, d-model 64.")
	if len(got.rows) != 1 || got.rows[0][3] != "agrees" || strings.Contains(md, "No cell finished") {
		t.Errorf("regime rows %q\n%s", got.rows, md)
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
