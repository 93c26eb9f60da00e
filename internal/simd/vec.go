package simd

import "math"

// The elementwise, LayerNorm and Adam kernels. Each has one portable Go
// definition here (the oracle), and assembly on every other path
// (vec_amd64.s: AVX2, which the AVX-512 path uses too, since these rows
// are 32 to 64 floats; vec_arm64.s: NEON) that does the same float32
// operations in the same order, so every path gives the same bits as
// this file. Products are rounded before they are added (float32(x*y)
// forbids the fused multiply-add that GOAMD64=v3 and arm64 would emit).
// Row sums use sum4's order, which a 4-lane register reproduces.
//
// The assembly handles lengths in whole vectors (asmLanes elements;
// rows of LayerNorm in multiples of 4); the rest of an elementwise call
// runs here, and LayerNorm rows of other widths run here whole.

// Add sets out[i] = a[i] + b[i]; out may be a or b.
func Add(out, a, b []float32) {
	n := len(out)
	a, b = a[:n], b[:n]
	done := 0
	if cur != pathGo && n >= asmLanes {
		done = n &^ (asmLanes - 1)
		addKernel(done, &out[0], &a[0], &b[0])
	}
	for i := done; i < n; i++ {
		out[i] = a[i] + b[i]
	}
}

// Mul sets out[i] = a[i] * b[i]; out may be a or b.
func Mul(out, a, b []float32) {
	n := len(out)
	a, b = a[:n], b[:n]
	done := 0
	if cur != pathGo && n >= asmLanes {
		done = n &^ (asmLanes - 1)
		mulKernel(done, &out[0], &a[0], &b[0])
	}
	for i := done; i < n; i++ {
		out[i] = a[i] * b[i]
	}
}

// AddMul sets out[i] += a[i] * b[i], the product rounded before the add.
func AddMul(out, a, b []float32) {
	n := len(out)
	a, b = a[:n], b[:n]
	done := 0
	if cur != pathGo && n >= asmLanes {
		done = n &^ (asmLanes - 1)
		addMulKernel(done, &out[0], &a[0], &b[0])
	}
	for i := done; i < n; i++ {
		out[i] += float32(a[i] * b[i])
	}
}

// sum4 adds x in four interleaved partial sums (element j goes to sum
// j mod 4), combined as (s0+s1)+(s2+s3): a fixed order, four independent
// chains, and the order of a 4-lane vector accumulator.
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

// LayerNorm normalises each row of n = len(gamma) elements of x: for row
// r, mean and biased variance in sum4's order, inv[r] = 1/sqrt(var+eps)
// (the root and quotient in float64), xh = (x-mean)*inv[r] and out =
// xh*gamma + beta.
func LayerNorm(x, gamma, beta, out, xh, inv []float32, eps float32) {
	n := len(gamma)
	rows := len(inv)
	x, beta, out, xh = x[:rows*n], beta[:n], out[:rows*n], xh[:rows*n]
	if rows == 0 {
		return
	}
	if cur != pathGo && n%4 == 0 && n > 0 {
		lnKernel(rows, n, &x[0], &gamma[0], &beta[0], &out[0], &xh[0], &inv[0], eps)
		return
	}
	for r := range inv {
		xr, hr, or := x[r*n:r*n+n], xh[r*n:r*n+n], out[r*n:r*n+n]
		mean := sum4(xr) / float32(n)
		for j, v := range xr {
			hr[j] = v - mean
		}
		var s0, s1, s2, s3 float32
		j := 0
		for ; j+4 <= n; j += 4 {
			s0 += float32(hr[j] * hr[j])
			s1 += float32(hr[j+1] * hr[j+1])
			s2 += float32(hr[j+2] * hr[j+2])
			s3 += float32(hr[j+3] * hr[j+3])
		}
		for ; j < n; j++ {
			s0 += float32(hr[j] * hr[j])
		}
		q := (s0 + s1) + (s2 + s3)
		v := float32(1 / math.Sqrt(float64(q/float32(n)+eps)))
		inv[r] = v
		for j := range hr {
			hr[j] *= v
			or[j] = float32(hr[j]*gamma[j]) + beta[j]
		}
	}
}

