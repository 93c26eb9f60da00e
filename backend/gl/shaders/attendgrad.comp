// AttendGrad: attention's backward for one head in one workgroup
// (attn.glsl): dV = P^T dO by mixgradv.comp's steps; dP = dO V^T by
// mixgradp.comp's, kept in shared memory and never stored; then each
// row's rowsum(P * dP), dS = scale * P * (dP - rowsum) once per cell in
// place of dP, dQ = dS K and dK = dS^T Q, by probsgradq.comp's and
// probsgradk.comp's staged steps. P's, dO's, V's, Q's and K's blocks come
// in through shared memory in either variant, the masked terms on dO, Q
// and K only where that block is not all finite (STAGE_QKV_NF); the Go
// side runs it only on heads that fit (ops.go).

#define FUSED
#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DObuf { float dO[]; };
layout(std430, binding = 2) readonly buffer Qbuf { float q[]; };
layout(std430, binding = 3) readonly buffer Kbuf { float k[]; };
layout(std430, binding = 4) readonly buffer Vbuf { float v[]; };
layout(std430, binding = 5) writeonly buffer DQbuf { float dQ[]; };
layout(std430, binding = 6) writeonly buffer DKbuf { float dK[]; };
layout(std430, binding = 7) writeonly buffer DVbuf { float dV[]; };

void main() {
	int s, b, h;
	if (!head(s, b, h)) return; // the whole workgroup
	int l = lid();
	int Pa = 0, Wa = T * (T + 1), Oa = 2 * Wa, Va = Oa + T * (Dh + 1);
	int Qa = Va + T * (Dh + 1), Ka = Qa + T * (Dh + 1), Ra = Ka + T * (Dh + 1);
	int NFo = Ra + T, NFq = NFo + 1, NFk = NFo + 2; // dO's, Q's and K's blocks not all finite
	if (l < 3) sm[NFo + l] = 0.0;
	sync();
	STAGE_PP(Pa, p, base(0, s))
	STAGE_QKV_NF(Oa, dO, base(1, s), NFo)
	STAGE_QKV(Va, v, base(4, s))
	STAGE_QKV_NF(Qa, q, base(2, s), NFq)
	STAGE_QKV_NF(Ka, k, base(3, s), NFk)
	sync();
	bool maskO = sm[NFo] != 0.0, maskQ = sm[NFq] != 0.0, maskK = sm[NFk] != 0.0;
	// dV over the queries that see each key, the others as maskedTerm.
	for (int c = l; c < T * Dh; c += WG) {
		int j = c / Dh, d = c - j * Dh;
		precise float acc = 0.0;
		for (int i = 0; i < (causal ? j : 0) && maskO; i++) {
			acc = maskedTerm(acc, QS(Oa, i, d));
		}
		for (int i = causal ? j : 0; i < T; i++) {
			acc = fma(PS(Pa, i, j), QS(Oa, i, d), acc);
		}
		dV[base(7, s) + row(b, j, h) + d] = acc;
	}
	// dP on the cells a query sees (ProbsGrad reads no other).
	for (int c = l; c < T * T; c += WG) {
		int i = c / T, j = c - i * T;
		if (j < keys(i)) {
			precise float acc = 0.0;
			for (int d = 0; d < Dh; d++) {
				acc = fma(QS(Oa, i, d), QS(Va, j, d), acc);
			}
			PS(Wa, i, j) = acc;
		}
	}
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
		for (int j = keys(i); j < T && maskK; j++) {
			acc = maskedTerm(acc, QS(Ka, j, d));
		}
		dQ[base(5, s) + row(b, i, h) + d] = acc;
	}
	for (int c = l; c < T * Dh; c += WG) {
		int j = c / Dh, d = c - j * Dh;
		precise float acc = 0.0;
		for (int i = 0; i < (causal ? j : 0) && maskQ; i++) {
			acc = maskedTerm(acc, QS(Qa, i, d));
		}
		for (int i = causal ? j : 0; i < T; i++) {
			acc = fma(PS(Wa, i, j), QS(Qa, i, d), acc);
		}
		dK[base(6, s) + row(b, j, h) + d] = acc;
	}
}
