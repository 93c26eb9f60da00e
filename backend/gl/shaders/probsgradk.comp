// ProbsGradK: dK = scale * dS^T Q with dS = P * (dP - rowsum(P * dP)), a
// workgroup per head (attn.glsl), an invocation per element (j, d) of the
// head's block of dK in turn: a sum over the queries that see key j, in
// order (the others as maskedTerm), so no atomics are needed. The rowsums come first, a row an
// invocation, into shared memory. Staged: P's, dP's and Q's blocks in,
// dS once per cell, then the products; dK's rows out by neighbouring
// invocations either way. T is at most 4096 (the Go side checks).

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DPbuf { float dP[]; };
layout(std430, binding = 2) readonly buffer Qbuf { float q[]; };
layout(std430, binding = 3) writeonly buffer DKbuf { float dK[]; };

#ifdef STAGED
#define RS(i) sm[Ra + (i)]
#else
shared float rsum[4096];
#define RS(i) rsum[i]
#endif

void main() {
	int s, b, h;
	if (!head(s, b, h)) return; // the whole workgroup
	int pb = base(0, s), dpb = base(1, s), qb = base(2, s), kb = base(3, s);
	int l = lid();
#ifdef STAGED
	if (staged(1, 2, T)) {
		int Pa = 0, Wa = T * (T + 1), Qa = 2 * Wa, Ra = Qa + T * (Dh + 1);
		STAGE_PP(Pa, p, pb)
		STAGE_PP(Wa, dP, dpb)
		STAGE_QKV(Qa, q, qb)
		sync();
		for (int i = l; i < T; i += WG) {
			precise float rs = 0.0;
			for (int j = 0; j < keys(i); j++) {
				precise float pd = PS(Pa, i, j) * PS(Wa, i, j);
				rs += pd;
			}
			RS(i) = rs;
		}
		sync();
		for (int c = l; c < T * T; c += WG) {
			int i = c / T, j = c - i * T;
			if (j < keys(i)) {
				precise float w = scale * (PS(Pa, i, j) * (PS(Wa, i, j) - RS(i)));
				PS(Wa, i, j) = w; // dS, in place of dP
			}
		}
		sync();
		for (int c = l; c < T * Dh; c += WG) {
			int j = c / Dh, d = c - j * Dh;
			precise float acc = 0.0;
			for (int i = 0; i < (causal ? j : 0); i++) {
				acc = maskedTerm(acc, QS(Qa, i, d));
			}
			for (int i = causal ? j : 0; i < T; i++) {
				acc = fma(PS(Wa, i, j), QS(Qa, i, d), acc);
			}
			dK[kb + row(b, j, h) + d] = acc;
		}
		return;
	}
	int Ra = 0;
#endif
	for (int i = l; i < T; i += WG) {
		int po = pb + prow(b, h, i), dpo = dpb + prow(b, h, i);
		precise float rs = 0.0;
		for (int j = 0; j < keys(i); j++) {
			precise float pd = p[po + j] * dP[dpo + j];
			rs += pd;
		}
		RS(i) = rs;
	}
	memoryBarrierShared();
	barrier();
	for (int c = l; c < T * Dh; c += WG) {
		int j = c / Dh, d = c - j * Dh;
		precise float acc = 0.0;
		for (int i = 0; i < (causal ? j : 0); i++) {
			acc = maskedTerm(acc, q[qb + row(b, i, h) + d]);
		}
		for (int i = causal ? j : 0; i < T; i++) {
			int pi = prow(b, h, i) + j;
			precise float w = scale * (p[pb + pi] * (dP[dpb + pi] - RS(i)));
			acc = fma(w, q[qb + row(b, i, h) + d], acc);
		}
		dK[kb + row(b, j, h) + d] = acc;
	}
}
