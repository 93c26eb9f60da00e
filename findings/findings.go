// Package findings holds the published findings headlab is built around,
// the runs that reproduce them, and the markdown report that sets our
// measured numbers beside the published ones (docs/findings.md).
package findings

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
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

// slack absorbs float rounding at a verdict's boundary: accuracies are
// fractions of 1,000 examples, and 0.85-0.80 is 0.05000000000000004.
const slack = 1e-9

// The verdict rules, one function each (TestVerdictRules holds them to
// their boundaries).

// agreesSingle: one run agrees with a published number within tolSingle.
func agreesSingle(measured, published float64) bool {
	return math.Abs(measured-published) <= tolSingle+slack
}

// agreesMean: the mean of the finished seeds agrees with a published
// mean within tolMean; no finished seed never agrees.
func agreesMean(vals []float64, published float64) bool {
	ok := okOnly(vals)
	return len(ok) > 0 && math.Abs(sweep.Describe(ok).Mean-published) <= tolMean+slack
}

// circuitAgrees: the published fraction lies inside the circuit
// fraction's 95% Wilson interval.
func circuitAgrees(cp sweep.Proportion) bool {
	return cp.Of > 0 && cp.Low <= pubCircuit+slack && pubCircuit <= cp.High+slack
}

// needsTwoLayers: every one-layer seed stays at least layersGap below
// the two-layer median.
func needsTwoLayers(one, two []float64) bool {
	o, t := okOnly(one), okOnly(two)
	return len(o) > 0 && len(t) > 0 && sweep.Describe(t).Median-sweep.Describe(o).Max >= layersGap-slack
}

// maskMatters: removing the causal mask too costs the mean at least
// positionGap.
func maskMatters(withMask, noMask []float64) bool {
	w, n := okOnly(withMask), okOnly(noMask)
	return len(w) > 0 && len(n) > 0 && sweep.Describe(w).Mean-sweep.Describe(n).Mean >= positionGap-slack
}

// Plan is the configurations reproduce trains.
type Plan struct {
	Scale                  float64
	Induction, OneLayer    train.Config
	Positions              []train.Config // reverse, majority x positions on, off
	RevNone                train.Config   // reverse, no positions, no causal mask
	CircuitSeeds, SmallSet []uint64

	// The claims' runs (claims.go), on SmallSet.
	Copy               train.Config // claims 1 and 5
	Wide               train.Config // induction, 2 layers x 8 heads, d-model 64: claims 4 and 8
	Agreement          train.Config // claim 9
	Unseen, UnseenTied train.Config // claim 10
	Dynamics           train.Config // claim 7: trained outside the sweep, with a history
	// Regime is the grid of --regime (item 5), on CircuitSeeds; empty
	// without it.
	Regime []train.Config
}

