package gl

import (
	"fmt"
	"math"
	"math/rand/v2"

	"headlab/kernels"
)

// Generators of argument data.

func randn(amp float32) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, _ int, x []float32) {
		for i := range x {
			x[i] = amp * float32(r.NormFloat64())
		}
	}
}

// uniform draws from [lo, hi).
func uniform(lo, hi float32) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, _ int, x []float32) {
		for i := range x {
			x[i] = lo + (hi-lo)*r.Float32()
		}
	}
}

// whole draws whole numbers in 0..n-1.
func whole(n int) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, _ int, x []float32) {
		for i := range x {
			x[i] = float32(r.IntN(n))
		}
	}
}

// targets draws a target id in 0..v-1 for about half the rows and -1 for
// the rest; a seed whose id is 3 mod 4 has no answer rows at all.
func targets(v int) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, id int, x []float32) {
		for i := range x {
			x[i] = -1
			if id%4 != 3 && r.IntN(2) == 0 {
				x[i] = float32(r.IntN(v))
			}
		}
	}
}

// constRows fills rows of d with one random value per row, offset by base.
func constRows(d int, base float32) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, _ int, x []float32) {
		for i := 0; i < len(x); i += d {
			v := base + float32(r.NormFloat64())
			for j := i; j < i+d && j < len(x); j++ {
				x[j] = v
			}
		}
	}
}

// offsetRows is randn(amp) plus a per-row offset of base: large means with
// small spreads, LayerNorm's cancellation case.
func offsetRows(d int, base, amp float32) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, _ int, x []float32) {
		for i := range x {
			if i%d == 0 {
				base = -base
			}
			x[i] = base + amp*float32(r.NormFloat64())
		}
	}
}

// values cycles through vs.
func values(vs ...float32) func(*rand.Rand, int, []float32) {
	return func(_ *rand.Rand, _ int, x []float32) {
		for i := range x {
			x[i] = vs[i%len(vs)]
		}
	}
}

// probsOf fills P-shaped [B, H, T, T] rows with softmaxes of randn(amp)
// logits, masked cells 0.
func probsOf(s kernels.Shape, amp float64) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, _ int, x []float32) {
		for row := 0; row < s.B*s.H*s.T; row++ {
			i := row % s.T
			n := s.T
			if s.Causal {
				n = i + 1
			}
			var sum float64
			e := make([]float64, n)
			for j := range e {
				e[j] = math.Exp(amp * r.NormFloat64())
				sum += e[j]
			}
			for j := 0; j < s.T; j++ {
				x[row*s.T+j] = 0
				if j < n {
					x[row*s.T+j] = float32(e[j] / sum)
				}
			}
		}
	}
}

// maskedRandn is randn(1) on P-shaped arrays, masked cells 0 (as MixGradP
// leaves dP).
func maskedRandn(s kernels.Shape) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, _ int, x []float32) {
		for k := range x {
			x[k] = float32(r.NormFloat64())
			if i, j := (k/s.T)%s.T, k%s.T; s.Causal && j > i {
				x[k] = 0
			}
		}
	}
}

// equalKeys makes every key of a sequence equal (constant logit rows).
func equalKeys(s kernels.Shape) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, _ int, x []float32) {
		w := s.H * s.Dh
		first := make([]float32, w)
		for b := 0; b < s.B; b++ {
			for j := range first {
				first[j] = float32(r.NormFloat64())
			}
			for t := 0; t < s.T; t++ {
				copy(x[(b*s.T+t)*w:], first)
			}
		}
	}
}

// failedOf marks seeds whose id is 2 mod 3 as failed (at step 5).
func failedOf(_ *rand.Rand, id int, x []float32) {
	x[0] = 0
	if id%3 == 2 {
		x[0] = 5
	}
}

// negLROf is minus a learning rate that differs by seed.
func negLROf(_ *rand.Rand, id int, x []float32) {
	x[0] = -float32(1e-3 * float64(1+(id+4)%4))
}

// decayOf is an AdamW factor 1 - lr*wd that differs by seed, 1 (no
// decay) for some.
func decayOf(_ *rand.Rand, id int, x []float32) {
	x[0] = [...]float32{1, 1 - 3e-4, 1 - 1e-2}[(id+3)%3]
}

// lossOf is a loss that is NaN, +Inf, -Inf or finite by seed.
func lossOf(_ *rand.Rand, id int, x []float32) {
	x[0] = [...]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 2.5, 1e38}[(id+5)%5]
}

// failedMix is 0 for most seeds and a step for some.
func failedMix(_ *rand.Rand, id int, x []float32) {
	x[0] = [...]float32{0, 0, 7, 0, float32(math.Copysign(0, -1)), 0, 3}[(id+7)%7]
}

// nonFinite is gen with NaN, +Inf and -Inf put in at a few places (NaN
// first, so that even one element gets one).
func nonFinite(gen func(*rand.Rand, int, []float32)) func(*rand.Rand, int, []float32) {
	return func(r *rand.Rand, id int, x []float32) {
		gen(r, id, x)
		for k, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			for i := 5 * k; i < len(x); i += 23 + 6*k {
				x[i] = float32(v)
			}
		}
	}
}

