package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"headlab/kernels"
)

// The fused ops of the model. Each forward sits beside its gradient ops;
// each gradient op is itself an op (not differentiated again). Every op
// is one kernel of kernels.Device, whose CPU implementation (backend/cpu)
// gives the arithmetic (docs/model.md). None of Gorgonia's own ops is
// used: the executor (exec.go) runs only these, and the sums Gorgonia's
// differentiation writes, as add.

var noBias kernels.Tensor

func shapeOf(n *G.Node) (rows, cols int) {
	s := n.Shape()
	if len(s) == 1 {
		return 1, s[0]
	}
	return s[0], s[1]
}

// matmulOp is c = op(a) op(b); only ever used inside gradients.
func matmulOp(a, b *G.Node, tA, tB bool) *G.Node {
	ar, ac := shapeOf(a)
	br, bc := shapeOf(b)
	m, k := ar, ac
	if tA {
		m, k = ac, ar
	}
	n := bc
	if tB {
		n = br
	}
	o := &op{
		name:   fmt.Sprintf("matmul(%v,%v)", tA, tB),
		inDims: []int{2, 2},
		out:    tensor.Shape{m, n},
		run: func(c *call) error {
			return c.d.MatMul(c.S, tA, tB, m, n, k, c.in[0], c.in[1], c.out, noBias)
		},
	}
	o.fuse = fusible{kind: kindMatMul, m: m, n: n, k: k, tA: tA, tB: tB}
	return apply(o, a, b)
}

// colSum sums the rows of y [N, D] into [D], in row order.
func colSum(y *G.Node) *G.Node {
	rows, d := shapeOf(y)
	return apply(&op{
		name:   "colsum",
		inDims: []int{2},
		out:    tensor.Shape{d},
		fuse:   fusible{kind: kindColSum, k: rows, n: d},
		run:    func(c *call) error { return c.d.ColSum(c.S, rows, d, c.in[0], c.out) },
	}, y)
}

// colDot is sum over rows of a*b elementwise, [N, D] into [D], in row
// order; a and b are the op's inputs, or b is aux tensor 0 of from.
func colDot(name string, a, b *G.Node, from *op, rows, d int) *G.Node {
	o := &op{name: name, inDims: []int{2, 2}, out: tensor.Shape{d}, auxOf: from,
		fuse: fusible{kind: kindColDot, k: rows, n: d}}
	o.run = func(c *call) error {
		x := c.in[1]
		if from != nil {
			x = c.aux[0]
		}
		return c.d.ColDot(c.S, rows, d, c.in[0], x, c.out)
	}
	return apply(o, a, b)
}

// add is a + b elementwise, for a and b of one shape: the residual
// connections. Its gradient passes dy to both inputs. The executor runs
// the sums that Gorgonia's differentiation writes (gradient terms of a
// node read several times) with this op too (exec.go, gradSum).
func add(a, b *G.Node) *G.Node {
	if !a.Shape().Eq(b.Shape()) {
		panic(fmt.Sprintf("graph: add of shapes %v and %v", a.Shape(), b.Shape()))
	}
	o := addOp(a.Shape())
	o.diff = []bool{true, true}
	o.grad = func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) { return G.Nodes{dy, dy}, nil }
	return apply(o, a, b)
}

// addOp is the op of a + b for two operands of shape s; not differentiable
// by itself (add makes it so).
func addOp(s tensor.Shape) *op {
	size := s.TotalSize()
	return &op{
		name:   "add",
		inDims: []int{s.Dims(), s.Dims()},
		out:    s.Clone(),
		fuse:   fusible{kind: kindAdd, n: size},
		run:    func(c *call) error { return c.d.Add(c.S, size, c.in[0], c.in[1], c.out) },
	}
}

