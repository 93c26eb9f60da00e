// MixGradV: dV = P^T dO, a workgroup per head (attn.glsl), an invocation
// per element (j, d) of the head's block of dV in turn: a sum over the
// queries that see key j, in order (the others as maskedTerm), so no
// atomics are needed. Staged: P's
// and dO's blocks in; dV's rows out by neighbouring invocations either
// way.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DObuf { float dO[]; };
layout(std430, binding = 2) writeonly buffer DVbuf { float dV[]; };

void main() {
	int s, b, h;
	if (!head(s, b, h)) return; // the whole workgroup
	int pb = base(0, s), ob = base(1, s), vb = base(2, s);
	int l = lid();
#ifdef STAGED
	if (staged(1, 1, 0)) {
		int Oa = 0, Pa = T * (Dh + 1);
		STAGE_QKV(Oa, dO, ob)
		STAGE_PP(Pa, p, pb)
		sync();
		for (int c = l; c < T * Dh; c += WG) {
			int j = c / Dh, d = c - j * Dh;
			precise float acc = 0.0;
			for (int i = 0; i < (causal ? j : 0); i++) {
				acc = maskedTerm(acc, QS(Oa, i, d));
			}
			for (int i = causal ? j : 0; i < T; i++) {
				acc = fma(PS(Pa, i, j), QS(Oa, i, d), acc);
			}
			dV[vb + row(b, j, h) + d] = acc;
		}
		return;
	}
#endif
	for (int c = l; c < T * Dh; c += WG) {
		int j = c / Dh, d = c - j * Dh;
		precise float acc = 0.0;
		for (int i = 0; i < (causal ? j : 0); i++) {
			acc = maskedTerm(acc, dO[ob + row(b, i, h) + d]);
		}
		for (int i = causal ? j : 0; i < T; i++) {
			acc = fma(p[pb + prow(b, h, i) + j], dO[ob + row(b, i, h) + d], acc);
		}
		dV[vb + row(b, j, h) + d] = acc;
	}
}