// LayerNormGradX sets out to the gradient of LayerNorm's input given its
// output's gradient dy, the normalised rows xh and inv: with g = dy*gamma,
// out = inv*(g - mean(g) - xh*mean(g*xh)), the means in sum4's order.
func LayerNormGradX(out, gamma, dy, xh, inv []float32) {
	n := len(gamma)
	rows := len(inv)
	out, dy, xh = out[:rows*n], dy[:rows*n], xh[:rows*n]
	if rows == 0 {
		return
	}
	if cur != pathGo && n%4 == 0 && n > 0 {
		lnGradKernel(rows, n, &out[0], &gamma[0], &dy[0], &xh[0], &inv[0])
		return
	}
	for r, iv := range inv {
		dr, hr, or := dy[r*n:r*n+n], xh[r*n:r*n+n], out[r*n:r*n+n]
		// or holds g = dy*gamma until the last loop.
		var m0, m1, m2, m3, x0, x1, x2, x3 float32
		j := 0
		for ; j+4 <= n; j += 4 {
			g0, g1, g2, g3 := float32(dr[j]*gamma[j]), float32(dr[j+1]*gamma[j+1]), float32(dr[j+2]*gamma[j+2]), float32(dr[j+3]*gamma[j+3])
			or[j], or[j+1], or[j+2], or[j+3] = g0, g1, g2, g3
			m0, m1, m2, m3 = m0+g0, m1+g1, m2+g2, m3+g3
			x0, x1, x2, x3 = x0+float32(g0*hr[j]), x1+float32(g1*hr[j+1]), x2+float32(g2*hr[j+2]), x3+float32(g3*hr[j+3])
		}
		for ; j < n; j++ {
			g := float32(dr[j] * gamma[j])
			or[j] = g
			m0 += g
			x0 += float32(g * hr[j])
		}
		mg := ((m0 + m1) + (m2 + m3)) / float32(n)
		mgx := ((x0 + x1) + (x2 + x3)) / float32(n)
		for j := range or {
			or[j] = iv * (or[j] - mg - float32(hr[j]*mgx))
		}
	}
}

// AdamStep holds one Adam update's constants: the betas, 1 minus each,
// epsilon, the bias corrections c1 and c2 of this step, -lr, and the
// decoupled weight decay's factor 1 - lr*wd (1: none).
type AdamStep struct {
	B1, B2, OneMinusB1, OneMinusB2, Eps, C1, C2, NegLR, Decay float32
}

// Adam updates w, m and v in place from the gradient g, with Gorgonia's
// AdamSolver arithmetic (v0.9.18, float32), rounding for rounding, after
// AdamW's decoupled decay of w (PyTorch's order):
// m = g(1-b1) + m b1; v = g²(1-b2) + v b2;
// w = w Decay + (m c1)(-lr) / (sqrt(v c2) + eps).
// With Decay 1, w Decay is w exactly: Gorgonia's bits. The root is
// correctly rounded in float32, which equals the float64 root rounded to
// float32.
func Adam(w, g, m, v []float32, p *AdamStep) {
	n := len(w)
	g, m, v = g[:n], m[:n], v[:n]
	done := 0
	if cur != pathGo && n >= asmLanes {
		done = n &^ (asmLanes - 1)
		adamKernel(done, &w[0], &g[0], &m[0], &v[0], p)
	}
	for j := done; j < n; j++ {
		gr := g[j]
		mj := float32(gr*p.OneMinusB1) + float32(m[j]*p.B1)
		vj := float32(float32(gr*gr)*p.OneMinusB2) + float32(v[j]*p.B2)
		m[j], v[j] = mj, vj
		den := float32(math.Sqrt(float64(float32(vj*p.C2)))) + p.Eps
		w[j] = float32(w[j]*p.Decay) + float32(float32(mj*p.C1)*p.NegLR)/den
	}
}
