package graph

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"headlab/internal/simd"
)

// The fused ops of the model. Each forward sits beside its gradient ops;
// each gradient op is itself an op (not differentiated again). Gorgonia's
// own LayerNorm pieces, softmax and InverseSqrt are avoided: see
// docs/model.md and the Gorgonia notes for why.

// LayerNormEps is the epsilon added to the variance in every LayerNorm.
const LayerNormEps = 1e-5

// matmul computes c = op(a) op(b) (+ bias on every row, when not nil)
// with op a transpose where asked; op(a) is m x k, op(b) is k x n, all
// row-major. Summation order: docs/model.md, "Matrix products".
func matmul(tA, tB bool, m, n, k int, a, b, c, bias []float32, s *simd.Scratch) {
	simd.Sgemm(tA, tB, m, n, k, a, b, c, bias, s)
}

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
	var s simd.Scratch
	return apply(&op{
		name:   fmt.Sprintf("matmul(%v,%v)", tA, tB),
		inDims: []int{2, 2},
		out:    tensor.Shape{m, n},
		fwd: func(out []float32, in [][]float32) error {
			matmul(tA, tB, m, n, k, in[0], in[1], out, nil, &s)
			return nil
		},
	}, a, b)
}

// colSum sums the rows of y [N, D] into [D], in row order. It is the
// product ones[1, N] y, and 1*v + acc rounds exactly as v + acc does.
func colSum(y *G.Node) *G.Node {
	rows, d := shapeOf(y)
	ones := make([]float32, rows)
	for i := range ones {
		ones[i] = 1
	}
	return apply(&op{
		name:   "colsum",
		inDims: []int{2},
		out:    tensor.Shape{d},
		fwd: func(out []float32, in [][]float32) error {
			matmul(false, false, 1, d, rows, ones, in[0], out, nil, nil)
			return nil
		},
	}, y)
}

