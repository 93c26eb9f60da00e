package sweep

import (
	"fmt"
	"slices"
	"sync"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/tasks"
)

// RuleAblation is a run's induction circuit under one label rule: its
// induction and previous-token heads switched off together, and the
// circuit rule's verdict on them.
type RuleAblation struct {
	Induction     Joint `json:"induction"`
	PreviousToken Joint `json:"previous_token"`
	Circuit       bool  `json:"circuit"`
}

// Under is r's heads labelled by rule and its circuit under that rule:
// the stored labels and ablations for analysis.CurrentRule, and for
// analysis.FirstRule the labels its scores give under it with the joint
// ablations measured for them (Ablation.FirstRule).
func (r *Record) Under(rule analysis.LabelRule) ([]inspect.Head, RuleAblation) {
	cur := RuleAblation{Induction: r.Ablation.Induction, PreviousToken: r.Ablation.PreviousToken, Circuit: r.Circuit}
	if rule == analysis.CurrentRule {
		return r.Heads, cur
	}
	heads := Relabelled(r.Heads, rule, seqLen(r))
	if r.Ablation.FirstRule != nil {
		return heads, *r.Ablation.FirstRule
	}
	return heads, cur // not measured apart: a record with no heads
}

// Relabelled is heads named under rule (each head's scores kept; a head
// with no scores to name it from keeps its label).
func Relabelled(heads []inspect.Head, rule analysis.LabelRule, T int) []inspect.Head {
	out := slices.Clone(heads)
	for i := range out {
		if out[i].Scores != nil {
			out[i].HeadScore, _ = out[i].Relabel(rule, T)
		}
	}
	return out
}

// seqLen is the sequence length of r's run (which tells the shifted
// mirror): its configuration's, else its task's default; 0 for a task
// this headlab does not know.
func seqLen(r *Record) int {
	if r.Config.SeqLen > 0 {
		return r.Config.SeqLen
	}
	t, err := tasks.New(r.Config.Task)
	if err != nil {
		return 0
	}
	return t.SeqLen()
}

// labelSet is the names of the heads labelled label, in order.
func labelSet(heads []inspect.Head, label string) []string {
	names := []string{}
	for _, h := range heads {
		if h.Label == label {
			names = append(names, h.Name)
		}
	}
	return names
}

// relabelOnRead brings a run stored before the revised label rule to
// it: the stored labels and ablations become Ablation.FirstRule, every
// head is named again from its scores, and where the circuit's two label
// sets stay the same their joint ablations stand and the rule is applied
// again. Where a set changed, the joint ablation it needs was never
// measured: the record says so (Remeasure), its joints hold the new sets
// with no accuracy and its circuit is false until a sweep or reproduce
// with --resume measures it again.
func relabelOnRead(r *Record) bool {
	if r.Status != StatusOK || r.Ablation.LabelRule >= analysis.CurrentRule {
		return false
	}
	stored := *r
	first := RuleAblation{Induction: r.Ablation.Induction, PreviousToken: r.Ablation.PreviousToken, Circuit: r.Circuit}
	r.Ablation.FirstRule, r.Ablation.LabelRule = &first, analysis.CurrentRule
	r.Heads = Relabelled(r.Heads, analysis.CurrentRule, seqLen(r))
	r.Ablation.Single = slices.Clone(r.Ablation.Single)
	for i := range r.Ablation.Single {
		for _, h := range r.Heads {
			if h.Name == r.Ablation.Single[i].Head {
				r.Ablation.Single[i].Label = h.Label
			}
		}
	}
	ind, prev := labelSet(r.Heads, analysis.LabelInduction), labelSet(r.Heads, analysis.LabelPreviousToken)
	if !slices.Equal(ind, first.Induction.Heads) {
		r.Ablation.Induction, r.Remeasure = Joint{Heads: ind}, true
	}
	if !slices.Equal(prev, first.PreviousToken.Heads) {
		r.Ablation.PreviousToken, r.Remeasure = Joint{Heads: prev}, true
	}
	r.Circuit = !r.Remeasure && r.FormsCircuit()
	if r.Remeasure {
		r.stored = &stored
	}
	return true
}

// relabelNote counts the runs a store relabelled on read, for its Note.
type relabelNote struct {
	mu              sync.Mutex
	runs, remeasure int
}

// reset forgets the counts: each read of the records counts afresh.
func (n *relabelNote) reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.runs, n.remeasure = 0, 0
}

func (n *relabelNote) add(r *Record) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.runs++
	if r.Remeasure {
		n.remeasure++
	}
}

// String is the one line that tells the user, "" when nothing was
// relabelled.
func (n *relabelNote) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.runs == 0 {
		return ""
	}
	s := fmt.Sprintf("%d runs were labelled by the first label rule and are relabelled on read by the revised one (docs/head-patterns.md)", n.runs)
	if n.remeasure > 0 {
		s += fmt.Sprintf("; %d of them have new induction or previous-token heads whose joint ablation was never measured (their circuit reads as no): sweep or reproduce with --resume measures them", n.remeasure)
	}
	return s
}

// replacing is the set of stored runs a sweep trains again to replace
// (those relabelled with Remeasure); claim and storeClaimed read it.
type replacing struct {
	mu  sync.Mutex
	ids map[RunID]bool
}

func (p *replacing) set(ids []RunID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids = map[RunID]bool{}
	for _, id := range ids {
		p.ids[id] = true
	}
}

func (p *replacing) has(id RunID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ids[id]
}

// take reports whether id is to be replaced, once: a second record of the
// same pair (a lapsed claim run twice) keeps the first, as for any pair.
func (p *replacing) take(id RunID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ok := p.ids[id]
	delete(p.ids, id)
	return ok
}

// Stale lists the runs whose labels were relabelled on read and whose new
// circuit heads lack their joint ablation (Record.Remeasure).
func (s *Store) Stale() ([]RunID, error) {
	recs, err := s.Records()
	if err != nil {
		return nil, err
	}
	var ids []RunID
	for i := range recs {
		if recs[i].Remeasure {
			ids = append(ids, recs[i].ID())
		}
	}
	return ids, nil
}

// Unsigned lists the finished runs that a would sign (Analysis.Signs)
// but that hold no signature (stored before schema version 7, or swept
// without it), and whose other measurements are a's: a sweep trains them
// again, with the same bits, and replaces their rows as they land, so
// that the new row is the old one with its signature. A run measured
// otherwise (another ablation method, other measurements) is left as it
// is, as a sweep leaves every run of another analysis.
func (s *Store) Unsigned(a Analysis) ([]RunID, error) {
	if !a.Measure.Has(MeasureSignature) {
		return nil, nil
	}
	rest := slices.DeleteFunc(slices.Clone(a.Measure), func(m Measure) bool { return m == MeasureSignature })
	recs, err := s.Records()
	if err != nil {
		return nil, err
	}
	var ids []RunID
	for i := range recs {
		r := &recs[i]
		if r.Status != StatusOK || r.EdgeCircuit != nil || r.Remeasure || !a.Signs(r.Key) {
			continue
		}
		if had := AnalysisOf(r); had.method() == a.method() && slices.Equal(had.Measure, rest) {
			ids = append(ids, r.ID())
		}
	}
	return ids, nil
}
