package findings

import (
	"fmt"
	"slices"
	"strings"

	"headlab/analysis"
	"headlab/circuit"
	"headlab/sweep"
	"headlab/train"
)

// DefaultAtlasSeeds is how many seeds of the default induction model the
// atlas groups (reproduce --atlas-seeds).
const DefaultAtlasSeeds = 128

// AtlasFile is the atlas's figure, beside the other pictures.
const AtlasFile = "atlas.png"

// WithAtlas is p with an atlas over seeds 1..n of the default induction
// model (its configuration key the circuit fraction's) and the small set
// of majority and reverse; n = 0 leaves the atlas out.
func (p Plan) WithAtlas(n int) Plan {
	p.AtlasSeeds = nil
	for s := 1; s <= n; s++ {
		p.AtlasSeeds = append(p.AtlasSeeds, uint64(s))
	}
	return p
}

// atlasConfigs are the configurations the atlas groups, each with its
// seeds: none when the plan has no atlas.
func (p Plan) atlasConfigs() ([]train.Config, [][]uint64) {
	if len(p.AtlasSeeds) == 0 {
		return nil, nil
	}
	return []train.Config{p.Induction, p.Majority, p.Reverse}, [][]uint64{p.AtlasSeeds, p.SmallSet, p.SmallSet}
}

// Signed is the configuration keys whose runs reproduce signs
// (sweep.Analysis.Signed): the atlas's; empty, not nil, with no atlas.
func (p Plan) Signed() map[string]bool {
	keys := map[string]bool{}
	cs, _ := p.atlasConfigs()
	for _, c := range cs {
		keys[sweep.Key(c)] = true
	}
	return keys
}

