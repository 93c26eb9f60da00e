package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Matrix is a dense row-major matrix.
type Matrix struct {
	Rows, Cols int
	Data       []float64
}

// Mul returns a b.
func Mul(a, b Matrix) Matrix {
	if a.Cols != b.Rows {
		panic(fmt.Sprintf("analysis: %dx%d times %dx%d", a.Rows, a.Cols, b.Rows, b.Cols))
	}
	c := Matrix{Rows: a.Rows, Cols: b.Cols, Data: make([]float64, a.Rows*b.Cols)}
	for i := 0; i < a.Rows; i++ {
		for k := 0; k < a.Cols; k++ {
			x := a.Data[i*a.Cols+k]
			for j := 0; j < b.Cols; j++ {
				c.Data[i*c.Cols+j] += x * b.Data[k*b.Cols+j]
			}
		}
	}
	return c
}

// T returns the transpose of a.
func (a Matrix) T() Matrix {
	t := Matrix{Rows: a.Cols, Cols: a.Rows, Data: make([]float64, len(a.Data))}
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < a.Cols; j++ {
			t.Data[j*t.Cols+i] = a.Data[i*a.Cols+j]
		}
	}
	return t
}

// Frobenius is the Frobenius norm of a.
func (a Matrix) Frobenius() float64 {
	var s float64
	for _, x := range a.Data {
		s += x * x
	}
	return math.Sqrt(s)
}

// CompositionScore is ||a b||_F / (||a||_F ||b||_F) (Elhage et al. 2021):
// how much of what a writes, b reads. 0 when either matrix is zero.
func CompositionScore(a, b Matrix) float64 {
	den := a.Frobenius() * b.Frobenius()
	if den == 0 {
		return 0
	}
	return Mul(a, b).Frobenius() / den
}

// HeadWeights are one head's projections in the row-vector convention the
// model uses (a residual row x maps to x W): Q, K and V are [D, Dh], O is
// [Dh, D].
type HeadWeights struct {
	Layer, Head int
	Q, K, V, O  Matrix
}

// OV is the head's residual-to-residual output map V O, [D, D].
func (h HeadWeights) OV() Matrix { return Mul(h.V, h.O) }

// QK is the head's bilinear score form Q K^T: score(i, j) = x_i QK x_j^T.
func (h HeadWeights) QK() Matrix { return Mul(h.Q, h.K.T()) }

// Composition scores how a later head reads an earlier head's output.
type Composition struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Q: the earlier head's output feeds the later head's queries,
	// ||OV_from QK_to||; K: its keys, ||QK_to OV_from^T||; V: its values,
	// ||OV_from OV_to||; each divided by the two norms.
	Q float64 `json:"q"`
	K float64 `json:"k"`
	V float64 `json:"v"`
}

// Compositions scores every pair of heads in different layers, earlier
// head first.
func Compositions(heads []HeadWeights) []Composition {
	var out []Composition
	for _, a := range heads {
		for _, b := range heads {
			if a.Layer >= b.Layer {
				continue
			}
			ov, qk := a.OV(), b.QK()
			out = append(out, Composition{
				From: HeadName(a.Layer, a.Head), To: HeadName(b.Layer, b.Head),
				Q: CompositionScore(ov, qk),
				K: CompositionScore(qk, ov.T()),
				V: CompositionScore(ov, b.OV()),
			})
		}
	}
	return out
}

// CompositionBaseline is the mean of each score over `samples` pairs of
// heads with Gaussian random weights of the same shapes (d-model d, head
// width dh): what composition looks like when nothing composes.
func CompositionBaseline(d, dh, samples int, seed uint64) Composition {
	rng := rand.New(rand.NewPCG(seed, 0xc0c0))
	random := func(r, c int) Matrix {
		m := Matrix{Rows: r, Cols: c, Data: make([]float64, r*c)}
		for i := range m.Data {
			m.Data[i] = rng.NormFloat64()
		}
		return m
	}
	head := func(l int) HeadWeights {
		return HeadWeights{Layer: l, Q: random(d, dh), K: random(d, dh), V: random(d, dh), O: random(dh, d)}
	}
	var sum Composition
	for range samples {
		c := Compositions([]HeadWeights{head(0), head(1)})[0]
		sum.Q += c.Q
		sum.K += c.K
		sum.V += c.V
	}
	n := float64(samples)
	return Composition{From: "random", To: "random", Q: sum.Q / n, K: sum.K / n, V: sum.V / n}
}
