package findings

import (
	"fmt"
	"sort"
	"strings"

	"headlab/analysis"
	"headlab/sweep"
)

// Each claim's section: its published statement, its rules' sentences,
// its table of seeds and its verdicts, written from the claim's data
// (claims.go) and rules (rules.go). markdown.go's claimSection lays a
// Claim out in the report.

// text is a verdict's word: agrees, untested or **differs**.
func (v Verdict) text() string {
	if v.Untested {
		return "untested"
	}
	return verdict(v.Agrees)
}

// count gives c its verdict by the count rule of of8 on its seeds'
// verdicts ok, measured as "k of n seeds", and returns k.
func (c *Claim) count(ok []bool, of8 int) int {
	k, agrees := countRule(ok, of8)
	c.Agrees, c.Measured = agrees, fmt.Sprintf("%d of %d seeds", k, len(ok))
	return k
}

// countFirst gives c its first rule, first, with its verdict by the
// count rule of of8 on the seeds' verdicts under it, okFirst.
func (c *Claim) countFirst(first Verdict, okFirst []bool, of8 int) {
	k, agrees := countRule(okFirst, of8)
	first.Agrees, first.Measured = agrees, fmt.Sprintf("%d of %d seeds", k, len(okFirst))
	c.First = &first
}

func (in *Input) claim1() Claim {
	c := Claim{N: 1, Title: "Different data grows different heads", Published: "mirror on reverse, uniform on majority, previous-token and induction on copy",
		Rule: fmt.Sprintf("for each task, its signature is in at least %d of 8 seeds: a head labelled mirror (or mirror shifted) on reverse, uniform on majority, and on the note's copy task, which is its rotated copy task (headlab's induction), a previous-token head in layer 0 and an induction head in layer 1; plain copy stays claim 5's leaky task", mostSeeds)}
	first := Verdict{Rule: fmt.Sprintf("for each task, its signature label is some head's label in at least %d of 8 seeds: mirror (or mirror shifted) on reverse, uniform on majority, previous-token and induction (both) on copy", mostSeeds)}
	signature := map[string]string{taskReverse: "mirror / mirror shifted", taskMajority: "uniform",
		taskCopy: "previous-token + induction", taskInduction: "previous-token in layer 0 + induction in layer 1"}
	var firstParts, parts []string
	with, seeds := map[string]int{}, map[string]int{}
	c.Body = append(c.Body, "| Task | Signature | Per-seed labels | Seeds with it | Needed |", "|---|---|---|---|---|")
	for _, t := range in.signatureTasks() {
		var per []string
		for _, s := range t.Seeds {
			var ls []string
			for _, h := range s.Heads {
				ls = append(ls, h.Name+" "+h.Label)
			}
			per = append(per, fmt.Sprintf("%d: %s", s.Seed, strings.Join(ls, ", ")))
		}
		k, n := t.with(), len(t.Seeds)
		with[t.Task], seeds[t.Task] = k, n
		c.Body = append(c.Body, fmt.Sprintf("| %s | %s | %s | %d of %d | %d |", t.Task, signature[t.Task], strings.Join(per, "; "), k, n, need(n, mostSeeds)))
		part := fmt.Sprintf("%s %d/%d", t.Task, k, n)
		if t.Task != taskInduction {
			firstParts = append(firstParts, part)
		}
		if t.Task != taskCopy {
			parts = append(parts, part)
		}
	}
	first.Agrees, c.Agrees = signaturesHold(with, seeds)
	first.Measured = strings.Join(firstParts, ", ")
	c.First = &first
	c.Measured = strings.Join(parts, ", ")
	c.Differs = fmt.Sprintf("Claim 1 (task signatures): seeds with the signature: %s; the rule asks %d of 8 for each task.", c.Measured, mostSeeds)
	return c
}

func (in *Input) claim2() Claim {
	c := Claim{N: 2, Title: "Redundancy on majority", Published: "switching off any single head changes nothing",
		Rule: fmt.Sprintf("in at least %d of 8 majority seeds, every single-head ablation costs at most %.0f points", nearlyAll, 100*redundantCost)}
	seeds := in.redundancySeeds()
	var costs []float64
	ok := []bool{}
	c.Body = append(c.Body, "| Seed | Intact | Largest single-head cost (points) | Within |", "|---|---|---|---|")
	for _, s := range seeds {
		costs = append(costs, s.LargestCost)
		ok = append(ok, redundant(s))
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %.1f | %s |", s.Seed, pc(s.Intact), 100*s.LargestCost, sweep.YesNo(ok[len(ok)-1])))
	}
	k := c.count(ok, nearlyAll)
	st := sweep.Describe(costs)
	c.Body = append(c.Body, "", fmt.Sprintf("Largest single-head cost over seeds: median %.1f, min %.1f, max %.1f points.", 100*st.Median, 100*st.Min, 100*st.Max))
	c.Differs = fmt.Sprintf("Claim 2 (majority redundancy): %d of %d majority seeds have every single-head ablation within %.0f points; the rule asks %d of 8.", k, len(seeds), 100*redundantCost, nearlyAll)
	return c
}

