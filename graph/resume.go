package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"headlab/kernels"
)

// A resumable Net evaluates like Build's and keeps every block's
// incoming residual stream after a run; a tail of it reruns the model
// from one block on, reading that block's input from the resumable Net's
// last run. Switching off a head of block l changes nothing before block
// l, so a tail from l gives the bits of the whole model's pass with that
// head off (the same kernels on the same rows) for the blocks from l on
// alone: per-head ablations pay for the blocks they change.

// resumable is a resumable Net's kept inputs (from 0) or a tail's first
// block and its input.
type resumable struct {
	from int
	// kept[l] is block l's incoming residual, [rows][DModel] per model,
	// for l >= 1 (a resumable Net's); in is a tail's, kept[from] of the
	// resumable Net it continues.
	kept []kernels.Tensor
	in   kernels.Tensor
}

// BuildResumable compiles Build(p, batch, false)'s evaluating Net that
// also keeps every block's incoming residual stream after each Run, for
// its Tails.
func BuildResumable(p *Block, batch int) (*Net, error) {
	return compileNet(p, batch, evalNet, nil, &resumable{kept: make([]kernels.Tensor, p.Config.Layers)})
}

// Tail compiles blocks from ... Layers-1 of n's models (n a Net of
// BuildResumable, from in 1..Layers-1): it reads block from's incoming
// residual from n's last Run and computes from there what n computes
// (loss, logits, attention of its blocks, correct answers), its heads
// gated by its own SetAblation (blocks before from are not its to
// switch off). Its SetInputs stages the targets it scores; its results
// hold until n runs again.
func (n *Net) Tail(from int) (*Net, error) {
	if n.resume == nil || n.resume.from != 0 {
		return nil, fmt.Errorf("graph: a tail of a Net that is not resumable")
	}
	if from < 1 || from >= n.Config.Layers {
		return nil, fmt.Errorf("graph: a tail from block %d of %d", from, n.Config.Layers)
	}
	return compileNet(n.block, n.Batch, evalNet, nil, &resumable{from: from, in: n.resume.kept[from]})
}

// resumeInput is a tail's incoming residual and its first block; nil and
// 0 in other Nets, whose forward starts at the embeddings.
func (b *builder) resumeInput() (*G.Node, int) {
	r := b.n.resume
	if r == nil || r.from == 0 {
		return nil, 0
	}
	return b.input(fmt.Sprintf("blocks.%d.resid_pre", r.from), r.in, b.rows, b.n.Config.DModel), r.from
}

// keepInput keeps block l's incoming residual x in a resumable Net.
func (b *builder) keepInput(l int, x *G.Node) {
	if r := b.n.resume; r != nil && r.from == 0 && l > 0 {
		r.kept[l] = b.bind(x, b.rows*b.n.Config.DModel)
	}
}
