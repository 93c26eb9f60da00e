// MixGradV: dV = P^T dO, one invocation per element (b, j, h, d) of dV:
// a gather over the queries that see key j, so no atomics are needed.

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DObuf { float dO[]; };
layout(std430, binding = 2) writeonly buffer DVbuf { float dV[]; };

void main() {
	uint g = gid();
	if (g >= total) return;
	int x = int(g);
	int d = x % Dh; x /= Dh;
	int h = x % H; x /= H;
	int j = x % T;
	int b = x / T;
	float acc = 0.0;
	for (int i = causal ? j : 0; i < T; i++) {
		acc += p[prow(b, h, i) + j] * dO[row(b, i, h) + d];
	}
	dV[int(g)] = acc;
}
