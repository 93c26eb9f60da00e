// LayerNorm, an invocation per row of D (rows.glsl's blocks): mean and
// variance by the CPU's sum4 order (element j into partial sum j mod 4
// while whole groups of four last, the rest into the first; then
// (s0+s1)+(s2+s3)), biased variance, inv = 1/sqrt(var + eps) in double,
// xh = (x - mean)*inv, out = xh*gamma + beta. With STAGED the block's rows
// come in and xh and out go out through shared memory, every load and
// store by neighbouring invocations.

layout(std430, binding = 0) readonly buffer Xbuf { float x[]; };
layout(std430, binding = 1) readonly buffer Gbuf { float gamma[]; };
layout(std430, binding = 2) readonly buffer Bbuf { float beta[]; };
layout(std430, binding = 3) writeonly buffer OutBuf { float o[]; };
layout(std430, binding = 4) writeonly buffer XhBuf { float xh[]; };
layout(std430, binding = 5) writeonly buffer InvBuf { float inv[]; };

uniform int R;
uniform int D;
uniform float eps;

#include "rows.glsl"

#ifdef STAGED
shared float tile[ROWTILE];
#define X(j) (st ? tile[xo + (j)] : x[xo + (j)])
#else
#define X(j) x[xo + (j)]
#endif

void main() {
	int s, r0, rows;
	if (!rowBlock(R, D, s, r0, rows)) return; // the whole workgroup
	int l = lid();
	int go = base(1, s), bo = base(2, s);
	int xo = base(0, s) + (r0 + l) * D;
#ifdef STAGED
	bool st = D <= 2048;
	if (st) {
		int gx = base(0, s) + r0 * D;
		for (int e = l; e < rows * D; e += WG) {
			int r = e / D;
			tile[e + r] = x[gx + e];
		}
		memoryBarrierShared();
		barrier();
		xo = l * (D + 1);
	}
#endif
	if (l < rows) {
		int full = D & ~3;
		precise float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
		int j = 0;
		for (; j < full; j += 4) {
			s0 += X(j);
			s1 += X(j + 1);
			s2 += X(j + 2);
			s3 += X(j + 3);
		}
		for (; j < D; j++) {
			s0 += X(j);
		}
		precise float sum = (s0 + s1) + (s2 + s3);
		precise float mean = div(sum, float(D));

		precise float q0 = 0.0, q1 = 0.0, q2 = 0.0, q3 = 0.0;
		for (j = 0; j < full; j += 4) {
			precise float d0 = X(j) - mean;
			precise float d1 = X(j + 1) - mean;
			precise float d2 = X(j + 2) - mean;
			precise float d3 = X(j + 3) - mean;
			precise float p0 = d0 * d0, p1 = d1 * d1, p2 = d2 * d2, p3 = d3 * d3;
			q0 += p0;
			q1 += p1;
			q2 += p2;
			q3 += p3;
		}
		for (; j < D; j++) {
			precise float d0 = X(j) - mean;
			precise float p0 = d0 * d0;
			q0 += p0;
		}
		precise float q = (q0 + q1) + (q2 + q3);
		precise float vr = div(q, float(D)) + eps;
		float iv = float(1.0lf / sqrt(double(vr)));
		inv[base(5, s) + r0 + l] = iv;
		for (j = 0; j < D; j++) {
			precise float h = (X(j) - mean) * iv;
#ifdef STAGED
			if (st) {
				tile[xo + j] = h; // xh, in place
				continue;
			}
#endif
			precise float y = h * gamma[go + j];
			y += beta[bo + j];
			xh[base(4, s) + (r0 + l) * D + j] = h;
			o[base(3, s) + (r0 + l) * D + j] = y;
		}
	}
#ifdef STAGED
	if (!st) return;
	memoryBarrierShared();
	barrier();
	int ho = base(4, s) + r0 * D, oo = base(3, s) + r0 * D;
	for (int e = l; e < rows * D; e += WG) {
		int r = e / D;
		int j = e - r * D;
		precise float h = tile[e + r];
		precise float y = h * gamma[go + j];
		y += beta[bo + j];
		xh[ho + e] = h;
		o[oo + e] = y;
	}
#endif
}
