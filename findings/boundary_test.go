package findings

import (
	"testing"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/sweep"
	"headlab/tasks"
)

// TestClaimRulesAtTheirBoundaries holds each claim's per-seed rule to its
// threshold, with one seed (so the seed alone decides the verdict): on the
// threshold it holds (the rules say "at least" and "at most"), also where
// float rounding puts the difference of two accuracies a hair on the
// wrong side (0.83-0.73 is 0.09999999999999998), and a point past it, it
// does not.
func TestClaimRulesAtTheirBoundaries(t *testing.T) {
	p := newInput().Plan
	cases := []struct {
		name  string
		claim func(*Input) Claim
		set   func(*Input)
		want  bool
	}{
		// Claim 2: every single-head cost at most 2 points.
		{"claim 2: cost exactly 2 points (1-0.98 rounds above)", (*Input).claim2, func(in *Input) {
			fake(in, p.Positions[2], 1, 1, head(0, 0, "uniform", 0.98, nil))
		}, true},
		{"claim 2: cost 2.1 points", (*Input).claim2, func(in *Input) {
			fake(in, p.Positions[2], 1, 1, head(0, 0, "uniform", 0.979, nil))
		}, false},
		// Claim 3: uniform score at least 0.97, cost at least 10 points above the other L0 head's.
		{"claim 3: score 0.97, margin exactly 10 points (0.83-0.73 rounds below)", (*Input).claim3, func(in *Input) {
			fake(in, p.Positions[1], 1, 0.83, head(0, 0, "uniform", 0.73, map[string]float64{"uniform": 0.97}), head(0, 1, "offset 1", 0.83, nil))
		}, true},
		{"claim 3: score 0.969", (*Input).claim3, func(in *Input) {
			fake(in, p.Positions[1], 1, 0.83, head(0, 0, "uniform", 0.73, map[string]float64{"uniform": 0.969}), head(0, 1, "offset 1", 0.83, nil))
		}, false},
		{"claim 3: margin 9.9 points", (*Input).claim3, func(in *Input) {
			fake(in, p.Positions[1], 1, 0.83, head(0, 0, "uniform", 0.731, map[string]float64{"uniform": 0.97}), head(0, 1, "offset 1", 0.83, nil))
		}, false},
		// Claim 4: the median sink costs at most 1 point, less than the other heads.
		{"claim 4: a sink costing exactly 1 point (1-0.99 rounds above)", (*Input).claim4, func(in *Input) {
			fake(in, p.Wide, 1, 1, head(0, 0, "attention-sink", 0.99, nil), head(0, 1, "uniform", 0.5, nil))
		}, true},
		{"claim 4: a sink costing 1.1 points", (*Input).claim4, func(in *Input) {
			fake(in, p.Wide, 1, 1, head(0, 0, "attention-sink", 0.989, nil), head(0, 1, "uniform", 0.5, nil))
		}, false},
		{"claim 4: a free sink, the other heads free too", (*Input).claim4, func(in *Input) {
			fake(in, p.Wide, 1, 1, head(0, 0, "attention-sink", 1, nil), head(0, 1, "uniform", 1, nil))
		}, false},
		// Claim 5: on copy a shortcut must beat induction; a tie is induction's.
		{"claim 5: copy's shortcut ties induction", (*Input).claim5, func(in *Input) {
			fake(in, p.Copy, 1, 1, head(0, 0, "offset -7", 1, map[string]float64{"offset": 0.6, "induction": 0.6}))
			fake(in, p.Induction, 1, 1, head(1, 0, "induction", 1, map[string]float64{"induction": 0.6, "position": 0.6}))
		}, false},
		{"claim 5: copy's shortcut wins by a hair, induction ties", (*Input).claim5, func(in *Input) {
			fake(in, p.Copy, 1, 1, head(0, 0, "offset -7", 1, map[string]float64{"offset": 0.601, "induction": 0.6}))
			fake(in, p.Induction, 1, 1, head(1, 0, "induction", 1, map[string]float64{"induction": 0.6, "position": 0.6}))
		}, true},
		// Claim 6: a seed at 99% has learned; one with an unlabelled head is unreadable.
		{"claim 6: an unreadable seed at exactly 99%", (*Input).claim6, func(in *Input) {
			fake(in, p.Induction, 1, 0.99, head(0, 0, analysis.NoClearPattern, 1, nil))
		}, true},
		{"claim 6: an unreadable seed at 98.9% has not learned", (*Input).claim6, func(in *Input) {
			fake(in, p.Induction, 1, 0.989, head(0, 0, analysis.NoClearPattern, 1, nil))
		}, false},
		// Claim 7: each rise spans at most 10% of the run.
		{"claim 7: a rise of exactly 10% of the run", (*Input).claim7, func(in *Input) {
			in.Dynamics = []DynamicsSeed{{Seed: 1, Steps: 500, Phase: analysis.Phase{InductionFrom: 200, InductionTo: 250, AccuracyFrom: 210, AccuracyTo: 260, Together: true}}}
		}, true},
		{"claim 7: a rise of 10.2%", (*Input).claim7, func(in *Input) {
			in.Dynamics = []DynamicsSeed{{Seed: 1, Steps: 500, Phase: analysis.Phase{InductionFrom: 200, InductionTo: 251, AccuracyFrom: 210, AccuracyTo: 260, Together: true}}}
		}, false},
		// Claim 8: greedy removes at least half the heads.
		{"claim 8: exactly half", (*Input).claim8, func(in *Input) {
			in.Extras[sweep.RunID{Key: sweep.Key(p.Wide), Seed: 1}] = &Extra{Prune: &inspect.PruneReport{Orders: []inspect.OrderCurve{{Order: inspect.OrderGreedy, RemovableFraction: 0.5}}}}
		}, true},
		{"claim 8: one head short of half", (*Input).claim8, func(in *Input) {
			in.Extras[sweep.RunID{Key: sweep.Key(p.Wide), Seed: 1}] = &Extra{Prune: &inspect.PruneReport{Orders: []inspect.OrderCurve{{Order: inspect.OrderGreedy, RemovableFraction: 7.0 / 16}}}}
		}, false},
		// Claim 9: the relation head costs at least 10 points on attractors.
		{"claim 9: exactly 10 points (0.83-0.73 rounds below)", (*Input).claim9, func(in *Input) {
			fake(in, p.Agreement, 1, 1)
			att := 0.83
			in.Extras[sweep.RunID{Key: sweep.Key(p.Agreement), Seed: 1}] = &Extra{AttractorIntact: &att, Syntax: []SyntaxHead{{Name: "L1H1", AttractorOff: 0.73}}}
		}, true},
		{"claim 9: 9.9 points", (*Input).claim9, func(in *Input) {
			fake(in, p.Agreement, 1, 1)
			att := 0.83
			in.Extras[sweep.RunID{Key: sweep.Key(p.Agreement), Seed: 1}] = &Extra{AttractorIntact: &att, Syntax: []SyntaxHead{{Name: "L1H1", AttractorOff: 0.731}}}
		}, false},
		// Claim 10: unseen accuracy at least 20 points above chance .
		{"claim 10: exactly 20 points above chance", (*Input).claim10, func(in *Input) {
			fake(in, p.UnseenTied, 1, 1)
			u := unseenChance(t, in) + 0.2
			in.Extras[sweep.RunID{Key: sweep.Key(p.UnseenTied), Seed: 1}] = &Extra{Unseen: &u}
		}, true},
		{"claim 10: 19.9 points above chance", (*Input).claim10, func(in *Input) {
			fake(in, p.UnseenTied, 1, 1)
			u := unseenChance(t, in) + 0.199
			in.Extras[sweep.RunID{Key: sweep.Key(p.UnseenTied), Seed: 1}] = &Extra{Unseen: &u}
		}, false},
	}
	for _, c := range cases {
		in := newInput()
		c.set(in)
		if got := c.claim(in); got.Agrees != c.want {
			t.Errorf("%s: agrees %v, want %v (%s)", c.name, got.Agrees, c.want, got.Measured)
		}
	}
}