// linear is x W + b for x [N, I], W [I, O], b [O]; b may be nil. Each
// output element starts at its bias and adds the products in order of i.
func linear(x, w, b *G.Node) *G.Node {
	n, k := shapeOf(x)
	_, m := shapeOf(w)
	in := G.Nodes{x, w}
	dims := []int{2, 2}
	if b != nil {
		in, dims = append(in, b), append(dims, 1)
	}
	return apply(&op{
		name:   fmt.Sprintf("linear(bias=%v)", b != nil),
		inDims: dims,
		out:    tensor.Shape{n, m},
		fuse:   fusible{kind: kindLinear, m: n, n: m, k: k},
		run: func(c *call) error {
			bias := noBias
			if len(c.in) == 3 {
				bias = c.in[2]
			}
			return c.d.MatMul(c.S, false, false, n, m, k, c.in[0], c.in[1], c.out, bias)
		},
		diff: []bool{true, true, true}[:len(in)],
		grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			g := G.Nodes{matmulOp(dy, in[1], false, true), matmulOp(in[0], dy, true, false)}
			if len(in) == 3 {
				g = append(g, colSum(dy))
			}
			return g, nil
		},
	}, in...)
}

// linearT is x Wᵀ + b for x [N, I], W [O, I], b [O]: the unembedding of
// tied embeddings, where W is the token embedding [V, D]. Its gradients
// are dy W for x, dyᵀ x for W (shaped like the embedding, which sums it
// with the lookup's gradient) and the column sums of dy for b.
func linearT(x, w, b *G.Node) *G.Node {
	n, k := shapeOf(x)
	m, _ := shapeOf(w)
	return apply(&op{
		name:   "linear_t",
		inDims: []int{2, 2, 1},
		out:    tensor.Shape{n, m},
		run: func(c *call) error {
			return c.d.MatMul(c.S, false, true, n, m, k, c.in[0], c.in[1], c.out, c.in[2])
		},
		diff: []bool{true, true, true},
		grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			return G.Nodes{matmulOp(dy, in[1], false, false), matmulOp(dy, in[0], true, false), colSum(dy)}, nil
		},
	}, x, w, b)
}

// embed looks up rows of table [V, D] for ids [N] (token ids held as
// floats): the product of one-hot rows with table, without the one-hot
// matrix. Its gradient adds dy's rows into the rows they came from.
func embed(ids, table *G.Node) *G.Node {
	n := ids.Shape().TotalSize()
	v, d := shapeOf(table)
	return apply(&op{
		name:   "embed",
		inDims: []int{1, 2},
		out:    tensor.Shape{n, d},
		fuse:   fusible{kind: kindEmbed, k: n, n: d},
		run:    func(c *call) error { return c.d.Embed(c.S, n, d, c.in[0], c.in[1], c.out) },
		diff:   []bool{false, true},
		grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			return G.Nodes{nil, apply(&op{
				name:   "embed_grad",
				inDims: []int{1, 2},
				out:    tensor.Shape{v, d},
				run:    func(c *call) error { return c.d.EmbedGrad(c.S, n, d, v, c.in[0], c.in[1], c.out) },
			}, in[0], dy)}, nil
		},
	}, ids, table)
}

// layerNorm normalises each row of x [N, D] to zero mean and unit variance
// (biased variance, eps inside the root), then scales by gamma and adds beta.
// The forward keeps the normalised rows xh and each row's 1/sqrt(var+eps)
// (its aux tensors) for its gradient ops, which would otherwise compute
// them again.
func layerNorm(x, gamma, beta *G.Node) *G.Node {
	n, d := shapeOf(x)
	fwd := &op{
		name:   "layernorm",
		inDims: []int{2, 1, 1},
		out:    tensor.Shape{n, d},
		aux:    []int{n * d, n},
		run: func(c *call) error {
			return c.d.LayerNorm(c.S, n, d, c.in[0], c.in[1], c.in[2], c.out, c.aux[0], c.aux[1])
		},
		diff: []bool{true, true, true},
	}
	fwd.grad = func(in G.Nodes, y, dy *G.Node) (G.Nodes, error) {
		// y is an input of the gradient ops only to order them after
		// the forward that fills xh and inv.
		gx := apply(&op{
			name:   "layernorm_grad_x",
			inDims: []int{2, 1, 2},
			out:    tensor.Shape{n, d},
			auxOf:  fwd,
			fuse:   fusible{kind: kindLayerNormGradX, k: n, n: d},
			run: func(c *call) error {
				return c.d.LayerNormGradX(c.S, n, d, c.in[1], c.in[2], c.aux[0], c.aux[1], c.out)
			},
		}, y, in[1], dy)
		gg := colDot("layernorm_grad_gamma", dy, y, fwd, n, d)
		return G.Nodes{gx, gg, colSum(dy)}, nil
	}
	return apply(fwd, x, gamma, beta)
}

