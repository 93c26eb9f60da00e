// Mix: O = P V, a workgroup per head (attn.glsl), an invocation per
// element (i, d) of the head's block of O in turn, masked keys as
// maskedTerm. Staged: P's and V's
// blocks in; O's rows out by neighbouring invocations either way.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer Vbuf { float v[]; };
layout(std430, binding = 2) writeonly buffer Obuf { float o[]; };

void main() {
	int s, b, h;
	if (!head(s, b, h)) return; // the whole workgroup
	int pb = base(0, s), vb = base(1, s), ob = base(2, s);
	int l = lid();
#ifdef STAGED
	if (staged(1, 1, 0)) {
		int Va = 0, Pa = T * (Dh + 1);
		STAGE_QKV(Va, v, vb)
		STAGE_PP(Pa, p, pb)
		sync();
		for (int c = l; c < T * Dh; c += WG) {
			int i = c / Dh, d = c - i * Dh;
			int n = keys(i);
			precise float acc = 0.0;
			for (int j = 0; j < n; j++) {
				acc = fma(PS(Pa, i, j), QS(Va, j, d), acc);
			}
			for (int j = n; j < T; j++) {
				acc = maskedTerm(acc, QS(Va, j, d));
			}
			o[ob + row(b, i, h) + d] = acc;
		}
		return;
	}
#endif
	for (int c = l; c < T * Dh; c += WG) {
		int i = c / Dh, d = c - i * Dh;
		int po = pb + prow(b, h, i);
		int n = keys(i);
		precise float acc = 0.0;
		for (int j = 0; j < n; j++) {
			acc = fma(p[po + j], v[vb + row(b, j, h) + d], acc);
		}
		for (int j = n; j < T; j++) {
			acc = maskedTerm(acc, v[vb + row(b, j, h) + d]);
		}
		o[ob + row(b, i, h) + d] = acc;
	}
}
