// ProbsGradQ: dQ = scale * dS K with dS = P * (dP - rs), one invocation per
// element (b, i, h, d) of dQ; rs comes from the rowsum pass.

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DPbuf { float dP[]; };
layout(std430, binding = 2) readonly buffer Kbuf { float k[]; };
layout(std430, binding = 3) writeonly buffer DQbuf { float dQ[]; };
layout(std430, binding = 4) readonly buffer RSbuf { float rs[]; };

void main() {
	uint g = gid();
	if (g >= total) return;
	int x = int(g);
	int d = x % Dh; x /= Dh;
	int h = x % H; x /= H;
	int i = x % T;
	int b = x / T;
	int po = prow(b, h, i);
	float rsi = rs[(b * H + h) * T + i];
	int n = keys(i);
	float acc = 0.0;
	for (int j = 0; j < n; j++) {
		float w = scale * (p[po + j] * (dP[po + j] - rsi));
		acc += w * k[row(b, j, h) + d];
	}
	dQ[int(g)] = acc;
}
