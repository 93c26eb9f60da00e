package findings

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/kernels"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// The claims of the sources headlab follows (issue 13), each with a rule
// fixed before the runs. Issue 24 revised the rules of claims 1, 3, 4, 6,
// 7 and 9 from the note's own words, before the runs they judge, and
// added claim 11; a revised claim shows its verdict under the rule first
// fixed beside the revised one (Claim.First). A count rule "k of 8" is
// scaled to the seeds there are: at least ceil(k*n/8) of n.

// DynamicsEvery is how often, in steps, claim 7 records a history over
// the default run (scaled with the steps).
const DynamicsEvery = 5

// dynamicsEarly is the stretch, in steps before scaling, the first rule
// of claim 7 watched: the first 500 steps.
const dynamicsEarly = 500

// Published numbers and thresholds of the claims' rules.
const (
	// Claim 2: every single-head ablation of a majority seed costs at most this.
	redundantCost = 0.02
	// Claim 3: the most uniform layer-0 head scores at least this and costs
	// at least usedMargin more than any other layer-0 head.
	pinnedUniform = 0.97
	usedMargin    = 0.10
	// Claim 4: the median cost of a sink head is at most this.
	sinkCost = 0.01
	// Claim 7: each rise spans at most this fraction of the run.
	riseSpan = 0.10
	// Claim 8: at least this fraction of heads goes at a cost of 1 point.
	prunable = 0.5
	// Claim 9: the relation head beats the baseline by the naming margin
	// and costs at least this on attractor examples.
	attractorCost = 0.10
	// Claim 10: unseen accuracy at least this far above chance.
	unseenAbove = 0.20
	// Claim 6: a seed with at least this accuracy has learned the task.
	learnedAccuracy = 0.99
	// Claim 4, revised: a head whose sink score is at least this is a sink
	// head, reported apart from the labelled ones.
	sinkScore = 0.4
	// Claim 11: the most harmful single head leaves at most this accuracy
	// in at least half the seeds.
	oneHeadLeaves = 0.30
)

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
	if regime {
		p.Regime = RegimeGrid(steps, loss)
	}
}

// Regime grid settings around the default beside the loss: a finite
// training set and weight decay.
const (
	regimeTrainExamples = 2000
	regimeWeightDecay   = 0.1
)

// RegimeGrid is the --regime grid: at loss and then at the other loss,
// the default induction model and each of d-model, learning rate, batch
// and steps moved alone to a smaller and a larger value; then, at loss,
// the default on a finite training set and with weight decay.
func RegimeGrid(steps func(int) int, loss string) []train.Config {
	var out []train.Config
	other := tasks.Answers
	if loss == tasks.Answers {
		other = tasks.NextToken
	}
	for _, l := range []string{loss, other} {
		base := defaults("induction", l)
		base.Steps = steps(2500)
		out = append(out, base)
		for _, d := range []int{16, 64} {
			c := base
			c.DModel, c.DFF = d, 2*d
			out = append(out, c)
		}
		for _, lr := range []float64{1e-3, 1e-2} {
			c := base
			c.LR = lr
			out = append(out, c)
		}
		for _, b := range []int{8, 128} {
			c := base
			c.Batch = b
			out = append(out, c)
		}
		for _, s := range []int{1000, 5000} {
			c := base
			c.Steps = steps(s)
			out = append(out, c)
		}
	}
	set, decay := out[0], out[0]
	set.TrainExamples = regimeTrainExamples
	decay.WeightDecay = regimeWeightDecay
	return append(out, set, decay)
}

// Extra is what reproduce measures on a trained model beyond its sweep
// record: pruning curves (claim 8), accuracy on attractor examples with
// each relation head off and with all of them off together (claim 9),
// accuracy on unseen tokens (claim 10), and for the default model's
// circuit seeds the circuit by other measures (section 6).
type Extra struct {
	Prune *inspect.PruneReport `json:"prune,omitempty"`
	// AttractorIntact is accuracy on attractor examples; Syntax lists every
	// head named after verb->subject with that accuracy when it is off;
	// SyntaxOff is that accuracy with all of them off together (the
	// intact accuracy when there are none).
	AttractorIntact *float64     `json:"attractor_intact,omitempty"`
	Syntax          []SyntaxHead `json:"syntax,omitempty"`
	SyntaxOff       *float64     `json:"syntax_off,omitempty"`
	Unseen          *float64     `json:"unseen_accuracy,omitempty"`
	// Circuit is the default model's circuit by other measures.
	Circuit *CircuitMeasures `json:"circuit,omitempty"`
}

// Complete reports whether x holds every measurement its run needs: an
// agreement run's stored before claim 9 switched its heads off together
// lacks SyntaxOff, and is measured again; an extra that holds nothing is
// not complete either.
func (x *Extra) Complete() bool {
	return x != nil && (x.AttractorIntact == nil || x.SyntaxOff != nil) &&
		(x.Prune != nil || x.AttractorIntact != nil || x.Unseen != nil || x.Circuit != nil)
}

// SyntaxHead is a head that beats verb->subject's baseline by the margin.
type SyntaxHead struct {
	Name         string  `json:"name"`
	Argmax       float64 `json:"argmax"`
	Baseline     float64 `json:"baseline"`
	AttractorOff float64 `json:"attractor_off"`
}

// NeedsExtra reports whether the run of c (its seed included) is
// measured beyond its record: every run of the claims' configurations
// that have extras, and the default model's circuit seeds (section 6).
func (p Plan) NeedsExtra(c train.Config) bool {
	k := sweep.Key(c)
	if k == sweep.Key(p.Induction) {
		return slices.Contains(p.CircuitSeeds, c.Seed)
	}
	for _, x := range []train.Config{p.Wide, p.Agreement, p.Unseen, p.UnseenTied} {
		if sweep.Key(x) == k {
			return true
		}
	}
	return false
}

