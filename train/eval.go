package train

import (
	"fmt"

	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
)

// Evaluator runs a model forward on held-out examples, evalChunk sequences
// at a time, optionally with heads switched off.
type Evaluator struct {
	m   *Model
	net *graph.Net
}

// NewEvaluator compiles the forward graph of m.
func NewEvaluator(m *Model, be kernels.Backend) (*Evaluator, error) {
	net, err := graph.Build(m.Shape, m.Weights, be, evalChunk, false)
	if err != nil {
		return nil, err
	}
	return &Evaluator{m: m, net: net}, nil
}

// Close releases the graph.
func (e *Evaluator) Close() error { return e.net.Close() }

// Forward runs b through the model chunk by chunk and calls visit after
// each chunk with the chunk's first example index, while the chunk's values
// (logits, attention) are readable from net. A last partial chunk is padded
// with repeats of its final example, which visit must ignore (n says how
// many examples of the chunk are real).
func (e *Evaluator) Forward(b *tasks.Batch, off [][]bool, visit func(net *graph.Net, first, n int) error) error {
	if b.T != e.m.Shape.SeqLen {
		return fmt.Errorf("evaluate: sequences of length %d, model takes %d", b.T, e.m.Shape.SeqLen)
	}
	e.net.SetAblation(off)
	defer e.net.SetAblation(nil)
	T := b.T
	tok := make([]int, evalChunk*T)
	tgt := make([]int, evalChunk*T)
	for first := 0; first < b.N; first += evalChunk {
		n := min(evalChunk, b.N-first)
		copy(tok, b.Tokens[first*T:(first+n)*T])
		copy(tgt, b.Targets[first*T:(first+n)*T])
		for i := n; i < evalChunk; i++ {
			copy(tok[i*T:(i+1)*T], b.Tokens[(first+n-1)*T:(first+n)*T])
			for j := range T {
				tgt[i*T+j] = tasks.NoTarget
			}
		}
		if err := e.net.SetInputs(tok, tgt); err != nil {
			return err
		}
		if err := e.net.Run(); err != nil {
			return err
		}
		if err := visit(e.net, first, n); err != nil {
			return err
		}
	}
	return nil
}

// Accuracy returns the fraction of answer positions where the argmax of
// the logits is the target, and the mean cross-entropy over them.
func (e *Evaluator) Accuracy(b *tasks.Batch, off [][]bool) (acc, loss float64, err error) {
	V, T := e.m.Shape.Vocab, b.T
	right, total := 0, 0
	err = e.Forward(b, off, func(net *graph.Net, first, n int) error {
		r, t := CountCorrect(net.Logits()[:n*T*V], b.Targets[first*T:(first+n)*T], V)
		right, total = right+r, total+t
		// The graph's loss is the mean over this chunk's t answers.
		loss += float64(net.Loss()) * float64(t)
		return nil
	})
	if err != nil || total == 0 {
		return 0, 0, err
	}
	return float64(right) / float64(total), loss / float64(total), nil
}

// CountCorrect counts the answer positions (targets >= 0) and those where
// the argmax of the row of logits (V per position) is the target; ties go
// to the smaller token id.
func CountCorrect(logits []float32, targets []int, V int) (right, total int) {
	for r, want := range targets {
		if want < 0 {
			continue
		}
		row := logits[r*V : (r+1)*V]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if best == want {
			right++
		}
		total++
	}
	return right, total
}
