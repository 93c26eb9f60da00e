package findings

import (
	"math"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/sweep"
)

// Every rule of the report is here, as a pure function of named data
// with its thresholds beside it: the sections' verdicts against the
// published numbers, and each claim's rule over what claims.go reads of
// its runs. TestVerdictRules, rules_test.go and the boundary tests hold
// them to their thresholds; markdown.go and claimtext.go write the text.

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

// missedBySingle says whether a circuit seed has a half whose most
// harmful single head costs less than analysis.CircuitDrop, so that
// single-head ablations alone would not find its circuit.
func missedBySingle(s sweep.SeedAblation) bool {
	return s.Circuit && (s.InductionSingle != nil && !analysis.DropsEnough(s.Accuracy-*s.InductionSingle) ||
		s.PrevSingle != nil && !analysis.DropsEnough(s.Accuracy-*s.PrevSingle))
}

// The claims' count rules, "k of 8" seeds: at least ceil(k*n/8) of the n
// seeds there are (need).
const (
	mostSeeds    = 6 // claims 1, 3, 5, 8, 9 and 10
	nearlyAll    = 7 // claims 2 and 7
	halfTheSeeds = 4 // claim 11
)

// Thresholds of the claims' rules.
const (
	// Claim 2: every single-head ablation of a majority seed costs at most this.
	redundantCost = 0.02
	// Claim 3: the most uniform layer-0 head scores at least this and
	// switching it off costs at least usedMargin (the first rule: at
	// least usedMargin more than any other layer-0 head).
	pinnedUniform = 0.97
	usedMargin    = 0.10
	// Claim 4: the median cost of a sink head is at most this.
	sinkCost = 0.01
	// Claim 4, revised: a head whose sink score is at least this is a sink
	// head, reported apart from the labelled ones.
	sinkScore = 0.4
	// Claim 6: a seed with at least this accuracy has learned the task.
	learnedAccuracy = 0.99
	// Claim 7: each rise spans at most this fraction of the run.
	riseSpan = 0.10
	// Claim 8: at least this fraction of heads goes at a cost of 1 point.
	prunable = 0.5
	// Claim 9: the relation head beats the baseline by the naming margin
	// and costs at least this on attractor examples.
	attractorCost = 0.10
	// Claim 10: unseen accuracy at least this far above chance.
	unseenAbove = 0.20
	// Claim 11: the most harmful single head leaves at most this accuracy
	// in at least half the seeds.
	oneHeadLeaves = 0.30
	// The regime grid: a cell has the published model's load-bearing
	// heads when at least this fraction of its seeds has one.
	loadBearingSeeds = 0.5
)

// need is the scaled count rule: k of 8 on n seeds.
func need(n, k int) int { return int(math.Ceil(float64(k*n) / 8)) }

// countRule is a claim's count rule on its seeds' verdicts ok: it agrees
// when at least of8 in 8 of them hold (need), never on no seed. It
// returns how many hold.
func countRule(ok []bool, of8 int) (holding int, agrees bool) {
	k := countTrue(ok)
	return k, enough(k, len(ok), of8)
}

// enough is the count rule on k of n seeds holding.
func enough(k, n, of8 int) bool { return n > 0 && k >= need(n, of8) }

func countTrue(xs []bool) int {
	n := 0
	for _, x := range xs {
		if x {
			n++
		}
	}
	return n
}

// hasLabel reports whether some head carries one of labels.
func hasLabel(heads []inspect.Head, labels ...string) bool {
	for _, h := range heads {
		for _, l := range labels {
			if h.Label == l {
				return true
			}
		}
	}
	return false
}

// hasLabelIn reports whether some head of layer l carries label.
func hasLabelIn(heads []inspect.Head, l int, label string) bool {
	for _, h := range heads {
		if h.Layer == l && h.Label == label {
			return true
		}
	}
	return false
}

// Claim 1's tasks, as its rules name them.
const (
	taskReverse   = "reverse"
	taskMajority  = "majority"
	taskCopy      = "copy"
	taskInduction = "induction"
)

// hasSignature is claim 1's rule on one seed's heads: they carry its
// task's signature, a head labelled mirror or mirror shifted on reverse,
// uniform on majority, previous-token and induction (in any layers) on
// copy, and on induction a previous-token head in layer 0 and an
// induction head in layer 1.
func hasSignature(task string, heads []inspect.Head) bool {
	switch task {
	case taskReverse:
		return hasLabel(heads, analysis.LabelMirror, analysis.LabelMirrorShifted)
	case taskMajority:
		return hasLabel(heads, analysis.LabelUniform)
	case taskCopy:
		return hasLabel(heads, analysis.LabelPreviousToken) && hasLabel(heads, analysis.LabelInduction)
	case taskInduction:
		return hasLabelIn(heads, 0, analysis.LabelPreviousToken) && hasLabelIn(heads, 1, analysis.LabelInduction)
	}
	return false
}

