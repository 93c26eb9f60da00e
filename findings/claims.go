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
// fixed before the runs. A count rule "k of 8" is scaled to the seeds
// there are: at least ceil(k*n/8) of n.

// DynamicsEvery is how often, in steps, claim 7 records a history over
// the first 500 steps (scaled with the steps).
const DynamicsEvery = 5

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
)

// claims fills the claims' configurations of p.
func (p *Plan) claims(steps func(int) int, regime bool) {
	p.Copy = train.Defaults("copy")
	p.Copy.Steps = steps(1500)
	p.Wide = train.Defaults("induction")
	p.Wide.Steps, p.Wide.Heads, p.Wide.DModel, p.Wide.DFF = steps(2500), 8, 64, 128
	p.Agreement = train.Defaults("agreement")
	p.Agreement.Steps = steps(2000)
	p.Unseen = train.Defaults("induction-unseen")
	p.Unseen.Steps = steps(2500)
	p.UnseenTied = p.Unseen
	p.UnseenTied.TiedEmbeddings = true
	p.Dynamics = train.Defaults("induction")
	p.Dynamics.Steps = steps(500)
	if regime {
		p.Regime = RegimeGrid(steps)
	}
}

// RegimeGrid is the --regime grid: the default induction model, and each
// of d-model, learning rate, batch and steps moved alone to a smaller and
// a larger value.
func RegimeGrid(steps func(int) int) []train.Config {
	base := train.Defaults("induction")
	base.Steps = steps(2500)
	out := []train.Config{base}
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
	return out
}

// Extra is what reproduce measures on a trained model beyond its sweep
// record: pruning curves (claim 8), accuracy on attractor examples with
// each relation head off (claim 9), accuracy on unseen tokens (claim 10).
type Extra struct {
	Prune *inspect.PruneReport `json:"prune,omitempty"`
	// AttractorIntact is accuracy on attractor examples; Syntax lists every
	// head named after verb->subject with that accuracy when it is off.
	AttractorIntact *float64     `json:"attractor_intact,omitempty"`
	Syntax          []SyntaxHead `json:"syntax,omitempty"`
	Unseen          *float64     `json:"unseen_accuracy,omitempty"`
}

// SyntaxHead is a head that beats verb->subject's baseline by the margin.
type SyntaxHead struct {
	Name         string  `json:"name"`
	Argmax       float64 `json:"argmax"`
	Baseline     float64 `json:"baseline"`
	AttractorOff float64 `json:"attractor_off"`
}

// NeedsExtra reports whether runs of c are measured beyond their record.
func (p Plan) NeedsExtra(c train.Config) bool {
	k := sweep.Key(c)
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
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	x := &Extra{}
	switch {
	case sweep.Key(m.Train) == sweep.Key(p.Wide):
		x.Prune, err = inspect.Prune(m, dev, inspect.ScoredExamples, 5, []string{inspect.OrderOneShot, inspect.OrderGreedy, inspect.OrderRandom})
		if err != nil {
			return nil, err
		}
	case tasks.HasUnseen(m.Task):
		acc, err := train.UnseenAccuracy(e, m)
		if err != nil {
			return nil, err
		}
		x.Unseen = &acc
	default:
		kt, ok := m.Task.(tasks.KindTask)
		if !ok {
			return nil, fmt.Errorf("findings: %s has no kinds", m.Task.Name())
		}
		attr := inspect.KindBatches(kt, train.HeldOut(m))[0]
		acc, _, err := e.Accuracy(attr, nil)
		if err != nil {
			return nil, err
		}
		x.AttractorIntact = &acc
		for _, h := range o.Report.Heads {
			if len(h.Relations) == 0 || !h.Relations[0].Beats() {
				continue
			}
			off, err := analysis.ParseHeads(h.Name, m.Shape.Layers, m.Shape.Heads)
			if err != nil {
				return nil, err
			}
			a, _, err := e.Accuracy(attr, off)
			if err != nil {
				return nil, err
			}
			x.Syntax = append(x.Syntax, SyntaxHead{Name: h.Name, Argmax: h.Relations[0].Argmax, Baseline: h.Relations[0].Baseline, AttractorOff: a})
		}
	}
	return x, nil
}

// DynamicsSeed is one seed of claim 7: where the best induction score and
// the accuracy rise, recorded every DynamicsEvery steps.
type DynamicsSeed struct {
	Seed     uint64         `json:"seed"`
	Steps    int            `json:"steps"`
	Accuracy float64        `json:"accuracy"`
	Phase    analysis.Phase `json:"phase"`
}

