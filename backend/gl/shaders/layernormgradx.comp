// LayerNormGradX, one invocation per row of D: with g = dy*gamma,
// out = inv * ((g - mean(g)) - xh*mean(g*xh)), both means by sum4's order
// (see layernorm.comp), every product and sum rounded on its own.

layout(std430, binding = 0) readonly buffer Gbuf { float gamma[]; };
layout(std430, binding = 1) readonly buffer DYbuf { float dy[]; };
layout(std430, binding = 2) readonly buffer XhBuf { float xh[]; };
layout(std430, binding = 3) readonly buffer InvBuf { float inv[]; };
layout(std430, binding = 4) writeonly buffer OutBuf { float o[]; };

uniform int R;
uniform int D;

void main() {
	int s, r;
	if (!item(s, r)) return;
	int go = base(0, s), yo = base(1, s) + r * D, ho = base(2, s) + r * D;
	int full = D & ~3;
	precise float m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0;
	precise float x0 = 0.0, x1 = 0.0, x2 = 0.0, x3 = 0.0;
	int j = 0;
	for (; j < full; j += 4) {
		precise float g0 = dy[yo + j] * gamma[go + j];
		precise float g1 = dy[yo + j + 1] * gamma[go + j + 1];
		precise float g2 = dy[yo + j + 2] * gamma[go + j + 2];
		precise float g3 = dy[yo + j + 3] * gamma[go + j + 3];
		precise float h0 = g0 * xh[ho + j];
		precise float h1 = g1 * xh[ho + j + 1];
		precise float h2 = g2 * xh[ho + j + 2];
		precise float h3 = g3 * xh[ho + j + 3];
		m0 += g0;
		m1 += g1;
		m2 += g2;
		m3 += g3;
		x0 += h0;
		x1 += h1;
		x2 += h2;
		x3 += h3;
	}
	for (; j < D; j++) {
		precise float g0 = dy[yo + j] * gamma[go + j];
		precise float h0 = g0 * xh[ho + j];
		m0 += g0;
		x0 += h0;
	}
	precise float mg = div((m0 + m1) + (m2 + m3), float(D));
	precise float mgx = div((x0 + x1) + (x2 + x3), float(D));
	float iv = inv[base(3, s) + r];
	int oo = base(4, s) + r * D;
	for (j = 0; j < D; j++) {
		precise float g = dy[yo + j] * gamma[go + j];
		precise float hx = xh[ho + j] * mgx;
		precise float t = (g - mg) - hx;
		o[oo + j] = iv * t;
	}
}
