// Package findings holds the published findings headlab is built around,
// the runs that reproduce them, and the markdown report that sets our
// measured numbers beside the published ones (docs/findings.md).
//
// What the report judges is read from the runs into named data (the
// claims' in claims.go, the regime grid's in regime.go, section 6's in
// measures.go), judged by rules that are pure functions of that data
// (rules.go), and written apart (markdown.go, claimtext.go). extra.go
// holds what reproduce measures beyond the sweep's records.
package findings

import (
	"math"
	"slices"
	"time"

	"headlab/analysis"
	"headlab/sweep"
	"headlab/train"
)

// The published findings reproduce checks, as the product states them.
var (
	// The default induction model (seed 1, 2500 steps): held-out accuracy
	// intact and with the head of each label switched off.
	pubIntact  = 0.997
	pubHeadOff = map[string]float64{analysis.LabelPreviousToken: 0.228, analysis.LabelInduction: 0.224,
		analysis.NoClearPattern: 0.357, analysis.LabelAttentionSink: 0.997}
	pubHeadLabels = []string{analysis.LabelPreviousToken, analysis.LabelInduction, analysis.NoClearPattern, analysis.LabelAttentionSink}
	// Reverse and majority after 2000 steps, 8 seeds.
	pubReverseWith    = 1.0
	pubReverseWithout = []float64{0.91, 0.42, 0.94, 0.91, 0.93, 0.87, 0.43, 0.45}
	pubMajority       = 1.0
	// The fraction of seeds whose default induction model forms the
	// circuit: "roughly a third".
	pubCircuit = 1.0 / 3
)

// Plan is the configurations reproduce trains.
type Plan struct {
	Scale float64
	// Loss is the training loss of every run but the regime grid's other
	// half (tasks.NextToken, the default, or tasks.Answers).
	Loss string
	// Induction is the default model (sections 1, 3 and 6; claims 1, 5,
	// 6 and 11), OneLayer the same with one layer (section 4).
	Induction, OneLayer train.Config
	// Reverse and Majority have positional embeddings, the NoPositions
	// ones not (section 2; claims 1 to 3); ReverseNoMask has neither
	// positions nor the causal mask (section 5).
	Reverse, ReverseNoPositions   train.Config
	Majority, MajorityNoPositions train.Config
	ReverseNoMask                 train.Config
	CircuitSeeds, SmallSet        []uint64
	// AtlasSeeds are the default induction model's seeds the atlas
	// groups (WithAtlas; none: no atlas), with majority's and reverse's
	// small set (atlas.go).
	AtlasSeeds []uint64

	// The claims' runs (claims.go), on SmallSet.
	Copy               train.Config // claims 1 and 5
	Wide               train.Config // induction, 2 layers x 8 heads, d-model 64: claims 4 and 8
	Agreement          train.Config // claim 9
	Unseen, UnseenTied train.Config // claim 10
	Dynamics           train.Config // claim 7: the default run, trained outside the sweep with a history
	Grokking           train.Config // modular addition, trained outside the sweep with a history (grokking.go)
	// Regime is the grid of --regime, on CircuitSeeds; empty without it.
	Regime []train.Config
}

// NewPlan is the plan of seeds circuit seeds, small seeds of every other
// comparison, every step count scaled by scale, every run at loss, with
// the regime grid when regime is set.
func NewPlan(seeds, small int, scale float64, regime bool, loss string) Plan {
	steps := func(n int) int { return max(1, int(math.Round(float64(n)*scale))) }
	p := Plan{Scale: scale, Loss: loss}
	p.Induction = defaults("induction", loss)
	p.Induction.Steps = steps(2500)
	p.OneLayer = p.Induction
	p.OneLayer.Layers = 1
	p.Reverse, p.Majority = defaults("reverse", loss), defaults("majority", loss)
	p.Reverse.Steps, p.Majority.Steps = steps(2000), steps(2000)
	p.ReverseNoPositions, p.MajorityNoPositions = p.Reverse, p.Majority
	p.ReverseNoPositions.Positions, p.MajorityNoPositions.Positions = false, false
	p.ReverseNoMask = p.ReverseNoPositions
	p.ReverseNoMask.Causal = false
	p.claims(steps, regime, loss)
	for s := 1; s <= max(seeds, small); s++ {
		if s <= seeds {
			p.CircuitSeeds = append(p.CircuitSeeds, uint64(s))
		}
		if s <= small {
			p.SmallSet = append(p.SmallSet, uint64(s))
		}
	}
	return p
}