// Reported is recs without the runs that only the atlas asked for (the
// default induction model's seeds beyond the circuit fraction's and the
// small set), so that every other section reads the seeds it names.
func (p Plan) Reported(recs []sweep.Record) []sweep.Record {
	key := sweep.Key(p.Induction)
	var out []sweep.Record
	for _, r := range recs {
		if r.Key == key && !slices.Contains(p.CircuitSeeds, r.Config.Seed) && !slices.Contains(p.SmallSet, r.Config.Seed) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Atlas is the atlas of the plan's atlas configurations, over their
// seeds' finished runs (sweep.Atlas), in the plan's order; a
// configuration with no signed run has no mechanism.
func (in *Input) Atlas() ([]sweep.ConfigAtlas, error) {
	cs, seeds := in.Plan.atlasConfigs()
	var out []sweep.ConfigAtlas
	for i, c := range cs {
		var recs []sweep.Record
		for _, r := range in.records(c, seeds[i]) {
			recs = append(recs, *r)
		}
		a, err := sweep.Atlas(recs)
		if err != nil {
			return nil, err
		}
		ca := sweep.ConfigAtlas{Key: sweep.Key(c), Config: c}
		if len(a) == 1 {
			ca = a[0]
		}
		out = append(out, ca)
	}
	return out, nil
}

// inductionCircuit reports whether a mechanism holds the induction
// circuit's composition: a previous-token head's output into an induction
// head's key.
func inductionCircuit(m sweep.Mechanism) bool {
	return circuit.Signature{Edges: m.Edges}.Has(analysis.LabelPreviousToken, analysis.LabelInduction, "k")
}

// atlasSection writes the atlas: every mechanism of the default induction
// model, majority and reverse with its share, and the published "roughly
// a third form the circuit" restated as the share of seeds whose
// mechanism holds the induction circuit.
func (in *Input) atlasSection(b *strings.Builder, t *tally) {
	p := in.Plan
	fmt.Fprintf(b, "## The atlas of circuits\n\n")
	if len(p.AtlasSeeds) == 0 {
		fmt.Fprintf(b, "Not run by this invocation (`reproduce --atlas-seeds N` groups N seeds of the default induction model, and the small set of majority and reverse, by their circuits).\n\n")
		return
	}
	atlas, err := in.Atlas()
	if err != nil {
		fmt.Fprintf(b, "The atlas could not be read: %v.\n\n", err)
		return
	}
	fmt.Fprintf(b, "Each seed's circuit (path patching, noising with the task's first corruption, threshold 0.9) reduced to its signature: its load-bearing edges (effect at least %.2f of the logit difference) between its load-bearing heads, named by layer and role. Seeds of one signature, and signatures one weak edge apart (an edge of mean effect below %.2f), form one mechanism; the rule (docs/circuits.md, \"Atlas\") was fixed in code before these runs. Shares carry 95%% Wilson intervals; the representative seed is the lowest seed of the mechanism's own signature. `headlab atlas --db findings/findings.db` prints the same.\n\n", circuit.SignatureEffect, circuit.WeakEffect)
	fmt.Fprintf(b, "![the atlas](findings/%s)\n\n", AtlasFile)
	for _, ca := range atlas {
		fmt.Fprintf(b, "**%s**: %d seeds with a signature, %d mechanism%s", sweep.ConfigName(ca.Config), ca.Signed, len(ca.Mechanisms), plural(len(ca.Mechanisms)))
		if ca.Unsigned > 0 {
			fmt.Fprintf(b, " (%d finished seeds without a signature left out)", ca.Unsigned)
		}
		fmt.Fprintf(b, ".\n\n")
		if len(ca.Mechanisms) == 0 {
			continue
		}
		fmt.Fprintln(b, "| Mechanism | Seeds | Share (95% interval) | Mean accuracy | Representative seed | Signature (mean effect) |")
		fmt.Fprintln(b, "|---|---|---|---|---|---|")
		for k, m := range ca.Mechanisms {
			edges := make([]string, len(m.Edges))
			for i, e := range m.Edges {
				edges[i] = fmt.Sprintf("`%s` %.2f", e.String(), e.Effect)
			}
			sig := strings.Join(edges, "; ")
			if sig == "" {
				sig = circuit.EmptySignature
			}
			if len(m.Merged) > 0 {
				sig += fmt.Sprintf(" (and %d signature%s one weak edge apart)", len(m.Merged), plural(len(m.Merged)))
			}
			fmt.Fprintf(b, "| %d | %d | %s (%s to %s) | %s | %d | %s |\n", k+1, m.Runs, pc(m.Share), pc(m.ShareLow), pc(m.ShareHigh),
				pc(m.Accuracy), m.Representative, sig)
		}
		fmt.Fprintln(b)
	}
	ind := atlas[0]
	if ind.Signed == 0 {
		return
	}
	var with []string
	n := 0
	for k, m := range ind.Mechanisms {
		if inductionCircuit(m) {
			with = append(with, fmt.Sprintf("mechanism %d (%s)", k+1, pc(m.Share)))
			n += m.Runs
		}
	}
	lo, hi := sweep.Wilson(n, ind.Signed)
	ok := lo <= pubCircuit && pubCircuit <= hi
	which := "no mechanism"
	if len(with) > 0 {
		which = strings.Join(with, ", ")
	}
	fmt.Fprintf(b, "**The circuit as mechanisms.** The published \"roughly a third form the circuit\", restated: the mechanisms whose signature holds the induction circuit (a previous-token head's output into an induction head's key) are %s, together %d of %d seeds, %s (95%% interval %s to %s). Verdict: %s (agreement means a third lies inside the interval). Section 3 counts the circuit by joint ablation instead, over its own seeds.\n\n",
		which, n, ind.Signed, pc(float64(n)/float64(ind.Signed)), pc(lo), pc(hi), verdict(ok))
	t.add(fmt.Sprintf("seeds whose mechanism holds the induction circuit (of %d)", ind.Signed), "roughly a third",
		fmt.Sprintf("%s [%s, %s]", pc(float64(n)/float64(ind.Signed)), pc(lo), pc(hi)), ok,
		fmt.Sprintf("%d of %d seeds' mechanisms hold the induction circuit (previous-token head into an induction head's key); published: roughly a third.", n, ind.Signed))
}

// AtlasRecords is the records of the atlas's configurations and seeds,
// for its figure.
func (in *Input) AtlasRecords() []sweep.Record {
	cs, seeds := in.Plan.atlasConfigs()
	var out []sweep.Record
	for i, c := range cs {
		for _, r := range in.records(c, seeds[i]) {
			out = append(out, *r)
		}
	}
	return out
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
