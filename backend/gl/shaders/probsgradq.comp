// ProbsGradQ: dQ = scale * dS K with dS = P * (dP - rowsum(P * dP)), a
// workgroup per head (attn.glsl), an invocation per element (i, d) of the
// head's block of dQ in turn, masked keys as maskedTerm. Staged: P's, dP's and K's blocks in, each
// row's rowsum once, dS once per cell, then the products; dQ's rows out
// by neighbouring invocations either way. Otherwise each invocation sums
// its row's rowsum itself (the same bits in all Dh of them).

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DPbuf { float dP[]; };
layout(std430, binding = 2) readonly buffer Kbuf { float k[]; };
layout(std430, binding = 3) writeonly buffer DQbuf { float dQ[]; };

void main() {
	int s, b, h;
	if (!head(s, b, h)) return; // the whole workgroup
	int pb = base(0, s), dpb = base(1, s), kb = base(2, s), qb = base(3, s);
	int l = lid();
#ifdef STAGED
	if (staged(1, 2, T)) {
		int Pa = 0, Wa = T * (T + 1), Ka = 2 * Wa, Ra = Ka + T * (Dh + 1);
		STAGE_PP(Pa, p, pb)
		STAGE_PP(Wa, dP, dpb)
		STAGE_QKV(Ka, k, kb)
		sync();
		for (int i = l; i < T; i += WG) {
			precise float rs = 0.0;
			for (int j = 0; j < keys(i); j++) {
				precise float pd = PS(Pa, i, j) * PS(Wa, i, j);
				rs += pd;
			}
			sm[Ra + i] = rs;
		}
		sync();
		for (int c = l; c < T * T; c += WG) {
			int i = c / T, j = c - i * T;
			if (j < keys(i)) {
				precise float w = scale * (PS(Pa, i, j) * (PS(Wa, i, j) - sm[Ra + i]));
				PS(Wa, i, j) = w; // dS, in place of dP
			}
		}
		sync();
		for (int c = l; c < T * Dh; c += WG) {
			int i = c / Dh, d = c - i * Dh;
			precise float acc = 0.0;
			for (int j = 0; j < keys(i); j++) {
				acc = fma(PS(Wa, i, j), QS(Ka, j, d), acc);
			}
			for (int j = keys(i); j < T; j++) {
				acc = maskedTerm(acc, QS(Ka, j, d));
			}
			dQ[qb + row(b, i, h) + d] = acc;
		}
		return;
	}
#endif
	for (int c = l; c < T * Dh; c += WG) {
		int i = c / Dh, d = c - i * Dh;
		int po = pb + prow(b, h, i), dpo = dpb + prow(b, h, i);
		int n = keys(i);
		precise float rs = 0.0;
		for (int j = 0; j < n; j++) {
			precise float pd = p[po + j] * dP[dpo + j];
			rs += pd;
		}
		precise float acc = 0.0;
		for (int j = 0; j < n; j++) {
			precise float w = scale * (p[po + j] * (dP[dpo + j] - rs));
			acc = fma(w, k[kb + row(b, j, h) + d], acc);
		}
		for (int j = n; j < T; j++) {
			acc = maskedTerm(acc, k[kb + row(b, j, h) + d]);
		}
		dQ[qb + row(b, i, h) + d] = acc;
	}
}
