package graph

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The fused ops of the model. Each forward sits beside its gradient ops;
// each gradient op is itself an op (not differentiated again). Gorgonia's
// own LayerNorm pieces, softmax and InverseSqrt are avoided: see
// docs/model.md and the Gorgonia notes for why.

// LayerNormEps is the epsilon added to the variance in every LayerNorm.
const LayerNormEps = 1e-5

var sgemm gonum.Implementation

// matmul computes c = op(a) op(b) with op a transpose where asked;
// op(a) is m x k, op(b) is k x n, all row-major.
func matmul(tA, tB bool, m, n, k int, a, b, c []float32) {
	ta, tb, lda, ldb := blas.NoTrans, blas.NoTrans, k, n
	if tA {
		ta, lda = blas.Trans, m
	}
	if tB {
		tb, ldb = blas.Trans, k
	}
	sgemm.Sgemm(ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, n)
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
	return apply(&op{
		name:   fmt.Sprintf("matmul(%v,%v)", tA, tB),
		inDims: []int{2, 2},
		out:    tensor.Shape{m, n},
		fwd: func(out []float32, in [][]float32) error {
			matmul(tA, tB, m, n, k, in[0], in[1], out)
			return nil
		},
	}, a, b)
}

// colSum sums the rows of y [N, D] into [D].
func colSum(y *G.Node) *G.Node {
	_, d := shapeOf(y)
	return apply(&op{
		name:   "colsum",
		inDims: []int{2},
		out:    tensor.Shape{d},
		fwd: func(out []float32, in [][]float32) error {
			clear(out)
			for r := 0; r < len(in[0]); r += d {
				for j, v := range in[0][r : r+d] {
					out[j] += v
				}
			}
			return nil
		},
	}, y)
}

// Linear is x W + b for x [N, I], W [I, O], b [O]; b may be nil.
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
			matmul(false, false, n, m, k, in[0], in[1], out)
			if len(in) == 3 {
				for r := 0; r < len(out); r += m {
					for j, v := range in[2] {
						out[r+j] += v
					}
				}
			}
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

// lnStats returns the mean and 1/sqrt(var+eps) of one row.
func lnStats(row []float32) (mean, inv float32) {
	var s float32
	for _, v := range row {
		s += v
	}
	mean = s / float32(len(row))
	var q float32
	for _, v := range row {
		q += (v - mean) * (v - mean)
	}
	return mean, float32(1 / math.Sqrt(float64(q/float32(len(row))+LayerNormEps)))
}

// LayerNorm normalises each row of x [N, D] to zero mean and unit variance
// (biased variance, eps inside the root), then scales by gamma and adds beta.
func LayerNorm(x, gamma, beta *G.Node) *G.Node {
	n, d := shapeOf(x)
	return apply(&op{
		name:   "layernorm",
		inDims: []int{2, 1, 1},
		out:    tensor.Shape{n, d},
		fwd: func(out []float32, in [][]float32) error {
			x, g, b := in[0], in[1], in[2]
			for r := 0; r < len(x); r += d {
				mean, inv := lnStats(x[r : r+d])
				for j := 0; j < d; j++ {
					out[r+j] = (x[r+j]-mean)*inv*g[j] + b[j]
				}
			}
			return nil
		},
		diff: []bool{true, true, true},
		grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			return G.Nodes{lnGradX(in[0], in[1], dy), lnGradGamma(in[0], dy), colSum(dy)}, nil
		},
	}, x, gamma, beta)
}

// lnGradX: with xh the normalised row and g = dy*gamma,
// dx = inv * (g - mean(g) - xh*mean(g*xh)).
func lnGradX(x, gamma, dy *G.Node) *G.Node {
	n, d := shapeOf(x)
	return apply(&op{
		name:   "layernorm_grad_x",
		inDims: []int{2, 1, 2},
		out:    tensor.Shape{n, d},
		fwd: func(out []float32, in [][]float32) error {
			x, gm, dy := in[0], in[1], in[2]
			for r := 0; r < len(x); r += d {
				mean, inv := lnStats(x[r : r+d])
				var mg, mgx float32
				for j := 0; j < d; j++ {
					g := dy[r+j] * gm[j]
					mg += g
					mgx += g * (x[r+j] - mean) * inv
				}
				mg /= float32(d)
				mgx /= float32(d)
				for j := 0; j < d; j++ {
					xh := (x[r+j] - mean) * inv
					out[r+j] = inv * (dy[r+j]*gm[j] - mg - xh*mgx)
				}
			}
			return nil
		},
	}, x, gamma, dy)
}

