// Package inspect reads the heads of a trained model: it scores and labels
// every head on its attention to held-out examples (captured by
// train.Evaluator.Snapshot; analysis, after docs/head-patterns.md) and
// measures what switching heads off does to held-out accuracy.
package inspect

import (
	"headlab/analysis"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// ScoredExamples is the size of the held-out batch heads are scored on: the
// first ScoredExamples of the held-out set.
const ScoredExamples = 256

// Head is one head's verdict and the held-out accuracy with it switched
// off (on top of any heads the report was asked to switch off), and its
// circuit scores when they were measured.
type Head struct {
	analysis.HeadScore
	AblatedAccuracy float64 `json:"ablated_accuracy"`
	// AblatedBy is held-out accuracy with this head switched off alone
	// by each further method measured (Options.Methods), beside
	// AblatedAccuracy's; nil when none was.
	AblatedBy map[Ablation]float64 `json:"ablated_by,omitempty"`
	// DirectLogit is the head's direct logit attribution to the answer,
	// its mean part of the answer's logit over every held-out answer
	// (Attribute); nil when not measured.
	DirectLogit *float64 `json:"direct_logit,omitempty"`
	// Circuit is the head's task-independent scores (docs/causal.md);
	// nil when not measured.
	Circuit *Circuit `json:"circuit,omitempty"`
}

// Report is what headlab prints about a model's heads.
type Report struct {
	// Accuracy is the held-out accuracy with the heads in Ablated off (all
	// on when Ablated is empty).
	Accuracy float64 `json:"accuracy"`
	// Loss is the held-out mean cross-entropy, as evaluated.
	Loss    float64  `json:"loss"`
	Ablated []string `json:"ablated"`
	// Ablation is how every head switched off is replaced.
	Ablation Ablation `json:"ablation"`
	Heads    []Head   `json:"heads"`
	// ICL is the intact model's in-context learning score on the scored
	// examples (docs/causal.md), when measured.
	ICL *float64 `json:"icl_score,omitempty"`
	// ByKind is accuracy per kind of example, for tasks that have kinds
	// (agreement: with and without an attractor).
	ByKind *ByKind `json:"by_kind,omitempty"`
	// Composition is every cross-layer pair's composition scores, when
	// asked for (Options.Composition).
	Composition *CompositionReport `json:"composition,omitempty"`
}

// Scores lists every head's verdict without the ablation figures.
func (r *Report) Scores() []analysis.HeadScore {
	s := make([]analysis.HeadScore, len(r.Heads))
	for i, h := range r.Heads {
		s[i] = h.HeadScore
	}
	return s
}

// Options say how a report switches heads off.
type Options struct {
	// Off are the heads switched off throughout (nil: none).
	Off [][]bool
	// Ablation is how a head is switched off ("" is zero).
	Ablation Ablation
	// Methods are further methods every head is switched off by alone,
	// beside Ablation, each into Head.AblatedBy (a sweep stores mean and
	// resample ablation beside zero).
	Methods []Ablation
	// Relation is the relation (an index into the task's relations) whose
	// best head accuracy by kind switches off.
	Relation int
	// Circuit also measures every head's circuit scores and the model's
	// in-context learning score (docs/causal.md), both of the intact
	// model, whatever Off says.
	Circuit bool
	// Composition also scores the Q-, K- and V-composition of every
	// cross-layer pair of heads (Analyze only: it reads m's weights).
	Composition bool
}

// Analyze scores every head of m on the first ScoredExamples held-out
// examples and measures, for every head, held-out accuracy with that head
// switched off, all with the heads in o.Off switched off as well, and
// what else o asks for. It returns the attention it scored too.
func Analyze(m *train.Model, dev kernels.Device, o Options) (*Report, *analysis.Attention, error) {
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, nil, err
	}
	defer e.Close()
	rs, as, err := AnalyzeAll(e, o)
	if err != nil {
		return nil, nil, err
	}
	if o.Composition {
		c := Composition(m)
		rs[0].Composition = &c
	}
	return rs[0], as[0], nil
}

// AnalyzeAll is Analyze for every model of e at once (a sweep's group):
// each model's heads are scored on its own held-out examples, and each
// head is switched off in every model in one pass.
func AnalyzeAll(e *train.Evaluator, o Options) ([]*Report, []*analysis.Attention, error) {
	off, rel := o.Off, o.Relation
	held := e.HeldOutAll()
	if o.Ablation == "" {
		o.Ablation = AblateZero
	}
	ab, err := NewAblator(e, held, o.Ablation)
	if err != nil {
		return nil, nil, err
	}
	// One pass: accuracy on every held-out example, attention on the first
	// ScoredExamples.
	snaps, err := ab.Snapshot(held, train.SnapshotOptions{Off: [][][]bool{off}, Attention: ScoredExamples})
	if err != nil {
		return nil, nil, err
	}
	atts := make([]*analysis.Attention, len(snaps))
	for s, sn := range snaps {
		atts[s] = sn.Attention
	}
	c := e.Models[0].Shape
	reports := make([]*Report, len(held))
	scores := make([][]analysis.HeadScore, len(held))
	for s := range reports {
		reports[s] = &Report{Ablated: analysis.HeadNames(off), Ablation: o.Ablation, Accuracy: snaps[s].Accuracy, Loss: snaps[s].Loss}
		scores[s] = analysis.ScoreAll(atts[s])
	}
	ablated, err := ab.eachHead(held, analysis.NewMask(c.Layers, c.Heads, off))
	if err != nil {
		return nil, nil, err
	}
	for l := 0; l < c.Layers; l++ {
		for h := 0; h < c.Heads; h++ {
			for s, r := range reports {
				for _, hs := range scores[s] {
					if hs.Layer == l && hs.Head == h {
						r.Heads = append(r.Heads, Head{HeadScore: hs, AblatedAccuracy: ablated[l*c.Heads+h][s].Accuracy})
					}
				}
			}
		}
	}
	if err := byKindAll(ab, held, reports, off, rel); err != nil {
		return nil, nil, err
	}
	for _, m := range o.Methods {
		if err := ablatedBy(e, held, reports, off, m, o.Ablation); err != nil {
			return nil, nil, err
		}
	}
	if o.Circuit {
		if err := circuitAll(e, reports); err != nil {
			return nil, nil, err
		}
	}
	return reports, atts, nil
}

// ablatedBy fills every head's AblatedBy[m]: held-out accuracy with it
// switched off alone (on top of off) by method m; under the report's
// own method that is its AblatedAccuracy.
func ablatedBy(e *train.Evaluator, held []*tasks.Batch, reports []*Report, off [][]bool, m, own Ablation) error {
	set := func(k int, acc func(s int) float64) {
		for s, r := range reports {
			if r.Heads[k].AblatedBy == nil {
				r.Heads[k].AblatedBy = map[Ablation]float64{}
			}
			r.Heads[k].AblatedBy[m] = acc(s)
		}
	}
	if m == own {
		for k := range reports[0].Heads {
			set(k, func(s int) float64 { return reports[s].Heads[k].AblatedAccuracy })
		}
		return nil
	}
	ab, err := NewAblator(e, held, m)
	if err != nil {
		return err
	}
	c := e.Models[0].Shape
	ablated, err := ab.eachHead(held, analysis.NewMask(c.Layers, c.Heads, off))
	if err != nil {
		return err
	}
	for k, h := range reports[0].Heads {
		set(k, func(s int) float64 { return ablated[h.Layer*c.Heads+h.Head][s].Accuracy })
	}
	return nil
}