// in, pr, res are argument constructors.
func in(n int, gen func(*rand.Rand, int, []float32)) arg { return arg{n: n, role: act, gen: gen} }
func pr(n int, gen func(*rand.Rand, int, []float32)) arg { return arg{n: n, role: param, gen: gen} }
func res(n int) arg                                      { return arg{n: n, role: out} }
func upd(n int, gen func(*rand.Rand, int, []float32)) arg {
	return arg{n: n, role: inout, gen: gen}
}

// attnShapes are the attention shapes the cases use.
var attnShapes = []kernels.Shape{
	{B: 2, T: 5, H: 2, Dh: 4},
	{B: 1, T: 16, H: 2, Dh: 16},
	{B: 3, T: 1, H: 1, Dh: 3},
	{B: 2, T: 33, H: 1, Dh: 12},
	{B: 1, T: 64, H: 2, Dh: 8},
	{B: 2, T: 20, H: 1, Dh: 64},
	{B: 3, T: 16, H: 4, Dh: 8},
}

// allCases lists every kernel case: random inputs and extreme ones.
func allCases() []kcase {
	var cs []kcase
	add := func(c kcase) {
		if c.dispatches == 0 {
			c.dispatches = 1
		}
		cs = append(cs, c)
	}

	// MatMul in all four transposes, with a bias, without, and k = 0.
	for _, m := range []struct {
		tA, tB  bool
		m, n, k int
		bias    bool
		gA, gB  func(*rand.Rand, int, []float32)
		extra   string
	}{
		{false, false, 5, 7, 6, true, randn(1), randn(1), ""},
		{true, false, 5, 7, 6, false, randn(1), randn(1), ""},
		{false, true, 5, 7, 6, true, randn(1), randn(1), ""},
		{true, true, 5, 7, 6, true, randn(1), randn(1), ""},
		{false, false, 3, 4, 100, true, randn(1), randn(1), "_longk"},
		{false, false, 4, 3, 9, true, randn(1e4), randn(1e-4), "_scaled"},
		{false, false, 2, 3, 0, true, randn(1), randn(1), "_k0"},
		{true, true, 33, 17, 40, true, randn(1), randn(1), "_big"},
		{false, false, 64, 32, 32, true, randn(1), randn(0.2), "_model"},
		// Tiles' edges and many K chunks: the weight gradient's shape
		// (tA, a long K), the input gradient's (tB) and ragged sizes.
		{false, false, 70, 40, 37, true, randn(1), randn(1), "_ragged"},
		{true, false, 32, 32, 300, false, randn(1), randn(1), "_weightgrad"},
		{true, false, 45, 70, 81, false, randn(1), randn(1), "_ragged"},
		{false, true, 100, 32, 32, false, randn(1), randn(1), "_inputgrad"},
		{true, true, 70, 40, 37, false, randn(1), randn(1), "_ragged"},
	} {
		m := m
		args := []arg{in(m.m*m.k, m.gA), pr(m.k*m.n, m.gB), res(m.m * m.n)}
		if m.bias {
			args = append(args, pr(m.n, randn(1)))
		}
		add(kcase{kernel: "MatMul", name: fmt.Sprintf("MatMul_tA%v_tB%v_bias%v%s", m.tA, m.tB, m.bias, m.extra), args: args,
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				var bias kernels.Tensor
				if m.bias {
					bias = t[3]
				}
				return dv.MatMul(S, m.tA, m.tB, m.m, m.n, m.k, t[0], t[1], t[2], bias)
			}})
	}

	// Linear: the product with each epilogue (GELU, the residual add,
	// both), with a bias and without.
	for _, l := range []struct {
		m, n, k        int
		bias, act, res bool
	}{
		{5, 7, 6, true, true, false},
		{5, 7, 6, true, false, true},
		{6, 9, 4, false, true, true},
		{64, 32, 32, true, false, true},
		{33, 64, 32, true, true, false},
		{100, 64, 32, true, true, false},
		{70, 33, 64, true, false, true},
	} {
		l := l
		args := []arg{in(l.m*l.k, randn(1)), pr(l.k*l.n, randn(0.5)), res(l.m * l.n)}
		at := map[string]int{}
		for _, opt := range []struct {
			on   bool
			name string
			a    arg
		}{{l.bias, "bias", pr(l.n, randn(1))}, {l.res, "res", in(l.m*l.n, randn(1))}, {l.act, "deriv", res(l.m * l.n)}} {
			if opt.on {
				at[opt.name] = len(args)
				args = append(args, opt.a)
			}
		}
		add(kcase{kernel: "Linear", name: fmt.Sprintf("Linear_%dx%dx%d_bias%v_gelu%v_res%v", l.m, l.n, l.k, l.bias, l.act, l.res), args: args,
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				var bias, resid, deriv kernels.Tensor
				if i, ok := at["bias"]; ok {
					bias = t[i]
				}
				if i, ok := at["res"]; ok {
					resid = t[i]
				}
				if i, ok := at["deriv"]; ok {
					deriv = t[i]
				}
				return dv.Linear(S, l.m, l.n, l.k, t[0], t[1], bias, resid, t[2], deriv)
			}})
	}

	add(kcase{kernel: "ColSum", name: "ColSum", args: []arg{in(9*6, randn(1)), res(6)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.ColSum(S, 9, 6, t[0], t[1]) }})
	add(kcase{kernel: "ColDot", name: "ColDot", args: []arg{in(9*6, randn(1)), in(9*6, randn(1)), res(6)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.ColDot(S, 9, 6, t[0], t[1], t[2]) }})
	// Many row chunks, and more columns than a workgroup.
	for _, cs := range []struct{ rows, d int }{{300, 32}, {70, 100}} {
		cs := cs
		n := cs.rows * cs.d
		add(kcase{kernel: "ColSum", name: fmt.Sprintf("ColSum_%dx%d", cs.rows, cs.d), args: []arg{in(n, randn(1)), res(cs.d)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ColSum(S, cs.rows, cs.d, t[0], t[1])
			}})
		add(kcase{kernel: "ColDot", name: fmt.Sprintf("ColDot_%dx%d", cs.rows, cs.d), args: []arg{in(n, randn(1)), in(n, randn(1)), res(cs.d)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ColDot(S, cs.rows, cs.d, t[0], t[1], t[2])
			}})
	}

	// The fused pairs (WeightGrad, ColDotSum), or the two kernels one by
	// one on a device that does not fuse.
	for _, w := range []struct{ m, n, k int }{{32, 32, 300}, {45, 70, 81}, {5, 3, 1}} {
		w := w
		add(kcase{kernel: "WeightGrad", name: fmt.Sprintf("WeightGrad_%dx%dx%d", w.m, w.n, w.k),
			args: []arg{in(w.k*w.m, randn(1)), in(w.k*w.n, randn(1)), res(w.m * w.n), res(w.n)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.WeightGrad(S, w.m, w.n, w.k, t[0], t[1], t[2], t[3])
			}})
	}
	for _, cs := range []struct{ rows, d int }{{9, 6}, {300, 32}, {70, 100}} {
		cs := cs
		n := cs.rows * cs.d
		add(kcase{kernel: "ColDotSum", name: fmt.Sprintf("ColDotSum_%dx%d", cs.rows, cs.d),
			args: []arg{in(n, randn(1)), in(n, randn(1)), res(cs.d), res(cs.d)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ColDotSum(S, cs.rows, cs.d, t[0], t[1], t[2], t[3])
			}})
	}

	// LayerNorm and its gradient: D a multiple of 4 and not, constant
	// rows, large offsets.
	for _, ln := range []struct {
		rows, d int
		gen     func(*rand.Rand, int, []float32)
		name    string
	}{
		{5, 32, randn(1), "d32"},
		{6, 7, randn(2), "d7"},
		{4, 3, randn(1), "d3"},
		{4, 8, constRows(8, 0), "const"},
		{4, 32, offsetRows(32, 1e3, 1e-1), "offset"},
		{33, 64, randn(1), "d64"},
		{130, 32, randn(1), "rows130"},
		{3, 200, randn(1), "d200"},
		{2, 2100, randn(1), "d2100"}, // rows too long to stage
		{5, 1, randn(1), "d1"},
	} {
		ln := ln
		add(kcase{kernel: "LayerNorm", name: "LayerNorm_" + ln.name,
			args: []arg{in(ln.rows*ln.d, ln.gen), pr(ln.d, uniform(0.5, 1.5)), pr(ln.d, randn(0.1)), res(ln.rows * ln.d), res(ln.rows * ln.d), res(ln.rows)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.LayerNorm(S, ln.rows, ln.d, t[0], t[1], t[2], t[3], t[4], t[5])
			}})
		add(kcase{kernel: "LayerNormGradX", name: "LayerNormGradX_" + ln.name,
			args: []arg{pr(ln.d, uniform(0.5, 1.5)), in(ln.rows*ln.d, randn(1)), in(ln.rows*ln.d, randn(1)), in(ln.rows, uniform(0.1, 3)), res(ln.rows * ln.d)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.LayerNormGradX(S, ln.rows, ln.d, t[0], t[1], t[2], t[3], t[4])
			}})
	}

	// GELU on normal inputs and on extremes (tails, zero, tiny, huge).
	for _, gl := range []struct {
		n    int
		gen  func(*rand.Rand, int, []float32)
		name string
	}{
		{300, randn(3), "normal"},
		{34, values(0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-6, -1e-6, 0.5, -0.5, 3, -3, 5, -5, 9.5, -9.5,
			10, -10, 13, -13, 14.5, -14.5, 20, -20, 40, -40, 100, -100, 1e10, -1e10, 1e-40, -1e-40, 0.70710677, -0.70710677, 2.5e-8, -7), "extreme"},
	} {
		gl := gl
		add(kcase{kernel: "GELU", name: "GELU_" + gl.name, args: []arg{in(gl.n, gl.gen), res(gl.n), res(gl.n)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.GELU(S, gl.n, t[0], t[1], t[2]) }})
	}

	add(kcase{kernel: "Mul", name: "Mul", args: []arg{in(50, randn(1)), pr(50, randn(1)), res(50)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Mul(S, 50, t[0], t[1], t[2]) }})
	add(kcase{kernel: "Add", name: "Add", args: []arg{in(50, randn(1)), pr(50, randn(1e3)), res(50)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Add(S, 50, t[0], t[1], t[2]) }})
	add(kcase{kernel: "ColScale", name: "ColScale", args: []arg{in(4*6, randn(1)), pr(6, values(1, 0, 1, 0.5, -2, 1)), res(4 * 6)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
			return dv.ColScale(S, 4, 6, t[0], t[1], t[2])
		}})

	add(kcase{kernel: "Embed", name: "Embed", args: []arg{in(10, whole(5)), pr(5*6, randn(1)), res(10 * 6)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Embed(S, 10, 6, t[0], t[1], t[2]) }})
	add(kcase{kernel: "EmbedGrad", name: "EmbedGrad", args: []arg{in(10, whole(5)), in(10*6, randn(1)), res(5 * 6)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
			return dv.EmbedGrad(S, 10, 6, 5, t[0], t[1], t[2])
		}, dispatches: 2})
	// Positions as ids, shared by every seed (the positional embedding's
	// gradient), with more rows than one workgroup.
	add(kcase{kernel: "EmbedGrad", name: "EmbedGrad_positions", args: []arg{pr(80, func(_ *rand.Rand, _ int, x []float32) {
		for i := range x {
			x[i] = float32(i % 16)
		}
	}), in(80*4, randn(1)), res(16 * 4)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
			return dv.EmbedGrad(S, 80, 4, 16, t[0], t[1], t[2])
		}, dispatches: 2})
	// The answer rows' lookup: unique ids, shared, into more rows than
	// there are ids (most output rows stay 0).
	add(kcase{kernel: "EmbedGrad", name: "EmbedGrad_answers", args: []arg{pr(12, func(_ *rand.Rand, _ int, x []float32) {
		for i := range x {
			x[i] = float32(3*i + 1)
		}
	}), in(12*5, randn(1)), res(40 * 5)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
			return dv.EmbedGrad(S, 12, 5, 40, t[0], t[1], t[2])
		}, dispatches: 2})
	// Tokens: many rows per id, ids per seed.
	add(kcase{kernel: "EmbedGrad", name: "EmbedGrad_tokens", args: []arg{in(200, whole(7)), in(200*33, randn(1)), res(7 * 33)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
			return dv.EmbedGrad(S, 200, 33, 7, t[0], t[1], t[2])
		}, dispatches: 2})

	// Attention, causal and not, on random and extreme inputs.
	for _, s0 := range attnShapes {
		for _, causal := range []bool{false, true} {
			s := s0
			s.Causal = causal
			sn := fmt.Sprintf("B%dT%dH%dDh%d_causal%v", s.B, s.T, s.H, s.Dh, causal)
			q, p := s.QKVLen(), s.ProbsLen()
			type variant struct {
				name   string
				gq, gk func(*rand.Rand, int, []float32)
				pAmp   float64
			}
			vs := []variant{{"", randn(1), randn(1), 1}}
			if s.T > 1 {
				vs = append(vs, variant{"_large", randn(40), randn(1), 12}, variant{"_equalrows", values(0), randn(1), 0},
					variant{"_equalkeys", randn(1), equalKeys(s), 0})
			}
			for _, v := range vs {
				n := sn + v.name
				add(kcase{kernel: "Probs", name: "Probs_" + n, args: []arg{in(q, v.gq), in(q, v.gk), res(p)},
					call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Probs(S, s, t[0], t[1], t[2]) }})
				add(kcase{kernel: "ProbsGradQ", name: "ProbsGradQ_" + n, args: []arg{in(p, probsOf(s, v.pAmp)), in(p, maskedRandn(s)), in(q, v.gk), res(q)},
					call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
						return dv.ProbsGradQ(S, s, t[0], t[1], t[2], t[3])
					}})
				add(kcase{kernel: "ProbsGradK", name: "ProbsGradK_" + n, args: []arg{in(p, probsOf(s, v.pAmp)), in(p, maskedRandn(s)), in(q, v.gq), res(q)},
					call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
						return dv.ProbsGradK(S, s, t[0], t[1], t[2], t[3])
					}})
			}
			add(kcase{kernel: "Mix", name: "Mix_" + sn, args: []arg{in(p, probsOf(s, 1)), in(q, randn(1)), res(q)},
				call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Mix(S, s, t[0], t[1], t[2]) }})
			add(kcase{kernel: "MixGradP", name: "MixGradP_" + sn, args: []arg{in(q, randn(1)), in(q, randn(1)), res(p)},
				call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.MixGradP(S, s, t[0], t[1], t[2]) }})
			add(kcase{kernel: "MixGradV", name: "MixGradV_" + sn, args: []arg{in(p, probsOf(s, 1)), in(q, randn(1)), res(q)},
				call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.MixGradV(S, s, t[0], t[1], t[2]) }})
		}
	}

	// The loss, its gradient and the accuracy: normal, large and equal
	// logits, more rows than one workgroup, ties.
	for _, sx := range []struct {
		rows, v int
		gen     func(*rand.Rand, int, []float32)
		name    string
	}{
		{70, 11, randn(2), "normal"},
		{9, 16, randn(60), "large"},
		{9, 5, constRows(5, 0), "equal"},
		{130, 4, whole(3), "ties"},
		{5, 1, randn(1), "v1"},
		{200, 16, randn(3), "rows200"},
		{130, 40, randn(3), "v40"},
	} {
		sx := sx
		rv := sx.rows * sx.v
		add(kcase{kernel: "SoftmaxXent", name: "SoftmaxXent_" + sx.name,
			args: []arg{in(rv, sx.gen), in(sx.rows, targets(sx.v)), res(rv), res(1)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.SoftmaxXent(S, sx.rows, sx.v, t[0], t[1], t[2], t[3])
			}})
		add(kcase{kernel: "SoftmaxXentGrad", name: "SoftmaxXentGrad_" + sx.name,
			args: []arg{in(sx.rows, targets(sx.v)), in(rv, uniform(0, 1)), pr(1, uniform(0.5, 2)), res(rv)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.SoftmaxXentGrad(S, sx.rows, sx.v, t[0], t[1], t[2], t[3])
			}})
		add(kcase{kernel: "CountCorrect", name: "CountCorrect_" + sx.name,
			args: []arg{in(rv, sx.gen), in(sx.rows, targets(sx.v)), res(1)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.CountCorrect(S, sx.rows, sx.v, t[0], t[1], t[2])
			}})
	}

	// Adam: ordinary, tiny gradients near the denormals, large ones; at
	// step 1 and 3; failed seeds are skipped.
	for _, ad := range []struct {
		g, mv func(*rand.Rand, int, []float32)
		t     int
		name  string
	}{
		{randn(1), randn(1e-2), 3, "normal"},
		{randn(1e-20), randn(1e-38), 1, "tiny"},
		{values(1e-19, -3e-20, 1e-22, 0, 1e-45, -1e-38, 2e-23), values(1e-40, 0, 1e-38, -1e-39), 2, "denormal"},
		{randn(1e6), randn(1e3), 3, "large"},
	} {
		ad := ad
		c1 := float32(1) / float32(1-math.Pow(kernels.AdamBeta1, float64(ad.t)))
		c2 := float32(1) / float32(1-math.Pow(kernels.AdamBeta2, float64(ad.t)))
		add(kcase{kernel: "Adam", name: "Adam_" + ad.name,
			args: []arg{upd(50, randn(1)), in(50, ad.g), upd(50, ad.mv), upd(50, func(r *rand.Rand, id int, x []float32) {
				ad.mv(r, id, x)
				for i := range x {
					x[i] = float32(math.Abs(float64(x[i])))
				}
			}), pr(1, negLROf), pr(1, decayOf), pr(1, failedOf)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.Adam(S, 50, t[0], t[1], t[2], t[3], t[4], t[5], t[6], c1, c2)
			}})
	}

	add(kcase{kernel: "MarkDiverged", name: "MarkDiverged", args: []arg{in(1, lossOf), upd(1, failedMix)},
		call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.MarkDiverged(S, t[0], t[1], 12) }})
	cs = append(cs, fusedCases()...)
	return append(cs, nonFiniteCases()...)
}

