// rowsum: rs = rowsum(P * dP), one invocation per row (b, h, i). It is the
// first pass of ProbsGradQ and ProbsGradK, so that the gradient passes do
// not recompute it per element.

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer DPbuf { float dP[]; };
layout(std430, binding = 4) writeonly buffer RSbuf { float rs[]; };

void main() {
	uint r = gid();
	if (r >= total) return;
	int ri = int(r);
	int po = ri * T;
	int n = keys(ri % T);
	float s = 0.0;
	for (int j = 0; j < n; j++) {
		s += p[po + j] * dP[po + j];
	}
	rs[ri] = s;
}
