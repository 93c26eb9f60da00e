package simd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// guarded returns n values of fill inside a slice with guard cells on
// both sides, and a check that the guards survived.
func guarded(r *rand.Rand, n int) ([]float32, func(t *testing.T, what string)) {
	const g = 9
	buf := portFill(r, n+2*g)
	before := slices.Clone(buf)
	x := buf[g : g+n]
	return x, func(t *testing.T, what string) {
		t.Helper()
		for i := range g {
			if !sameBits(buf[i], before[i]) || !sameBits(buf[g+n+i], before[g+n+i]) {
				t.Fatalf("%s wrote outside its %d elements", what, n)
			}
		}
	}
}

func equalBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("%s [%d] = %v (%08x), the Go loop gives %v (%08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestVecMatchesGo: every assembly path gives the portable loops' bits for
// Add, Mul, AddMul and Adam at every length around the vector width, on
// values with signed zeros, huge and tiny numbers, and never writes past
// the end.
func TestVecMatchesGo(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for n := 0; n <= 41; n++ {
			a, b, c0 := portFill(r, n), portFill(r, n), portFill(r, n)
			for _, op := range []struct {
				name string
				f    func(out, a, b []float32)
			}{{"Add", Add}, {"Mul", Mul}, {"AddMul", AddMul}} {
				want := slices.Clone(c0)
				onPath(pathGo, func() { op.f(want, a, b) })
				got, guards := guarded(r, n)
				copy(got, c0)
				op.f(got, a, b)
				guards(t, op.name)
				equalBits(t, op.name, got, want)
			}
			g := fill(r, n)
			m, v := fill(r, n), fill(r, n)
			for i := range v {
				v[i] *= v[i]
			}
			w := fill(r, n)
			// Decay 1 (no weight decay) and an AdamW factor.
			for _, decay := range []float32{1, 1 - 3e-3*0.1} {
				p := &AdamStep{B1: 0.9, B2: 0.999, OneMinusB1: 1 - float32(0.9), OneMinusB2: 1 - float32(0.999), Eps: 1e-8, C1: 1.7, C2: 31.6, NegLR: -3e-3, Decay: decay}
				wantW, wantM, wantV := slices.Clone(w), slices.Clone(m), slices.Clone(v)
				onPath(pathGo, func() { Adam(wantW, g, wantM, wantV, p) })
				gotW, guards := guarded(r, n)
				copy(gotW, w)
				gotM, gotV := slices.Clone(m), slices.Clone(v)
				Adam(gotW, g, gotM, gotV, p)
				guards(t, "Adam")
				equalBits(t, "Adam w", gotW, wantW)
				equalBits(t, "Adam m", gotM, wantM)
				equalBits(t, "Adam v", gotV, wantV)
			}
		}
	})
}

// TestAdamFormula checks the portable Adam against the update written out
// in float64: they agree to a few float32 roundings.
func TestAdamFormula(t *testing.T) {
	onPath(pathGo, func() {
		r := rand.New(rand.NewPCG(5, 6))
		n := 50
		g, m, v, w := fill(r, n), fill(r, n), fill(r, n), fill(r, n)
		for i := range v {
			v[i] *= v[i]
		}
		p := &AdamStep{B1: 0.9, B2: 0.999, OneMinusB1: 0.1, OneMinusB2: 0.001, Eps: 1e-8, C1: 2, C2: 3, NegLR: -0.01, Decay: 0.999}
		want := make([]float64, n)
		for i := range want {
			mi := float64(g[i])*0.1 + float64(m[i])*0.9
			vi := float64(g[i])*float64(g[i])*0.001 + float64(v[i])*0.999
			want[i] = float64(w[i])*0.999 - 0.01*mi*2/(math.Sqrt(vi*3)+1e-8)
		}
		Adam(w, g, m, v, p)
		for i, x := range w {
			if d := math.Abs(float64(x) - want[i]); d > 1e-6*(1+math.Abs(want[i])) {
				t.Fatalf("w[%d] = %v, float64 formula %v", i, x, want[i])
			}
		}
	})
}

// TestAdamWithoutDecayIsGorgonias: with Decay 1 the update is Gorgonia's
// w += ((m c1)(-lr)) / den, bit for bit, on every path.
func TestAdamWithoutDecayIsGorgonias(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		n := 37
		g, m, v, w := fill(r, n), fill(r, n), fill(r, n), fill(r, n)
		for i := range v {
			v[i] *= v[i]
		}
		p := &AdamStep{B1: 0.9, B2: 0.999, OneMinusB1: 1 - float32(0.9), OneMinusB2: 1 - float32(0.999), Eps: 1e-8, C1: 1.7, C2: 31.6, NegLR: -3e-3, Decay: 1}
		want := slices.Clone(w)
		for j := range want {
			mj := float32(g[j]*p.OneMinusB1) + float32(m[j]*p.B1)
			vj := float32(float32(g[j]*g[j])*p.OneMinusB2) + float32(v[j]*p.B2)
			den := float32(math.Sqrt(float64(float32(vj*p.C2)))) + p.Eps
			want[j] += float32(float32(mj*p.C1)*p.NegLR) / den
		}
		Adam(w, g, m, v, p)
		equalBits(t, "Adam w", w, want)
	})
}