// dynamicsEvery is DynamicsEvery scaled with the steps.
func (p Plan) dynamicsEvery() int { return max(1, int(math.Round(DynamicsEvery*p.Scale))) }

// RunDynamics trains p.Dynamics for seed on dev with a history.
func (p Plan) RunDynamics(seed uint64, dev kernels.Device) (DynamicsSeed, error) {
	c := p.Dynamics
	c.Seed = seed
	var rec inspect.Recorder
	_, res, err := train.Run(c, dev, 0, nil, rec.Hook(p.dynamicsEvery()))
	if err != nil {
		return DynamicsSeed{}, err
	}
	return DynamicsSeed{Seed: seed, Steps: c.Steps, Accuracy: res.Accuracy, Phase: rec.History.Phase()}, nil
}

// Claim is one claim's section and summary row.
type Claim struct {
	N                   int
	Title, Published    string
	Rule                string // the verdict rule, fixed before the runs
	Body                []string
	Measured            string
	Agrees              bool
	Differs             string // a sentence for the list of differences
	Setting, SeedsShown string
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

// Claims evaluates claims 1-10 on the runs.
func (in *Input) Claims() []Claim {
	return []Claim{in.claim1(), in.claim2(), in.claim3(), in.claim4(), in.claim5(),
		in.claim6(), in.claim7(), in.claim8(), in.claim9(), in.claim10()}
}

func (in *Input) claim1() Claim {
	p := in.Plan
	c := Claim{N: 1, Title: "Different data grows different heads", Published: "mirror on reverse, uniform on majority, previous-token and induction on copy",
		Rule: "for each task, its signature label is some head's label in at least 6 of 8 seeds: mirror (or mirror shifted) on reverse, uniform on majority, previous-token and induction (both) on copy"}
	type task struct {
		name string
		cfg  train.Config
		has  func(*sweep.Record) bool
	}
	all := true
	var parts []string
	c.Body = append(c.Body, "| Task | Signature | Per-seed labels | Seeds with it | Needed |", "|---|---|---|---|---|")
	for _, t := range []task{
		{"reverse", p.Positions[0], func(r *sweep.Record) bool { return hasLabel(r, "mirror", "mirror shifted") }},
		{"majority", p.Positions[2], func(r *sweep.Record) bool { return hasLabel(r, "uniform") }},
		{"copy", p.Copy, func(r *sweep.Record) bool { return hasLabel(r, "previous-token") && hasLabel(r, "induction") }},
	} {
		rs := in.records(t.cfg, p.SmallSet)
		var per []string
		k := 0
		for _, r := range rs {
			var ls []string
			for _, h := range r.Heads {
				ls = append(ls, h.Label)
			}
			per = append(per, fmt.Sprintf("%d: %s", r.Config.Seed, strings.Join(ls, ", ")))
			if t.has(r) {
				k++
			}
		}
		ok := len(rs) > 0 && k >= need(len(rs), 6)
		all = all && ok
		sig := map[string]string{"reverse": "mirror / mirror shifted", "majority": "uniform", "copy": "previous-token + induction"}[t.name]
		c.Body = append(c.Body, fmt.Sprintf("| %s | %s | %s | %d of %d | %d |", t.name, sig, strings.Join(per, "; "), k, len(rs), need(len(rs), 6)))
		parts = append(parts, fmt.Sprintf("%s %d/%d", t.name, k, len(rs)))
	}
	c.Measured, c.Agrees = strings.Join(parts, ", "), all
	c.Differs = "Claim 1 (task signatures): seeds with the signature label: " + c.Measured + "; the rule asks 6 of 8 for each task."
	return c
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
		Rule: fmt.Sprintf("the most uniform layer-0 head scores at least %.2f, and switching it off costs at least %.0f points more than switching off the other layer-0 head, in at least 6 of 8 seeds", pinnedUniform, 100*usedMargin)}
	rs := in.records(p.Positions[1], p.SmallSet)
	var ok []bool
	var scores []float64
	c.Body = append(c.Body, "| Seed | Most uniform L0 head | Uniform score | Its cost (points) | Other L0 heads' largest cost | Holds |", "|---|---|---|---|---|---|")
	for _, r := range rs {
		var u *inspect.Head
		for i := range r.Heads {
			h := &r.Heads[i]
			if h.Layer == 0 && (u == nil || h.Scores["uniform"] > u.Scores["uniform"]) {
				u = h
			}
		}
		if u == nil { // no heads recorded (a failed run): it does not hold
			ok = append(ok, false)
			c.Body = append(c.Body, fmt.Sprintf("| %d | none | | | | %s |", r.Config.Seed, sweep.YesNo(false)))
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
		holds := atLeast(s, pinnedUniform) && atLeast(cost(r, *u)-other, usedMargin)
		ok = append(ok, holds)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %.3f | %.1f | %.1f | %s |", r.Config.Seed, u.Name, s, 100*cost(r, *u), 100*other, sweep.YesNo(holds)))
	}
	k := c.holding(ok, 6)
	st := sweep.Describe(scores)
	c.Body = append(c.Body, "", fmt.Sprintf("Uniform score of the most uniform layer-0 head: median %.3f, min %.3f, max %.3f.", st.Median, st.Min, st.Max))
	c.Measured = fmt.Sprintf("%d of %d seeds (median score %.3f)", k, len(rs), st.Median)
	c.Differs = fmt.Sprintf("Claim 3 (pinned uniform head): the rule holds in %d of %d reverse seeds without positions (median score %.3f); it asks 6 of 8.", k, len(rs), st.Median)
	return c
}

func (in *Input) claim4() Claim {
	c := Claim{N: 4, Title: "Attention sinks are no-ops", Published: "99.7% with the sink off, 99.7% intact",
		Rule: fmt.Sprintf("over every head labelled attention-sink in the grid, the median ablation cost is at most %.0f point, and below the median cost of the other heads", 100*sinkCost)}
	var sink, other []float64
	where := map[string]int{}
	// The order of the runs does not matter: medians, a maximum, counts.
	for _, r := range in.ByID {
		if r.Status != sweep.StatusOK {
			continue
		}
		for _, h := range r.Heads {
			if h.Label == "attention-sink" {
				sink = append(sink, cost(r, h))
				where[sweep.ConfigName(r.Config)]++
			} else {
				other = append(other, cost(r, h))
			}
		}
	}
	c.Body = append(c.Body, "The grid is every run of this reproduce (every task, the 2x8 d-model-64 model, one layer, no positions, no mask, tied embeddings), so a sink anywhere counts.")
	if len(sink) == 0 {
		c.Body = append(c.Body, "", fmt.Sprintf("No head of the %d heads in the grid is labelled attention-sink: the heads that have nothing to do grow uniform instead.", len(other)))
		c.Measured = "no sink heads"
		c.Differs = "Claim 4 (sinks): no head anywhere in the grid is labelled attention-sink."
		return c
	}
	ss, so := sweep.Describe(sink), sweep.Describe(other)
	var ws []string
	for k, n := range where {
		ws = append(ws, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(ws)
	c.Body = append(c.Body, "", fmt.Sprintf("%d sink heads (%s); median cost %.2f points (max %.1f); the other %d heads' median cost %.2f points.",
		len(sink), strings.Join(ws, "; "), 100*ss.Median, 100*ss.Max, len(other), 100*so.Median))
	c.Agrees = atMost(ss.Median, sinkCost) && ss.Median < so.Median
	c.Measured = fmt.Sprintf("%d sinks, median cost %.2f vs %.2f points", len(sink), 100*ss.Median, 100*so.Median)
	c.Differs = fmt.Sprintf("Claim 4 (sinks): %d sink heads with median cost %.2f points against %.2f for the other heads; the rule asks at most 1 and below the others'.", len(sink), 100*ss.Median, 100*so.Median)
	return c
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
		Rule: "among seeds that reach 99% accuracy, the fraction whose every head carries a label (score at least 0.4) is below 1; reported with its Wilson interval"}
	rs := in.records(p.Induction, p.CircuitSeeds)
	learned, readable := 0, 0
	var unread []string
	for _, r := range rs {
		if !atLeast(r.Accuracy, learnedAccuracy) {
			continue
		}
		learned++
		if !hasLabel(r, analysis.NoClearPattern) {
			readable++
		} else {
			unread = append(unread, fmt.Sprint(r.Config.Seed))
		}
	}
	pr := sweep.NewProportion(readable, learned)
	c.Body = append(c.Body, fmt.Sprintf("%s over seeds %s: %d of %d seeds reach 99%%; %d of them have every head labelled: %s (95%% Wilson interval %s to %s). Seeds with an unlabelled head: %s.",
		sweep.ConfigName(p.Induction), seedRange(p.CircuitSeeds), learned, len(rs), readable, pc(pr.Fraction), pc(pr.Low), pc(pr.High), headsOrNone(unread)))
	c.Agrees = learned > 0 && readable < learned
	c.Measured = fmt.Sprintf("%d/%d = %s [%s, %s]", readable, learned, pc(pr.Fraction), pc(pr.Low), pc(pr.High))
	c.Differs = fmt.Sprintf("Claim 6 (interpretability varies by seed): every one of the %d seeds that reach 99%% has every head labelled.", learned)
	return c
}

func (in *Input) claim7() Claim {
	p := in.Plan
	c := Claim{N: 7, Title: "Induction heads form in a burst, with the accuracy", Published: "Olsson et al. (2022): the phase change",
		Rule: fmt.Sprintf("with history every %d steps over the first %d, the 20-80%% rise of the best induction score and that of accuracy overlap in at least 7 of 8 seeds, and each rise spans at most %.0f%% of the run", p.dynamicsEvery(), p.Dynamics.Steps, 100*riseSpan)}
	c.Body = append(c.Body, "| Seed | Induction rises over | Accuracy rises over | Overlap | Spans within | Holds |", "|---|---|---|---|---|---|")
	var ok []bool
	for _, d := range in.Dynamics {
		ph := d.Phase
		span := float64(max(ph.InductionTo-ph.InductionFrom, ph.AccuracyTo-ph.AccuracyFrom)) / float64(max(d.Steps, 1))
		within := atMost(span, riseSpan)
		holds := ph.Together && within
		ok = append(ok, holds)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %d-%d | %d-%d | %s | %s (%.0f%%) | %s |", d.Seed, ph.InductionFrom, ph.InductionTo, ph.AccuracyFrom, ph.AccuracyTo,
			sweep.YesNo(ph.Together), sweep.YesNo(within), 100*span, sweep.YesNo(holds)))
	}
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
		Rule: fmt.Sprintf("in at least 6 of 8 agreement seeds, some head's verb->subject argmax accuracy beats the baseline by at least %.1f, and switching it off costs at least %.0f points on attractor examples", analysis.RelationMargin, 100*attractorCost)}
	c.Body = append(c.Body, "| Seed | Intact | Attractor examples | Heads named after verb->subject (argmax / baseline / attractor accuracy with it off) | Holds |", "|---|---|---|---|---|")
	var ok []bool
	for _, s := range p.SmallSet {
		id := sweep.RunID{Key: sweep.Key(p.Agreement), Seed: s}
		x, r := in.Extras[id], in.ByID[id]
		if x == nil || x.AttractorIntact == nil || r == nil {
			continue
		}
		holds := false
		var hs []string
		for _, h := range x.Syntax {
			hs = append(hs, fmt.Sprintf("%s %.2f / %.2f / %s", h.Name, h.Argmax, h.Baseline, pc(h.AttractorOff)))
			holds = holds || atLeast(*x.AttractorIntact-h.AttractorOff, attractorCost)
		}
		ok = append(ok, holds)
		c.Body = append(c.Body, fmt.Sprintf("| %d | %s | %s | %s | %s |", s, pc(r.Accuracy), pc(*x.AttractorIntact), headsOrNone(hs), sweep.YesNo(holds)))
	}
	k := c.holding(ok, 6)
	c.Measured = fmt.Sprintf("%d of %d seeds", k, len(ok))
	c.Differs = fmt.Sprintf("Claim 9 (syntax heads): a verb->subject head that beats the baseline and costs %.0f points on attractors when off, in %d of %d agreement seeds; the rule asks 6 of 8.", 100*attractorCost, k, len(ok))
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
		fmt.Fprintf(b, "## Which setting gives the published numbers\n\nNot run by this invocation: `headlab reproduce --regime` sweeps d-model, learning rate, batch and steps around the default (%d cells of %d seeds) and names the cell closest to the published model.\n\n", len(RegimeGrid(func(n int) int { return n })), len(in.Plan.CircuitSeeds))
		t.notRun(regimeFinding, regimePublished, "not run (`--regime`)")
		return
	}
	cells := in.RegimeCells()
	fmt.Fprintf(b, "## Which setting gives the published numbers\n\n")
	fmt.Fprintf(b, "The published default model had load-bearing single heads, a sink and the circuit in about a third of seeds; ours, at the default (the first row), has the circuit in %s of seeds and a load-bearing single head in %s. The grid moves d-model, learning rate, batch and steps one at a time around the default, %d seeds each. Per cell: the circuit fraction, the median over seeds of the largest single-head ablation cost, the fraction of seeds with a load-bearing single head (one costing at least %.0f points) and the fraction with an attention-sink head. Distance from the published model: |circuit - 1/3| + (1 - load-bearing) + (1 - sinks).\n\n",
		pc(cells[0].Circuit.Fraction), pc(cells[0].LoadBearing), len(in.Plan.CircuitSeeds), 100*analysis.CircuitDrop)
	fmt.Fprintln(b, "| d-model | lr | batch | steps | Seeds | Circuit | Largest single-head cost (median, points) | Load-bearing single head | Sink | Distance |")
	fmt.Fprintln(b, "|---|---|---|---|---|---|---|---|---|---|")
	closest := -1
	for i, c := range cells {
		if c.Seeds > 0 && (closest < 0 || c.Distance < cells[closest].Distance) {
			closest = i
		}
		fmt.Fprintf(b, "| %d | %g | %d | %d | %d | %s [%s, %s] | %.1f | %s | %s | %.2f |\n", c.Config.DModel, c.Config.LR, c.Config.Batch, c.Config.Steps, c.Seeds,
			pc(c.Circuit.Fraction), pc(c.Circuit.Low), pc(c.Circuit.High), 100*c.SingleCost, pc(c.LoadBearing), pc(c.Sinks), c.Distance)
	}
	if closest < 0 {
		fmt.Fprintf(b, "\nNo cell finished.\n\n")
		return
	}
	cl := cells[closest]
	ok := cl.Published()
	fmt.Fprintf(b, "\n**Closest cell: d-model %d, lr %g, batch %d, %d steps** (distance %.2f): circuit %s, load-bearing single head in %s of seeds, a sink in %s. It reproduces the published model when a third lies in its circuit interval, most seeds have a load-bearing single head and some have a sink: %s.\n\n",
		cl.Config.DModel, cl.Config.LR, cl.Config.Batch, cl.Config.Steps, cl.Distance, pc(cl.Circuit.Fraction), pc(cl.LoadBearing), pc(cl.Sinks), sweep.YesNo(ok))
	fmt.Fprintf(b, "%s\n\n", regimeReading(cells))
	t.add(regimeFinding, regimePublished,
		fmt.Sprintf("closest d-model %d, lr %g, batch %d, %d steps: circuit %s, load-bearing %s, sink %s", cl.Config.DModel, cl.Config.LR, cl.Config.Batch, cl.Config.Steps, pc(cl.Circuit.Fraction), pc(cl.LoadBearing), pc(cl.Sinks)), ok,
		fmt.Sprintf("No cell of the regime grid gives the published model: the closest (d-model %d, lr %g, batch %d, %d steps) has the circuit in %s of seeds, a load-bearing single head in %s and a sink in %s.", cl.Config.DModel, cl.Config.LR, cl.Config.Batch, cl.Config.Steps, pc(cl.Circuit.Fraction), pc(cl.LoadBearing), pc(cl.Sinks)))
}

