package findings

import (
	"slices"
	"strings"
	"testing"

	"headlab/analysis"
	"headlab/circuit"
	"headlab/sweep"
	"headlab/train"
)

// signAs gives r a circuit of these edges (head names, each effect 0.5).
func signAs(r *sweep.Record, edges ...[2]string) {
	ec := &sweep.EdgeCircuit{Threshold: 0.9, Faithfulness: 0.92}
	for _, e := range edges {
		ec.Edges = append(ec.Edges, circuit.EdgeResult{From: e[0], To: e[1], Edge: e[0] + " -> " + e[1], Effect: 0.5, InCircuit: true})
	}
	r.EdgeCircuit = ec
	s, _ := r.Sign()
	ec.Signature = s.String()
}

// TestAtlasPlan: the atlas adds seeds of the default induction model
// under its own key, signs only its configurations, and the other
// sections read the seeds they name.
func TestAtlasPlan(t *testing.T) {
	p := NewPlan(4, 2, 1, false, "next-token").WithAtlas(6)
	key := sweep.Key(p.Induction)
	var ind []uint64
	for _, pr := range p.Pairs() {
		if pr.Key == key {
			ind = append(ind, pr.Config.Seed)
		}
	}
	if !slices.Equal(ind, []uint64{1, 2, 3, 4, 5, 6}) {
		t.Errorf("induction seeds %v, want 1-6", ind)
	}
	signed := p.Signed()
	if len(signed) != 3 || !signed[key] || !signed[sweep.Key(p.Majority)] || !signed[sweep.Key(p.Reverse)] || signed[sweep.Key(p.Copy)] {
		t.Errorf("signed keys %v", signed)
	}
	var recs []sweep.Record
	for _, pr := range p.Pairs() {
		recs = append(recs, sweep.Record{Key: pr.Key, Config: pr.Config})
	}
	for _, r := range p.Reported(recs) {
		if r.Key == key && r.Config.Seed > 4 {
			t.Errorf("seed %d of the default model reported outside the atlas", r.Config.Seed)
		}
	}
	if len(p.Reported(recs)) != len(recs)-2 {
		t.Errorf("reported %d of %d runs, want all but the atlas's 2 extra seeds", len(p.Reported(recs)), len(recs))
	}
	if len(NewPlan(4, 2, 1, false, "next-token").Signed()) != 0 {
		t.Error("a plan without an atlas signs runs")
	}
}

// TestAtlasSection: every mechanism of the three configurations with its
// share, and the induction circuit restated as the share of seeds whose
// mechanism holds it: 3 of 9 here, a third, which agrees.
func TestAtlasSection(t *testing.T) {
	in := newInput()
	in.Plan = in.Plan.WithAtlas(9)
	labels := func(prev, ind string) []string {
		return []string{prev, analysis.LabelUniform, ind, analysis.LabelUniform}
	}
	for s := uint64(1); s <= 9; s++ {
		hs := labels(analysis.LabelPreviousToken, analysis.LabelInduction)
		r := fake(in, in.Plan.Induction, s, 0.9, head(0, 0, hs[0], 0.5, nil), head(0, 1, hs[1], 0.9, nil), head(1, 0, hs[2], 0.5, nil), head(1, 1, hs[3], 0.9, nil))
		if s <= 3 {
			signAs(r, [2]string{"L0H0", "L1H0.k"}, [2]string{"L1H0", "logits"})
		} else {
			signAs(r, [2]string{"embed", "logits"})
		}
	}
	for _, c := range []train.Config{in.Plan.Majority, in.Plan.Reverse} {
		for _, s := range in.Plan.SmallSet {
			signAs(fake(in, c, s, 1, head(0, 0, analysis.LabelUniform, 1, nil)), [2]string{"embed", "logits"})
		}
	}
	text, tl := write(in.atlasSection)
	wantIn(t, "atlas", text, "## The atlas of circuits", "9 seeds with a signature, 2 mechanisms",
		"| 1 | 6 | 66.7% (", "| 2 | 3 | 33.3% (", "`L0:previous-token -> L1:induction.k` 0.50",
		"are mechanism 2 (33.3%), together 3 of 9 seeds, 33.3%", "Verdict: agrees",
		"8 seeds with a signature, 1 mechanism.")
	if len(tl.rows) != 1 || !strings.Contains(tl.rows[0][0], "holds the induction circuit (of 9)") {
		t.Errorf("tally rows %q", tl.rows)
	}
	in.Plan.AtlasSeeds = nil
	text, tl = write(in.atlasSection)
	wantIn(t, "no atlas", text, "Not run by this invocation")
	if len(tl.rows) != 0 {
		t.Errorf("no atlas: rows %q", tl.rows)
	}
}
