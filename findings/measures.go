package findings

import (
	"fmt"
	"strings"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/sweep"
	"headlab/train"
)

// The circuit by other measures (section 6): the default induction
// model's seeds read by other interventions than zeroing a head, and by
// scores that do not look at the task (docs/causal.md). The numbers are
// taken on the trained models as the claims' extra measurements are, and
// kept with them in claims.json, so that a resumed reproduce whose
// records predate them retrains those seeds and measures them.

// patchExamples is how many held-out examples are the clean runs of the
// section's activation patching: one pass, as `headlab patch`'s default.
const patchExamples = train.EvalChunk

// CircuitMeasures is one seed of the default model read by the other
// measures: each label's heads switched off together by mean and by
// resample ablation, the heads activation patching locates, and every
// head's circuit scores.
type CircuitMeasures struct {
	// Joint is by the labels of LabelRule (absent in measures taken
	// before the revised rule: the first), JointFirstRule by those of
	// analysis.FirstRule; JointUnder reads either.
	Joint          []MethodJoint      `json:"joint"`
	JointFirstRule []MethodJoint      `json:"joint_first_rule,omitempty"`
	LabelRule      analysis.LabelRule `json:"label_rule,omitempty"`
	// Corruption is the patching's corruption (the task's default);
	// Located the heads it locates (inspect.PatchLocated), by total.
	Corruption string   `json:"corruption"`
	Located    []string `json:"located"`
	// Heads are every head's circuit scores, layer-major.
	Heads []HeadCircuit `json:"heads"`
}

// MethodJoint is held-out accuracy with every head labelled induction,
// and every head labelled previous-token, switched off together by one
// ablation method (nil: no head has the label).
type MethodJoint struct {
	Method        inspect.Ablation `json:"method"`
	Induction     *float64         `json:"induction_off"`
	PreviousToken *float64         `json:"previous_token_off"`
}

// HeadCircuit is one head's OV copying and prefix-matching scores.
type HeadCircuit struct {
	Name    string  `json:"name"`
	Copying float64 `json:"ov_copying"`
	Prefix  float64 `json:"prefix_matching"`
}

// JointUnder is the joint ablations by the labels of rule; nil where
// they were not measured (measures taken before the revised rule hold
// the first rule's alone).
func (m *CircuitMeasures) JointUnder(rule analysis.LabelRule) []MethodJoint {
	switch {
	case m.LabelRule < analysis.RevisedRule && rule == analysis.FirstRule:
		return m.Joint
	case m.LabelRule < analysis.RevisedRule:
		return nil
	case rule == analysis.FirstRule:
		return m.JointFirstRule
	}
	return m.Joint
}

// otherMethods are the ablation methods the section sets beside zero
// (whose joint ablations are the record's).
var otherMethods = []inspect.Ablation{inspect.AblateMean, inspect.AblateResample}

// measureCircuit takes one model's CircuitMeasures on e, with the labels
// of its report.
func measureCircuit(e *train.Evaluator, rep *inspect.Report) (*CircuitMeasures, error) {
	held := e.HeldOutAll()
	x := &CircuitMeasures{LabelRule: analysis.CurrentRule}
	for _, method := range otherMethods {
		ab, err := inspect.NewAblator(e, held, method)
		if err != nil {
			return nil, err
		}
		for _, rule := range []analysis.LabelRule{analysis.CurrentRule, analysis.FirstRule} {
			heads := [][]inspect.Head{rep.Heads}
			if rule != analysis.CurrentRule {
				heads[0] = sweep.Relabelled(rep.Heads, rule, e.Models[0].Task.SeqLen())
			}
			ind, err := sweep.JointOff(ab, held, heads, analysis.LabelInduction)
			if err != nil {
				return nil, err
			}
			prev, err := sweep.JointOff(ab, held, heads, analysis.LabelPreviousToken)
			if err != nil {
				return nil, err
			}
			j := MethodJoint{Method: method, Induction: ind[0].Accuracy, PreviousToken: prev[0].Accuracy}
			if rule == analysis.CurrentRule {
				x.Joint = append(x.Joint, j)
			} else {
				x.JointFirstRule = append(x.JointFirstRule, j)
			}
		}
	}
	pr, err := inspect.Patch(e, inspect.PatchOptions{Examples: patchExamples})
	if err != nil {
		return nil, err
	}
	x.Corruption, x.Located = pr[0].Corruption, pr[0].Located
	ms, err := inspect.Circuits(e)
	if err != nil {
		return nil, err
	}
	if ms[0].Err != nil {
		return nil, ms[0].Err
	}
	H := e.Models[0].Shape.Heads
	for _, h := range rep.Heads {
		c := ms[0].Heads[h.Layer*H+h.Head]
		x.Heads = append(x.Heads, HeadCircuit{Name: h.Name, Copying: c.OVCopying, Prefix: c.PrefixMatching})
	}
	return x, nil
}