// attender is dv's fused attention where it takes s, else its kernels
// one by one.
func attender(dv kernels.Device, s kernels.Shape) kernels.Fused {
	if dv.Attends(s) {
		return dv
	}
	return kernels.Separately{Device: dv}
}

// fusedKernels are the kernels of kernels/fused.go, which the cases run
// fused where a device has them.
var fusedKernels = map[string]bool{"WeightGrad": true, "ColDotSum": true, "MatMulThen": true, "LayerNormGrad": true,
	"EmbedAdd": true, "Attend": true, "AttendGrad": true}

// fusedCases are the cases of the fused kernels beyond WeightGrad and
// ColDotSum: every epilogue of a product, LayerNorm's gradients with the
// residual's and without, the two embeddings, attention's forward and
// backward on the shapes the fused kernels take (and one they do not).
func fusedCases() []kcase {
	var cs []kcase
	for _, m := range []struct {
		tA, tB  bool
		m, n, k int
		keep    bool
	}{
		{false, true, 100, 32, 32, false},
		{false, true, 70, 40, 37, true},
		{true, false, 45, 70, 81, false},
		{false, false, 33, 64, 32, true},
		{true, true, 5, 7, 6, false},
	} {
		for _, e := range []kernels.Epilogue{kernels.EpilogueAdd, kernels.EpilogueMul, kernels.EpilogueColScale} {
			m, e := m, e
			xn := m.m * m.n
			gx := randn(1)
			if e == kernels.EpilogueColScale {
				xn, gx = m.n, values(1, 0, 1, 0.5, -2, 1, 1)
			}
			args := []arg{in(m.m*m.k, randn(1)), pr(m.k*m.n, randn(0.5)), pr(m.n, randn(1)), in(xn, gx), res(m.m * m.n)}
			if m.keep {
				args = append(args, res(m.m*m.n))
			}
			cs = append(cs, kcase{kernel: "MatMulThen", name: fmt.Sprintf("MatMulThen%d_tA%v_tB%v_%dx%dx%d_keep%v", e, m.tA, m.tB, m.m, m.n, m.k, m.keep),
				args: args, call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
					var c kernels.Tensor
					if m.keep {
						c = t[5]
					}
					return dv.MatMulThen(S, m.tA, m.tB, m.m, m.n, m.k, t[0], t[1], t[2], c, e, t[3], t[4])
				}})
		}
	}
	for _, ln := range []struct {
		rows, d    int
		gen        func(*rand.Rand, int, []float32)
		res        bool
		name       string
		dispatches int
	}{
		{5, 32, randn(1), true, "d32", 1},
		{130, 32, randn(1), true, "rows130", 1},
		{1024, 32, randn(1), false, "model", 1},
		{6, 7, randn(2), true, "d7", 1},
		{33, 64, randn(1), false, "d64", 1},
		{3, 200, randn(1), true, "d200", 1},
		{2, 1024, randn(1), true, "d1024", 1},
		{2, 1030, randn(1), true, "d1030", 3},
		{2, 1030, randn(1), false, "d1030_nores", 2},
		{4, 32, offsetRows(32, 1e3, 1e-1), false, "offset", 1},
		{5, 1, randn(1), true, "d1", 1},
	} {
		ln := ln
		n := ln.rows * ln.d
		args := []arg{pr(ln.d, uniform(0.5, 1.5)), in(n, ln.gen), in(n, randn(1)), in(ln.rows, uniform(0.1, 3)), res(n), res(ln.d), res(ln.d)}
		if ln.res {
			args = append(args, in(n, randn(1)))
		}
		cs = append(cs, kcase{kernel: "LayerNormGrad", name: fmt.Sprintf("LayerNormGrad_%s_res%v", ln.name, ln.res), args: args, dispatches: ln.dispatches,
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				var r kernels.Tensor
				if ln.res {
					r = t[7]
				}
				return dv.LayerNormGrad(S, ln.rows, ln.d, t[0], t[1], t[2], t[3], r, t[4], t[5], t[6])
			}})
	}
	for _, e := range []struct{ rows, d, v, v2 int }{{10, 6, 5, 4}, {80, 33, 7, 16}, {20, 100, 3, 20}} {
		e := e
		cs = append(cs, kcase{kernel: "EmbedAdd", name: fmt.Sprintf("EmbedAdd_%dx%d", e.rows, e.d),
			args: []arg{in(e.rows, whole(e.v)), pr(e.v*e.d, randn(1)), pr(e.rows, whole(e.v2)), pr(e.v2*e.d, randn(1)), res(e.rows * e.d)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.EmbedAdd(S, e.rows, e.d, t[0], t[1], t[2], t[3], t[4])
			}})
	}
	for _, s0 := range attnShapes {
		for _, causal := range []bool{false, true} {
			s := s0
			s.Causal = causal
			sn := fmt.Sprintf("B%dT%dH%dDh%d_causal%v", s.B, s.T, s.H, s.Dh, causal)
			q, p, w := s.QKVLen(), s.ProbsLen(), s.H*s.Dh
			gates := values(1, 1, 0, 1, 0.5)
			// On GL, one dispatch where the fused kernels take the
			// shape, else the kernels they replace.
			fwd, fwdLarge, bwd := 1, 1, 1
			if !(&Device{}).Attends(s) {
				fwd, fwdLarge, bwd = 3, 2, 4
			}
			for _, keepO := range []bool{true, false} {
				keepO := keepO
				args := []arg{in(q, randn(1)), in(q, randn(1)), in(q, randn(1)), pr(w, gates), res(p), res(q)}
				if keepO {
					args = append(args, res(q))
				}
				cs = append(cs, kcase{kernel: "Attend", name: fmt.Sprintf("Attend_%s_o%v", sn, keepO), args: args, dispatches: fwd,
					call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
						var o kernels.Tensor
						if keepO {
							o = t[6]
						}
						return attender(dv, s).Attend(S, s, t[0], t[1], t[2], t[3], t[4], o, t[5])
					}})
			}
			cs = append(cs, kcase{kernel: "Attend", name: "Attend_large_" + sn, dispatches: fwdLarge,
				args: []arg{in(q, randn(40)), in(q, randn(1)), in(q, randn(1)), pr(w, gates), res(p), res(q)},
				call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
					return attender(dv, s).Attend(S, s, t[0], t[1], t[2], kernels.Tensor{}, t[4], t[5], kernels.Tensor{})
				}})
			cs = append(cs, kcase{kernel: "AttendGrad", name: "AttendGrad_" + sn, dispatches: bwd,
				args: []arg{in(p, probsOf(s, 1)), in(q, randn(1)), in(q, randn(1)), in(q, randn(1)), in(q, randn(1)), res(q), res(q), res(q)},
				call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
					return attender(dv, s).AttendGrad(S, s, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7])
				}})
		}
	}
	nf := nonFinite(randn(1))
	s := kernels.Shape{B: 2, T: 9, H: 2, Dh: 4, Causal: true}
	q, p := s.QKVLen(), s.ProbsLen()
	cs = append(cs,
		kcase{kernel: "MatMulThen", args: []arg{in(40*24, nf), pr(24*33, randn(1)), in(40*33, nonFinite(randn(1))), res(40 * 33), res(40 * 33)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.MatMulThen(S, false, true, 40, 33, 24, t[0], t[1], kernels.Tensor{}, t[4], kernels.EpilogueAdd, t[2], t[3])
			}},
		kcase{kernel: "MatMulThen", args: []arg{in(40*24, randn(1)), pr(24*33, randn(1)), in(40*33, nonFinite(values(0, 1, -2))), res(40 * 33)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.MatMulThen(S, false, true, 40, 33, 24, t[0], t[1], kernels.Tensor{}, kernels.Tensor{}, kernels.EpilogueMul, t[2], t[3])
			}},
		kcase{kernel: "MatMulThen", args: []arg{in(40*24, nf), pr(24*33, randn(1)), pr(33, nonFinite(values(1, 0))), res(40 * 33), res(40 * 33)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.MatMulThen(S, false, true, 40, 33, 24, t[0], t[1], kernels.Tensor{}, t[4], kernels.EpilogueColScale, t[2], t[3])
			}},
		kcase{kernel: "LayerNormGrad", args: []arg{pr(16, uniform(0.5, 1.5)), in(30*16, nf), in(30*16, randn(1)), in(30, uniform(0.1, 3)), res(30 * 16), res(16), res(16), in(30*16, nf)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.LayerNormGrad(S, 30, 16, t[0], t[1], t[2], t[3], t[7], t[4], t[5], t[6])
			}},
		kcase{kernel: "LayerNormGrad", args: []arg{pr(16, uniform(0.5, 1.5)), in(30*16, randn(1)), in(30*16, nf), in(30, uniform(0.1, 3)), res(30 * 16), res(16), res(16)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.LayerNormGrad(S, 30, 16, t[0], t[1], t[2], t[3], kernels.Tensor{}, t[4], t[5], t[6])
			}},
		kcase{kernel: "EmbedAdd", args: []arg{in(30, whole(5)), pr(5*8, nf), pr(30, whole(4)), pr(4*8, nonFinite(randn(1))), res(30 * 8)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.EmbedAdd(S, 30, 8, t[0], t[1], t[2], t[3], t[4])
			}},
		kcase{kernel: "Attend", args: []arg{in(q, nf), in(q, randn(1)), in(q, randn(1)), pr(s.H*s.Dh, nonFinite(values(1, 0))), res(p), res(q), res(q)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return attender(dv, s).Attend(S, s, t[0], t[1], t[2], t[3], t[4], t[6], t[5])
			}},
		kcase{kernel: "Attend", args: []arg{in(q, randn(1)), in(q, randn(1)), in(q, nf), pr(s.H*s.Dh, values(1, 0)), res(p), res(q), res(q)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return attender(dv, s).Attend(S, s, t[0], t[1], t[2], t[3], t[4], t[6], t[5])
			}},
	)
	for _, v := range []int{1, 2, 3, 4} { // dO, Q, K, V non-finite in turn
		args := []arg{in(p, probsOf(s, 1)), in(q, randn(1)), in(q, randn(1)), in(q, randn(1)), in(q, randn(1)), res(q), res(q), res(q)}
		args[v].gen = nf
		cs = append(cs, kcase{kernel: "AttendGrad", args: args,
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return attender(dv, s).AttendGrad(S, s, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7])
			}})
	}
	for i := range cs {
		if cs[i].name == "" {
			cs[i].name = fmt.Sprintf("%s_nonfinite%d", cs[i].kernel, i)
		}
		if cs[i].dispatches == 0 {
			cs[i].dispatches = 1
		}
	}
	return cs
}

