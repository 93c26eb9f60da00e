package inspect

import (
	"headlab/tasks"
	"headlab/train"
)

// Dumped is what headlab dump writes: the first n held-out examples of
// ev's model m, run with the heads in off switched off by method (mean
// and resample take their replacements from those n examples), and their
// snapshot, with every example's attention and the logits.
func Dumped(ev *train.Evaluator, m *train.Model, n int, method Ablation, off [][]bool) (*tasks.Batch, *train.Snapshot, error) {
	b := train.HeldOut(m)
	b.N, b.Tokens, b.Targets = n, b.Tokens[:n*b.T], b.Targets[:n*b.T]
	ab, err := NewAblator(ev, []*tasks.Batch{b}, method)
	if err != nil {
		return nil, nil, err
	}
	sn, err := ab.Snapshot([]*tasks.Batch{b}, train.SnapshotOptions{Off: [][][]bool{off}, Attention: b.N, Logits: true})
	if err != nil {
		return nil, nil, err
	}
	return b, &sn[0], nil
}