// gelu applies the exact GELU, x Phi(x), elementwise (simd.GELU: Phi to
// within 2.4e-7; docs/model.md). The forward also computes the derivative
// Phi(x) + x phi(x) into its aux tensor, which the gradient op reads: the
// backward multiplies instead of evaluating the normal CDF again.
func gelu(x *G.Node) *G.Node {
	size := x.Shape().TotalSize()
	fwd := &op{
		name:   "gelu",
		inDims: []int{2},
		out:    x.Shape().Clone(),
		aux:    []int{size},
		fuse:   fusible{kind: kindGELU, n: size},
		run:    func(c *call) error { return c.d.GELU(c.S, size, c.in[0], c.out, c.aux[0]) },
		diff:   []bool{true},
	}
	fwd.grad = func(in G.Nodes, y, dy *G.Node) (G.Nodes, error) {
		// y is an input only to order this op after the forward.
		return G.Nodes{apply(&op{
			name:   "gelu_grad",
			inDims: []int{2, 2},
			out:    in[0].Shape().Clone(),
			auxOf:  fwd,
			fuse:   fusible{kind: kindGELUGrad, n: size},
			run:    func(c *call) error { return c.d.Mul(c.S, size, c.in[1], c.aux[0], c.out) },
		}, y, dy)}, nil
	}
	return apply(fwd, x)
}

// colScale multiplies every row of x [N, D] elementwise by g [D]. The model
// uses it to gate heads: g holds 1 or 0 for each head's Dh columns.
func colScale(x, g *G.Node) *G.Node {
	n, d := shapeOf(x)
	return apply(&op{
		name:   "colscale",
		inDims: []int{2, 1},
		out:    tensor.Shape{n, d},
		fuse:   fusible{kind: kindColScale, k: n, n: d},
		run:    func(c *call) error { return c.d.ColScale(c.S, n, d, c.in[0], c.in[1], c.out) },
		diff:   []bool{true, true},
		grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			return G.Nodes{colScale(dy, in[1]), colDot("colscale_grad_g", dy, in[0], nil, n, d)}, nil
		},
	}, x, g)
}

// softmaxXent is the mean over answer rows of -log softmax(logits)
// at the target, for logits [N, V] and targets [N] (the target id as a
// float, negative where a row is not an answer). Fused because Gorgonia's
// last-axis softmax is unstable in float32. The forward keeps each answer
// row's softmax (its aux tensor) for the gradient,
// up * (softmax - onehot(target)) / answers.
func softmaxXent(logits, targets *G.Node) *G.Node {
	n, v := shapeOf(logits)
	fwd := &op{
		name:   "softmax_xent",
		inDims: []int{2, 1},
		out:    tensor.ScalarShape(),
		aux:    []int{n * v},
		run:    func(c *call) error { return c.d.SoftmaxXent(c.S, n, v, c.in[0], c.in[1], c.aux[0], c.out) },
		diff:   []bool{true, false},
	}
	fwd.grad = func(in G.Nodes, loss, dl *G.Node) (G.Nodes, error) {
		// loss is an input only to order this op after the forward.
		g := apply(&op{
			name:   "softmax_xent_grad",
			inDims: []int{1, 0, 0},
			out:    in[0].Shape().Clone(),
			auxOf:  fwd,
			run: func(c *call) error {
				return c.d.SoftmaxXentGrad(c.S, n, v, c.in[0], c.aux[0], c.in[2], c.out)
			},
		}, in[1], loss, dl)
		return G.Nodes{g, nil}, nil
	}
	return apply(fwd, logits, targets)
}

// mul is a*b elementwise, for a and b of one shape: a probed Net's gates
// (probe.go). It has no gradient: probed Nets do not train.
func mul(a, b *G.Node) *G.Node {
	if !a.Shape().Eq(b.Shape()) {
		panic(fmt.Sprintf("graph: mul of shapes %v and %v", a.Shape(), b.Shape()))
	}
	size := a.Shape().TotalSize()
	return apply(&op{
		name:   "mul",
		inDims: []int{a.Shape().Dims(), b.Shape().Dims()},
		out:    a.Shape().Clone(),
		run:    func(c *call) error { return c.d.Mul(c.S, size, c.in[0], c.in[1], c.out) },
	}, a, b)
}
