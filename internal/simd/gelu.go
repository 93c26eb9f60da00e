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
// at 1; see docs/model.md. The AVX-512 and AVX2 kernels evaluate this in
// float32 with the same operations (so the same bits); the portable path
// evaluates the same formula in float64, so it agrees with them to that
// tolerance, not bit for bit.
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

// erfcxQ is Q, highest degree first.
var erfcxQ = [11]float64{0.02687624283, -0.2057972699, 0.6326183677, -0.9580563903, 0.6790705919,
	-0.2505153716, 0.2854185104, 0.2231783569, 0.2853632867, 0.281834662, 9.059159311e-06}

// geluGo is the portable path: the kernel's formula in float64.
func geluGo(x32 float32) (y, d float32) {
	x := float64(x32)
	ax := math.Abs(x)
	e := math.Exp(-0.5 * x * x)
	u := 1 / (1 + ax*(0.5/math.Sqrt2))
	q := erfcxQ[0]
	for _, c := range erfcxQ[1:] {
		q = float64(q*u) + c // the conversion forbids fusing (any GOAMD64)
	}
	h := 0.5 * e * q
	phi := h
	if x > 0 {
		phi = 1 - h
	}
	return float32(x * phi), float32(phi + x*e/math.Sqrt(2*math.Pi))
}

// Exp sets x[i] = exp(x[i]) in place: on AVX-512 and AVX2 the GELU
// kernel's float32 exponential (2^n times a degree-7 Taylor polynomial in
// r = x - n ln2; relative error under 1e-7 for normal results, TestExp; the
// two kernels give the same bits), elsewhere math.Exp rounded to float32.
// Arguments below -104 (and NaN) give 0 or the smallest subnormal; above
// 88.8, +Inf.
func Exp(x []float32) {
	if cur == pathGo {
		for i, v := range x {
			x[i] = float32(math.Exp(float64(v)))
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