// circuitSeed is one seed's reading by every measure.
type circuitSeed struct {
	seed            uint64
	induction, prev []string // the heads labelled so
	// circuit is the verdict of the circuit rule by zero (the record's),
	// mean and resample ablation.
	circuit []bool
	located []string
	// missed are the heads labelled induction patching does not locate;
	// missedPrev the same of previous-token; unlabelled the located heads
	// with neither label.
	missed, missedPrev, unlabelled []string
	// prefixApart and copyingApart say whether every head labelled
	// induction scores above every other head; nil when the seed has no
	// head labelled induction, or no other.
	prefixApart, copyingApart *bool
	// by label: every induction head's scores, and every other's.
	indCopy, indPrefix, otherCopy, otherPrefix []float64
}

// circuitSeeds reads every circuit seed that has its record and its
// measures; missing counts those that lack either.
func (in *Input) circuitSeeds() (seeds []circuitSeed, missing []uint64) {
	p := in.Plan
	for _, s := range p.CircuitSeeds {
		id := sweep.RunID{Key: sweep.Key(p.Induction), Seed: s}
		r, x := in.ByID[id], in.Extras[id]
		if r == nil || r.Status != sweep.StatusOK || x == nil || x.Circuit == nil {
			missing = append(missing, s)
			continue
		}
		seeds = append(seeds, readSeed(r, x.Circuit))
	}
	return seeds, missing
}

// readSeed reads one seed's record and measures.
func readSeed(r *sweep.Record, m *CircuitMeasures) circuitSeed {
	cs := circuitSeed{seed: r.Config.Seed, located: m.Located, circuit: []bool{r.Circuit}}
	scores := make([]analysis.HeadScore, len(r.Heads))
	for i, h := range r.Heads {
		scores[i] = h.HeadScore
	}
	for _, j := range m.Joint {
		cs.circuit = append(cs.circuit, analysis.FormsCircuit(scores, r.Accuracy, j.Induction, j.PreviousToken))
	}
	located := map[string]bool{}
	for _, n := range m.Located {
		located[n] = true
	}
	label := map[string]string{}
	for _, h := range r.Heads {
		label[h.Name] = h.Label
		switch h.Label {
		case analysis.LabelInduction:
			cs.induction = append(cs.induction, h.Name)
			if !located[h.Name] {
				cs.missed = append(cs.missed, h.Name)
			}
		case analysis.LabelPreviousToken:
			cs.prev = append(cs.prev, h.Name)
			if !located[h.Name] {
				cs.missedPrev = append(cs.missedPrev, h.Name)
			}
		}
	}
	for _, n := range m.Located {
		if l := label[n]; l != analysis.LabelInduction && l != analysis.LabelPreviousToken {
			cs.unlabelled = append(cs.unlabelled, n)
		}
	}
	for _, h := range m.Heads {
		if label[h.Name] == analysis.LabelInduction {
			cs.indCopy, cs.indPrefix = append(cs.indCopy, h.Copying), append(cs.indPrefix, h.Prefix)
		} else {
			cs.otherCopy, cs.otherPrefix = append(cs.otherCopy, h.Copying), append(cs.otherPrefix, h.Prefix)
		}
	}
	cs.prefixApart, cs.copyingApart = apart(cs.indPrefix, cs.otherPrefix), apart(cs.indCopy, cs.otherCopy)
	return cs
}

// apart says whether every value of in is above every value of out; nil
// when either is empty.
func apart(in, out []float64) *bool {
	if len(in) == 0 || len(out) == 0 {
		return nil
	}
	ok := sweep.Describe(in).Min > sweep.Describe(out).Max
	return &ok
}

