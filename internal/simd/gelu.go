package simd

import "math"

// GELU computes, for every x[i], y[i] = GELU(x[i]) = x Phi(x) (Phi the
// standard normal CDF) and d[i] = GELU'(x[i]) = Phi(x) + x phi(x).
//
// Phi comes from erfcx, the scaled complementary error function:
// Phi(-|x|) = exp(-x^2/2) erfcx(|x|/sqrt2) / 2, with erfcx(z) fitted as a
// degree-10 polynomial Q in u = 1/(1 + z/2) (least squares on relative
// error over 0 <= z <= 9.5); exp(-x^2/2) also gives phi. One exponential
// per element serves both outputs. Measured against the float64 exact
// GELU (TestGELUAccuracy): |Phi error| <= 2.4e-7, about two float32 steps
// at 1; see docs/model.md. The AVX-512, AVX2 and NEON kernels evaluate this in
// float32 with the same operations (so the same bits); the portable path
// evaluates the same formula in scalar float32 without fused
// multiply-adds, so it agrees with them to rounding, not bit for bit.
func GELU(x, y, d []float32) {
	n := len(x)
	y, d = y[:n], d[:n]
	if cur == pathGo {
		for i, v := range x {
			y[i], d[i] = geluGo(v)
		}
		return
	}
	full := n &^ 15
	if full > 0 {
		geluAsm(full, &x[0], &y[0], &d[0])
	}
	if full < n {
		var xt, yt, dt [16]float32
		copy(xt[:], x[full:])
		geluAsm(16, &xt[0], &yt[0], &dt[0])
		copy(y[full:], yt[:])
		copy(d[full:], dt[:])
	}
}

// erfcxQ is Q, highest degree first; the kernels and geluGo use it
// rounded to float32.
var erfcxQ = [11]float64{0.02687624283, -0.2057972699, 0.6326183677, -0.9580563903, 0.6790705919,
	-0.2505153716, 0.2854185104, 0.2231783569, 0.2853632867, 0.281834662, 9.059159311e-06}

var erfcxQ32 = func() (q [11]float32) {
	for i, c := range erfcxQ {
		q[i] = float32(c)
	}
	return q
}()

// expTaylor is the exponential's polynomial p(r), degree 7, highest
// degree first.
var expTaylor = [8]float32{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, 1}

// The kernels' constants: 0.5/sqrt2, 1/sqrt(2 pi), log2 e, and ln2 in
// two parts (the high part has 15 bits, so n*ln2Hi is exact).
const (
	invSqrt8   float32 = 0.5 / math.Sqrt2
	invSqrt2Pi float32 = 0.3989422804014327 // 1/sqrt(2 pi)
	log2e      float32 = math.Log2E
	ln2Hi      float32 = 0.693145751953125
	ln2Lo      float32 = 1.428606765330187e-06
)

// geluGo is the portable path: the kernels' formula in scalar float32,
// each product and sum rounded on its own where the kernels fuse them
// (float32(a*b) + c may not be fused under any GOAMD64), so it agrees
// with them to rounding (TestGELUAccuracy on every path).
func geluGo(x float32) (y, d float32) {
	e := exp32(max(float32(-0.5*float32(x*x)), -104))
	u := 1 / (1 + float32(abs32(x)*invSqrt8))
	q := erfcxQ32[0]
	for _, c := range erfcxQ32[1:] {
		q = float32(q*u) + c
	}
	h := float32(q*e) * 0.5
	phi := h
	if x > 0 {
		phi = 1 - h
	}
	return x * phi, float32(x*float32(e*invSqrt2Pi)) + phi
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// exp32 is the kernels' exponential in scalar float32, separately
// rounded: t clamped to [-104, 128], n = round(t log2 e) (to even, by
// adding and subtracting 1.5 * 2^23), r = t - n ln2 in two parts, p(r)
// by Horner, and p * 2^n rounded once (exact in float64 first), so
// results below 2^-126 round as the kernels' VSCALEFPS does. NaN stays
// NaN.
func exp32(t float32) float32 {
	t = min(max(t, -104), 128)
	n := float32(t * log2e)
	n = (n + 0x1.8p23) - 0x1.8p23
	r := t - float32(n*ln2Hi)
	r -= float32(n * ln2Lo)
	p := expTaylor[0]
	for _, c := range expTaylor[1:] {
		p = float32(p*r) + c
	}
	return float32(float64(p) * math.Float64frombits(uint64(int64(n)+1023)<<52))
}

// Exp sets x[i] = exp(x[i]) in place: on AVX-512, AVX2 and NEON the GELU
// kernel's float32 exponential (2^n times a degree-7 Taylor polynomial in
// r = x - n ln2; relative error under 1e-7 for normal results, TestExp; the
// kernels give the same bits), on the portable path its scalar float32
// form (exp32), which agrees with them to a float32 step.
// Arguments below -104 give 0 or the smallest subnormal (so does NaN in
// the kernels; exp32 keeps NaN); above 88.8, +Inf.
func Exp(x []float32) {
	if cur == pathGo {
		for i, v := range x {
			x[i] = exp32(v)
		}
		return
	}
	n := len(x)
	full := n &^ 15
	if full > 0 {
		expAsm(full, &x[0])
	}
	if full < n {
		var t [16]float32
		copy(t[:], x[full:])
		expAsm(16, &t[0])
		copy(x[full:], t[:])
	}
}
