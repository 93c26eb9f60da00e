package inspect

import (
	"headlab/analysis"
	"headlab/tasks"
	"headlab/train"
)

// ByKind is held-out accuracy on each kind of example, intact and with the
// head that follows a relation best switched off.
type ByKind struct {
	// Relation is the relation; Head the head with the highest argmax
	// fraction on it (the first on a tie); Syntax that head's relation
	// name, "" when it beats no baseline by the margin.
	Relation string         `json:"relation"`
	Head     string         `json:"head"`
	Syntax   string         `json:"syntax,omitempty"`
	Kinds    []KindAccuracy `json:"kinds"`
}

// KindAccuracy is accuracy on the held-out examples of one kind.
type KindAccuracy struct {
	Kind     string  `json:"kind"`
	Examples int     `json:"examples"`
	Accuracy float64 `json:"accuracy"`
	// HeadOff is the accuracy with ByKind.Head switched off as well.
	HeadOff float64 `json:"head_off_accuracy"`
}

// byKindAll fills every report's ByKind when the task has kinds and
// relations: each kind is the held-out set with the other kinds' answers
// masked, so that every model's batch keeps its size.
func byKindAll(ab *Ablator, held []*tasks.Batch, reports []*Report, off [][]bool, rel int) error {
	e := ab.e
	task := e.Models[0].Task
	kt, ok := task.(tasks.KindTask)
	rels := tasks.Relations(task)
	if !ok || rel < 0 || rel >= len(rels) {
		return nil
	}
	c := e.Models[0].Shape
	headOff := make([][][]bool, len(reports))
	for s, r := range reports {
		best := -1
		for k, h := range r.Heads {
			if best < 0 || h.Relations[rel].Argmax > r.Heads[best].Relations[rel].Argmax {
				best = k
			}
		}
		h := r.Heads[best]
		headOff[s] = analysis.NewMask(c.Layers, c.Heads, off).With(h.Layer, h.Head)
		r.ByKind = &ByKind{Relation: rels[rel], Head: h.Name, Syntax: analysis.SyntaxName(h.Relations[rel : rel+1])}
	}
	kinds := make([][]*tasks.Batch, len(held))
	for s, b := range held {
		kinds[s] = KindBatches(kt, b)
	}
	for k, kind := range kt.Kinds() {
		masked := make([]*tasks.Batch, len(held))
		counts := make([]int, len(held))
		for s, b := range held {
			masked[s] = kinds[s][k]
			for n := 0; n < b.N; n++ {
				if kt.Kind(b.Tokens[n*b.T:(n+1)*b.T]) == k {
					counts[s]++
				}
			}
		}
		intact, err := ab.Snapshot(masked, train.SnapshotOptions{Off: [][][]bool{off}})
		if err != nil {
			return err
		}
		without, err := ab.Snapshot(masked, train.SnapshotOptions{Off: headOff})
		if err != nil {
			return err
		}
		for s, r := range reports {
			r.ByKind.Kinds = append(r.ByKind.Kinds, KindAccuracy{Kind: kind, Examples: counts[s], Accuracy: intact[s].Accuracy, HeadOff: without[s].Accuracy})
		}
	}
	return nil
}

// KindBatches is b once per kind of kt, with the answers of the other
// kinds' examples masked: every copy keeps b's size (so that a group's
// models can be evaluated together), and its accuracy is that kind's.
func KindBatches(kt tasks.KindTask, b *tasks.Batch) []*tasks.Batch {
	out := make([]*tasks.Batch, len(kt.Kinds()))
	for k := range out {
		out[k] = &tasks.Batch{N: b.N, T: b.T, Tokens: b.Tokens, Targets: append([]int(nil), b.Targets...)}
	}
	for n := 0; n < b.N; n++ {
		kind := kt.Kind(b.Tokens[n*b.T : (n+1)*b.T])
		for k, m := range out {
			if k != kind {
				for i := n * b.T; i < (n+1)*b.T; i++ {
					m.Targets[i] = tasks.NoTarget
				}
			}
		}
	}
	return out
}