// regimeReading says in words what the grid shows, from its numbers:
// whether any cell grows a sink, which single change moves the circuit
// fraction nearest a third, and where load-bearing heads are commonest.
// cells[0] is the default (RegimeGrid).
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
		fmt.Fprintf(&out, "no cell grows an attention-sink head (%d seeds in all), so within this grid the published model's sink is not a matter of d-model, learning rate, batch or steps. ", seeds)
	} else {
		fmt.Fprintf(&out, "%d of %d cells grow an attention-sink head in some seed. ", sinkCells, len(done))
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
		out.WriteString("No single change gives all three of the published model's properties at once: what made the published model differ lies outside these four settings, or in a combination of them.")
	} else {
		fmt.Fprintf(&out, "The published model's heads appear at %s.", strings.Join(published, ", "))
	}
	return out.String()
}

// regimeChange names what cell c changes from the default base.
func regimeChange(base, c train.Config) string {
	switch {
	case c.DModel != base.DModel:
		return fmt.Sprintf("d-model %d", c.DModel)
	case c.LR != base.LR:
		return fmt.Sprintf("lr %g", c.LR)
	case c.Batch != base.Batch:
		return fmt.Sprintf("batch %d", c.Batch)
	case c.Steps != base.Steps:
		return fmt.Sprintf("%d steps", c.Steps)
	}
	return "the default itself"
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