func (in *Input) claim3() Claim {
	c := Claim{N: 3, Title: "A pinned uniform head on reverse without positions", Published: "a uniform head whose score pins at 0.99; the causal mask leaks position through 1/(i+1)",
		Rule: fmt.Sprintf("the most uniform layer-0 head scores at least %.2f and switching it off costs at least %.0f points, in at least %d of 8 seeds", pinnedUniform, 100*usedMargin, mostSeeds)}
	first := Verdict{Rule: fmt.Sprintf("the most uniform layer-0 head scores at least %.2f, and switching it off costs at least %.0f points more than switching off the other layer-0 head, in at least %d of 8 seeds", pinnedUniform, 100*usedMargin, mostSeeds)}
	seeds := in.uniformSeeds()
	var okFirst, ok []bool
	var scores []float64
	c.Body = append(c.Body, "| Seed | Most uniform L0 head | Uniform score | Its cost (points) | Other L0 heads' largest cost | Holds (first rule) | Holds |", "|---|---|---|---|---|---|---|")
	for _, s := range seeds {
		holdsFirst, holds := pinnedAndUsed(s)
		okFirst, ok = append(okFirst, holdsFirst), append(ok, holds)
		if s.Head == "" { // no heads recorded (a failed run): it does not hold
			c.Body = append(c.Body, fmt.Sprintf("| %d | none | | | | %s | %s |", s.Seed, sweep.YesNo(false), sweep.YesNo(false)))
			continue
		}
		scores = append(scores, s.Score)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %.3f | %.1f | %.1f | %s | %s |", s.Seed, s.Head, s.Score, 100*s.Cost, 100*s.OtherCost, sweep.YesNo(holdsFirst), sweep.YesNo(holds)))
	}
	st := sweep.Describe(scores)
	kFirst, agreesFirst := countRule(okFirst, mostSeeds)
	first.Agrees = agreesFirst
	first.Measured = fmt.Sprintf("%d of %d seeds (median score %.3f)", kFirst, len(seeds), st.Median)
	c.First = &first
	k, agrees := countRule(ok, mostSeeds)
	c.Agrees = agrees
	c.Body = append(c.Body, "", fmt.Sprintf("Uniform score of the most uniform layer-0 head: median %.3f, min %.3f, max %.3f.", st.Median, st.Min, st.Max))
	c.Measured = fmt.Sprintf("%d of %d seeds (median score %.3f)", k, len(seeds), st.Median)
	c.Differs = fmt.Sprintf("Claim 3 (pinned uniform head): the rule holds in %d of %d reverse seeds without positions (median score %.3f); it asks %d of 8.", k, len(seeds), st.Median, mostSeeds)
	return c
}

