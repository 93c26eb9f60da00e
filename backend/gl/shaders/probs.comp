// Probs: P = softmax_j(scale * Q K^T), one invocation per query row.
// The row of P doubles as scratch for the logits; masked cells end as 0.

layout(std430, binding = 0) readonly buffer Qbuf { float q[]; };
layout(std430, binding = 1) readonly buffer Kbuf { float k[]; };
layout(std430, binding = 2) buffer Pbuf { float p[]; };

void main() {
	uint r = gid();
	if (r >= total) return;
	int ri = int(r);
	int i = ri % T;
	int bh = ri / T;
	int h = bh % H;
	int b = bh / H;
	int po = ri * T;
	int qo = row(b, i, h);
	int n = keys(i);

	float m = uintBitsToFloat(0xff800000u); // -Inf
	for (int j = 0; j < n; j++) {
		int ko = row(b, j, h);
		float s = 0.0;
		for (int d = 0; d < Dh; d++) {
			s += q[qo + d] * k[ko + d];
		}
		s = scale * s;
		p[po + j] = s;
		m = max(m, s);
	}
	float sum = 0.0;
	for (int j = 0; j < n; j++) {
		float e = exp(p[po + j] - m);
		p[po + j] = e;
		sum += e;
	}
	for (int j = 0; j < n; j++) {
		p[po + j] /= sum;
	}
	for (int j = n; j < T; j++) {
		p[po + j] = 0.0;
	}
}
