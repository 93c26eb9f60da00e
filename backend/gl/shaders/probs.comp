// Probs: P = softmax_j(scale * Q K^T), a workgroup per head (attn.glsl).
// As on the CPU: the dot products (fma from 0), times scale, minus the
// row's maximum (NaN when a score is NaN), exp32, summed in order, each
// divided by the sum; masked cells are exactly 0. Staged: Q's and K's
// rows in, the scores in a block, a row an invocation for its maximum and
// sum, then the block out. Otherwise an invocation per query row, the row
// of P its scratch.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Qbuf { float q[]; };
layout(std430, binding = 1) readonly buffer Kbuf { float k[]; };
layout(std430, binding = 2) buffer Pbuf { float p[]; };

void main() {
	int s, b, h;
	if (!head(s, b, h)) return; // the whole workgroup
	int qb = base(0, s), kb = base(1, s), pb = base(2, s) + prow(b, h, 0);
	int l = lid();
#ifdef STAGED
	if (staged(2, 1, T)) {
		int Qa = 0, Ka = T * (Dh + 1), Pa = 2 * Ka, Sa = Pa + T * (T + 1);
		STAGE_QKV(Qa, q, qb)
		STAGE_QKV(Ka, k, kb)
		sync();
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
		for (int i = l; i < T; i += WG) {
			int n = keys(i);
			float m = NEG_INF;
			for (int j = 0; j < n; j++) {
				m = maxNaN(m, PS(Pa, i, j));
			}
			precise float sum = 0.0;
			for (int j = 0; j < n; j++) {
				precise float e = exp32(PS(Pa, i, j) - m);
				PS(Pa, i, j) = e;
				sum += e;
			}
			sm[Sa + i] = sum;
		}
		sync();
		for (int c = l; c < T * T; c += WG) {
			int i = c / T, j = c - i * T;
			p[pb + c] = j < keys(i) ? div(PS(Pa, i, j), sm[Sa + i]) : 0.0;
		}
		return;
	}
#endif
	for (int i = l; i < T; i += WG) {
		int po = pb + i * T;
		int qo = qb + row(b, i, h);
		int n = keys(i);
		float m = NEG_INF;
		for (int j = 0; j < n; j++) {
			int ko = kb + row(b, j, h);
			precise float acc = 0.0;
			for (int d = 0; d < Dh; d++) {
				acc = fma(q[qo + d], k[ko + d], acc);
			}
			precise float x = acc * scale;
			p[po + j] = x;
			m = maxNaN(m, x);
		}
		precise float sum = 0.0;
		for (int j = 0; j < n; j++) {
			precise float e = exp32(p[po + j] - m);
			p[po + j] = e;
			sum += e;
		}
		for (int j = 0; j < n; j++) {
			p[po + j] = div(p[po + j], sum);
		}
		for (int j = n; j < T; j++) {
			p[po + j] = 0.0;
		}
	}
}
