// Probs: P = softmax_j(scale * Q K^T), one invocation per query row
// (b, h, i). The row of P doubles as scratch for the logits; masked cells
// end as exactly 0. As on the CPU: the dot products (fma from 0), times
// scale, minus the row's maximum, exp32, summed in order, each divided by
// the sum.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Qbuf { float q[]; };
layout(std430, binding = 1) readonly buffer Kbuf { float k[]; };
layout(std430, binding = 2) buffer Pbuf { float p[]; };

void main() {
	int s, ri;
	if (!item(s, ri)) return;
	int i = ri % T;
	int bh = ri / T;
	int h = bh % H;
	int b = bh / H;
	int qb = base(0, s), kb = base(1, s);
	int po = base(2, s) + ri * T;
	int qo = qb + row(b, i, h);
	int n = keys(i);

	precise float m = NEG_INF;
	for (int j = 0; j < n; j++) {
		int ko = kb + row(b, j, h);
		precise float acc = 0.0;
		for (int d = 0; d < Dh; d++) {
			acc = fma(q[qo + d], k[ko + d], acc);
		}
		precise float x = acc * scale;
		p[po + j] = x;
		m = max(m, x);
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
