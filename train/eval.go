package train

import (
	"fmt"

	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
)

// Evaluator runs S models of one shape forward on held-out examples, on
// their device, evalChunk sequences per model at a time, optionally with
// heads switched off. Each model has its own examples (a model's held-out
// set follows its seed). Hits and losses are counted on the device; only
// they, and attention when asked for, are read back.
type Evaluator struct {
	Models []*Model

	block *graph.Block
	own   bool // the block is the Evaluator's, not a trainer's
	net   *graph.Net
	tok   []int // scratch for one chunk of one model
	tgt   []int
}

// NewEvaluator uploads m's weights to dev and compiles its forward graph.
func NewEvaluator(m *Model, dev kernels.Device) (*Evaluator, error) {
	b, err := graph.BlockOf(dev, m.Shape, []*graph.Weights{m.Weights})
	if err != nil {
		return nil, err
	}
	e, err := newEvaluator([]*Model{m}, b)
	if err != nil {
		b.Free()
		return nil, err
	}
	e.own = true
	return e, nil
}

// Evaluator evaluates the group's models as they are being trained: it
// reads the parameters on the device, so it sees every step at once.
func (g *Group) Evaluator() (*Evaluator, error) { return newEvaluator(g.Models, g.block) }

// Evaluator is the trainer's model's Evaluator (Group.Evaluator).
func (tr *Trainer) Evaluator() (*Evaluator, error) { return tr.g.Evaluator() }

func newEvaluator(ms []*Model, b *graph.Block) (*Evaluator, error) {
	net, err := graph.Build(b, evalChunk, false)
	if err != nil {
		return nil, err
	}
	T := b.Config.SeqLen
	return &Evaluator{Models: ms, block: b, net: net, tok: make([]int, evalChunk*T), tgt: make([]int, evalChunk*T)}, nil
}

// Reload uploads the models' weights again, for an Evaluator made by
// NewEvaluator whose model has been changed since.
func (e *Evaluator) Reload() error {
	if !e.own {
		return fmt.Errorf("evaluate: the weights are a trainer's, already current")
	}
	ws := make([]*graph.Weights, len(e.Models))
	for s, m := range e.Models {
		ws[s] = m.Weights
	}
	return e.block.Upload(ws)
}

// Close releases the graph (and the weights, when the Evaluator uploaded
// them).
func (e *Evaluator) Close() error {
	e.net.Close()
	if e.own {
		e.block.Free()
	}
	return nil
}

// Forward runs bs[s] through model s, for every model, chunk by chunk, and
// calls visit after each chunk with the chunk's first example index,
// while the chunk's results can be read from net (hits, losses, logits,
// attention). off[s] switches heads of model s off; off may be nil, or
// hold one entry that applies to every model. The batches must be the
// same size; a last partial chunk is padded with repeats of its final
// example, which visit must ignore (n says how many are real).
func (e *Evaluator) Forward(bs []*tasks.Batch, off [][][]bool, visit func(net *graph.Net, first, n int) error) error {
	S, T := len(e.Models), e.block.Config.SeqLen
	if len(bs) != S {
		return fmt.Errorf("evaluate: %d batches for %d models", len(bs), S)
	}
	for _, b := range bs {
		if b.T != T || b.N != bs[0].N {
			return fmt.Errorf("evaluate: batches of %dx%d, the models take %d x length %d", b.N, b.T, bs[0].N, T)
		}
	}
	switch len(off) {
	case 0:
		e.net.SetAblation(-1, nil)
	case 1:
		e.net.SetAblation(-1, off[0])
	case S:
		for s, o := range off {
			e.net.SetAblation(s, o)
		}
	default:
		return fmt.Errorf("evaluate: ablations for %d models of %d", len(off), S)
	}
	defer e.net.SetAblation(-1, nil)
	N := bs[0].N
	for first := 0; first < N; first += evalChunk {
		n := min(evalChunk, N-first)
		for s, b := range bs {
			copy(e.tok, b.Tokens[first*T:(first+n)*T])
			copy(e.tgt, b.Targets[first*T:(first+n)*T])
			for i := n; i < evalChunk; i++ {
				copy(e.tok[i*T:(i+1)*T], b.Tokens[(first+n-1)*T:(first+n)*T])
				for j := range T {
					e.tgt[i*T+j] = tasks.NoTarget
				}
			}
			if err := e.net.SetInputs(s, e.tok, e.tgt); err != nil {
				return err
			}
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

// AccuracyAll returns, for every model, the fraction of answer positions
// of bs[s] where the argmax of the logits is the target, and the mean
// cross-entropy over them; off as in Forward.
func (e *Evaluator) AccuracyAll(bs []*tasks.Batch, off [][][]bool) (acc, loss []float64, err error) {
	S, T := len(e.Models), e.block.Config.SeqLen
	right, total := make([]float64, S), make([]int, S)
	loss = make([]float64, S)
	err = e.Forward(bs, off, func(net *graph.Net, first, n int) error {
		hits, err := net.Correct()
		if err != nil {
			return err
		}
		for s := range right {
			right[s] += float64(hits[s])
		}
		ls, err := net.Losses()
		if err != nil {
			return err
		}
		for s, b := range bs {
			t := (&tasks.Batch{N: n, T: T, Targets: b.Targets[first*T : (first+n)*T]}).Answers()
			total[s] += t
			// The graph's loss is the mean over this chunk's t answers.
			loss[s] += float64(ls[s]) * float64(t)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	acc = make([]float64, S)
	for s := range acc {
		if total[s] > 0 {
			acc[s], loss[s] = right[s]/float64(total[s]), loss[s]/float64(total[s])
		} else {
			loss[s] = 0
		}
	}
	return acc, loss, nil
}

// Accuracy is AccuracyAll for an Evaluator of one model.
func (e *Evaluator) Accuracy(b *tasks.Batch, off [][]bool) (acc, loss float64, err error) {
	a, l, err := e.AccuracyAll([]*tasks.Batch{b}, [][][]bool{off})
	if err != nil {
		return 0, 0, err
	}
	return a[0], l[0], nil
}

// HeldOutAll is every model's held-out set.
func (e *Evaluator) HeldOutAll() []*tasks.Batch {
	bs := make([]*tasks.Batch, len(e.Models))
	for s, m := range e.Models {
		bs[s] = HeldOut(m)
	}
	return bs
}