func (in *Input) claim4() Claim {
	c := Claim{N: 4, Title: "Attention sinks are no-ops", Published: "99.7% with the sink off, 99.7% intact",
		Rule: fmt.Sprintf("sink heads are the heads labelled attention-sink and, reported apart, the heads whose sink score is at least %.1f; over the labelled ones, the median ablation cost is at most %.0f point and below the median cost of the other heads; with no labelled sink head the claim is untested", sinkScore, 100*sinkCost)}
	first := Verdict{Rule: fmt.Sprintf("over every head labelled attention-sink in the grid, the median ablation cost is at most %.0f point, and below the median cost of the other heads", 100*sinkCost)}
	var sink, other, scored, scores []float64
	where, scoredWhere := map[string]int{}, map[string]int{}
	for _, h := range in.gridHeads() {
		scores = append(scores, h.Sink)
		if sinkScored(h) {
			scored = append(scored, h.Cost)
			scoredWhere[h.Config]++
		}
		if isSinkHead(h) {
			sink = append(sink, h.Cost)
			where[h.Config]++
		} else {
			other = append(other, h.Cost)
		}
	}
	so := sweep.Describe(other)
	c.Body = append(c.Body, "The grid is every run of this reproduce (every task, the 2x8 d-model-64 model, one layer, no positions, no mask, tied embeddings, and the regime grid at both losses when run), so a sink anywhere counts.", "")
	c.Body = append(c.Body, "Sink scores (mean attention on key 0) of every head in the grid:", "", sinkBins(scores), "")
	if len(scored) == 0 {
		c.Body = append(c.Body, fmt.Sprintf("No head has a sink score of %.1f or more.", sinkScore))
	} else {
		ss := sweep.Describe(scored)
		c.Body = append(c.Body, fmt.Sprintf("Heads with a sink score of %.1f or more, labelled or not: %d (%s); median cost %.2f points (max %.1f), against %.2f for the heads not labelled attention-sink.",
			sinkScore, len(scored), countsText(scoredWhere), 100*ss.Median, 100*ss.Max, 100*so.Median))
	}
	agrees, untested := sinksAreNoOps(sink, other)
	if untested {
		c.Body = append(c.Body, "", fmt.Sprintf("No head of the %d heads in the grid is labelled attention-sink.", len(other)))
		c.Measured, c.Untested = "no sink heads", true
		c.First = &Verdict{Rule: first.Rule, Measured: c.Measured}
		c.Differs = "Claim 4 (sinks): no head anywhere in the grid is labelled attention-sink."
		return c
	}
	ss := sweep.Describe(sink)
	c.Body = append(c.Body, "", fmt.Sprintf("%d heads labelled attention-sink (%s); median cost %.2f points (max %.1f); the other %d heads' median cost %.2f points.",
		len(sink), countsText(where), 100*ss.Median, 100*ss.Max, len(other), 100*so.Median))
	c.Agrees = agrees
	c.Measured = fmt.Sprintf("%d sinks, median cost %.2f vs %.2f points", len(sink), 100*ss.Median, 100*so.Median)
	c.First = &Verdict{Rule: first.Rule, Measured: c.Measured, Agrees: c.Agrees}
	c.Differs = fmt.Sprintf("Claim 4 (sinks): %d sink heads with median cost %.2f points against %.2f for the other heads; the rule asks at most %.0f and below the others'.", len(sink), 100*ss.Median, 100*so.Median, 100*sinkCost)
	return c
}

// sinkBins is a one-row table of how many of the scores fall in each
// tenth of [0, 1].
func sinkBins(scores []float64) string {
	var n [10]int
	for _, s := range scores {
		n[min(9, max(0, int(s*10)))]++
	}
	head, rule, row := "| Sink score |", "|---|", "| Heads |"
	for i := range n {
		head += fmt.Sprintf(" %.1f-%.1f |", float64(i)/10, float64(i+1)/10)
		rule += "---|"
		row += fmt.Sprintf(" %d |", n[i])
	}
	st := sweep.Describe(scores)
	return fmt.Sprintf("%s\n%s\n%s\n\nMedian %.3f, max %.3f over %d heads.", head, rule, row, st.Median, st.Max, len(scores))
}

