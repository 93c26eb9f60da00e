// Attend: attention's forward for one head in one workgroup (attn.glsl):
// P = softmax_j(scale * Q K^T) by probs.comp's arithmetic, stored in p
// and kept in shared memory; O = P V by mix.comp's; o receives O (with hasO)
// and og O times the head's gates g, per column as ColScale multiplies
// (with hasOg). Q's, K's and V's blocks come in through shared memory in
// either variant, V's masked terms only where V's block is not all
// finite (STAGE_QKV_NF); the Go side runs it only on heads that fit
// (ops.go).

#define FUSED
#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Qbuf { float q[]; };
layout(std430, binding = 1) readonly buffer Kbuf { float k[]; };
layout(std430, binding = 2) readonly buffer Vbuf { float v[]; };
layout(std430, binding = 3) readonly buffer Gbuf { float g[]; };
layout(std430, binding = 4) writeonly buffer Pbuf { float p[]; };
layout(std430, binding = 5) writeonly buffer Obuf { float o[]; };
layout(std430, binding = 6) writeonly buffer OGbuf { float og[]; };

uniform bool hasO;
uniform bool hasOg;

void main() {
	int s, b, h;
	if (!head(s, b, h)) return; // the whole workgroup
	int pb = base(4, s) + prow(b, h, 0);
	int l = lid();
	int Qa = 0, Ka = T * (Dh + 1), Va = 2 * Ka, Pa = 3 * Ka, Sa = Pa + T * (T + 1), NFv = Sa + T;
	if (l == 0) sm[NFv] = 0.0;
	sync();
	STAGE_QKV(Qa, q, base(0, s))
	STAGE_QKV(Ka, k, base(1, s))
	STAGE_QKV_NF(Va, v, base(2, s), NFv)
	sync();
	// The scores, then each row's maximum, exponentials and sum, then P:
	// probs.comp's staged steps.
	for (int c = l; c < T * T; c += WG) {
		int i = c / T, j = c - i * T;
		if (j < keys(i)) {
			precise float acc = 0.0;
			for (int d = 0; d < Dh; d++) {
				acc = fma(QS(Qa, i, d), QS(Ka, j, d), acc);
			}
			precise float x = acc * scale;
			PS(Pa, i, j) = x;
		}
	}
	sync();
	// Each row's maximum, by an invocation a row; the exponentials, by
	// the whole workgroup; each row's sum in order, by an invocation a
	// row: probs.comp's values, the exponentials spread over the
	// invocations.
	for (int i = l; i < T; i += WG) {
		float m = NEG_INF;
		for (int j = 0; j < keys(i); j++) {
			m = maxNaN(m, PS(Pa, i, j));
		}
		sm[Sa + i] = m;
	}
	sync();
	for (int c = l; c < T * T; c += WG) {
		int i = c / T, j = c - i * T;
		if (j < keys(i)) {
			precise float e = exp32(PS(Pa, i, j) - sm[Sa + i]);
			PS(Pa, i, j) = e;
		}
	}
	sync();
	for (int i = l; i < T; i += WG) {
		precise float sum = 0.0;
		for (int j = 0; j < keys(i); j++) {
			sum += PS(Pa, i, j);
		}
		sm[Sa + i] = sum;
	}
	sync();
	for (int c = l; c < T * T; c += WG) {
		int i = c / T, j = c - i * T;
		float x = j < keys(i) ? div(PS(Pa, i, j), sm[Sa + i]) : 0.0;
		p[pb + c] = x;
		PS(Pa, i, j) = x;
	}
	sync();
	// O, mix.comp's staged steps, and its gated copy.
	bool maskV = sm[NFv] != 0.0;
	int gb = base(3, s) + h * Dh;
	for (int c = l; c < T * Dh; c += WG) {
		int i = c / Dh, d = c - i * Dh;
		int n = keys(i);
		precise float acc = 0.0;
		for (int j = 0; j < n; j++) {
			acc = fma(PS(Pa, i, j), QS(Va, j, d), acc);
		}
		for (int j = n; j < T && maskV; j++) {
			acc = maskedTerm(acc, QS(Va, j, d));
		}
		int at = row(b, i, h) + d;
		if (hasO) {
			o[base(5, s) + at] = acc;
		}
		if (hasOg) {
			precise float y = acc * g[gb + d];
			og[base(6, s) + at] = y;
		}
	}
}
