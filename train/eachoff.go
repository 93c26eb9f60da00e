package train

import (
	"fmt"

	"headlab/graph"
	"headlab/tasks"
)

// EachOff is the Snapshot of bs (a batch per model) with the heads of
// each mask of offs switched off in every model, accuracy and loss
// alone: out[i] has the bits of Snapshot(bs, {Off: {offs[i]}}). For a
// lone model (an Evaluator of one), a mask whose first head off is in
// block l > 0 reruns blocks l on only, from block l's input in a pass
// with every head on (graph.Net.Tail): the blocks before are those of
// that pass, which costs a pass: it is taken when the blocks the masks
// skip add up to more than one pass (not for the default model's four
// heads in two blocks). Evaluators of several models run each mask's
// Snapshot, in the memory their group was sized for.
func (e *Evaluator) EachOff(bs []*tasks.Batch, offs [][][]bool) ([][]Snapshot, error) {
	c := e.block.Config
	// Each mask's first block with a head off: 0 runs the whole model,
	// Layers none (the pass with every head on).
	from := make([]int, len(offs))
	skipped := 0
	for i, off := range offs {
		from[i] = firstOff(off, c.Layers)
		skipped += from[i]
	}
	if len(e.Models) != 1 || len(bs) != 1 || skipped <= c.Layers {
		return e.eachSnapshot(bs, offs)
	}
	b := bs[0]
	if b.T != c.SeqLen {
		return nil, fmt.Errorf("evaluate: a batch of length %d, the model takes %d", b.T, c.SeqLen)
	}
	if err := e.resumableNets(); err != nil {
		return nil, err
	}
	tl := offTally{right: make([]float64, len(offs)), loss: make([]float64, len(offs))}
	total := 0
	for first := 0; first < b.N; first += EvalChunk {
		n := min(EvalChunk, b.N-first)
		tl.answers = (&tasks.Batch{N: n, T: b.T, Targets: b.Targets[first*b.T : (first+n)*b.T]}).Answers()
		total += tl.answers
		if err := e.eachOffChunk(bs, offs, from, first, n, &tl); err != nil {
			return nil, err
		}
	}
	out := make([][]Snapshot, len(offs))
	for i := range out {
		out[i] = make([]Snapshot, 1)
		if total > 0 {
			out[i][0].Accuracy, out[i][0].Loss = tl.right[i]/float64(total), tl.loss[i]/float64(total)
		}
	}
	return out, nil
}

// eachSnapshot is EachOff without tails: a Snapshot per mask.
func (e *Evaluator) eachSnapshot(bs []*tasks.Batch, offs [][][]bool) ([][]Snapshot, error) {
	out := make([][]Snapshot, len(offs))
	for i, off := range offs {
		s, err := e.Snapshot(bs, SnapshotOptions{Off: [][][]bool{off}})
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// offTally sums each mask's right answers and loss over the chunks;
// answers is the current chunk's count of answers.
type offTally struct {
	right, loss []float64
	answers     int
}

// score adds mask i's result, the one net has just computed.
func (tl *offTally) score(net *graph.Net, i int) error {
	hits, err := net.Correct() // valid until the next read
	if err != nil {
		return err
	}
	tl.right[i] += float64(hits[0])
	ls, err := net.Losses()
	if err != nil {
		return err
	}
	// The graph's loss is the mean over this chunk's answers.
	tl.loss[i] += float64(ls[0]) * float64(tl.answers)
	return nil
}

// eachOffChunk scores every mask on examples first to first+n: mask i
// runs from block from[i] on.
func (e *Evaluator) eachOffChunk(bs []*tasks.Batch, offs [][][]bool, from []int, first, n int, tl *offTally) error {
	// Every head on first: the tails read its blocks' inputs; the
	// masks from block 0 run last, as they overwrite them.
	e.resumable.SetAblation(-1, nil)
	if err := e.run(e.resumable, bs, first, n); err != nil {
		return err
	}
	if err := e.runTails(bs, offs, from, first, n, tl); err != nil {
		return err
	}
	for i := range offs {
		if from[i] == e.block.Config.Layers {
			if err := tl.score(e.resumable, i); err != nil {
				return err
			}
		}
	}
	for i, off := range offs {
		if from[i] != 0 {
			continue
		}
		e.resumable.SetAblation(-1, off)
		if err := e.resumable.Run(); err != nil {
			return err
		}
		if err := tl.score(e.resumable, i); err != nil {
			return err
		}
	}
	return nil
}

// runTails runs, for each block l > 0, the tail from l once for every
// mask whose first head off is in block l.
func (e *Evaluator) runTails(bs []*tasks.Batch, offs [][][]bool, from []int, first, n int, tl *offTally) error {
	for l, tail := range e.tails {
		if tail != nil {
			if err := e.stage(tail, bs, first, n); err != nil {
				return err
			}
		}
		for i, off := range offs {
			if from[i] != l || l == 0 {
				continue
			}
			tail.SetAblation(-1, off)
			if err := tail.Run(); err != nil {
				return err
			}
			if err := tl.score(tail, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// resumableNets builds EachOff's Nets on first use: the resumable Net and
// a tail from every block but the first.
func (e *Evaluator) resumableNets() error {
	if e.resumable != nil {
		return nil
	}
	r, err := graph.BuildResumable(e.block, EvalChunk)
	if err != nil {
		return err
	}
	tails := make([]*graph.Net, e.block.Config.Layers)
	for l := 1; l < len(tails); l++ {
		if tails[l], err = r.Tail(l); err != nil {
			for _, t := range tails[1:l] {
				t.Close()
			}
			r.Close()
			return err
		}
	}
	e.resumable, e.tails = r, tails
	return nil
}

// firstOff is the first block of L with a head off in off; L when none.
func firstOff(off [][]bool, L int) int {
	for l := range min(len(off), L) {
		for _, isOff := range off[l] {
			if isOff {
				return l
			}
		}
	}
	return L
}
