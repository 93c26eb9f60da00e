// LayerNormGradX, an invocation per row of D (rows.glsl's blocks): with
// g = dy*gamma, out = inv * ((g - mean(g)) - xh*mean(g*xh)), both means by
// sum4's order (see layernorm.comp), every product and sum rounded on its
// own. With STAGED the block's rows of dy and xh come in, and out goes
// out, through shared memory.

layout(std430, binding = 0) readonly buffer Gbuf { float gamma[]; };
layout(std430, binding = 1) readonly buffer DYbuf { float dy[]; };
layout(std430, binding = 2) readonly buffer XhBuf { float xh[]; };
layout(std430, binding = 3) readonly buffer InvBuf { float inv[]; };
layout(std430, binding = 4) writeonly buffer OutBuf { float o[]; };

uniform int R;
uniform int D;

#include "rows.glsl"

#ifdef STAGED
shared float tdy[ROWTILE];
shared float txh[ROWTILE];
#define DY(j) (st ? tdy[so + (j)] : dy[yo + (j)])
#define XH(j) (st ? txh[so + (j)] : xh[ho + (j)])
#else
#define DY(j) dy[yo + (j)]
#define XH(j) xh[ho + (j)]
#endif

void main() {
	int s, r0, rows;
	if (!rowBlock(R, D, s, r0, rows)) return; // the whole workgroup
	int l = lid();
	int go = base(0, s);
	int yo = base(1, s) + (r0 + l) * D, ho = base(2, s) + (r0 + l) * D;
#ifdef STAGED
	bool st = D <= 2048;
	int so = l * (D + 1);
	if (st) {
		int gy = base(1, s) + r0 * D, gh = base(2, s) + r0 * D;
		for (int e = l; e < rows * D; e += WG) {
			int r = e / D;
			tdy[e + r] = dy[gy + e];
			txh[e + r] = xh[gh + e];
		}
		memoryBarrierShared();
		barrier();
	}
#endif
	if (l < rows) {
		int full = D & ~3;
		precise float m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0;
		precise float x0 = 0.0, x1 = 0.0, x2 = 0.0, x3 = 0.0;
		int j = 0;
		for (; j < full; j += 4) {
			precise float g0 = DY(j) * gamma[go + j];
			precise float g1 = DY(j + 1) * gamma[go + j + 1];
			precise float g2 = DY(j + 2) * gamma[go + j + 2];
			precise float g3 = DY(j + 3) * gamma[go + j + 3];
			precise float h0 = g0 * XH(j);
			precise float h1 = g1 * XH(j + 1);
			precise float h2 = g2 * XH(j + 2);
			precise float h3 = g3 * XH(j + 3);
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
			precise float g0 = DY(j) * gamma[go + j];
			precise float h0 = g0 * XH(j);
			m0 += g0;
			x0 += h0;
		}
		precise float mg = div((m0 + m1) + (m2 + m3), float(D));
		precise float mgx = div((x0 + x1) + (x2 + x3), float(D));
		float iv = inv[base(3, s) + r0 + l];
		for (j = 0; j < D; j++) {
			precise float g = DY(j) * gamma[go + j];
			precise float hx = XH(j) * mgx;
			precise float t = (g - mg) - hx;
#ifdef STAGED
			if (st) {
				tdy[so + j] = iv * t; // out, in place
				continue;
			}
#endif
			o[base(4, s) + (r0 + l) * D + j] = iv * t;
		}
	}
#ifdef STAGED
	if (!st) return;
	memoryBarrierShared();
	barrier();
	int oo = base(4, s) + r0 * D;
	for (int e = l; e < rows * D; e += WG) {
		o[oo + e] = tdy[e + e / D];
	}
#endif
}