// NewPlan is the plan of seeds circuit seeds, small seeds of every other
// comparison, every step count scaled by scale, with the regime grid when
// regime is set.
func NewPlan(seeds, small int, scale float64, regime bool) Plan {
	steps := func(n int) int { return max(1, int(math.Round(float64(n)*scale))) }
	p := Plan{Scale: scale}
	p.Induction = train.Defaults("induction")
	p.Induction.Steps = steps(2500)
	p.OneLayer = p.Induction
	p.OneLayer.Layers = 1
	for _, task := range []string{"reverse", "majority"} {
		for _, pos := range []bool{true, false} {
			c := train.Defaults(task)
			c.Steps, c.Positions = steps(2000), pos
			p.Positions = append(p.Positions, c)
		}
	}
	p.RevNone = train.Defaults("reverse")
	p.RevNone.Steps, p.RevNone.Positions, p.RevNone.Causal = steps(2000), false, false
	p.claims(steps, regime)
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

func pc(x float64) string {
	if math.IsNaN(x) {
		return "failed"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

func pcList(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, strings.TrimSuffix(pc(x), "%"))
	}
	return strings.Join(s, ", ")
}

func verdict(ok bool) string {
	if ok {
		return "agrees"
	}
	return "**differs**"
}

func histLink(cr *sweep.ConfigReport) string {
	return "findings/hist-" + sweep.Slug(cr.Key) + ".png"
}

// Markdown writes the report.
func Markdown(w *strings.Builder, in Input) {
	p := in.Plan
	var summary [][4]string // finding, published, measured, verdict
	var differs []string
	add := func(finding, pub, ours string, ok bool, why string) {
		summary = append(summary, [4]string{finding, pub, ours, verdict(ok)})
		if !ok {
			differs = append(differs, why)
		}
	}
	var body strings.Builder
	b := &body

	// 1. The default model's ablation table.
	ind := in.report(p.Induction)
	r1 := in.ByID[sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}]
	fmt.Fprintf(b, "## 1. The default induction model's heads\n\n")
	fmt.Fprintf(b, "%s, seed 1: numbers from a single run. Held-out accuracy on %d examples with each head switched off alone; the published column is the published number for a head of the same label.\n\n",
		sweep.ConfigName(p.Induction), train.HeldOutExamples)
	if r1 == nil || r1.Status != sweep.StatusOK {
		why := "did not finish"
		if r1 != nil {
			why = "failed: " + r1.Error
		}
		fmt.Fprintf(b, "Seed 1 %s, so there is no table.\n\n", why)
		add("default model (one run, seed 1), intact", pc(pubIntact), "no run", false, "The default model's seed-1 run "+why+".")
	} else {
		fmt.Fprintf(b, "![Attention of every head of the seed-1 model on the first held-out example](findings/%s)\n\n", HeatmapFile)
		fmt.Fprintln(b, "| Head switched off | Label (score) | Measured | Published | Verdict |")
		fmt.Fprintln(b, "|---|---|---|---|---|")
		ok := agreesSingle(r1.Accuracy, pubIntact)
		fmt.Fprintf(b, "| none | | %s | %s | %s |\n", pc(r1.Accuracy), pc(pubIntact), verdict(ok))
		add("default model (one run, seed 1), intact accuracy", pc(pubIntact), pc(r1.Accuracy), ok,
			fmt.Sprintf("The default model's intact accuracy is %s, published %s.", pc(r1.Accuracy), pc(pubIntact)))
		seen := map[string]bool{}
		for _, h := range r1.Heads {
			pub, has := pubHeadOff[h.Label]
			if !has {
				fmt.Fprintf(b, "| %s | %s | %s | no published head of this label | |\n", h.Name, h.Title(), pc(h.AblatedAccuracy))
				continue
			}
			seen[h.Label] = true
			ok := agreesSingle(h.AblatedAccuracy, pub)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", h.Name, h.Title(), pc(h.AblatedAccuracy), pc(pub), verdict(ok))
			add(fmt.Sprintf("default model (one run, seed 1), %s head %s off", h.Label, h.Name), pc(pub), pc(h.AblatedAccuracy), ok,
				fmt.Sprintf("Switching off %s (%s) leaves %s; the published %s head's removal left %s.", h.Name, h.Label, pc(h.AblatedAccuracy), h.Label, pc(pub)))
		}
		fmt.Fprintln(b)
		for _, l := range pubHeadLabels {
			if !seen[l] {
				what := l + " head"
				if l == analysis.NoClearPattern {
					what = "unlabelled head (no clear pattern)"
				}
				fmt.Fprintf(b, "- The published model has %s %s whose removal leaves %s; our seed-1 model has no head with that label.\n", article(what), what, pc(pubHeadOff[l]))
				add("default model (one run, seed 1), "+what+" off", pc(pubHeadOff[l]), "no such head", false,
					fmt.Sprintf("Our seed-1 model has no %s (published: removing it leaves %s).", what, pc(pubHeadOff[l])))
			}
		}
		fmt.Fprintf(b, "- Joint ablations: all induction heads (%s) off together: %s; all previous-token heads (%s) off together: %s. Forms the circuit (rule below): %s.\n\n",
			headsOrNone(r1.Ablation.Induction.Heads), optPc(r1.Ablation.Induction.Accuracy),
			headsOrNone(r1.Ablation.PreviousToken.Heads), optPc(r1.Ablation.PreviousToken.Accuracy), yesNoWord(r1.Circuit))
	}

	// 2. Positions on reverse and majority.
	fmt.Fprintf(b, "## 2. Positional embeddings: reverse and majority\n\n")
	fmt.Fprintf(b, "%d steps, seeds %s; held-out accuracy per seed, in seed order.\n\n", p.Positions[0].Steps, seedRange(p.SmallSet))
	fmt.Fprintln(b, "| Task | Positions | Per-seed accuracy (%) | Mean | Modes | Published | Verdict |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|")
	for _, c := range p.Positions {
		cr := in.report(c)
		vals := in.values(c, p.SmallSet)
		mean := sweep.Describe(okOnly(vals)).Mean
		var pub float64
		pubText := ""
		switch {
		case c.Task == "reverse" && c.Positions:
			pub, pubText = pubReverseWith, pc(pubReverseWith)
		case c.Task == "reverse":
			pub = sweep.Describe(pubReverseWithout).Mean
			pubText = fmt.Sprintf("%s (%s)", pc(pub), pcList(pubReverseWithout))
		default:
			pub, pubText = pubMajority, pc(pubMajority)
		}
		ok := agreesMean(vals, pub)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.Task, sweep.OnOff(c.Positions), pcList(vals), pc(mean),
			modesShort(cr.Modes), pubText, verdict(ok))
		name := fmt.Sprintf("%s, positions %s, mean of %d seeds", c.Task, sweep.OnOff(c.Positions), len(vals))
		add(name, pc(pub), pc(mean), ok, fmt.Sprintf("%s after %d steps: mean %s over %d seeds, published %s.",
			strings.ToUpper(c.Task[:1])+c.Task[1:]+" with positions "+sweep.OnOff(c.Positions), c.Steps, pc(mean), len(vals), pc(pub)))
	}
	fmt.Fprintln(b)
	pubModes := sweep.SplitModes(pubReverseWithout)
	revOff := in.report(p.Positions[1])
	fmt.Fprintf(b, "Published reverse without positions: %s. Ours: %s. Seeds are not comparable one by one (a different implementation draws different weights from the same seed); the comparison is of means and modes.\n\n",
		sweep.ModesText(pubModes), sweep.ModesText(revOff.Modes))
	for _, c := range p.Positions {
		cr := in.report(c)
		if cr.Seeds > 0 {
			fmt.Fprintf(b, "![%s](%s)\n", sweep.ConfigName(c), histLink(cr))
		}
	}
	fmt.Fprintln(b)

	// 3. How often the circuit forms.
	fmt.Fprintf(b, "## 3. How often the induction circuit forms\n\n")
	cp := ind.Circuit
	okC := circuitAgrees(cp)
	fmt.Fprintf(b, "%s over %d seeds (%s). A seed forms the circuit when it has a previous-token head in an earlier layer than an induction head and both are load-bearing: switching off all induction heads together costs at least %.0f points of held-out accuracy, and so does switching off all previous-token heads together.\n\n",
		sweep.ConfigName(p.Induction), ind.Seeds, seedRange(p.CircuitSeeds), 100*analysis.CircuitDrop)
	fmt.Fprintf(b, "**%d of %d seeds form the circuit: %s (95%% Wilson interval %s to %s).** Published: roughly a third. Verdict: %s (agreement means a third lies inside the interval).\n\n",
		cp.Count, cp.Of, pc(cp.Fraction), pc(cp.Low), pc(cp.High), verdict(okC))
	add(fmt.Sprintf("seeds forming the circuit (of %d)", cp.Of), "roughly a third",
		fmt.Sprintf("%s [%s, %s]", pc(cp.Fraction), pc(cp.Low), pc(cp.High)), okC,
		fmt.Sprintf("%d of %d seeds form the induction circuit (%s, 95%% interval %s to %s); published: roughly a third.", cp.Count, cp.Of, pc(cp.Fraction), pc(cp.Low), pc(cp.High)))
	a := ind.Accuracy
	fmt.Fprintf(b, "Held-out accuracy over these seeds: mean %s, median %s, min %s, max %s; %s.\n\n", pc(a.Mean), pc(a.Median), pc(a.Min), pc(a.Max), sweep.ModesText(ind.Modes))
	if ind.Seeds > 0 {
		fmt.Fprintf(b, "![%s](%s)\n\n", sweep.ConfigName(p.Induction), histLink(ind))
	}
	fmt.Fprintln(b, "Single-head against joint ablations, per seed (single: the most harmful single head of the label switched off; joint: all heads of the label off together):")
	fmt.Fprintln(b)
	fmt.Fprintln(b, "| Seed | Intact | Induction heads | single off | joint off | Previous-token heads | single off | joint off | Circuit |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|")
	hidden := 0
	for _, s := range ind.Ablations {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Seed, pc(s.Accuracy),
			headsOrNone(s.InductionHeads), optPc(s.InductionSingle), optPc(s.InductionJoint),
			headsOrNone(s.PrevHeads), optPc(s.PrevSingle), optPc(s.PrevJoint), yesNoWord(s.Circuit))
		if s.Circuit && (s.InductionSingle != nil && s.Accuracy-*s.InductionSingle < analysis.CircuitDrop ||
			s.PrevSingle != nil && s.Accuracy-*s.PrevSingle < analysis.CircuitDrop) {
			hidden++
		}
	}
	fmt.Fprintf(b, "\nOf the %d circuit seeds, %d would be missed by single-head ablations alone (no single head of one half costs %.0f points: its heads duplicate each other).\n\n",
		cp.Count, hidden, 100*analysis.CircuitDrop)

	// 4. One layer against two.
	fmt.Fprintf(b, "## 4. One layer against two on induction\n\n")
	one := in.values(p.OneLayer, p.SmallSet)
	two := in.values(p.Induction, p.SmallSet)
	oneS, twoS := sweep.Describe(okOnly(one)), sweep.Describe(okOnly(two))
	okL := needsTwoLayers(one, two)
	fmt.Fprintln(b, "| Layers | Per-seed accuracy (%) | Mean | Median | Max | Chance |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|")
	fmt.Fprintf(b, "| 1 | %s | %s | %s | %s | %s |\n", pcList(one), pc(oneS.Mean), pc(oneS.Median), pc(oneS.Max), pc(ind.Chance))
	fmt.Fprintf(b, "| 2 | %s | %s | %s | %s | %s |\n\n", pcList(two), pc(twoS.Mean), pc(twoS.Median), pc(twoS.Max), pc(ind.Chance))
	fmt.Fprintf(b, "Published: induction needs two layers. Verdict: %s (agreement means every one-layer seed stays at least %.0f points below the two-layer median; the best one-layer seed reaches %s, the two-layer median is %s).\n\n",
		verdict(okL), 100*layersGap, pc(oneS.Max), pc(twoS.Median))
	add("induction needs two layers", "yes", fmt.Sprintf("1 layer best %s, 2 layers median %s", pc(oneS.Max), pc(twoS.Median)), okL,
		fmt.Sprintf("A one-layer seed reaches %s on induction against a two-layer median of %s.", pc(oneS.Max), pc(twoS.Median)))

	// 5. Reverse without positions and without the mask.
	fmt.Fprintf(b, "## 5. Reverse without positions and without the causal mask\n\n")
	withMask := in.values(p.Positions[1], p.SmallSet)
	noMask := in.values(p.RevNone, p.SmallSet)
	wS, nS := sweep.Describe(okOnly(withMask)), sweep.Describe(okOnly(noMask))
	okP := maskMatters(withMask, noMask)
	revChance := in.report(p.RevNone).Chance
	fmt.Fprintln(b, "| Positions | Causal mask | Per-seed accuracy (%) | Mean | Chance |")
	fmt.Fprintln(b, "|---|---|---|---|---|")
	fmt.Fprintf(b, "| off | on | %s | %s | %s |\n", pcList(withMask), pc(wS.Mean), pc(revChance))
	fmt.Fprintf(b, "| off | off | %s | %s | %s |\n\n", pcList(noMask), pc(nS.Mean), pc(revChance))
	fmt.Fprintf(b, "Without positional embeddings the causal mask is the last positional signal (a query can tell where it is from how many keys it sees); without the mask too, every position sees the same set of tokens. Published: removing it removes the last positional signal. Verdict: %s (agreement means the mean falls by at least %.0f points when the mask goes too; it goes from %s to %s).\n\n",
		verdict(okP), 100*positionGap, pc(wS.Mean), pc(nS.Mean))
	add("reverse, no positions: removing the mask too", "removes the last positional signal",
		fmt.Sprintf("mean %s → %s", pc(wS.Mean), pc(nS.Mean)), okP,
		fmt.Sprintf("Reverse without positions goes from %s with the causal mask to %s without it: less than the %.0f-point fall that removing the last positional signal should cause.", pc(wS.Mean), pc(nS.Mean), 100*positionGap))

	// The claims, one section each.
	for _, c := range in.Claims() {
		fmt.Fprintf(b, "## Claim %d. %s\n\n", c.N, c.Title)
		fmt.Fprintf(b, "Published: %s. Rule, fixed before the runs: %s.\n\n", c.Published, c.Rule)
		for _, l := range c.Body {
			fmt.Fprintln(b, l)
		}
		fmt.Fprintf(b, "\nVerdict: %s (%s).\n\n", verdict(c.Agrees), c.Measured)
		add(fmt.Sprintf("claim %d: %s", c.N, strings.ToLower(c.Title[:1])+c.Title[1:]), c.Published, c.Measured, c.Agrees, c.Differs)
	}
	if len(p.Regime) > 0 {
		regimeSection(b, &in, add)
	} else {
		fmt.Fprintf(b, "## Which setting gives the published numbers\n\nNot run by this invocation: `headlab reproduce --regime` sweeps d-model, learning rate, batch and steps around the default (%d cells of %d seeds) and names the cell closest to the published model.\n\n", len(RegimeGrid(func(n int) int { return n })), len(p.CircuitSeeds))
		summary = append(summary, [4]string{"regime grid: a cell with the published model's heads", "load-bearing single heads, a sink, circuit in a third", "not run (`--regime`)", "not run"})
	}

	// Assemble: header, differences, summary, sections, method.
	fmt.Fprintf(w, "# Findings, reproduced\n\n")
	fmt.Fprintf(w, "Generated by `headlab reproduce` (headlab %s) on %s, not written by hand: %d runs, %d trained by this invocation and %d carried over from an interrupted one (`--resume`), %d workers, %s wall time. Every number below is measured by those runs; the published numbers beside them are the ones the product states.\n\n",
		in.Version, time.Now().UTC().Format("2006-01-02 15:04 UTC"), in.Summary.Total, in.Summary.Done, in.Summary.Skipped, in.Workers, in.Wall.Round(time.Second))
	if p.Scale != 1 {
		fmt.Fprintf(w, "> **Reduced setting:** every step count is scaled by %g, so these numbers are not comparable with the published ones; run `headlab reproduce` without `--steps-scale` for the real comparison.\n\n", p.Scale)
	}
	for _, n := range in.Notes {
		fmt.Fprintf(w, "> **Note:** %s\n\n", n)
	}
	if in.Summary.Failed > 0 {
		fmt.Fprintf(w, "> **%d runs failed** (see `headlab report --db %s`); they are left out of every statistic.\n\n", in.Summary.Failed, filepath.ToSlash(filepath.Join(in.Out, "findings", "findings.db")))
	}
	fmt.Fprintf(w, "## Where we differ from the published findings\n\n")
	if len(differs) == 0 {
		fmt.Fprintf(w, "Nowhere, within the tolerances stated below.\n\n")
	}
	for _, d := range differs {
		fmt.Fprintf(w, "- %s\n", d)
	}
	if len(differs) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Summary\n\n| Finding | Published | Measured | Verdict |\n|---|---|---|---|\n")
	for _, s := range summary {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", s[0], s[1], s[2], s[3])
	}
	fmt.Fprintln(w)
	w.WriteString(body.String())

	fmt.Fprintf(w, "## How this was measured\n\n")
	fmt.Fprintf(w, "- Every run trains on the CPU backend from its seed (weights and data), then measures held-out accuracy on %d examples, labels every head on the first 256 of them (docs/head-patterns.md), and switches heads off alone and by label (docs/sweeps.md).\n", train.HeldOutExamples)
	fmt.Fprintf(w, "- Verdicts: a single run agrees with a published number within %.0f points, a mean over seeds within %.0f points; the circuit fraction agrees when a third lies inside its 95%% Wilson interval; the other rules are stated in their sections, and a rule of \"k of 8\" seeds asks ceil(k n / 8) of n. Modes follow the two-mode rule of docs/sweeps.md.\n",
		100*tolSingle, 100*tolMean)
	fmt.Fprintf(w, "- The claims' extra measurements (pruning orders of the wide model, attractor accuracy with each verb->subject head off, accuracy on unseen tokens) are taken on the CPU from the trained models as the sweep finishes them, and the phase-change seeds (claim 7) train outside the sweep with a history; they are kept beside the database in `findings/claims.json`, which `--resume` reads.\n")
	fmt.Fprintf(w, "- The runs are in `%s` (`headlab report --db` reads it); seconds per run, training and analysis:\n\n", filepath.ToSlash(filepath.Join(in.Out, "findings", "findings.db")))
	fmt.Fprintln(w, "| Configuration | Seeds | Failed | Seconds per run (mean) |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, cr := range in.Reports {
		fmt.Fprintf(w, "| %s | %d | %d | %.1f |\n", sweep.ConfigName(cr.Config), cr.Seeds, len(cr.Failed), cr.Seconds.Mean)
	}
}

// article is "an" before a vowel, "a" otherwise.
func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func modesShort(m sweep.Modes) string {
	if !m.Split {
		return "one"
	}
	return fmt.Sprintf("%d around %s, %d around %s", m.Low.N, pc(m.Low.Mean), m.High.N, pc(m.High.Mean))
}

func optPc(p *float64) string {
	if p == nil {
		return "-"
	}
	return pc(*p)
}

func headsOrNone(h []string) string {
	if len(h) == 0 {
		return "none"
	}
	return strings.Join(h, ", ")
}

func yesNoWord(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// seedRange writes a seed list compactly: "1-32".
func seedRange(s []uint64) string {
	if len(s) == 0 {
		return "none"
	}
	if s[len(s)-1]-s[0] == uint64(len(s)-1) {
		if len(s) == 1 {
			return fmt.Sprint(s[0])
		}
		return fmt.Sprintf("%d-%d", s[0], s[len(s)-1])
	}
	var parts []string
	for _, x := range s {
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, ",")
}
