package train

import "math"

// adam is Adam over the raw float32 slices of the weights and their
// gradients: the arithmetic of Gorgonia's AdamSolver (v0.9.18, float32,
// no regularisation or clipping), operation for operation and rounding for
// rounding, without its per-tensor allocations. docs/model.md gives the
// formula; TestAdamMatchesGorgonia checks it bit for bit.
type adam struct {
	lr, beta1, beta2, eps float64
	t                     int
	m, v                  [][]float32
}

func newAdam(lr float64, sizes []int) *adam {
	a := &adam{lr: lr, beta1: 0.9, beta2: 0.999, eps: 1e-8}
	for _, n := range sizes {
		a.m = append(a.m, make([]float32, n))
		a.v = append(a.v, make([]float32, n))
	}
	return a
}

// step updates every w[i] from its gradient g[i]. The explicit float32
// conversions stop the compiler fusing a multiply and an add (the Go spec
// allows it), which would change the rounding.
func (a *adam) step(w, g [][]float32) {
	a.t++
	c1 := float32(1) / float32(1-math.Pow(a.beta1, float64(a.t)))
	c2 := float32(1) / float32(1-math.Pow(a.beta2, float64(a.t)))
	b1, b2 := float32(a.beta1), float32(a.beta2)
	omb1, omb2 := float32(1)-b1, float32(1)-b2
	eps, negEta := float32(a.eps), -float32(a.lr)
	for i := range w {
		wi, gi, mi, vi := w[i], g[i][:len(w[i])], a.m[i][:len(w[i])], a.v[i][:len(w[i])]
		for j, gr := range gi {
			m := float32(gr*omb1) + float32(mi[j]*b1)
			v := float32(float32(gr*gr)*omb2) + float32(vi[j]*b2)
			mi[j], vi[j] = m, v
			den := float32(math.Sqrt(float64(float32(v*c2)))) + eps
			wi[j] += float32(float32(m*c1)*negEta) / den
		}
	}
}