// claims fills the claims' configurations of p.
func (p *Plan) claims(steps func(int) int, regime bool, loss string) {
	p.Copy = defaults("copy", loss)
	p.Copy.Steps = steps(1500)
	p.Wide = defaults("induction", loss)
	p.Wide.Steps, p.Wide.Heads, p.Wide.DModel, p.Wide.DFF = steps(2500), 8, 64, 128
	p.Agreement = defaults("agreement", loss)
	p.Agreement.Steps = steps(2000)
	p.Unseen = defaults("induction-unseen", loss)
	p.Unseen.Steps = steps(2500)
	p.UnseenTied = p.Unseen
	p.UnseenTied.TiedEmbeddings = true
	p.Dynamics = p.Induction
	p.Grokking = grokking(steps)
	if regime {
		p.Regime = RegimeGrid(steps, loss)
	}
}

// positions are section 2's configurations, in its table's order:
// reverse, then majority, each with positions and without.
func (p Plan) positions() []train.Config {
	return []train.Config{p.Reverse, p.ReverseNoPositions, p.Majority, p.MajorityNoPositions}
}

// defaults is train.Defaults of task at loss.
func defaults(task, loss string) train.Config {
	c := train.Defaults(task)
	c.Loss = loss
	return c
}

// Pairs lists every run, the default model's seed 1 first (its pictures
// come from it), then the longest configurations first so that the two
// workers finish together.
func (p Plan) Pairs() []sweep.Pair {
	var seen = map[sweep.RunID]bool{}
	var out []sweep.Pair
	add := func(c train.Config, seeds []uint64) {
		for _, s := range seeds {
			c.Seed = s
			k := sweep.Key(c)
			if !seen[sweep.RunID{Key: k, Seed: s}] {
				seen[sweep.RunID{Key: k, Seed: s}] = true
				out = append(out, sweep.Pair{Index: len(out), Key: k, Config: c})
			}
		}
	}
	ind := slices.Clone(p.CircuitSeeds)
	for _, s := range p.SmallSet {
		if !slices.Contains(ind, s) {
			ind = append(ind, s)
		}
	}
	add(p.Induction, ind)
	add(p.Wide, p.SmallSet)
	for _, c := range p.Regime {
		add(c, p.CircuitSeeds)
	}
	for _, c := range []train.Config{p.Copy, p.Agreement, p.Unseen, p.UnseenTied} {
		add(c, p.SmallSet)
	}
	for _, c := range p.positions() {
		add(c, p.SmallSet)
	}
	add(p.ReverseNoMask, p.SmallSet)
	add(p.OneLayer, p.SmallSet)
	// The atlas's seeds of the default model beyond the others' last:
	// an interrupted run has every section's runs first.
	add(p.Induction, p.AtlasSeeds)
	return out
}

// HeatmapFile is the picture of the seed-1 default model's heads, in
// OUT/findings/.
const HeatmapFile = "heads-induction-seed1.png"

// Input is everything the report is written from.
type Input struct {
	Plan    Plan
	Reports []sweep.ConfigReport
	ByID    map[sweep.RunID]*sweep.Record
	Summary sweep.Summary
	Wall    time.Duration
	Workers int
	Out     string
	Notes   []string
	// Version is headlab's version, for the header.
	Version string
	// Extras are the claims' measurements beyond the records, by run;
	// Dynamics the claim-7 seeds (claims.go).
	Extras   map[sweep.RunID]*Extra
	Dynamics []DynamicsSeed
	// Grokking is the grokking run (grokking.go).
	Grokking *Grokking
}

func (in *Input) report(c train.Config) *sweep.ConfigReport {
	k := sweep.Key(c)
	for i := range in.Reports {
		if in.Reports[i].Key == k {
			return &in.Reports[i]
		}
	}
	return &sweep.ConfigReport{Key: k, Config: c}
}

// values lists a configuration's per-seed accuracies for the given seeds
// (a failed or missing seed is NaN).
func (in *Input) values(c train.Config, seeds []uint64) []float64 {
	var out []float64
	for _, s := range seeds {
		c.Seed = s
		r := in.ByID[sweep.RunID{Key: sweep.Key(c), Seed: s}]
		if r == nil || r.Status != sweep.StatusOK {
			out = append(out, math.NaN())
			continue
		}
		out = append(out, r.Accuracy)
	}
	return out
}

// smallSeeds is c's accuracy of every small seed (values) and the
// statistics of the finished ones.
func (in *Input) smallSeeds(c train.Config) ([]float64, sweep.Stats) {
	vals := in.values(c, in.Plan.SmallSet)
	return vals, sweep.Describe(okOnly(vals))
}

// records lists c's finished runs over seeds, in seed order (missing and
// failed runs left out).
func (in *Input) records(c train.Config, seeds []uint64) []*sweep.Record {
	var out []*sweep.Record
	for _, s := range seeds {
		r := in.ByID[sweep.RunID{Key: sweep.Key(c), Seed: s}]
		if r != nil && r.Status == sweep.StatusOK {
			out = append(out, r)
		}
	}
	return out
}

func okOnly(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}
