// rowsum: rs = rowsum(P * dP), one invocation per row (b, h, i) into the
// device's scratch, [S][B*H*T]: the first pass of ProbsGradK, so that the
// gather over queries does not recompute every query's row sum.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DPbuf { float dP[]; };
layout(std430, binding = 4) writeonly buffer RSbuf { float rs[]; };

void main() {
	int s, ri;
	if (!item(s, ri)) return;
	int po = base(0, s) + ri * T;
	int dpo = base(1, s) + ri * T;
	int n = keys(ri % T);
	precise float acc = 0.0;
	for (int j = 0; j < n; j++) {
		precise float pd = p[po + j] * dP[dpo + j];
		acc += pd;
	}
	rs[base(4, s) + ri] = acc;
}