// nonFiniteCases feed NaN and infinities to every kernel that computes
// with floats (ids and targets stay whole): a NaN propagates as on the
// CPU, through row maxima and exponentials too.
func nonFiniteCases() []kcase {
	nf := nonFinite(randn(1))
	s := kernels.Shape{B: 2, T: 9, H: 2, Dh: 4, Causal: true}
	q, p := s.QKVLen(), s.ProbsLen()
	cs := []kcase{
		{kernel: "MatMul", args: []arg{in(40*24, nf), pr(24*33, randn(1)), res(40 * 33), pr(33, nf)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.MatMul(S, false, false, 40, 33, 24, t[0], t[1], t[2], t[3])
			}},
		{kernel: "MatMul", args: []arg{in(24*40, randn(1)), in(24*33, nf), res(40 * 33)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.MatMul(S, true, false, 40, 33, 24, t[0], t[1], t[2], kernels.Tensor{})
			}},
		{kernel: "WeightGrad", args: []arg{in(50*20, randn(1)), in(50*33, nf), res(20 * 33), res(33)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.WeightGrad(S, 20, 33, 50, t[0], t[1], t[2], t[3])
			}},
		{kernel: "ColDotSum", args: []arg{in(70*20, nf), in(70*20, randn(1)), res(20), res(20)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ColDotSum(S, 70, 20, t[0], t[1], t[2], t[3])
			}},
		{kernel: "Linear", args: []arg{in(40*16, nf), pr(16*20, randn(1)), res(40 * 20), res(40 * 20)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.Linear(S, 40, 20, 16, t[0], t[1], kernels.Tensor{}, kernels.Tensor{}, t[2], t[3])
			}},
		{kernel: "Linear", args: []arg{in(40*16, randn(1)), pr(16*20, randn(1)), res(40 * 20), in(40*20, nf)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.Linear(S, 40, 20, 16, t[0], t[1], kernels.Tensor{}, t[3], t[2], kernels.Tensor{})
			}},
		{kernel: "ColSum", args: []arg{in(70*20, nf), res(20)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.ColSum(S, 70, 20, t[0], t[1]) }},
		{kernel: "ColDot", args: []arg{in(70*20, nf), in(70*20, randn(1)), res(20)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ColDot(S, 70, 20, t[0], t[1], t[2])
			}},
		{kernel: "LayerNorm", args: []arg{in(30*16, nf), pr(16, uniform(0.5, 1.5)), pr(16, randn(0.1)), res(30 * 16), res(30 * 16), res(30)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.LayerNorm(S, 30, 16, t[0], t[1], t[2], t[3], t[4], t[5])
			}},
		{kernel: "LayerNormGradX", args: []arg{pr(16, uniform(0.5, 1.5)), in(30*16, nf), in(30*16, randn(1)), in(30, uniform(0.1, 3)), res(30 * 16)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.LayerNormGradX(S, 30, 16, t[0], t[1], t[2], t[3], t[4])
			}},
		{kernel: "GELU", args: []arg{in(100, nf), res(100), res(100)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.GELU(S, 100, t[0], t[1], t[2]) }},
		{kernel: "Mul", args: []arg{in(100, nf), in(100, nonFinite(values(0, 1, -2))), res(100)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Mul(S, 100, t[0], t[1], t[2]) }},
		{kernel: "Add", args: []arg{in(100, nf), in(100, nonFinite(values(1, -1))), res(100)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Add(S, 100, t[0], t[1], t[2]) }},
		{kernel: "ColScale", args: []arg{in(10*8, nf), pr(8, nonFinite(values(1, 0))), res(10 * 8)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ColScale(S, 10, 8, t[0], t[1], t[2])
			}},
		{kernel: "Embed", args: []arg{in(30, whole(5)), pr(5*8, nf), res(30 * 8)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Embed(S, 30, 8, t[0], t[1], t[2]) }},
		{kernel: "EmbedGrad", dispatches: 2, args: []arg{in(30, whole(5)), in(30*8, nf), res(5 * 8)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.EmbedGrad(S, 30, 8, 5, t[0], t[1], t[2])
			}},
		{kernel: "Probs", args: []arg{in(q, nf), in(q, randn(1)), res(p)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Probs(S, s, t[0], t[1], t[2]) }},
		{kernel: "Probs", args: []arg{in(q, randn(1)), in(q, nf), res(p)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Probs(S, s, t[0], t[1], t[2]) }},
		{kernel: "Mix", args: []arg{in(p, probsOf(s, 1)), in(q, nf), res(q)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.Mix(S, s, t[0], t[1], t[2]) }},
		{kernel: "MixGradP", args: []arg{in(q, nf), in(q, randn(1)), res(p)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.MixGradP(S, s, t[0], t[1], t[2]) }},
		{kernel: "MixGradV", args: []arg{in(p, probsOf(s, 1)), in(q, nf), res(q)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error { return dv.MixGradV(S, s, t[0], t[1], t[2]) }},
		{kernel: "ProbsGradQ", args: []arg{in(p, probsOf(s, 1)), in(p, nonFinite(maskedRandn(s))), in(q, randn(1)), res(q)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ProbsGradQ(S, s, t[0], t[1], t[2], t[3])
			}},
		{kernel: "ProbsGradK", args: []arg{in(p, probsOf(s, 1)), in(p, nonFinite(maskedRandn(s))), in(q, randn(1)), res(q)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ProbsGradK(S, s, t[0], t[1], t[2], t[3])
			}},
		{kernel: "ProbsGradQ", args: []arg{in(p, probsOf(s, 1)), in(p, maskedRandn(s)), in(q, nf), res(q)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ProbsGradQ(S, s, t[0], t[1], t[2], t[3])
			}},
		{kernel: "ProbsGradK", args: []arg{in(p, probsOf(s, 1)), in(p, maskedRandn(s)), in(q, nf), res(q)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.ProbsGradK(S, s, t[0], t[1], t[2], t[3])
			}},
		{kernel: "SoftmaxXent", args: []arg{in(40*7, nf), in(40, targets(7)), res(40 * 7), res(1)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.SoftmaxXent(S, 40, 7, t[0], t[1], t[2], t[3])
			}},
		{kernel: "SoftmaxXentGrad", args: []arg{in(40, targets(7)), in(40*7, nf), pr(1, uniform(0.5, 2)), res(40 * 7)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.SoftmaxXentGrad(S, 40, 7, t[0], t[1], t[2], t[3])
			}},
		{kernel: "CountCorrect", args: []arg{in(40*7, nf), in(40, targets(7)), res(1)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.CountCorrect(S, 40, 7, t[0], t[1], t[2])
			}},
		{kernel: "Adam", args: []arg{upd(60, randn(1)), in(60, nf), upd(60, randn(1e-2)), upd(60, uniform(0, 1e-3)), pr(1, negLROf), pr(1, decayOf), pr(1, failedOf)},
			call: func(dv kernels.Device, S int, t []kernels.Tensor) error {
				return dv.Adam(S, 60, t[0], t[1], t[2], t[3], t[4], t[5], t[6], 1.5, 1.2)
			}},
	}
	for i := range cs {
		cs[i].name = fmt.Sprintf("%s_nonfinite%d", cs[i].kernel, i)
		if cs[i].dispatches == 0 {
			cs[i].dispatches = 1
		}
	}
	return cs
}