// signaturesHold is claim 1's verdicts from how many of each task's seeds
// carry its signature (with[t] of seeds[t]): under the first rule,
// reverse, majority and copy each in mostSeeds of 8; under the revised
// one, reverse, majority and the rotated copy task, induction.
func signaturesHold(with, seeds map[string]int) (first, revised bool) {
	holds := func(t string) bool { return enough(with[t], seeds[t], mostSeeds) }
	both := holds(taskReverse) && holds(taskMajority)
	return both && holds(taskCopy), both && holds(taskInduction)
}

// redundant is claim 2's rule on a majority seed: no head switched off
// alone costs more than redundantCost.
func redundant(s redundancySeed) bool { return atMost(s.LargestCost, redundantCost) }

// pinnedAndUsed is claim 3's rules on a reverse seed without positions:
// its most uniform layer-0 head scores at least pinnedUniform, and
// switching it off costs at least usedMargin (first: that much more
// than switching off any other layer-0 head). A seed without a layer-0
// head holds neither.
func pinnedAndUsed(s uniformSeed) (first, revised bool) {
	if s.Head == "" {
		return false, false
	}
	pinned := atLeast(s.Score, pinnedUniform)
	return pinned && atLeast(s.Cost-s.OtherCost, usedMargin), pinned && atLeast(s.Cost, usedMargin)
}

// isSinkHead is claim 4's rule on a head: it is labelled attention-sink.
// sinkScored is the revised rule's other sink heads, reported apart: a
// sink score of at least sinkScore.
func isSinkHead(h gridHead) bool { return h.Label == analysis.LabelAttentionSink }
func sinkScored(h gridHead) bool { return atLeast(h.Sink, sinkScore) }

// sinksAreNoOps is claim 4's rule (first and revised alike) on the costs
// of the sink heads and of every other head: the sinks' median cost is
// at most sinkCost and below the others'. With no sink head it is
// untested.
func sinksAreNoOps(sinks, others []float64) (agrees, untested bool) {
	if len(sinks) == 0 {
		return false, true
	}
	s := sweep.Describe(sinks).Median
	return atMost(s, sinkCost) && s < sweep.Describe(others).Median, false
}

// shortcutWins is claim 5's rule on a seed: its best offset or position
// score beats its best induction score.
func shortcutWins(s leakSeed) bool { return s.Fixed > s.Induction }

// leaks is claim 5's verdict: on copy the shortcut wins, and on the
// rotated induction task it loses, each in mostSeeds of 8.
func leaks(copyWins, copySeeds, inductionLoses, inductionSeeds int) bool {
	return enough(copyWins, copySeeds, mostSeeds) && enough(inductionLoses, inductionSeeds, mostSeeds)
}

// learned is claim 6's rule on a seed: it reaches learnedAccuracy.
func learned(s readableSeed) bool { return atLeast(s.Accuracy, learnedAccuracy) }

// variesBySeed is claim 6's verdicts on the seeds that learned the task:
// under the first rule some of them has an unlabelled head; under the
// revised one the readable (circuit) fraction's 95% Wilson interval
// stays below 1.
func variesBySeed(learnedSeeds, labelled int, readable sweep.Proportion) (first, revised bool) {
	return learnedSeeds > 0 && labelled < learnedSeeds, learnedSeeds > 0 && !atLeast(readable.High, 1)
}

// burst is claim 7's rule on a phase recorded over steps: each rise
// spans at most riseSpan of the steps (within; span is the longer's
// fraction), and the rises overlap too (holds).
func burst(ph analysis.Phase, steps int) (span float64, within, holds bool) {
	span = float64(max(ph.InductionTo-ph.InductionFrom, ph.AccuracyTo-ph.AccuracyFrom)) / float64(max(steps, 1))
	within = atMost(span, riseSpan)
	return span, within, ph.Together && within
}

// prunes is claim 8's rule on a wide seed: the greedy order removes at
// least the prunable fraction of its heads.
func prunes(s pruneSeed) bool { return atLeast(s.Greedy, prunable) }

// syntaxHeadsMatter is claim 9's rules on an agreement seed: first,
// switching some head named after verb->subject off costs at least
// attractorCost on attractor examples; revised, switching all of them off
// together does (a seed with none holds neither).
func syntaxHeadsMatter(s syntaxSeed) (first, revised bool) {
	for _, h := range s.Heads {
		first = first || atLeast(s.AttractorIntact-h.AttractorOff, attractorCost)
	}
	revised = len(s.Heads) > 0 && s.AllOff != nil && atLeast(s.AttractorIntact-*s.AllOff, attractorCost)
	return first, revised
}

// aboveChance is claim 10's rule on a tied seed: its accuracy on unseen
// tokens is at least unseenAbove above chance.
func aboveChance(unseen, chance float64) bool { return atLeast(unseen-chance, unseenAbove) }

// oneHeadMatters is claim 11's rule on a seed: with its most harmful
// single head off at most oneHeadLeaves is left.
func oneHeadMatters(s harmSeed) bool { return atMost(s.Left, oneHeadLeaves) }

// Published says whether a regime cell has the published model's heads:
// a third inside its circuit interval, a load-bearing single head in at
// least loadBearingSeeds of its seeds, a sink in some.
func (c RegimeCell) Published() bool {
	return circuitAgrees(c.Circuit) && atLeast(c.LoadBearing, loadBearingSeeds) && c.Sinks > 0
}
