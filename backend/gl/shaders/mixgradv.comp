// MixGradV: dV = P^T dO, one invocation per element (b, j, h, d) of dV:
// a gather over the queries that see key j, so no atomics are needed.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DObuf { float dO[]; };
layout(std430, binding = 2) writeonly buffer DVbuf { float dV[]; };

void main() {
	int s, x;
	if (!item(s, x)) return;
	int g = x;
	int d = x % Dh; x /= Dh;
	int h = x % H; x /= H;
	int j = x % T;
	int b = x / T;
	int pb = base(0, s), ob = base(1, s);
	precise float acc = 0.0;
	for (int i = causal ? j : 0; i < T; i++) {
		acc = fma(p[pb + prow(b, h, i) + j], dO[ob + row(b, i, h) + d], acc);
	}
	dV[base(2, s) + g] = acc;
}