// unseenChance is the chance floor claim 10 measures against.
func unseenChance(t *testing.T, in *Input) float64 {
	t.Helper()
	tk, err := tasks.New(in.Plan.Unseen.Task)
	if err != nil {
		t.Fatal(err)
	}
	return tk.Chance()
}

// TestSingleHeadRulesMatchTheCircuitRule: a head whose switching off costs
// exactly analysis.CircuitDrop is load-bearing for the circuit rule, for
// the note on circuits single-head ablations miss, and for the regime
// grid alike (1.0-0.8 is 0.19999999999999996).
func TestSingleHeadRulesMatchTheCircuitRule(t *testing.T) {
	at, below := 0.8, 0.801
	for _, c := range []struct {
		single float64
		missed bool
	}{{at, false}, {below, true}} {
		s := sweep.SeedAblation{Accuracy: 1, Circuit: true, InductionSingle: &c.single, PrevSingle: &at}
		if got := missedBySingle(s); got != c.missed {
			t.Errorf("single-head accuracy %v: missedBySingle %v, want %v", c.single, got, c.missed)
		}
	}
	in := newInput()
	in.Plan = NewPlan(1, 1, 1, true, tasks.NextToken)
	for i, c := range in.Plan.Regime[:2] {
		off := []float64{at, below}[i]
		fake(in, c, in.Plan.CircuitSeeds[0], 1, head(0, 0, "previous-token", off, nil))
	}
	cells := in.RegimeCells()
	if cells[0].LoadBearing != 1 || cells[1].LoadBearing != 0 {
		t.Errorf("regime cells' load-bearing fractions %v and %v, want 1 and 0", cells[0].LoadBearing, cells[1].LoadBearing)
	}
}