// countsText writes counts by name, sorted by name: "a: 2; b: 1".
func countsText(m map[string]int) string {
	var ws []string
	for k, n := range m {
		ws = append(ws, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(ws)
	return strings.Join(ws, "; ")
}

func (in *Input) claim5() Claim {
	p := in.Plan
	c := Claim{N: 5, Title: "Toy tasks leak", Published: "a task a fixed offset or position can solve grows a shortcut that looks like the circuit; the rotation of induction exists for this",
		Rule: fmt.Sprintf("on copy, the best offset or position score beats the best induction score in at least %d of 8 seeds, while on the rotated induction task induction wins in at least %d of 8", mostSeeds, mostSeeds)}
	c.Body = append(c.Body, "| Task | Seed | Best offset or position | Best induction | Winner |", "|---|---|---|---|---|")
	// holding counts each task's seeds that go its way: the shortcut
	// winning on copy, induction on induction.
	holding, seeds := map[string]int{}, map[string]int{}
	for _, t := range []string{taskCopy, taskInduction} {
		cfg := p.Copy
		if t == taskInduction {
			cfg = p.Induction
		}
		ls := in.leakSeeds(cfg)
		for _, s := range ls {
			win := "induction"
			if shortcutWins(s) {
				win = "offset/position"
			}
			if (t == taskCopy) == shortcutWins(s) {
				holding[t]++
			}
			c.Body = append(c.Body, fmt.Sprintf("| %s | %d | %.3f | %.3f | %s |", t, s.Seed, s.Fixed, s.Induction, win))
		}
		seeds[t] = len(ls)
	}
	c.Agrees = leaks(holding[taskCopy], seeds[taskCopy], holding[taskInduction], seeds[taskInduction])
	c.Measured = fmt.Sprintf("copy: shortcut wins %d/%d; induction: induction wins %d/%d", holding[taskCopy], seeds[taskCopy], holding[taskInduction], seeds[taskInduction])
	c.Differs = fmt.Sprintf("Claim 5 (toy tasks leak): %s; the rule asks %d of 8 each.", c.Measured, mostSeeds)
	return c
}

func (in *Input) claim6() Claim {
	p := in.Plan
	c := Claim{N: 6, Title: "Interpretability is a property of the solution", Published: "every seed learns the task, only some in a form a heatmap can read",
		Rule: fmt.Sprintf("a seed's solution is readable when it forms the induction circuit (the rule of section 3); among seeds that reach %.0f%% accuracy, the upper end of the 95%% Wilson interval of the readable fraction is below 1", 100*learnedAccuracy)}
	first := Verdict{Rule: fmt.Sprintf("among seeds that reach %.0f%% accuracy, the fraction whose every head carries a label (score at least %.1f) is below 1; reported with its Wilson interval", 100*learnedAccuracy, analysis.Threshold)}
	seeds := in.readableSeeds()
	nLearned, labelled, circuit := 0, 0, 0
	var unlabelled, unread []string
	for _, s := range seeds {
		if !learned(s) {
			continue
		}
		nLearned++
		if s.Labelled {
			labelled++
		} else {
			unlabelled = append(unlabelled, fmt.Sprint(s.Seed))
		}
		if s.Circuit {
			circuit++
		} else {
			unread = append(unread, fmt.Sprint(s.Seed))
		}
	}
	fl, pr := sweep.NewProportion(labelled, nLearned), sweep.NewProportion(circuit, nLearned)
	c.Body = append(c.Body, fmt.Sprintf("%s over seeds %s: %d of %d seeds reach %.0f%%.", sweep.ConfigName(p.Induction), seedRange(p.CircuitSeeds), nLearned, len(seeds), 100*learnedAccuracy), "",
		fmt.Sprintf("- First rule: %d of them have every head labelled: %s (95%% Wilson interval %s to %s). Seeds with an unlabelled head: %s.", labelled, pc(fl.Fraction), pc(fl.Low), pc(fl.High), headsOrNone(unlabelled)),
		fmt.Sprintf("- Revised rule: %d of them form the circuit: %s (95%% Wilson interval %s to %s). Seeds that learned the task without it: %s.", circuit, pc(pr.Fraction), pc(pr.Low), pc(pr.High), headsOrNone(unread)))
	first.Agrees, c.Agrees = variesBySeed(nLearned, labelled, pr)
	first.Measured = fmt.Sprintf("%d/%d = %s [%s, %s]", labelled, nLearned, pc(fl.Fraction), pc(fl.Low), pc(fl.High))
	c.First = &first
	c.Measured = fmt.Sprintf("%d/%d = %s [%s, %s]", circuit, nLearned, pc(pr.Fraction), pc(pr.Low), pc(pr.High))
	c.Differs = fmt.Sprintf("Claim 6 (interpretability varies by seed): of the %d seeds that reach %.0f%%, %d form the circuit; the interval %s to %s reaches 1.", nLearned, 100*learnedAccuracy, circuit, pc(pr.Low), pc(pr.High))
	return c
}

func (in *Input) claim7() Claim {
	p := in.Plan
	c := Claim{N: 7, Title: "Induction heads form in a burst, with the accuracy", Published: "Olsson et al. (2022): the phase change",
		Rule: fmt.Sprintf("with history every %d steps over the whole default run (%d steps), each 20-80%% rise (of the best induction score and of accuracy) spans at most %.0f%% of the run's steps and the two rises overlap, in at least %d of 8 seeds", p.dynamicsEvery(), p.Dynamics.Steps, 100*riseSpan, nearlyAll)}
	first := Verdict{Rule: fmt.Sprintf("with history every %d steps over the first %d, the 20-80%% rise of the best induction score and that of accuracy overlap in at least %d of 8 seeds, and each rise spans at most %.0f%% of the run", p.dynamicsEvery(), p.dynamicsEarly(), nearlyAll, 100*riseSpan)}
	c.Body = append(c.Body, "| Seed | Whole run: induction rises over | accuracy rises over | overlap | spans within | holds | First steps: induction | accuracy | overlap | spans within | holds (first rule) |",
		"|---|---|---|---|---|---|---|---|---|---|---|")
	var okFirst, ok []bool
	for _, d := range in.Dynamics {
		ph, ea := d.Phase, d.Early
		span, within, holds := burst(ph, d.Steps)
		eSpan, eWithin, eHolds := burst(ea, d.EarlySteps)
		ok, okFirst = append(ok, holds), append(okFirst, eHolds)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %d-%d | %d-%d | %s | %s (%.0f%%) | %s | %d-%d | %d-%d | %s | %s (%.0f%%) | %s |", d.Seed,
			ph.InductionFrom, ph.InductionTo, ph.AccuracyFrom, ph.AccuracyTo, sweep.YesNo(ph.Together), sweep.YesNo(within), 100*span, sweep.YesNo(holds),
			ea.InductionFrom, ea.InductionTo, ea.AccuracyFrom, ea.AccuracyTo, sweep.YesNo(ea.Together), sweep.YesNo(eWithin), 100*eSpan, sweep.YesNo(eHolds)))
	}
	c.countFirst(first, okFirst, nearlyAll)
	k := c.count(ok, nearlyAll)
	c.Differs = fmt.Sprintf("Claim 7 (burst): the rises overlap within %.0f%% of the run in %d of %d seeds; the rule asks %d of 8.", 100*riseSpan, k, len(ok), nearlyAll)
	return c
}