// Measure takes the Extra of a finished run of one of p's configurations
// on dev (nil for a configuration that needs none).
func (p Plan) Measure(o *sweep.Outcome, dev kernels.Device) (*Extra, error) {
	m := o.Model
	if !p.NeedsExtra(m.Train) {
		return nil, nil
	}
	if sweep.Key(m.Train) == sweep.Key(p.Wide) {
		// Pruning evaluates the model on evaluators of its own.
		pr, err := inspect.Prune(m, dev, inspect.ScoredExamples, 5, []string{inspect.OrderOneShot, inspect.OrderGreedy, inspect.OrderRandom})
		if err != nil {
			return nil, err
		}
		return &Extra{Prune: pr}, nil
	}
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	x := &Extra{}
	switch {
	case sweep.Key(m.Train) == sweep.Key(p.Induction):
		if x.Circuit, err = measureCircuit(e, o.Report); err != nil {
			return nil, err
		}
	case tasks.HasUnseen(m.Task):
		acc, err := train.UnseenAccuracy(e, m)
		if err != nil {
			return nil, err
		}
		x.Unseen = &acc
	default:
		if err := measureSyntax(e, o.Report, x); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// measureSyntax takes claim 9's measurements of the model of e, an
// agreement model, with the relation scores of its report: accuracy on
// attractor examples intact, with each head named after verb->subject
// switched off alone, and with all of them off together.
func measureSyntax(e *train.Evaluator, rep *inspect.Report, x *Extra) error {
	m := e.Models[0]
	kt, ok := m.Task.(tasks.KindTask)
	if !ok {
		return fmt.Errorf("findings: %s has no kinds", m.Task.Name())
	}
	attr := inspect.KindBatches(kt, train.HeldOut(m))[0]
	acc, _, err := e.Accuracy(attr, nil)
	if err != nil {
		return err
	}
	x.AttractorIntact = &acc
	L, H := m.Shape.Layers, m.Shape.Heads
	all := analysis.NewMask(L, H, nil)
	for _, h := range rep.Heads {
		if len(h.Relations) == 0 || !h.Relations[0].Beats() {
			continue
		}
		a, _, err := e.Accuracy(attr, analysis.NewMask(L, H, nil).With(h.Layer, h.Head))
		if err != nil {
			return err
		}
		x.Syntax = append(x.Syntax, SyntaxHead{Name: h.Name, Argmax: h.Relations[0].Argmax, Baseline: h.Relations[0].Baseline, AttractorOff: a})
		all[h.Layer][h.Head] = true
	}
	joint := acc
	if len(x.Syntax) > 0 {
		if joint, _, err = e.Accuracy(attr, all); err != nil {
			return err
		}
	}
	x.SyntaxOff = &joint
	return nil
}

// DynamicsSeed is one seed of claim 7: where the best induction score and
// the accuracy rise, recorded every DynamicsEvery steps over the whole
// run (Phase) and over its first EarlySteps (Early, the first rule's).
type DynamicsSeed struct {
	Seed       uint64         `json:"seed"`
	Steps      int            `json:"steps"`
	Accuracy   float64        `json:"accuracy"`
	Phase      analysis.Phase `json:"phase"`
	EarlySteps int            `json:"early_steps"`
	Early      analysis.Phase `json:"early_phase"`
}

// dynamicsEvery is DynamicsEvery scaled with the steps.
func (p Plan) dynamicsEvery() int { return max(1, int(math.Round(DynamicsEvery*p.Scale))) }

// dynamicsEarly is dynamicsEarly scaled with the steps.
func (p Plan) dynamicsEarly() int { return max(1, int(math.Round(dynamicsEarly*p.Scale))) }

// RunDynamics trains p.Dynamics for seed on dev with a history. The first
// rule's phase is that of the history's first dynamicsEarly steps: a run
// of that many steps would have recorded the same (the same seed, data
// and updates up to there) when, as at scale 1, the interval divides
// dynamicsEarly; otherwise the short run's last record, at its final
// step, is missing here.
func (p Plan) RunDynamics(seed uint64, dev kernels.Device) (DynamicsSeed, error) {
	c := p.Dynamics
	c.Seed = seed
	var rec inspect.Recorder
	_, res, err := train.Run(c, dev, 0, nil, rec.Hook(p.dynamicsEvery()))
	if err != nil {
		return DynamicsSeed{}, err
	}
	early := min(p.dynamicsEarly(), c.Steps)
	h := rec.History
	k := 0
	for k < len(h) && h[k].Step <= early {
		k++
	}
	return DynamicsSeed{Seed: seed, Steps: c.Steps, Accuracy: res.Accuracy, Phase: h.Phase(), EarlySteps: early, Early: h[:k].Phase()}, nil
}

// Claim is one claim's section and summary row.
type Claim struct {
	N                int
	Title, Published string
	Rule             string // the verdict rule, fixed before the runs
	Body             []string
	Measured         string
	Agrees           bool
	// Untested says that no run could test the rule (claim 4 with no sink
	// head): the claim neither agrees nor differs.
	Untested bool
	Differs  string // a sentence for the list of differences
	// First is the verdict under the rule first fixed, for a claim whose
	// rule issue 24 revised before the runs; Rule and Agrees are then the
	// revised rule's, which the summary carries.
	First *Verdict
}

// Verdict is a claim's verdict under one rule.
type Verdict struct {
	Rule, Measured   string
	Agrees, Untested bool
}

// text is a verdict's word: agrees, untested or **differs**.
func (v Verdict) text() string {
	if v.Untested {
		return "untested"
	}
	return verdict(v.Agrees)
}

// need is the scaled count rule: k of 8 on n seeds.
func need(n, k int) int { return int(math.Ceil(float64(k*n) / 8)) }

// holding is the count rule on the seeds' verdicts ok: c agrees when at
// least of8 in 8 of them hold (need). It returns how many hold.
func (c *Claim) holding(ok []bool, of8 int) int {
	k := countTrue(ok)
	c.Agrees = len(ok) > 0 && k >= need(len(ok), of8)
	return k
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

func hasLabel(r *sweep.Record, labels ...string) bool {
	for _, h := range r.Heads {
		if slices.Contains(labels, h.Label) {
			return true
		}
	}
	return false
}

// cost is what switching head h off alone costs run r.
func cost(r *sweep.Record, h inspect.Head) float64 { return r.Accuracy - h.AblatedAccuracy }

func best(r *sweep.Record, score func(h inspect.Head) float64) float64 {
	b := math.Inf(-1)
	for _, h := range r.Heads {
		b = max(b, score(h))
	}
	return b
}

func countTrue(xs []bool) int {
	n := 0
	for _, x := range xs {
		if x {
			n++
		}
	}
	return n
}

// Claims evaluates claims 1-11 on the runs.
func (in *Input) Claims() []Claim {
	return []Claim{in.claim1(), in.claim2(), in.claim3(), in.claim4(), in.claim5(),
		in.claim6(), in.claim7(), in.claim8(), in.claim9(), in.claim10(), in.claim11()}
}

func (in *Input) claim1() Claim {
	p := in.Plan
	c := Claim{N: 1, Title: "Different data grows different heads", Published: "mirror on reverse, uniform on majority, previous-token and induction on copy",
		Rule: "for each task, its signature is in at least 6 of 8 seeds: a head labelled mirror (or mirror shifted) on reverse, uniform on majority, and on the note's copy task, which is its rotated copy task (headlab's induction), a previous-token head in layer 0 and an induction head in layer 1; plain copy stays claim 5's leaky task"}
	first := Verdict{Rule: "for each task, its signature label is some head's label in at least 6 of 8 seeds: mirror (or mirror shifted) on reverse, uniform on majority, previous-token and induction (both) on copy"}
	type task struct {
		name, sig string
		cfg       train.Config
		has       func(*sweep.Record) bool
	}
	reverse := task{"reverse", "mirror / mirror shifted", p.Positions[0], func(r *sweep.Record) bool { return hasLabel(r, "mirror", "mirror shifted") }}
	majority := task{"majority", "uniform", p.Positions[2], func(r *sweep.Record) bool { return hasLabel(r, "uniform") }}
	copyTask := task{"copy", "previous-token + induction", p.Copy, func(r *sweep.Record) bool {
		return hasLabel(r, analysis.LabelPreviousToken) && hasLabel(r, analysis.LabelInduction)
	}}
	induction := task{"induction", "previous-token in layer 0 + induction in layer 1", p.Induction, func(r *sweep.Record) bool {
		return hasLabelIn(r, 0, analysis.LabelPreviousToken) && hasLabelIn(r, 1, analysis.LabelInduction)
	}}
	var firstParts, parts []string
	firstOK, ok := true, true
	c.Body = append(c.Body, "| Task | Signature | Per-seed labels | Seeds with it | Needed |", "|---|---|---|---|---|")
	for _, t := range []task{reverse, majority, copyTask, induction} {
		rs := in.records(t.cfg, p.SmallSet)
		var per []string
		k := 0
		for _, r := range rs {
			var ls []string
			for _, h := range r.Heads {
				ls = append(ls, h.Name+" "+h.Label)
			}
			per = append(per, fmt.Sprintf("%d: %s", r.Config.Seed, strings.Join(ls, ", ")))
			if t.has(r) {
				k++
			}
		}
		holds := len(rs) > 0 && k >= need(len(rs), 6)
		c.Body = append(c.Body, fmt.Sprintf("| %s | %s | %s | %d of %d | %d |", t.name, t.sig, strings.Join(per, "; "), k, len(rs), need(len(rs), 6)))
		part := fmt.Sprintf("%s %d/%d", t.name, k, len(rs))
		if t.name != "induction" {
			firstParts, firstOK = append(firstParts, part), firstOK && holds
		}
		if t.name != "copy" {
			parts, ok = append(parts, part), ok && holds
		}
	}
	first.Measured, first.Agrees = strings.Join(firstParts, ", "), firstOK
	c.First = &first
	c.Measured, c.Agrees = strings.Join(parts, ", "), ok
	c.Differs = "Claim 1 (task signatures): seeds with the signature: " + c.Measured + "; the rule asks 6 of 8 for each task."
	return c
}

// hasLabelIn reports whether some head of layer l of r carries label.
func hasLabelIn(r *sweep.Record, l int, label string) bool {
	for _, h := range r.Heads {
		if h.Layer == l && h.Label == label {
			return true
		}
	}
	return false
}

func (in *Input) claim2() Claim {
	p := in.Plan
	c := Claim{N: 2, Title: "Redundancy on majority", Published: "switching off any single head changes nothing",
		Rule: fmt.Sprintf("in at least 7 of 8 majority seeds, every single-head ablation costs at most %.0f points", 100*redundantCost)}
	rs := in.records(p.Positions[2], p.SmallSet)
	var costs []float64
	ok := []bool{}
	c.Body = append(c.Body, "| Seed | Intact | Largest single-head cost (points) | Within |", "|---|---|---|---|")
	for _, r := range rs {
		m := best(r, func(h inspect.Head) float64 { return cost(r, h) })
		costs = append(costs, m)
		ok = append(ok, atMost(m, redundantCost))
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %.1f | %s |", r.Config.Seed, pc(r.Accuracy), 100*m, sweep.YesNo(ok[len(ok)-1])))
	}
	k := c.holding(ok, 7)
	st := sweep.Describe(costs)
	c.Body = append(c.Body, "", fmt.Sprintf("Largest single-head cost over seeds: median %.1f, min %.1f, max %.1f points.", 100*st.Median, 100*st.Min, 100*st.Max))
	c.Measured = fmt.Sprintf("%d of %d seeds", k, len(rs))
	c.Differs = fmt.Sprintf("Claim 2 (majority redundancy): %d of %d majority seeds have every single-head ablation within %.0f points; the rule asks 7 of 8.", k, len(rs), 100*redundantCost)
	return c
}

func (in *Input) claim3() Claim {
	p := in.Plan
	c := Claim{N: 3, Title: "A pinned uniform head on reverse without positions", Published: "a uniform head whose score pins at 0.99; the causal mask leaks position through 1/(i+1)",
		Rule: fmt.Sprintf("the most uniform layer-0 head scores at least %.2f and switching it off costs at least %.0f points, in at least 6 of 8 seeds", pinnedUniform, 100*usedMargin)}
	first := Verdict{Rule: fmt.Sprintf("the most uniform layer-0 head scores at least %.2f, and switching it off costs at least %.0f points more than switching off the other layer-0 head, in at least 6 of 8 seeds", pinnedUniform, 100*usedMargin)}
	rs := in.records(p.Positions[1], p.SmallSet)
	var okFirst, ok []bool
	var scores []float64
	c.Body = append(c.Body, "| Seed | Most uniform L0 head | Uniform score | Its cost (points) | Other L0 heads' largest cost | Holds (first rule) | Holds |", "|---|---|---|---|---|---|---|")
	for _, r := range rs {
		var u *inspect.Head
		for i := range r.Heads {
			h := &r.Heads[i]
			if h.Layer == 0 && (u == nil || h.Scores["uniform"] > u.Scores["uniform"]) {
				u = h
			}
		}
		if u == nil { // no heads recorded (a failed run): it does not hold
			okFirst, ok = append(okFirst, false), append(ok, false)
			c.Body = append(c.Body, fmt.Sprintf("| %d | none | | | | %s | %s |", r.Config.Seed, sweep.YesNo(false), sweep.YesNo(false)))
			continue
		}
		other := 0.0
		for _, h := range r.Heads {
			if h.Layer == 0 && h.Name != u.Name {
				other = max(other, cost(r, h))
			}
		}
		s := u.Scores["uniform"]
		scores = append(scores, s)
		pinned := atLeast(s, pinnedUniform)
		holdsFirst := pinned && atLeast(cost(r, *u)-other, usedMargin)
		holds := pinned && atLeast(cost(r, *u), usedMargin)
		okFirst, ok = append(okFirst, holdsFirst), append(ok, holds)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %.3f | %.1f | %.1f | %s | %s |", r.Config.Seed, u.Name, s, 100*cost(r, *u), 100*other, sweep.YesNo(holdsFirst), sweep.YesNo(holds)))
	}
	st := sweep.Describe(scores)
	kFirst := countTrue(okFirst)
	first.Agrees = len(okFirst) > 0 && kFirst >= need(len(okFirst), 6)
	first.Measured = fmt.Sprintf("%d of %d seeds (median score %.3f)", kFirst, len(rs), st.Median)
	c.First = &first
	k := c.holding(ok, 6)
	c.Body = append(c.Body, "", fmt.Sprintf("Uniform score of the most uniform layer-0 head: median %.3f, min %.3f, max %.3f.", st.Median, st.Min, st.Max))
	c.Measured = fmt.Sprintf("%d of %d seeds (median score %.3f)", k, len(rs), st.Median)
	c.Differs = fmt.Sprintf("Claim 3 (pinned uniform head): the rule holds in %d of %d reverse seeds without positions (median score %.3f); it asks 6 of 8.", k, len(rs), st.Median)
	return c
}

func (in *Input) claim4() Claim {
	c := Claim{N: 4, Title: "Attention sinks are no-ops", Published: "99.7% with the sink off, 99.7% intact",
		Rule: fmt.Sprintf("sink heads are the heads labelled attention-sink and, reported apart, the heads whose sink score is at least %.1f; over the labelled ones, the median ablation cost is at most %.0f point and below the median cost of the other heads; with no labelled sink head the claim is untested", sinkScore, 100*sinkCost)}
	first := Verdict{Rule: fmt.Sprintf("over every head labelled attention-sink in the grid, the median ablation cost is at most %.0f point, and below the median cost of the other heads", 100*sinkCost)}
	var sink, other, scored, scores []float64
	where, scoredWhere := map[string]int{}, map[string]int{}
	// The order of the runs does not matter: medians, counts, bins.
	for _, r := range in.ByID {
		if r.Status != sweep.StatusOK {
			continue
		}
		for _, h := range r.Heads {
			scores = append(scores, h.Sink)
			if atLeast(h.Sink, sinkScore) {
				scored = append(scored, cost(r, h))
				scoredWhere[sweep.ConfigName(r.Config)]++
			}
			if h.Label == analysis.LabelAttentionSink {
				sink = append(sink, cost(r, h))
				where[sweep.ConfigName(r.Config)]++
			} else {
				other = append(other, cost(r, h))
			}
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
	if len(sink) == 0 {
		c.Body = append(c.Body, "", fmt.Sprintf("No head of the %d heads in the grid is labelled attention-sink.", len(other)))
		c.Measured, c.Untested = "no sink heads", true
		c.First = &Verdict{Rule: first.Rule, Measured: c.Measured}
		c.Differs = "Claim 4 (sinks): no head anywhere in the grid is labelled attention-sink."
		return c
	}
	ss := sweep.Describe(sink)
	c.Body = append(c.Body, "", fmt.Sprintf("%d heads labelled attention-sink (%s); median cost %.2f points (max %.1f); the other %d heads' median cost %.2f points.",
		len(sink), countsText(where), 100*ss.Median, 100*ss.Max, len(other), 100*so.Median))
	c.Agrees = atMost(ss.Median, sinkCost) && ss.Median < so.Median
	c.Measured = fmt.Sprintf("%d sinks, median cost %.2f vs %.2f points", len(sink), 100*ss.Median, 100*so.Median)
	c.First = &Verdict{Rule: first.Rule, Measured: c.Measured, Agrees: c.Agrees}
	c.Differs = fmt.Sprintf("Claim 4 (sinks): %d sink heads with median cost %.2f points against %.2f for the other heads; the rule asks at most 1 and below the others'.", len(sink), 100*ss.Median, 100*so.Median)
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
		Rule: "on copy, the best offset or position score beats the best induction score in at least 6 of 8 seeds, while on the rotated induction task induction wins in at least 6 of 8"}
	fixed := func(h inspect.Head) float64 { return max(h.Scores["offset"], h.Scores["position"]) }
	ind := func(h inspect.Head) float64 { return h.Scores["induction"] }
	c.Body = append(c.Body, "| Task | Seed | Best offset or position | Best induction | Winner |", "|---|---|---|---|---|")
	counts := map[string][2]int{}
	for _, t := range []struct {
		name string
		cfg  train.Config
	}{{"copy", p.Copy}, {"induction", p.Induction}} {
		rs := in.records(t.cfg, p.SmallSet)
		k := 0
		for _, r := range rs {
			f, i := best(r, fixed), best(r, ind)
			win := "induction"
			if f > i {
				win = "offset/position"
			}
			if (t.name == "copy") == (f > i) {
				k++
			}
			c.Body = append(c.Body, fmt.Sprintf("| %s | %d | %.3f | %.3f | %s |", t.name, r.Config.Seed, f, i, win))
		}
		counts[t.name] = [2]int{k, len(rs)}
	}
	cp, id := counts["copy"], counts["induction"]
	c.Agrees = cp[1] > 0 && id[1] > 0 && cp[0] >= need(cp[1], 6) && id[0] >= need(id[1], 6)
	c.Measured = fmt.Sprintf("copy: shortcut wins %d/%d; induction: induction wins %d/%d", cp[0], cp[1], id[0], id[1])
	c.Differs = "Claim 5 (toy tasks leak): " + c.Measured + "; the rule asks 6 of 8 each."
	return c
}

func (in *Input) claim6() Claim {
	p := in.Plan
	c := Claim{N: 6, Title: "Interpretability is a property of the solution", Published: "every seed learns the task, only some in a form a heatmap can read",
		Rule: "a seed's solution is readable when it forms the induction circuit (the rule of section 3); among seeds that reach 99% accuracy, the upper end of the 95% Wilson interval of the readable fraction is below 1"}
	first := Verdict{Rule: "among seeds that reach 99% accuracy, the fraction whose every head carries a label (score at least 0.4) is below 1; reported with its Wilson interval"}
	rs := in.records(p.Induction, p.CircuitSeeds)
	learned, labelled, circuit := 0, 0, 0
	var unlabelled, unread []string
	for _, r := range rs {
		if !atLeast(r.Accuracy, learnedAccuracy) {
			continue
		}
		learned++
		if !hasLabel(r, analysis.NoClearPattern) {
			labelled++
		} else {
			unlabelled = append(unlabelled, fmt.Sprint(r.Config.Seed))
		}
		if r.Circuit {
			circuit++
		} else {
			unread = append(unread, fmt.Sprint(r.Config.Seed))
		}
	}
	fl, pr := sweep.NewProportion(labelled, learned), sweep.NewProportion(circuit, learned)
	c.Body = append(c.Body, fmt.Sprintf("%s over seeds %s: %d of %d seeds reach 99%%.", sweep.ConfigName(p.Induction), seedRange(p.CircuitSeeds), learned, len(rs)), "",
		fmt.Sprintf("- First rule: %d of them have every head labelled: %s (95%% Wilson interval %s to %s). Seeds with an unlabelled head: %s.", labelled, pc(fl.Fraction), pc(fl.Low), pc(fl.High), headsOrNone(unlabelled)),
		fmt.Sprintf("- Revised rule: %d of them form the circuit: %s (95%% Wilson interval %s to %s). Seeds that learned the task without it: %s.", circuit, pc(pr.Fraction), pc(pr.Low), pc(pr.High), headsOrNone(unread)))
	first.Agrees = learned > 0 && labelled < learned
	first.Measured = fmt.Sprintf("%d/%d = %s [%s, %s]", labelled, learned, pc(fl.Fraction), pc(fl.Low), pc(fl.High))
	c.First = &first
	c.Agrees = learned > 0 && !atLeast(pr.High, 1)
	c.Measured = fmt.Sprintf("%d/%d = %s [%s, %s]", circuit, learned, pc(pr.Fraction), pc(pr.Low), pc(pr.High))
	c.Differs = fmt.Sprintf("Claim 6 (interpretability varies by seed): of the %d seeds that reach 99%%, %d form the circuit; the interval %s to %s reaches 1.", learned, circuit, pc(pr.Low), pc(pr.High))
	return c
}

func (in *Input) claim7() Claim {
	p := in.Plan
	c := Claim{N: 7, Title: "Induction heads form in a burst, with the accuracy", Published: "Olsson et al. (2022): the phase change",
		Rule: fmt.Sprintf("with history every %d steps over the whole default run (%d steps), each 20-80%% rise (of the best induction score and of accuracy) spans at most %.0f%% of the run's steps and the two rises overlap, in at least 7 of 8 seeds", p.dynamicsEvery(), p.Dynamics.Steps, 100*riseSpan)}
	first := Verdict{Rule: fmt.Sprintf("with history every %d steps over the first %d, the 20-80%% rise of the best induction score and that of accuracy overlap in at least 7 of 8 seeds, and each rise spans at most %.0f%% of the run", p.dynamicsEvery(), p.dynamicsEarly(), 100*riseSpan)}
	c.Body = append(c.Body, "| Seed | Whole run: induction rises over | accuracy rises over | overlap | spans within | holds | First steps: induction | accuracy | overlap | spans within | holds (first rule) |",
		"|---|---|---|---|---|---|---|---|---|---|---|")
	var okFirst, ok []bool
	judge := func(ph analysis.Phase, steps int) (within, holds bool, span float64) {
		span = float64(max(ph.InductionTo-ph.InductionFrom, ph.AccuracyTo-ph.AccuracyFrom)) / float64(max(steps, 1))
		within = atMost(span, riseSpan)
		return within, ph.Together && within, span
	}
	for _, d := range in.Dynamics {
		ph, ea := d.Phase, d.Early
		within, holds, span := judge(ph, d.Steps)
		eWithin, eHolds, eSpan := judge(ea, d.EarlySteps)
		ok, okFirst = append(ok, holds), append(okFirst, eHolds)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %d-%d | %d-%d | %s | %s (%.0f%%) | %s | %d-%d | %d-%d | %s | %s (%.0f%%) | %s |", d.Seed,
			ph.InductionFrom, ph.InductionTo, ph.AccuracyFrom, ph.AccuracyTo, sweep.YesNo(ph.Together), sweep.YesNo(within), 100*span, sweep.YesNo(holds),
			ea.InductionFrom, ea.InductionTo, ea.AccuracyFrom, ea.AccuracyTo, sweep.YesNo(ea.Together), sweep.YesNo(eWithin), 100*eSpan, sweep.YesNo(eHolds)))
	}
	kFirst := countTrue(okFirst)
	first.Agrees = len(okFirst) > 0 && kFirst >= need(len(okFirst), 7)
	first.Measured = fmt.Sprintf("%d of %d seeds", kFirst, len(okFirst))
	c.First = &first
	k := c.holding(ok, 7)
	c.Measured = fmt.Sprintf("%d of %d seeds", k, len(ok))
	c.Differs = fmt.Sprintf("Claim 7 (burst): the rises overlap within %.0f%% of the run in %d of %d seeds; the rule asks 7 of 8.", 100*riseSpan, k, len(ok))
	return c
}

func (in *Input) claim8() Claim {
	p := in.Plan
	c := Claim{N: 8, Title: "Many heads can be pruned", Published: "Michel et al. (2019), Voita et al. (2019): many heads go with little loss",
		Rule: fmt.Sprintf("with the greedy order, at least half the heads of a %d-layer, %d-head, d-model %d model can be removed at a cost of at most 1 point, in at least 6 of 8 seeds", p.Wide.Layers, p.Wide.Heads, p.Wide.DModel)}
	c.Body = append(c.Body, "| Seed | Intact | Greedy: removable | One-shot: removable | Random (mean of 5): removable |", "|---|---|---|---|---|")
	var ok []bool
	for _, s := range p.SmallSet {
		x := in.Extras[sweep.RunID{Key: sweep.Key(p.Wide), Seed: s}]
		if x == nil || x.Prune == nil {
			continue
		}
		pr := x.Prune
		frac := func(o string) float64 {
			if cv := pr.Curve(o); cv != nil {
				return cv.RemovableFraction
			}
			return math.NaN()
		}
		g := frac(inspect.OrderGreedy)
		ok = append(ok, atLeast(g, prunable))
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %.0f%% | %.0f%% | %.0f%% |", s, pc(pr.Intact), 100*g, 100*frac(inspect.OrderOneShot), 100*frac(inspect.OrderRandom)))
	}
	k := c.holding(ok, 6)
	c.Measured = fmt.Sprintf("%d of %d seeds", k, len(ok))
	c.Differs = fmt.Sprintf("Claim 8 (pruning): greedy removes half the heads within 1 point in %d of %d seeds; the rule asks 6 of 8.", k, len(ok))
	return c
}

func (in *Input) claim9() Claim {
	p := in.Plan
	c := Claim{N: 9, Title: "Syntax-flavoured heads", Published: "Voita et al. (2019), Clark et al. (2019): heads line up with relations such as verb to subject",
		Rule: fmt.Sprintf("in at least 6 of 8 agreement seeds, switching off every head named after verb->subject together (its argmax accuracy beats the baseline by at least %.1f; together, as the circuit rule switches induction heads off) costs at least %.0f points on attractor examples", analysis.RelationMargin, 100*attractorCost)}
	first := Verdict{Rule: fmt.Sprintf("in at least 6 of 8 agreement seeds, some head's verb->subject argmax accuracy beats the baseline by at least %.1f, and switching it off costs at least %.0f points on attractor examples", analysis.RelationMargin, 100*attractorCost)}
	c.Body = append(c.Body, "| Seed | Intact | Attractor examples | Heads named after verb->subject (argmax / baseline / attractor accuracy with it off) | Holds (first rule) | All of them off | Holds |", "|---|---|---|---|---|---|---|")
	var okFirst, ok []bool
	for _, s := range p.SmallSet {
		id := sweep.RunID{Key: sweep.Key(p.Agreement), Seed: s}
		x, r := in.Extras[id], in.ByID[id]
		if x == nil || x.AttractorIntact == nil || r == nil {
			continue
		}
		holdsFirst := false
		var hs []string
		for _, h := range x.Syntax {
			hs = append(hs, fmt.Sprintf("%s %.2f / %.2f / %s", h.Name, h.Argmax, h.Baseline, pc(h.AttractorOff)))
			holdsFirst = holdsFirst || atLeast(*x.AttractorIntact-h.AttractorOff, attractorCost)
		}
		holds := len(x.Syntax) > 0 && x.SyntaxOff != nil && atLeast(*x.AttractorIntact-*x.SyntaxOff, attractorCost)
		okFirst, ok = append(okFirst, holdsFirst), append(ok, holds)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %s | %s | %s | %s | %s |", s, pc(r.Accuracy), pc(*x.AttractorIntact), headsOrNone(hs), sweep.YesNo(holdsFirst), optPc(x.SyntaxOff), sweep.YesNo(holds)))
	}
	kFirst := countTrue(okFirst)
	first.Agrees = len(okFirst) > 0 && kFirst >= need(len(okFirst), 6)
	first.Measured = fmt.Sprintf("%d of %d seeds", kFirst, len(okFirst))
	c.First = &first
	k := c.holding(ok, 6)
	c.Measured = fmt.Sprintf("%d of %d seeds", k, len(ok))
	c.Differs = fmt.Sprintf("Claim 9 (syntax heads): switching off every verb->subject head together costs %.0f points on attractors in %d of %d agreement seeds; the rule asks 6 of 8.", 100*attractorCost, k, len(ok))
	return c
}

func (in *Input) claim10() Claim {
	p := in.Plan
	c := Claim{N: 10, Title: "Induction works on tokens never seen in training", Published: "the information comes from the context, not from stored parameters",
		Rule: fmt.Sprintf("with --tied-embeddings, accuracy on unseen tokens is at least %.0f points above chance in at least 6 of 8 seeds; the untied result is reported beside it", 100*unseenAbove)}
	c.Body = append(c.Body, "| Seed | Untied: held-out | Untied: unseen | Tied: held-out | Tied: unseen | Tied holds |", "|---|---|---|---|---|---|")
	var ok []bool
	var tied, untied []float64
	chance := 0.0
	if t, err := tasks.New(p.Unseen.Task); err == nil {
		chance = t.Chance()
	}
	for _, s := range p.SmallSet {
		ui, ti := sweep.RunID{Key: sweep.Key(p.Unseen), Seed: s}, sweep.RunID{Key: sweep.Key(p.UnseenTied), Seed: s}
		ux, tx := in.Extras[ui], in.Extras[ti]
		ur, tr := in.ByID[ui], in.ByID[ti]
		if tx == nil || tx.Unseen == nil || tr == nil {
			continue
		}
		holds := atLeast(*tx.Unseen-chance, unseenAbove)
		ok = append(ok, holds)
		tied = append(tied, *tx.Unseen)
		uAcc, uUnseen := math.NaN(), math.NaN()
		if ux != nil && ux.Unseen != nil && ur != nil {
			uAcc, uUnseen = ur.Accuracy, *ux.Unseen
			untied = append(untied, uUnseen)
		}
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", s, pc(uAcc), pc(uUnseen), pc(tr.Accuracy), pc(*tx.Unseen), sweep.YesNo(holds)))
	}
	k := c.holding(ok, 6)
	ts, us := sweep.Describe(tied), sweep.Describe(untied)
	c.Body = append(c.Body, "", fmt.Sprintf("Chance is %s. Unseen accuracy, mean over seeds: tied %s, untied %s. Untied, an unseen token's unembedding column is trained only to be avoided, so no model can name it; with tied embeddings a token's readout is its own embedding, so a model that carries the embedding of the token it copies forward could in principle name a token it never saw.", pc(chance), pc(ts.Mean), pc(us.Mean)))
	c.Measured = fmt.Sprintf("tied %d of %d (mean %s); untied mean %s", k, len(ok), pc(ts.Mean), pc(us.Mean))
	c.Differs = fmt.Sprintf("Claim 10 (unseen tokens): with tied embeddings %d of %d seeds reach %.0f points above chance on unseen tokens (mean %s, chance %s; untied mean %s); the rule asks 6 of 8.", k, len(ok), 100*unseenAbove, pc(ts.Mean), pc(chance), pc(us.Mean))
	return c
}

func (in *Input) claim11() Claim {
	p := in.Plan
	c := Claim{N: 11, Title: "Ablation is the test that matters", Published: "deleting the head and watching accuracy fall from 99.9% to 15.8%",
		Rule: fmt.Sprintf("per seed of the default model, the most harmful single head switched off leaves %.0f%% or less in at least half the seeds (a rule fixed by issue 24 before the runs)", 100*oneHeadLeaves)}
	rs := in.records(p.Induction, p.CircuitSeeds)
	c.Body = append(c.Body, fmt.Sprintf("%s over seeds %s.", sweep.ConfigName(p.Induction), seedRange(p.CircuitSeeds)), "",
		"| Seed | Intact | Most harmful single head | Its label | Left with it off | Within |", "|---|---|---|---|---|---|")
	var ok []bool
	var left []float64
	for _, r := range rs {
		var worst *inspect.Head
		for i := range r.Heads {
			if worst == nil || r.Heads[i].AblatedAccuracy < worst.AblatedAccuracy {
				worst = &r.Heads[i]
			}
		}
		if worst == nil {
			continue
		}
		within := atMost(worst.AblatedAccuracy, oneHeadLeaves)
		ok, left = append(ok, within), append(left, worst.AblatedAccuracy)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", r.Config.Seed, pc(r.Accuracy), worst.Name, worst.Title(), pc(worst.AblatedAccuracy), sweep.YesNo(within)))
	}
	k := countTrue(ok)
	c.Agrees = len(ok) > 0 && 2*k >= len(ok)
	st := sweep.Describe(left)
	c.Body = append(c.Body, "", fmt.Sprintf("Accuracy left with the most harmful single head off: median %s, min %s, max %s.", pc(st.Median), pc(st.Min), pc(st.Max)))
	c.Measured = fmt.Sprintf("%d of %d seeds (median %s left)", k, len(ok), pc(st.Median))
	c.Differs = fmt.Sprintf("Claim 11 (one head is load-bearing): the most harmful single head leaves %.0f%% or less in %d of %d seeds; the rule asks half.", 100*oneHeadLeaves, k, len(ok))
	return c
}

// RegimeCell is one cell of the regime grid.
type RegimeCell struct {
	Config  train.Config
	Seeds   int
	Circuit sweep.Proportion
	// SingleCost is the median over seeds of the largest single-head
	// ablation cost; LoadBearing the fraction of seeds with a single head
	// costing at least analysis.CircuitDrop; Sinks the fraction of seeds with
	// an attention-sink head.
	SingleCost, LoadBearing, Sinks float64
	// Distance from the published model: |circuit - 1/3| + (1 -
	// LoadBearing) + (1 - Sinks).
	Distance float64
}

// Published says whether a cell has the published model's heads: a third
// inside its circuit interval, a load-bearing single head in most seeds,
// a sink in some.
func (c RegimeCell) Published() bool {
	return circuitAgrees(c.Circuit) && atLeast(c.LoadBearing, 0.5) && c.Sinks > 0
}

// RegimeCells evaluates the regime grid.
func (in *Input) RegimeCells() []RegimeCell {
	var out []RegimeCell
	for _, cfg := range in.Plan.Regime {
		rs := in.records(cfg, in.Plan.CircuitSeeds)
		cell := RegimeCell{Config: cfg, Seeds: len(rs)}
		var costs []float64
		circ, load, sinks := 0, 0, 0
		for _, r := range rs {
			m := best(r, func(h inspect.Head) float64 { return cost(r, h) })
			costs = append(costs, m)
			if r.Circuit {
				circ++
			}
			if analysis.DropsEnough(m) {
				load++
			}
			if hasLabel(r, "attention-sink") {
				sinks++
			}
		}
		cell.Circuit = sweep.NewProportion(circ, len(rs))
		if len(rs) > 0 {
			cell.SingleCost = sweep.Describe(costs).Median
			cell.LoadBearing, cell.Sinks = float64(load)/float64(len(rs)), float64(sinks)/float64(len(rs))
		}
		cell.Distance = math.Abs(cell.Circuit.Fraction-pubCircuit) + (1 - cell.LoadBearing) + (1 - cell.Sinks)
		out = append(out, cell)
	}
	return out
}

// regimeFinding and regimePublished open the regime grid's summary row.
const (
	regimeFinding   = "regime grid: a cell with the published model's heads"
	regimePublished = "load-bearing single heads, a sink, circuit in a third"
)

// regimeSection writes the regime grid and names the closest cell;
// without the grid in the plan, that --regime would sweep it.
func (in *Input) regimeSection(b *strings.Builder, t *tally) {
	if len(in.Plan.Regime) == 0 {
		fmt.Fprintf(b, "## Which setting gives the published numbers\n\nNot run by this invocation: `headlab reproduce --regime` sweeps the loss, d-model, learning rate, batch and steps around the default, with a finite training set and weight decay (%d cells of %d seeds), and names the cell closest to the published model.\n\n", len(RegimeGrid(func(n int) int { return n }, in.Plan.Loss)), len(in.Plan.CircuitSeeds))
		t.notRun(regimeFinding, regimePublished, "not run (`--regime`)")
		return
	}
	cells := in.RegimeCells()
	fmt.Fprintf(b, "## Which setting gives the published numbers\n\n")
	fmt.Fprintf(b, "The published default model had load-bearing single heads, a sink and the circuit in about a third of seeds; ours, at the default (the first row), has the circuit in %s of seeds and a load-bearing single head in %s. The grid moves d-model, learning rate, batch and steps one at a time around the default, at each loss, and trains the default on a finite set of %d sequences and with weight decay %g, %d seeds each. Per cell: the circuit fraction, the median over seeds of the largest single-head ablation cost, the fraction of seeds with a load-bearing single head (one costing at least %.0f points) and the fraction with an attention-sink head. Distance from the published model: |circuit - 1/3| + (1 - load-bearing) + (1 - sinks).\n\n",
		pc(cells[0].Circuit.Fraction), pc(cells[0].LoadBearing), regimeTrainExamples, regimeWeightDecay, len(in.Plan.CircuitSeeds), 100*analysis.CircuitDrop)
	fmt.Fprintln(b, "| Loss | Training set | Weight decay | d-model | lr | batch | steps | Seeds | Circuit | Largest single-head cost (median, points) | Load-bearing single head | Sink | Distance |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	closest := -1
	for i, c := range cells {
		if c.Seeds > 0 && (closest < 0 || c.Distance < cells[closest].Distance) {
			closest = i
		}
		set := "fresh"
		if c.Config.TrainExamples > 0 {
			set = fmt.Sprint(c.Config.TrainExamples)
		}
		fmt.Fprintf(b, "| %s | %s | %g | %d | %g | %d | %d | %d | %s [%s, %s] | %.1f | %s | %s | %.2f |\n", c.Config.Loss, set, c.Config.WeightDecay,
			c.Config.DModel, c.Config.LR, c.Config.Batch, c.Config.Steps, c.Seeds,
			pc(c.Circuit.Fraction), pc(c.Circuit.Low), pc(c.Circuit.High), 100*c.SingleCost, pc(c.LoadBearing), pc(c.Sinks), c.Distance)
	}
	if closest < 0 {
		fmt.Fprintf(b, "\nNo cell finished.\n\n")
		return
	}
	cl := cells[closest]
	ok := cl.Published()
	name := regimeCellName(cl.Config)
	fmt.Fprintf(b, "\n**Closest cell: %s** (distance %.2f): circuit %s, load-bearing single head in %s of seeds, a sink in %s. It reproduces the published model when a third lies in its circuit interval, most seeds have a load-bearing single head and some have a sink: %s.\n\n",
		name, cl.Distance, pc(cl.Circuit.Fraction), pc(cl.LoadBearing), pc(cl.Sinks), sweep.YesNo(ok))
	fmt.Fprintf(b, "%s\n\n", regimeReading(cells))
	t.add(regimeFinding, regimePublished,
		fmt.Sprintf("closest %s: circuit %s, load-bearing %s, sink %s", name, pc(cl.Circuit.Fraction), pc(cl.LoadBearing), pc(cl.Sinks)), ok,
		fmt.Sprintf("No cell of the regime grid gives the published model: the closest (%s) has the circuit in %s of seeds, a load-bearing single head in %s and a sink in %s.", name, pc(cl.Circuit.Fraction), pc(cl.LoadBearing), pc(cl.Sinks)))
}

// regimeCellName names a cell by all its settings.
func regimeCellName(c train.Config) string {
	name := fmt.Sprintf("%s loss, d-model %d, lr %g, batch %d, %d steps", c.Loss, c.DModel, c.LR, c.Batch, c.Steps)
	if c.TrainExamples > 0 {
		name += fmt.Sprintf(", %d training sequences", c.TrainExamples)
	}
	if c.WeightDecay != 0 {
		name += fmt.Sprintf(", weight decay %g", c.WeightDecay)
	}
	return name
}

// regimeReading says in words what the grid shows, from its numbers:
// whether any cell grows a sink, what the other loss does to the
// default, which change moves the circuit fraction nearest a third, and
// where load-bearing heads are commonest. cells[0] is the default
// (RegimeGrid).
func regimeReading(cells []RegimeCell) string {
	base := cells[0]
	var done []RegimeCell
	seeds, sinkCells := 0, 0
	for _, c := range cells {
		if c.Seeds == 0 {
			continue
		}
		done = append(done, c)
		seeds += c.Seeds
		if c.Sinks > 0 {
			sinkCells++
		}
	}
	var out strings.Builder
	out.WriteString("What the grid shows: ")
	if sinkCells == 0 {
		fmt.Fprintf(&out, "no cell grows an attention-sink head (%d seeds in all), so within this grid the published model's sink is not a matter of the loss, d-model, learning rate, batch, steps, a finite training set or weight decay. ", seeds)
	} else {
		fmt.Fprintf(&out, "%d of %d cells grow an attention-sink head in some seed. ", sinkCells, len(done))
	}
	for _, c := range done {
		if c.Config.Loss != base.Config.Loss && regimeChange(base.Config, c.Config) == "the "+c.Config.Loss+" loss" {
			fmt.Fprintf(&out, "The %s loss changes the default's circuit fraction from %s to %s, its load-bearing single heads from %s to %s and its sinks from %s to %s. ",
				c.Config.Loss, pc(base.Circuit.Fraction), pc(c.Circuit.Fraction), pc(base.LoadBearing), pc(c.LoadBearing), pc(base.Sinks), pc(c.Sinks))
		}
	}
	nearest, loads := base, base
	var published []string
	for _, c := range done {
		if c.Published() {
			published = append(published, regimeChange(base.Config, c.Config))
		}
		if math.Abs(c.Circuit.Fraction-pubCircuit) < math.Abs(nearest.Circuit.Fraction-pubCircuit) {
			nearest = c
		}
		if c.LoadBearing > loads.LoadBearing {
			loads = c
		}
	}
	fmt.Fprintf(&out, "The change that brings the circuit fraction nearest a third is %s (%s, against %s at the default)", regimeChange(base.Config, nearest.Config), pc(nearest.Circuit.Fraction), pc(base.Circuit.Fraction))
	if !atMost(nearest.Circuit.Low, pubCircuit) { // the complement of circuitAgrees on that side
		out.WriteString(", still above a third by its whole interval")
	}
	fmt.Fprintf(&out, "; a load-bearing single head is commonest at %s (%s of seeds, against %s). ", regimeChange(base.Config, loads.Config), pc(loads.LoadBearing), pc(base.LoadBearing))
	if len(published) == 0 {
		out.WriteString("No cell gives all three of the published model's properties at once: what made the published model differ lies outside these settings, or in a combination of them.")
	} else {
		fmt.Fprintf(&out, "The published model's heads appear at %s.", strings.Join(published, ", "))
	}
	return out.String()
}

// regimeChange names what cell c changes from the default base: every
// setting that differs, in the grid's order.
func regimeChange(base, c train.Config) string {
	var ch []string
	if c.Loss != base.Loss {
		ch = append(ch, "the "+c.Loss+" loss")
	}
	if c.DModel != base.DModel {
		ch = append(ch, fmt.Sprintf("d-model %d", c.DModel))
	}
	if c.LR != base.LR {
		ch = append(ch, fmt.Sprintf("lr %g", c.LR))
	}
	if c.Batch != base.Batch {
		ch = append(ch, fmt.Sprintf("batch %d", c.Batch))
	}
	if c.Steps != base.Steps {
		ch = append(ch, fmt.Sprintf("%d steps", c.Steps))
	}
	if c.TrainExamples != base.TrainExamples {
		ch = append(ch, fmt.Sprintf("a set of %d training sequences", c.TrainExamples))
	}
	if c.WeightDecay != base.WeightDecay {
		ch = append(ch, fmt.Sprintf("weight decay %g", c.WeightDecay))
	}
	if len(ch) == 0 {
		return "the default itself"
	}
	return strings.Join(ch, " with ")
}

// ClaimsFile holds the claims' measurements beside the database, in
// OUT/findings/, so that --resume keeps them.
const ClaimsFile = "claims.json"

// Measured is what ClaimsFile holds: the Extras by run and the claim-7
// seeds, each taken by this reproduce or the one it resumes.
type Measured struct {
	Extras   []KeyedExtra   `json:"extras"`
	Dynamics []DynamicsSeed `json:"dynamics"`
	// DynamicsConfig is the configuration the Dynamics seeds trained, so
	// that a resume with another setting does not reuse them.
	DynamicsConfig train.Config `json:"dynamics_config"`
}

// KeyedExtra is one run's Extra.
type KeyedExtra struct {
	Key   string `json:"config_key"`
	Seed  uint64 `json:"seed"`
	Extra *Extra `json:"extra"`
}

// NewMeasured builds the file's contents from extras and dynamics, in a
// stable order.
func NewMeasured(p Plan, extras map[sweep.RunID]*Extra, dyn []DynamicsSeed) Measured {
	m := Measured{Dynamics: dyn, DynamicsConfig: p.Dynamics}
	for id, x := range extras {
		m.Extras = append(m.Extras, KeyedExtra{Key: id.Key, Seed: id.Seed, Extra: x})
	}
	sort.Slice(m.Extras, func(i, j int) bool {
		a, b := m.Extras[i], m.Extras[j]
		return a.Key < b.Key || a.Key == b.Key && a.Seed < b.Seed
	})
	return m
}

// Map is the extras by run.
func (m Measured) Map() map[sweep.RunID]*Extra {
	out := map[sweep.RunID]*Extra{}
	for _, k := range m.Extras {
		out[sweep.RunID{Key: k.Key, Seed: k.Seed}] = k.Extra
	}
	return out
}

// DynamicsFor is the stored seeds of p's claim-7 setting, in p.SmallSet
// order, or nil unless every one of them is stored.
func (m Measured) DynamicsFor(p Plan) []DynamicsSeed {
	if m.DynamicsConfig != p.Dynamics {
		return nil
	}
	var out []DynamicsSeed
	for _, s := range p.SmallSet {
		i := slices.IndexFunc(m.Dynamics, func(d DynamicsSeed) bool { return d.Seed == s })
		if i < 0 {
			return nil
		}
		out = append(out, m.Dynamics[i])
	}
	return out
}
