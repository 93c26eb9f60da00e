package findings

import (
	"testing"

	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

func TestPlanPairs(t *testing.T) {
	p := NewPlan(4, 2, 0.5, false, tasks.NextToken)
	if p.Induction.Steps != 1250 || p.OneLayer.Layers != 1 || p.ReverseNoMask.Causal || p.ReverseNoMask.Positions || p.ReverseNoMask.Task != "reverse" {
		t.Fatalf("plan %+v", p)
	}
	// Section 2's setups, by name: each task with positions and without,
	// the rest the defaults at 2000 steps scaled.
	for _, c := range []struct {
		c         train.Config
		task      string
		positions bool
	}{{p.Reverse, "reverse", true}, {p.ReverseNoPositions, "reverse", false}, {p.Majority, "majority", true}, {p.MajorityNoPositions, "majority", false}} {
		want := train.Defaults(c.task)
		want.Steps, want.Loss, want.Positions = 1000, tasks.NextToken, c.positions
		if c.c != want {
			t.Errorf("%s, positions %v: %+v, want %+v", c.task, c.positions, c.c, want)
		}
	}
	if got := p.positions(); len(got) != 4 || got[0] != p.Reverse || got[1] != p.ReverseNoPositions || got[2] != p.Majority || got[3] != p.MajorityNoPositions {
		t.Errorf("positions() = %+v", got)
	}
	pairs := p.Pairs()
	// 4 induction seeds, then 2 seeds of the wide model, of copy,
	// agreement and the two unseen variants, of each of 4 position runs,
	// the maskless reverse and the one-layer model.
	if len(pairs) != 4+2+2*4+2*4+2+2 {
		t.Fatalf("%d pairs", len(pairs))
	}
	if pairs[0].Config.Seed != 1 || pairs[0].Key != sweep.Key(p.Induction) {
		t.Fatalf("first pair %+v, want the default model's seed 1 (its pictures come from it)", pairs[0])
	}
	seen := map[sweep.RunID]bool{}
	for i, pr := range pairs {
		id := sweep.RunID{Key: pr.Key, Seed: pr.Config.Seed}
		if seen[id] || pr.Index != i {
			t.Fatalf("pair %d: duplicate or misnumbered %+v", i, pr)
		}
		seen[id] = true
	}
}