func (in *Input) claim8() Claim {
	p := in.Plan
	c := Claim{N: 8, Title: "Many heads can be pruned", Published: "Michel et al. (2019), Voita et al. (2019): many heads go with little loss",
		Rule: fmt.Sprintf("with the greedy order, at least half the heads of a %d-layer, %d-head, d-model %d model can be removed at a cost of at most 1 point, in at least %d of 8 seeds", p.Wide.Layers, p.Wide.Heads, p.Wide.DModel, mostSeeds)}
	c.Body = append(c.Body, "| Seed | Intact | Greedy: removable | One-shot: removable | Random (mean of 5): removable |", "|---|---|---|---|---|")
	var ok []bool
	for _, s := range in.pruneSeeds() {
		ok = append(ok, prunes(s))
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %.0f%% | %.0f%% | %.0f%% |", s.Seed, pc(s.Intact), 100*s.Greedy, 100*s.OneShot, 100*s.Random))
	}
	k := c.count(ok, mostSeeds)
	c.Differs = fmt.Sprintf("Claim 8 (pruning): greedy removes half the heads within 1 point in %d of %d seeds; the rule asks %d of 8.", k, len(ok), mostSeeds)
	return c
}

func (in *Input) claim9() Claim {
	c := Claim{N: 9, Title: "Syntax-flavoured heads", Published: "Voita et al. (2019), Clark et al. (2019): heads line up with relations such as verb to subject",
		Rule: fmt.Sprintf("in at least %d of 8 agreement seeds, switching off every head named after verb->subject together (its argmax accuracy beats the baseline by at least %.1f; together, as the circuit rule switches induction heads off) costs at least %.0f points on attractor examples", mostSeeds, analysis.RelationMargin, 100*attractorCost)}
	first := Verdict{Rule: fmt.Sprintf("in at least %d of 8 agreement seeds, some head's verb->subject argmax accuracy beats the baseline by at least %.1f, and switching it off costs at least %.0f points on attractor examples", mostSeeds, analysis.RelationMargin, 100*attractorCost)}
	c.Body = append(c.Body, "| Seed | Intact | Attractor examples | Heads named after verb->subject (argmax / baseline / attractor accuracy with it off) | Holds (first rule) | All of them off | Holds |", "|---|---|---|---|---|---|---|")
	var okFirst, ok []bool
	for _, s := range in.syntaxSeeds() {
		var hs []string
		for _, h := range s.Heads {
			hs = append(hs, fmt.Sprintf("%s %.2f / %.2f / %s", h.Name, h.Argmax, h.Baseline, pc(h.AttractorOff)))
		}
		holdsFirst, holds := syntaxHeadsMatter(s)
		okFirst, ok = append(okFirst, holdsFirst), append(ok, holds)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %s | %s | %s | %s | %s |", s.Seed, pc(s.Intact), pc(s.AttractorIntact), headsOrNone(hs), sweep.YesNo(holdsFirst), optPc(s.AllOff), sweep.YesNo(holds)))
	}
	c.countFirst(first, okFirst, mostSeeds)
	k := c.count(ok, mostSeeds)
	c.Differs = fmt.Sprintf("Claim 9 (syntax heads): switching off every verb->subject head together costs %.0f points on attractors in %d of %d agreement seeds; the rule asks %d of 8.", 100*attractorCost, k, len(ok), mostSeeds)
	return c
}