// lnGradGamma: dgamma = sum over rows of dy * xh.
func lnGradGamma(x, dy *G.Node) *G.Node {
	_, d := shapeOf(x)
	return apply(&op{
		name:   "layernorm_grad_gamma",
		inDims: []int{2, 2},
		out:    tensor.Shape{d},
		fwd: func(out []float32, in [][]float32) error {
			x, dy := in[0], in[1]
			clear(out)
			for r := 0; r < len(x); r += d {
				mean, inv := lnStats(x[r : r+d])
				for j := 0; j < d; j++ {
					out[j] += dy[r+j] * (x[r+j] - mean) * inv
				}
			}
			return nil
		},
	}, x, dy)
}

// gelu is the exact GELU, x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)),
// computed in float64 and rounded to float32.
func gelu(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
}

// geluDeriv is Phi(x) + x phi(x).
func geluDeriv(x float32) float32 {
	v := float64(x)
	return float32(0.5*(1+math.Erf(v/math.Sqrt2)) + v*math.Exp(-0.5*v*v)/math.Sqrt(2*math.Pi))
}

// GELU applies the exact GELU elementwise.
func GELU(x *G.Node) *G.Node {
	return apply(&op{
		name:   "gelu",
		inDims: []int{2},
		out:    x.Shape().Clone(),
		fwd: func(out []float32, in [][]float32) error {
			for i, v := range in[0] {
				out[i] = gelu(v)
			}
			return nil
		},
		diff: []bool{true},
		grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			return G.Nodes{apply(&op{
				name:   "gelu_grad",
				inDims: []int{2, 2},
				out:    in[0].Shape().Clone(),
				fwd: func(out []float32, in [][]float32) error {
					for i, v := range in[0] {
						out[i] = in[1][i] * geluDeriv(v)
					}
					return nil
				},
			}, in[0], dy)}, nil
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
			for r := 0; r < len(out); r += d {
				for j := 0; j < d; j++ {
					out[r+j] = in[0][r+j] * in[1][j]
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
					for r := 0; r < len(in[0]); r += d {
						for j := 0; j < d; j++ {
							out[j] += in[0][r+j] * in[1][r+j]
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
// Fused because Gorgonia's last-axis softmax is unstable in float32.
func SoftmaxCrossEntropy(logits, y *G.Node) *G.Node {
	_, v := shapeOf(logits)
	return apply(&op{
		name:   "softmax_xent",
		inDims: []int{2, 2},
		out:    tensor.ScalarShape(),
		fwd: func(out []float32, in [][]float32) error {
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
				lse := logSumExp(row)
				for j, x := range w {
					if x != 0 {
						loss -= float64(x) * float64(row[j]-lse)
					}
				}
			}
			out[0] = float32(loss)
			return nil
		},
		diff: []bool{true, false},
		grad: func(in G.Nodes, _, dl *G.Node) (G.Nodes, error) {
			g := apply(&op{
				name:   "softmax_xent_grad",
				inDims: []int{2, 2, 0},
				out:    in[0].Shape().Clone(),
				fwd: func(out []float32, in [][]float32) error {
					up := in[2][0]
					for r := 0; r < len(in[0]); r += v {
						row, w, o := in[0][r:r+v], in[1][r:r+v], out[r:r+v]
						var ws float32
						for _, x := range w {
							ws += x
						}
						if ws == 0 {
							clear(o)
							continue
						}
						lse := logSumExp(row)
						for j := range row {
							o[j] = up * (float32(math.Exp(float64(row[j]-lse)))*ws - w[j])
						}
					}
					return nil
				},
			}, in[0], in[1], dl)
			return G.Nodes{g, nil}, nil
		},
	}, logits, y)
}

func logSumExp(row []float32) float32 {
	m := row[0]
	for _, x := range row[1:] {
		m = max(m, x)
	}
	var s float64
	for _, x := range row {
		s += math.Exp(float64(x - m))
	}
	return m + float32(math.Log(s))
}
