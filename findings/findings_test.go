package findings

import (
	"testing"

	"headlab/sweep"
	"headlab/tasks"
)

func TestPlanPairs(t *testing.T) {
	p := NewPlan(4, 2, 0.5, false, tasks.NextToken)
	if p.Induction.Steps != 1250 || p.OneLayer.Layers != 1 || len(p.Positions) != 4 || p.RevNone.Causal || p.RevNone.Positions {
		t.Fatalf("plan %+v", p)
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