// Linear is x W + b for x [N, I], W [I, O], b [O]; b may be nil. Each
// output element starts at its bias and adds the products in order of i.
func Linear(x, w, b *G.Node) *G.Node {
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
		fwd: func(out []float32, in [][]float32) error {
			var bias []float32
			if len(in) == 3 {
				bias = in[2]
			}
			matmul(false, false, n, m, k, in[0], in[1], out, bias, nil)
			return nil
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

// sum4 adds x in four interleaved partial sums (element j goes to sum
// j mod 4), combined as (s0+s1)+(s2+s3): a fixed order, and four
// independent chains instead of one long one.
func sum4(x []float32) float32 {
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(x); j += 4 {
		s0 += x[j]
		s1 += x[j+1]
		s2 += x[j+2]
		s3 += x[j+3]
	}
	for ; j < len(x); j++ {
		s0 += x[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// lnStats returns the mean and 1/sqrt(var+eps) of one row; dev receives
// x - mean. Both sums use sum4's order.
func lnStats(row, dev []float32) (mean, inv float32) {
	mean = sum4(row) / float32(len(row))
	dev = dev[:len(row)]
	for j, v := range row {
		dev[j] = v - mean
	}
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(dev); j += 4 {
		s0 += dev[j] * dev[j]
		s1 += dev[j+1] * dev[j+1]
		s2 += dev[j+2] * dev[j+2]
		s3 += dev[j+3] * dev[j+3]
	}
	for ; j < len(dev); j++ {
		s0 += dev[j] * dev[j]
	}
	q := (s0 + s1) + (s2 + s3)
	return mean, float32(1 / math.Sqrt(float64(q/float32(len(row))+LayerNormEps)))
}

// LayerNorm normalises each row of x [N, D] to zero mean and unit variance
// (biased variance, eps inside the root), then scales by gamma and adds beta.
// The forward keeps the normalised rows xh and each row's 1/sqrt(var+eps)
// for its gradient ops, which would otherwise compute them again.
func LayerNorm(x, gamma, beta *G.Node) *G.Node {
	n, d := shapeOf(x)
	// xh and inv are filled by the forward and read by the gradient ops; a
	// graph without gradients keeps one row of xh and no inv.
	var xh, inv []float32
	hasGrad := false
	return apply(&op{
		name:   "layernorm",
		inDims: []int{2, 1, 1},
		out:    tensor.Shape{n, d},
		fwd: func(out []float32, in [][]float32) error {
			if xh == nil {
				if hasGrad {
					xh, inv = make([]float32, n*d), make([]float32, n)
				} else {
					xh = make([]float32, d)
				}
			}
			x, g, b := in[0], in[1][:d], in[2][:d]
			for r := 0; r < n; r++ {
				hr := xh[:d]
				if hasGrad {
					hr = xh[r*d : r*d+d]
				}
				_, iv := lnStats(x[r*d:r*d+d], hr)
				if hasGrad {
					inv[r] = iv
				}
				or := out[r*d : r*d+d]
				for j := range hr {
					hr[j] *= iv
					or[j] = hr[j]*g[j] + b[j]
				}
			}
			return nil
		},
		diff: []bool{true, true, true},
		grad: func(in G.Nodes, y, dy *G.Node) (G.Nodes, error) {
			hasGrad = true
			// y is an input of the gradient ops only to order them after
			// the forward that fills xh and inv.
			gx := apply(&op{
				name:   "layernorm_grad_x",
				inDims: []int{2, 1, 2},
				out:    tensor.Shape{n, d},
				fwd: func(out []float32, in [][]float32) error {
					lnGradX(out, in[1][:d], in[2], xh, inv, d)
					return nil
				},
			}, y, in[1], dy)
			gg := apply(&op{
				name:   "layernorm_grad_gamma",
				inDims: []int{2, 2},
				out:    tensor.Shape{d},
				fwd: func(out []float32, in [][]float32) error {
					clear(out)
					dy := in[1]
					for r := 0; r < len(dy); r += d {
						dr, hr := dy[r:r+d], xh[r:r+d]
						for j := range out {
							out[j] += dr[j] * hr[j]
						}
					}
					return nil
				},
			}, y, dy)
			return G.Nodes{gx, gg, colSum(dy)}, nil
		},
	}, x, gamma, beta)
}

// lnGradX: with xh the normalised row and g = dy*gamma,
// dx = inv * (g - mean(g) - xh*mean(g*xh)).
func lnGradX(out, gm, dy, xh, inv []float32, d int) {
	gm = gm[:d]
	for r := 0; r < len(out)/d; r++ {
		dr, hr, or := dy[r*d:r*d+d], xh[r*d:r*d+d], out[r*d:r*d+d]
		// or holds g = dy*gamma until the last loop; sums in sum4's order.
		var m0, m1, m2, m3, x0, x1, x2, x3 float32
		j := 0
		for ; j+4 <= d; j += 4 {
			g0, g1, g2, g3 := dr[j]*gm[j], dr[j+1]*gm[j+1], dr[j+2]*gm[j+2], dr[j+3]*gm[j+3]
			or[j], or[j+1], or[j+2], or[j+3] = g0, g1, g2, g3
			m0, m1, m2, m3 = m0+g0, m1+g1, m2+g2, m3+g3
			x0, x1, x2, x3 = x0+g0*hr[j], x1+g1*hr[j+1], x2+g2*hr[j+2], x3+g3*hr[j+3]
		}
		for ; j < d; j++ {
			g := dr[j] * gm[j]
			or[j] = g
			m0 += g
			x0 += g * hr[j]
		}
		mg := ((m0 + m1) + (m2 + m3)) / float32(d)
		mgx := ((x0 + x1) + (x2 + x3)) / float32(d)
		iv := inv[r]
		for j := range or {
			or[j] = iv * (or[j] - mg - hr[j]*mgx)
		}
	}
}

// GELU applies the exact GELU, x Phi(x), elementwise (simd.GELU: Phi to
// within 2.4e-7; docs/model.md). The forward also computes the derivative
// Phi(x) + x phi(x) into a buffer the gradient op reads: the backward
// multiplies instead of evaluating the normal CDF again.
func GELU(x *G.Node) *G.Node {
	// deriv is filled by the forward and read by gelu_grad; a graph without
	// gradients only needs a small scratch for it.
	var deriv []float32
	hasGrad := false
	return apply(&op{
		name:   "gelu",
		inDims: []int{2},
		out:    x.Shape().Clone(),
		fwd: func(out []float32, in [][]float32) error {
			if !hasGrad {
				if deriv == nil {
					deriv = make([]float32, 1024)
				}
				for i := 0; i < len(out); i += len(deriv) {
					j := min(i+len(deriv), len(out))
					simd.GELU(in[0][i:j], out[i:j], deriv)
				}
				return nil
			}
			if len(deriv) != len(out) {
				deriv = make([]float32, len(out))
			}
			simd.GELU(in[0], out, deriv)
			return nil
		},
		diff: []bool{true},
		grad: func(in G.Nodes, y, dy *G.Node) (G.Nodes, error) {
			hasGrad = true
			// y is an input only to order this op after the forward.
			return G.Nodes{apply(&op{
				name:   "gelu_grad",
				inDims: []int{2, 2},
				out:    in[0].Shape().Clone(),
				fwd: func(out []float32, in [][]float32) error {
					simd.Mul(out, in[1], deriv)
					return nil
				},
			}, y, dy)}, nil
		},
	}, x)
}

// ColScale multiplies every row of x [N, D] elementwise by g [D]. The model
// uses it to gate heads: g holds 1 or 0 for each head's Dh columns.
func ColScale(x, g *G.Node) *G.Node {
	n, d := shapeOf(x)
	return apply(&op{
		name:   "colscale",
		inDims: []int{2, 1},
		out:    tensor.Shape{n, d},
		fwd: func(out []float32, in [][]float32) error {
			x, g := in[0][:len(out)], in[1][:d]
			for r := 0; r < len(out); r += d {
				xr, or := x[r:r+d], out[r:r+d]
				for j, v := range g {
					or[j] = xr[j] * v
				}
			}
			return nil
		},
		diff: []bool{true, true},
		grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			dg := apply(&op{
				name:   "colscale_grad_g",
				inDims: []int{2, 2},
				out:    tensor.Shape{d},
				fwd: func(out []float32, in [][]float32) error {
					clear(out)
					dy, x := in[0], in[1][:len(in[0])]
					for r := 0; r < len(dy); r += d {
						dr, xr := dy[r:r+d], x[r:r+d]
						for j := range out {
							out[j] += dr[j] * xr[j]
						}
					}
					return nil
				},
			}, dy, in[0])
			return G.Nodes{ColScale(dy, in[1]), dg}, nil
		},
	}, x, g)
}

// SoftmaxCrossEntropy is -sum(Y * log softmax(logits)) over rows, for
// logits [N, V] and weights Y [N, V]. Y holds 1/count at each answer row's
// target and 0 elsewhere, so the loss is the mean over answer positions.
// Fused because Gorgonia's last-axis softmax is unstable in float32. The
// forward keeps each answer row's softmax for the gradient, which is then
// up * (softmax * sum(Y row) - Y).
func SoftmaxCrossEntropy(logits, y *G.Node) *G.Node {
	n, v := shapeOf(logits)
	var probs []float32 // filled by the forward for rows with weight
	es := make([]float64, v)
	hasGrad := false
	return apply(&op{
		name:   "softmax_xent",
		inDims: []int{2, 2},
		out:    tensor.ScalarShape(),
		fwd: func(out []float32, in [][]float32) error {
			if hasGrad && probs == nil {
				probs = make([]float32, n*v)
			}
			var loss float64
			for r := 0; r < len(in[0]); r += v {
				row, w := in[0][r:r+v], in[1][r:r+v]
				var ws float32
				for _, x := range w {
					ws += x
				}
				if ws == 0 {
					continue
				}
				m := row[0]
				for _, x := range row[1:] {
					m = max(m, x)
				}
				var sum float64
				for j, x := range row {
					es[j] = math.Exp(float64(x - m))
					sum += es[j]
				}
				lse := m + float32(math.Log(sum))
				for j, x := range w {
					if x != 0 {
						loss -= float64(x) * float64(row[j]-lse)
					}
				}
				if hasGrad {
					pr := probs[r : r+v]
					for j, e := range es {
						pr[j] = float32(e / sum)
					}
				}
			}
			out[0] = float32(loss)
			return nil
		},
		diff: []bool{true, false},
		grad: func(in G.Nodes, loss, dl *G.Node) (G.Nodes, error) {
			hasGrad = true
			// loss is an input only to order this op after the forward.
			g := apply(&op{
				name:   "softmax_xent_grad",
				inDims: []int{2, 0, 0},
				out:    in[0].Shape().Clone(),
				fwd: func(out []float32, in [][]float32) error {
					up := in[2][0]
					for r := 0; r < len(in[0]); r += v {
						w, o := in[0][r:r+v], out[r:r+v]
						var ws float32
						for _, x := range w {
							ws += x
						}
						if ws == 0 {
							clear(o)
							continue
						}
						for j, p := range probs[r : r+v] {
							o[j] = up * (p*ws - w[j])
						}
					}
					return nil
				},
			}, in[1], loss, dl)
			return G.Nodes{g, nil}, nil
		},
	}, logits, y)
}
