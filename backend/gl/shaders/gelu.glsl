// gelu sets y = GELU(v) = v Phi(v) and d = GELU'(v) = Phi(v) + v phi(v),
// by internal/simd's float32 formula (docs/model.md, "GELU and
// exponentials"): e = exp(max(-x*x/2, -104)); u = 1/(1 + |x| 0.5/sqrt2);
// h = e Q(u)/2 with Q the degree-10 fit of erfcx(|x|/sqrt2); Phi = 1 - h
// for x > 0, else h; phi = e/sqrt(2 pi). gelu.comp and matmul.comp's
// epilogue share it.
void gelu(float v, out float y, out float d) {
	precise float ax = abs(v);
	precise float t = (v * v) * -0.5;
	precise float e = exp32(t);
	precise float u = div(1.0, fma(ax, uintBitsToFloat(0x3eb504f3u), 1.0));
	precise float q = uintBitsToFloat(0x3cdc2b91u);
	q = fma(q, u, uintBitsToFloat(0xbe52bc85u));
	q = fma(q, u, uintBitsToFloat(0x3f21f347u));
	q = fma(q, u, uintBitsToFloat(0xbf75432fu));
	q = fma(q, u, uintBitsToFloat(0x3f2dd792u));
	q = fma(q, u, uintBitsToFloat(0xbe80438du));
	q = fma(q, u, uintBitsToFloat(0x3e922260u));
	q = fma(q, u, uintBitsToFloat(0x3e6488deu));
	q = fma(q, u, uintBitsToFloat(0x3e921b23u));
	q = fma(q, u, uintBitsToFloat(0x3e904ca2u));
	q = fma(q, u, uintBitsToFloat(0x3717fccbu));
	precise float h = (q * e) * 0.5;
	precise float phi = v > 0.0 ? 1.0 - h : h;
	precise float ep = e * uintBitsToFloat(0x3ecc422au);
	precise float py = v * phi;
	precise float pd = fma(v, ep, phi);
	y = py;
	d = pd;
}
