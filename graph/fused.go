package graph

import (
	G "gorgonia.org/gorgonia"

	"headlab/kernels"
)

// Column sums computed in another op's pass. A linear layer's bias
// gradient is the column sums of dy, which its weight gradient x^T dy
// reads too; a LayerNorm's bias gradient is the column sums of the dy
// its gain gradient (a column dot product) reads. Where the device has
// the fused kernel (kernels.WeightGrader, kernels.ColDotSummer) the
// executor runs each such pair as one call at the first op's place, and
// the column sum's own step goes: dy is read once, one dispatch fewer.
// The fused kernels give the two kernels' bits.

// sumsIn says which fused kernel an op can run with a column sum of its
// input: none, kernels.WeightGrader (the op's second input), or
// kernels.ColDotSummer (its first).
type sumsIn int

const (
	noSums sumsIn = iota
	weightGrad
	colDotSum
)

// summed is the input whose column sums an op can take along, and
// whether the device has the kernel for it.
func (o *op) summed(d kernels.Device, in G.Nodes) (*G.Node, bool) {
	switch o.fuse.sumsIn {
	case weightGrad:
		_, ok := d.(kernels.WeightGrader)
		return in[1], ok
	case colDotSum:
		_, ok := d.(kernels.ColDotSummer)
		return in[0], ok
	}
	return nil, false
}

// runSums runs the op with the column sums of its summed input into sum.
func (o *op) runSums(c *call, sum kernels.Tensor) error {
	f := o.fuse
	if f.sumsIn == weightGrad {
		return c.d.(kernels.WeightGrader).WeightGrad(c.S, f.m, f.n, f.k, c.in[0], c.in[1], c.out, sum)
	}
	b := c.in[1]
	if o.auxOf != nil { // the gain gradient reads its forward's normalised rows
		b = c.aux[0]
	}
	return c.d.(kernels.ColDotSummer).ColDotSum(c.S, f.k, f.n, c.in[0], b, c.out, sum)
}

// sumPairs finds, in order, each column sum whose input an earlier op of
// order reads and can sum in its own pass on d, where the sum's output is
// not planned (a bound gradient, or kept): it maps the column sum to that
// op, which runs the pair.
func sumPairs(g *G.ExprGraph, order G.Nodes, opOf map[*G.Node]*op, d kernels.Device, keep map[*G.Node]bool, bound map[*G.Node]kernels.Tensor) map[*G.Node]*G.Node {
	by := map[*G.Node]*G.Node{} // a summable input -> the first op that can sum it
	taken := map[*G.Node]bool{}
	pairs := map[*G.Node]*G.Node{}
	for _, n := range order {
		o, ok := opOf[n]
		if !ok {
			continue
		}
		in := children(g, n)
		if x, ok := o.summed(d, in); ok {
			if _, seen := by[x]; !seen {
				by[x] = n
			}
			continue
		}
		if !o.fuse.colSum {
			continue
		}
		_, isBound := bound[n]
		if p, ok := by[in[0]]; ok && !taken[p] && (isBound || keep[n]) {
			pairs[n] = p
			taken[p] = true
		}
	}
	return pairs
}
