package findings

import (
	"fmt"
	"strings"
	"testing"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/sweep"
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
	return &Input{Plan: NewPlan(8, 8, 1, false), ByID: map[sweep.RunID]*sweep.Record{}, Extras: map[sweep.RunID]*Extra{}}
}

func TestPlanClaims(t *testing.T) {
	p := NewPlan(32, 8, 1, false)
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
	if len(p.Regime) != 0 || len(NewPlan(32, 8, 1, true).Regime) != 9 {
		t.Errorf("regime grid: %d cells without --regime, %d with", len(p.Regime), len(NewPlan(32, 8, 1, true).Regime))
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
	in.Plan = NewPlan(3, 2, 1, true)
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
	grid := RegimeGrid(func(n int) int { return n })
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
	for _, want := range []string{"1 of 9 cells grow an attention-sink head", "nearest a third is d-model 16", "The published model's heads appear at d-model 16."} {
		if !strings.Contains(got, want) {
			t.Errorf("reading lacks %q:\n%s", want, got)
		}
	}
	cells[1].Circuit = sweep.NewProportion(8, 8)
	if got = regimeReading(cells); !strings.Contains(got, "still above a third by its whole interval") {
		t.Errorf("every fraction far above a third:\n%s", got)
	}
}

func TestMeasuredRoundTrip(t *testing.T) {
	p := NewPlan(4, 2, 1, false)
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
	if d := m.DynamicsFor(NewPlan(4, 3, 1, false)); d != nil {
		t.Errorf("a missing seed gave %+v", d)
	}
	if d := m.DynamicsFor(NewPlan(4, 2, 0.5, false)); d != nil {
		t.Errorf("another step count gave %+v", d)
	}
}