func (in *Input) claim10() Claim {
	c := Claim{N: 10, Title: "Induction works on tokens never seen in training", Published: "the information comes from the context, not from stored parameters",
		Rule: fmt.Sprintf("with --tied-embeddings, accuracy on unseen tokens is at least %.0f points above chance in at least %d of 8 seeds; the untied result is reported beside it", 100*unseenAbove, mostSeeds)}
	c.Body = append(c.Body, "| Seed | Untied: held-out | Untied: unseen | Tied: held-out | Tied: unseen | Tied holds |", "|---|---|---|---|---|---|")
	var ok []bool
	var tied, untied []float64
	seeds, chance := in.unseenSeeds()
	for _, s := range seeds {
		holds := aboveChance(s.TiedUnseen, chance)
		ok = append(ok, holds)
		tied = append(tied, s.TiedUnseen)
		if s.Untied {
			untied = append(untied, s.UntiedUnseen)
		}
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", s.Seed, pc(s.UntiedHeldOut), pc(s.UntiedUnseen), pc(s.TiedHeldOut), pc(s.TiedUnseen), sweep.YesNo(holds)))
	}
	k, agrees := countRule(ok, mostSeeds)
	c.Agrees = agrees
	ts, us := sweep.Describe(tied), sweep.Describe(untied)
	c.Body = append(c.Body, "", fmt.Sprintf("Chance is %s. Unseen accuracy, mean over seeds: tied %s, untied %s. Untied, an unseen token's unembedding column is trained only to be avoided, so no model can name it; with tied embeddings a token's readout is its own embedding, so a model that carries the embedding of the token it copies forward could in principle name a token it never saw.", pc(chance), pc(ts.Mean), pc(us.Mean)))
	c.Measured = fmt.Sprintf("tied %d of %d (mean %s); untied mean %s", k, len(ok), pc(ts.Mean), pc(us.Mean))
	c.Differs = fmt.Sprintf("Claim 10 (unseen tokens): with tied embeddings %d of %d seeds reach %.0f points above chance on unseen tokens (mean %s, chance %s; untied mean %s); the rule asks %d of 8.", k, len(ok), 100*unseenAbove, pc(ts.Mean), pc(chance), pc(us.Mean), mostSeeds)
	return c
}

func (in *Input) claim11() Claim {
	p := in.Plan
	c := Claim{N: 11, Title: "Ablation is the test that matters", Published: "deleting the head and watching accuracy fall from 99.9% to 15.8%",
		Rule: fmt.Sprintf("per seed of the default model, the most harmful single head switched off leaves %.0f%% or less in at least half the seeds (a rule fixed by issue 24 before the runs)", 100*oneHeadLeaves)}
	c.Body = append(c.Body, fmt.Sprintf("%s over seeds %s.", sweep.ConfigName(p.Induction), seedRange(p.CircuitSeeds)), "",
		"| Seed | Intact | Most harmful single head | Its label | Left with it off | Within |", "|---|---|---|---|---|---|")
	var ok []bool
	var left []float64
	for _, s := range in.harmSeeds() {
		within := oneHeadMatters(s)
		ok, left = append(ok, within), append(left, s.Left)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", s.Seed, pc(s.Intact), s.Worst.Name, s.Worst.Title(), pc(s.Left), sweep.YesNo(within)))
	}
	k, agrees := countRule(ok, halfTheSeeds)
	c.Agrees = agrees
	st := sweep.Describe(left)
	c.Body = append(c.Body, "", fmt.Sprintf("Accuracy left with the most harmful single head off: median %s, min %s, max %s.", pc(st.Median), pc(st.Min), pc(st.Max)))
	c.Measured = fmt.Sprintf("%d of %d seeds (median %s left)", k, len(ok), pc(st.Median))
	c.Differs = fmt.Sprintf("Claim 11 (one head is load-bearing): the most harmful single head leaves %.0f%% or less in %d of %d seeds; the rule asks half.", 100*oneHeadLeaves, k, len(ok))
	return c
}
