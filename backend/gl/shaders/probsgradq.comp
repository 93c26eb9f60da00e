// ProbsGradQ: dQ = scale * dS K with dS = P * (dP - rowsum(P * dP)), one
// invocation per element (b, i, h, d) of dQ. Each invocation sums its
// row's rowsum itself (the same bits in all Dh of them), so one dispatch
// does it.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DPbuf { float dP[]; };
layout(std430, binding = 2) readonly buffer Kbuf { float k[]; };
layout(std430, binding = 3) writeonly buffer DQbuf { float dQ[]; };

void main() {
	int s, x;
	if (!item(s, x)) return;
	int g = x;
	int d = x % Dh; x /= Dh;
	int h = x % H; x /= H;
	int i = x % T;
	int b = x / T;
	int po = base(0, s) + prow(b, h, i);
	int dpo = base(1, s) + prow(b, h, i);
	int kb = base(2, s);
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
	dQ[base(3, s) + g] = acc;
}
