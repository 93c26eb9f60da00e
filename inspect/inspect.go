// Package inspect reads the heads of a trained model: it captures the
// attention patterns on held-out examples, scores and labels every head
// (analysis, after docs/head-patterns.md) and measures what switching heads
// off does to held-out accuracy.
package inspect

import (
	"headlab/analysis"
	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// ScoredExamples is the size of the held-out batch heads are scored on: the
// first ScoredExamples of the held-out set.
const ScoredExamples = 256

// Capture runs b through the model and returns every head's attention on
// every example, with the heads in off switched off.
func Capture(e *train.Evaluator, m *train.Model, b *tasks.Batch, off [][]bool) (*analysis.Attention, error) {
	a, err := CaptureAll(e, []*tasks.Batch{b}, [][][]bool{off})
	if err != nil {
		return nil, err
	}
	return a[0], nil
}

// CaptureAll runs bs[s] through model s of e, for every model, and returns
// every head's attention on every example (off as in train's Forward).
// Only the attention of the examples asked for is read back.
func CaptureAll(e *train.Evaluator, bs []*tasks.Batch, off [][][]bool) ([]*analysis.Attention, error) {
	return capture(e, bs, off, nil)
}

// CaptureLogits is Capture that also returns the logits of every
// position, [N*T][Vocab], read in the same pass.
func CaptureLogits(e *train.Evaluator, b *tasks.Batch, off [][]bool) (*analysis.Attention, []float32, error) {
	logits := [][]float32{make([]float32, b.N*b.T*e.Models[0].Shape.Vocab)}
	a, err := capture(e, []*tasks.Batch{b}, [][][]bool{off}, logits)
	if err != nil {
		return nil, nil, err
	}
	return a[0], logits[0], nil
}

// capture is CaptureAll that also fills logits[s] with model s's logits
// when logits is not nil.
func capture(e *train.Evaluator, bs []*tasks.Batch, off [][][]bool, logits [][]float32) ([]*analysis.Attention, error) {
	c := e.Models[0].Shape
	out := make([]*analysis.Attention, len(bs))
	for s, b := range bs {
		out[s] = &analysis.Attention{Causal: c.Causal, N: b.N, L: c.Layers, H: c.Heads, T: c.SeqLen,
			Tokens:    append([]int(nil), b.Tokens...),
			Probs:     make([]float32, b.N*c.Layers*c.Heads*c.SeqLen*c.SeqLen),
			Relations: Relations(e.Models[s].Task, b)}
	}
	head := c.SeqLen * c.SeqLen // one head's matrix
	err := e.Forward(bs, off, func(net *graph.Net, first, n int) error {
		if logits != nil {
			lg, err := net.Logits() // [S][Batch*T][V]
			if err != nil {
				return err
			}
			row := c.SeqLen * c.Vocab // one sequence's logits
			for s, dst := range logits {
				copy(dst[first*row:(first+n)*row], lg[s*net.Batch*row:])
			}
		}
		for l := 0; l < c.Layers; l++ {
			p, err := net.Probs(l, n) // [S][n][H][T][T]
			if err != nil {
				return err
			}
			for s, a := range out {
				ps := p[s*n*c.Heads*head:]
				for i := 0; i < n; i++ {
					for h := 0; h < c.Heads; h++ {
						src := ps[(i*c.Heads+h)*head : (i*c.Heads+h+1)*head]
						dst := (((first+i)*c.Layers+l)*c.Heads + h) * head
						copy(a.Probs[dst:dst+head], src)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Head is one head's verdict and the held-out accuracy with it switched
// off (on top of any heads the report was asked to switch off).
type Head struct {
	analysis.HeadScore
	AblatedAccuracy float64 `json:"ablated_accuracy"`
}

// Report is what headlab prints about a model's heads.
type Report struct {
	// Accuracy is the held-out accuracy with the heads in Ablated off (all
	// on when Ablated is empty).
	Accuracy float64 `json:"accuracy"`
	// Loss is the held-out mean cross-entropy, as evaluated.
	Loss    float64  `json:"loss"`
	Ablated []string `json:"ablated"`
	Heads   []Head   `json:"heads"`
	// ByKind is accuracy per kind of example, for tasks that have kinds
	// (agreement: with and without an attractor).
	ByKind *ByKind `json:"by_kind,omitempty"`
}

// Scores lists every head's verdict without the ablation figures.
func (r *Report) Scores() []analysis.HeadScore {
	s := make([]analysis.HeadScore, len(r.Heads))
	for i, h := range r.Heads {
		s[i] = h.HeadScore
	}
	return s
}

// Analyze scores every head of m on the first ScoredExamples held-out
// examples and measures, for every head, held-out accuracy with that head
// switched off, all with the heads in off switched off as well. It returns
// the attention it scored too.
func Analyze(m *train.Model, dev kernels.Device, off [][]bool) (*Report, *analysis.Attention, error) {
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, nil, err
	}
	defer e.Close()
	return AnalyzeWith(e, m, off)
}

// AnalyzeWith is Analyze on an evaluator of m the caller already has and
// may go on using (a sweep measures joint ablations with it).
func AnalyzeWith(e *train.Evaluator, m *train.Model, off [][]bool) (*Report, *analysis.Attention, error) {
	rs, as, err := AnalyzeAll(e, off)
	if err != nil {
		return nil, nil, err
	}
	return rs[0], as[0], nil
}

// AnalyzeAll is Analyze for every model of e at once: each model's heads
// are scored on its own held-out examples, and each head is switched off
// in every model in one pass.
func AnalyzeAll(e *train.Evaluator, off [][]bool) ([]*Report, []*analysis.Attention, error) {
	return analyzeAll(e, off, 0)
}

// AnalyzeRelation is Analyze whose accuracy by kind switches off the head
// that follows relation rel (an index into the task's relations) best.
func AnalyzeRelation(m *train.Model, dev kernels.Device, off [][]bool, rel int) (*Report, *analysis.Attention, error) {
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, nil, err
	}
	defer e.Close()
	rs, as, err := analyzeAll(e, off, rel)
	if err != nil {
		return nil, nil, err
	}
	return rs[0], as[0], nil
}

func analyzeAll(e *train.Evaluator, off [][]bool, rel int) ([]*Report, []*analysis.Attention, error) {
	held := e.HeldOutAll()
	first := make([]*tasks.Batch, len(held))
	for s, b := range held {
		first[s] = firstExamples(b, ScoredExamples)
	}
	atts, err := CaptureAll(e, first, [][][]bool{off})
	if err != nil {
		return nil, nil, err
	}
	acc, loss, err := e.AccuracyAll(held, [][][]bool{off})
	if err != nil {
		return nil, nil, err
	}
	c := e.Models[0].Shape
	reports := make([]*Report, len(held))
	scores := make([][]analysis.HeadScore, len(held))
	for s := range reports {
		reports[s] = &Report{Ablated: analysis.HeadNames(off), Accuracy: acc[s], Loss: loss[s]}
		scores[s] = analysis.ScoreAll(atts[s])
	}
	for l := 0; l < c.Layers; l++ {
		for h := 0; h < c.Heads; h++ {
			one, _, err := e.AccuracyAll(held, [][][]bool{withHead(off, c, l, h)})
			if err != nil {
				return nil, nil, err
			}
			for s, r := range reports {
				for _, hs := range scores[s] {
					if hs.Layer == l && hs.Head == h {
						r.Heads = append(r.Heads, Head{HeadScore: hs, AblatedAccuracy: one[s]})
					}
				}
			}
		}
	}
	if err := byKindAll(e, held, reports, off, rel); err != nil {
		return nil, nil, err
	}
	return reports, atts, nil
}

// withHead returns a copy of off with head (l, h) switched off too.
func withHead(off [][]bool, c graph.Config, l, h int) [][]bool {
	out := make([][]bool, c.Layers)
	for i := range out {
		out[i] = make([]bool, c.Heads)
		if i < len(off) {
			copy(out[i], off[i])
		}
	}
	out[l][h] = true
	return out
}
