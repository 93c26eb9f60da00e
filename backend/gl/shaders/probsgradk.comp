// ProbsGradK: dK = scale * dS^T Q with dS = P * (dP - rs), one invocation
// per element (b, j, h, d) of dK: a gather over the queries that see key
// j, so no atomics are needed. rs comes from the rowsum pass (binding 4).

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DPbuf { float dP[]; };
layout(std430, binding = 2) readonly buffer Qbuf { float q[]; };
layout(std430, binding = 3) writeonly buffer DKbuf { float dK[]; };
layout(std430, binding = 4) readonly buffer RSbuf { float rs[]; };

void main() {
	int s, x;
	if (!item(s, x)) return;
	int g = x;
	int d = x % Dh; x /= Dh;
	int h = x % H; x /= H;
	int j = x % T;
	int b = x / T;
	int pb = base(0, s), dpb = base(1, s), qb = base(2, s);
	int ro = base(4, s) + (b * H + h) * T;
	precise float acc = 0.0;
	for (int i = causal ? j : 0; i < T; i++) {
		int pi = prow(b, h, i) + j;
		precise float w = scale * (p[pb + pi] * (dP[dpb + pi] - rs[ro + i]));
		acc = fma(w, q[qb + row(b, i, h) + d], acc);
	}
	dK[base(3, s) + g] = acc;
}