// measuresSection writes section 6, the circuit by other measures: the
// circuit fraction by each ablation method, the heads patching locates
// against the labelled ones, the copying and prefix-matching scores of
// the heads labelled induction against the others, and every place the
// measures disagree. It gives no verdict: nothing of it is published.
func (in *Input) measuresSection(b *strings.Builder, _ *tally) {
	p := in.Plan
	fmt.Fprintf(b, "## 6. The circuit by other measures\n\n")
	fmt.Fprintf(b, "%s, seeds %s. Section 3 judges the circuit by zeroing heads. Here the same rule judges it with the labelled heads' outputs replaced by their mean over the held-out examples (mean ablation) and by their output on another example (resample ablation); activation patching (each head's clean output written, one position at a time, into a run whose first half is corrupted; located: it restores at least %.0f%% of the answer's logit difference) says which heads carry the answer; and two scores read what a head does whatever the task: the copying score of its OV circuit and its prefix-matching score on a repeated random sequence (docs/causal.md). They are measured on the CPU from each trained model, as the claims' extra measurements are.\n\n",
		sweep.ConfigName(p.Induction), seedRange(p.CircuitSeeds), 100*inspect.PatchLocated)
	seeds, missing := in.circuitSeeds()
	if len(missing) > 0 {
		fmt.Fprintf(b, "> Seeds without these measurements (a run that did not finish, or one carried over by `--resume` and not measured again): %s.\n\n", seedList(missing))
	}
	if len(seeds) == 0 {
		fmt.Fprintf(b, "No seed has them, so there is nothing to compare.\n\n")
		return
	}
	n := len(seeds)
	methods := append([]string{"zero (section 3)"}, func() []string {
		var out []string
		for _, m := range otherMethods {
			out = append(out, string(m))
		}
		return out
	}()...)
	fmt.Fprintln(b, "| Ablation | Seeds forming the circuit | 95% Wilson interval |")
	fmt.Fprintln(b, "|---|---|---|")
	for i, m := range methods {
		k := 0
		for _, s := range seeds {
			if s.circuit[i] {
				k++
			}
		}
		pr := sweep.NewProportion(k, n)
		fmt.Fprintf(b, "| %s | %d of %d (%s) | %s to %s |\n", m, k, n, pc(pr.Fraction), pc(pr.Low), pc(pr.High))
	}
	fmt.Fprintln(b)
	fmt.Fprintln(b, "| Seed | Induction heads | Previous-token heads | Circuit by zero / mean / resample | Located by patching |")
	fmt.Fprintln(b, "|---|---|---|---|---|")
	var indCopy, indPrefix, otherCopy, otherPrefix []float64
	for _, s := range seeds {
		var v []string
		for _, c := range s.circuit {
			v = append(v, sweep.YesNo(c))
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", s.seed, headsOrNone(s.induction), headsOrNone(s.prev), strings.Join(v, " / "), headsOrNone(s.located))
		indCopy, indPrefix = append(indCopy, s.indCopy...), append(indPrefix, s.indPrefix...)
		otherCopy, otherPrefix = append(otherCopy, s.otherCopy...), append(otherPrefix, s.otherPrefix...)
	}
	fmt.Fprintln(b)
	fmt.Fprintln(b, "Circuit scores of the heads labelled induction against every other head of these seeds (median, min to max):")
	fmt.Fprintln(b)
	fmt.Fprintln(b, "| Heads | Count | OV copying score | Prefix-matching score |")
	fmt.Fprintln(b, "|---|---|---|---|")
	fmt.Fprintf(b, "| labelled induction | %d | %s | %s |\n", len(indCopy), medianRange(indCopy), medianRange(indPrefix))
	fmt.Fprintf(b, "| the others | %d | %s | %s |\n\n", len(otherCopy), medianRange(otherCopy), medianRange(otherPrefix))
	agree, disagree := compareMeasures(seeds)
	for _, l := range agree {
		fmt.Fprintf(b, "- %s\n", l)
	}
	fmt.Fprintln(b)
	if len(disagree) == 0 {
		fmt.Fprintf(b, "**The measures agree** on every seed measured: no method changes a verdict, patching locates every labelled head, and both scores set the induction heads apart.\n\n")
		return
	}
	fmt.Fprintf(b, "**Where the measures disagree:**\n\n")
	for _, l := range disagree {
		fmt.Fprintf(b, "- %s\n", l)
	}
	fmt.Fprintln(b)
}

// bySeeds gathers sentences said of seeds, each sentence once with
// every seed it is said of, in the order first said.
type bySeeds struct {
	order []string
	seeds map[string][]uint64
}

func (g *bySeeds) add(seed uint64, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if g.seeds == nil {
		g.seeds = map[string][]uint64{}
	}
	if _, ok := g.seeds[msg]; !ok {
		g.order = append(g.order, msg)
	}
	g.seeds[msg] = append(g.seeds[msg], seed)
}

// lines are "Seed 3: ..." or "Seeds 3, 7: ...".
func (g *bySeeds) lines() []string {
	var out []string
	for _, msg := range g.order {
		ss := g.seeds[msg]
		what := "Seed"
		if len(ss) > 1 {
			what = "Seeds"
		}
		out = append(out, fmt.Sprintf("%s %s: %s", what, seedList(ss), msg))
	}
	return out
}

// compareMeasures sets out, from the seeds' numbers, how far the
// measures agree (one line per comparison) and every place they
// disagree (one line for each thing said, with the seeds it is said of).
func compareMeasures(seeds []circuitSeed) (agree, disagree []string) {
	var d bySeeds
	n := len(seeds)
	// The three ablation methods' verdicts.
	same := 0
	for _, s := range seeds {
		if s.circuit[1] == s.circuit[0] && s.circuit[2] == s.circuit[0] {
			same++
			continue
		}
		var v []string
		for i, m := range []string{"zero", "mean", "resample"} {
			v = append(v, m+" "+sweep.YesNo(s.circuit[i]))
		}
		d.add(s.seed, "the ablation methods give different verdicts (%s).", strings.Join(v, ", "))
	}
	agree = append(agree, fmt.Sprintf("The three ablation methods give the same circuit verdict on %d of %d seeds.", same, n))
	// Patching against the labels.
	// with counts, for each label, the seeds that have a head of it, all
	// the seeds in which patching locates every such head.
	var with, all [2]int
	for _, s := range seeds {
		for i, half := range [2]struct {
			label            string
			labelled, missed []string
		}{{analysis.LabelInduction, s.induction, s.missed}, {analysis.LabelPreviousToken, s.prev, s.missedPrev}} {
			if len(half.labelled) == 0 {
				continue
			}
			with[i]++
			if len(half.missed) == 0 {
				all[i]++
			} else {
				d.add(s.seed, "patching does not locate %s, labelled %s.", strings.Join(half.missed, ", "), half.label)
			}
		}
		if len(s.unlabelled) > 0 {
			d.add(s.seed, "patching locates %s, labelled neither induction nor previous-token.", strings.Join(s.unlabelled, ", "))
		}
	}
	if with[0]+with[1] == 0 {
		agree = append(agree, "No seed has a head labelled induction or previous-token for patching to locate.")
	} else {
		agree = append(agree, fmt.Sprintf("Patching locates every head labelled induction in %d of the %d seeds that have one, and every head labelled previous-token in %d of %d.", all[0], with[0], all[1], with[1]))
	}
	// The scores against the label.
	for _, c := range []struct {
		name       string
		apart      func(circuitSeed) *bool
		ind, other func(circuitSeed) []float64
	}{
		{"prefix-matching", func(s circuitSeed) *bool { return s.prefixApart },
			func(s circuitSeed) []float64 { return s.indPrefix }, func(s circuitSeed) []float64 { return s.otherPrefix }},
		{"OV copying", func(s circuitSeed) *bool { return s.copyingApart },
			func(s circuitSeed) []float64 { return s.indCopy }, func(s circuitSeed) []float64 { return s.otherCopy }},
	} {
		k, of := 0, 0
		for _, s := range seeds {
			a := c.apart(s)
			if a == nil {
				continue
			}
			of++
			if *a {
				k++
				continue
			}
			d.add(s.seed, "a head not labelled induction has %s %s score as high as one labelled induction (induction %s; the others %s).",
				article(strings.ToLower(c.name)), c.name, scoreList(c.ind(s)), scoreList(c.other(s)))
		}
		if of == 0 {
			agree = append(agree, fmt.Sprintf("No seed has both a head labelled induction and another head to set apart by the %s score.", c.name))
			continue
		}
		agree = append(agree, fmt.Sprintf("The %s score puts every head labelled induction above every other head in %d of the %d seeds with both.", c.name, k, of))
	}
	return agree, d.lines()
}

// medianRange writes "median (min-max)" of scores, "-" for none.
func medianRange(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	st := sweep.Describe(xs)
	return fmt.Sprintf("%.3f (%.3f to %.3f)", st.Median, st.Min, st.Max)
}

// scoreList writes scores to three places.
func scoreList(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprintf("%.3f", x))
	}
	return strings.Join(s, ", ")
}

// seedList writes seeds as a comma-separated list.
func seedList(seeds []uint64) string {
	var s []string
	for _, x := range seeds {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}
