// ProbsGradK: dK = scale * dS^T Q with dS = P * (dP - rs), one invocation
// per element (b, j, h, d) of dK: a gather over the queries that see key j,
// so no atomics are needed. rs comes from the rowsum pass.

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DPbuf { float dP[]; };
layout(std430, binding = 2) readonly buffer Qbuf { float q[]; };
layout(std430, binding = 3) writeonly buffer DKbuf { float dK[]; };
layout(std430, binding = 4) readonly buffer RSbuf { float rs[]; };

void main() {
	uint g = gid();
	if (g >= total) return;
	int x = int(g);
	int d = x % Dh; x /= Dh;
	int h = x % H; x /= H;
	int j = x % T;
	int b = x / T;
	int ro = (b * H + h) * T;
	float acc = 0.0;
	for (int i = causal ? j : 0; i < T; i++) {
		int pi = prow(b, h, i) + j;
		float w = scale * (p[pi] * (dP[pi] - rs[ro + i]));
		acc += w * q[row(b, i, h) + d];
	}
	dK[int(g)] = acc;
}
