// Package findings holds the published findings headlab is built around,
// the runs that reproduce them, and the markdown report that sets our
// measured numbers beside the published ones (docs/findings.md).
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
	pubIntact     = 0.997
	pubHeadOff    = map[string]float64{"previous-token": 0.228, "induction": 0.224, analysis.NoClearPattern: 0.357, "attention-sink": 0.997}
	pubHeadLabels = []string{"previous-token", "induction", analysis.NoClearPattern, "attention-sink"}
	// Reverse and majority after 2000 steps, 8 seeds.
	pubReverseWith    = 1.0
	pubReverseWithout = []float64{0.91, 0.42, 0.94, 0.91, 0.93, 0.87, 0.43, 0.45}
	pubMajority       = 1.0
	// The fraction of seeds whose default induction model forms the
	// circuit: "roughly a third".
	pubCircuit = 1.0 / 3
)

// Tolerances of the verdicts, stated in the report.
const (
	tolSingle   = 0.05 // one run against a published number
	tolMean     = 0.10 // a mean over seeds against a published mean
	layersGap   = 0.20 // one-layer seeds this far below the two-layer median
	positionGap = 0.20 // the mask's removal costs at least this much
)

// slack absorbs float rounding at a verdict's boundary (0.85-0.80 is
// 0.05000000000000004): analysis's, which its load-bearing rule uses.
const slack = analysis.Slack

// atLeast and atMost are the inclusive comparisons of every rule with a
// threshold, whatever the rounding.
func atLeast(x, threshold float64) bool { return x >= threshold-slack }
func atMost(x, threshold float64) bool  { return x <= threshold+slack }

// The verdict rules, one function each (TestVerdictRules holds them to
// their boundaries).

// agreesSingle: one run agrees with a published number within tolSingle.
func agreesSingle(measured, published float64) bool {
	return atMost(math.Abs(measured-published), tolSingle)
}

// agreesMean: the mean of the finished seeds agrees with a published
// mean within tolMean; no finished seed never agrees.
func agreesMean(vals []float64, published float64) bool {
	ok := okOnly(vals)
	return len(ok) > 0 && atMost(math.Abs(sweep.Describe(ok).Mean-published), tolMean)
}

// circuitAgrees: the published fraction lies inside the circuit
// fraction's 95% Wilson interval.
func circuitAgrees(cp sweep.Proportion) bool {
	return cp.Of > 0 && atMost(cp.Low, pubCircuit) && atLeast(cp.High, pubCircuit)
}

// needsTwoLayers: every one-layer seed stays at least layersGap below
// the two-layer median.
func needsTwoLayers(one, two []float64) bool {
	o, t := okOnly(one), okOnly(two)
	return len(o) > 0 && len(t) > 0 && atLeast(sweep.Describe(t).Median-sweep.Describe(o).Max, layersGap)
}

// maskMatters: removing the causal mask too costs the mean at least
// positionGap.
func maskMatters(withMask, noMask []float64) bool {
	w, n := okOnly(withMask), okOnly(noMask)
	return len(w) > 0 && len(n) > 0 && atLeast(sweep.Describe(w).Mean-sweep.Describe(n).Mean, positionGap)
}

// Plan is the configurations reproduce trains.
type Plan struct {
	Scale float64
	// Loss is the training loss of every run but the regime grid's other
	// half (tasks.NextToken, the default, or tasks.Answers).
	Loss                   string
	Induction, OneLayer    train.Config
	Positions              []train.Config // reverse, majority x positions on, off
	RevNone                train.Config   // reverse, no positions, no causal mask
	CircuitSeeds, SmallSet []uint64

	// The claims' runs (claims.go), on SmallSet.
	Copy               train.Config // claims 1 and 5
	Wide               train.Config // induction, 2 layers x 8 heads, d-model 64: claims 4 and 8
	Agreement          train.Config // claim 9
	Unseen, UnseenTied train.Config // claim 10
	Dynamics           train.Config // claim 7: the default run, trained outside the sweep with a history
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
	for _, task := range []string{"reverse", "majority"} {
		for _, pos := range []bool{true, false} {
			c := defaults(task, loss)
			c.Steps, c.Positions = steps(2000), pos
			p.Positions = append(p.Positions, c)
		}
	}
	p.RevNone = defaults("reverse", loss)
	p.RevNone.Steps, p.RevNone.Positions, p.RevNone.Causal = steps(2000), false, false
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
	for _, c := range p.Positions {
		add(c, p.SmallSet)
	}
	add(p.RevNone, p.SmallSet)
	add(p.OneLayer, p.SmallSet)
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

func okOnly(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}