// layerNormF64 is LayerNorm in float64: the formula, not the order.
func layerNormF64(x, gamma, beta []float32) (out, xh []float64) {
	n := len(gamma)
	var mean, q float64
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(n)
	for _, v := range x {
		q += (float64(v) - mean) * (float64(v) - mean)
	}
	inv := 1 / math.Sqrt(q/float64(n)+1e-5)
	for j, v := range x {
		h := (float64(v) - mean) * inv
		xh = append(xh, h)
		out = append(out, h*float64(gamma[j])+float64(beta[j]))
	}
	return out, xh
}

// TestLayerNormPaths: on every path, LayerNorm and its input gradient give
// the portable loops' bits for every row width from 1 to 70 (widths that
// are not a multiple of 4 take the loops) on 1 to 5 rows (the assembly
// takes rows in pairs, then the last alone), and the loops agree with the
// float64 formula; the gradient is checked by finite differences of the
// float64 formula.
func TestLayerNormPaths(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for n := 1; n <= 70; n++ {
			rows := 1 + n%5
			x, gamma, beta := fill(r, rows*n), fill(r, n), fill(r, n)
			for i := range x {
				x[i] = 3*x[i] + 1
			}
			var want [3][]float32
			var wantInv []float32
			run := func() ([3][]float32, []float32) {
				out, xh, inv := make([]float32, rows*n), make([]float32, rows*n), make([]float32, rows)
				LayerNorm(x, gamma, beta, out, xh, inv, 1e-5)
				dy := fill(rand.New(rand.NewPCG(9, uint64(n))), rows*n)
				dx, guards := guarded(r, rows*n)
				LayerNormGradX(dx, gamma, dy, xh, inv)
				guards(t, "LayerNormGradX")
				return [3][]float32{out, xh, slices.Clone(dx)}, inv
			}
			onPath(pathGo, func() { want, wantInv = run() })
			got, inv := run()
			for i, name := range []string{"LayerNorm out", "LayerNorm xh", "LayerNormGradX"} {
				equalBits(t, name, got[i], want[i])
			}
			equalBits(t, "LayerNorm inv", inv, wantInv)
			for rr := range rows {
				o64, h64 := layerNormF64(x[rr*n:rr*n+n], gamma, beta)
				for j := range o64 {
					if math.Abs(float64(got[0][rr*n+j])-o64[j]) > 1e-5*(1+math.Abs(o64[j])) ||
						math.Abs(float64(got[1][rr*n+j])-h64[j]) > 1e-5*(1+math.Abs(h64[j])) {
						t.Fatalf("n=%d row %d [%d]: out %v xh %v, float64 %v %v", n, rr, j, got[0][rr*n+j], got[1][rr*n+j], o64[j], h64[j])
					}
				}
			}
		}
	})
}

// TestLayerNormGradFD checks LayerNormGradX against central differences of
// sum(dy * LayerNorm(x)) in float64.
func TestLayerNormGradFD(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(10, 11))
		for _, n := range []int{5, 8, 32} {
			x, gamma, beta, dy := fill(r, n), fill(r, n), fill(r, n), fill(r, n)
			out, xh, inv, dx := make([]float32, n), make([]float32, n), make([]float32, 1), make([]float32, n)
			LayerNorm(x, gamma, beta, out, xh, inv, 1e-5)
			LayerNormGradX(dx, gamma, dy, xh, inv)
			f := func(x []float32) float64 {
				o, _ := layerNormF64(x, gamma, beta)
				var s float64
				for j, v := range o {
					s += v * float64(dy[j])
				}
				return s
			}
			for j := range x {
				const h = 1e-3
				xp, xm := slices.Clone(x), slices.Clone(x)
				xp[j] += h
				xm[j] -= h
				fd := (f(xp) - f(xm)) / (2 * h)
				if math.Abs(fd-float64(dx[j])) > 2e-3*(1+math.Abs(fd)) {
					t.Fatalf("n=%d dx[%d] = %v, finite difference %v", n, j, dx[j], fd)
				}
			}
		}
	})
}

// BenchmarkLayerNorm: LayerNorm and its input gradient on the training
// step's shape (batch 64 x 16 positions, d_model 32).
func BenchmarkLayerNorm(b *testing.B) {
	const rows, n = 1024, 32
	r := rand.New(rand.NewPCG(1, 2))
	x, gamma, beta, dy := fill(r, rows*n), fill(r, n), fill(r, n), fill(r, rows*n)
	out, xh, dx, inv := make([]float32, rows*n), make([]float32, rows*n), make([]float32, rows*n), make([]float32, rows)
	for _, p := range runnablePaths() {
		b.Run(p.String(), func(b *testing.B) {
			setPath(b, p)
			for b.Loop() {
				LayerNorm(x, gamma, beta, out, xh, inv, 1e-5)
				LayerNormGradX(dx, gamma, dy, xh, inv)
			}
		})
	}
}
