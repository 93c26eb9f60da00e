// MixGradP: dP = dO V^T, one invocation per element (b, h, i, j) of dP.
// Masked cells are written as exactly 0.

layout(std430, binding = 0) readonly buffer DObuf { float dO[]; };
layout(std430, binding = 1) readonly buffer Vbuf { float v[]; };
layout(std430, binding = 2) writeonly buffer DPbuf { float dP[]; };

void main() {
	uint g = gid();
	if (g >= total) return;
	int x = int(g);
	int j = x % T; x /= T;
	int i = x % T; x /= T;
	int h = x % H;
	int b = x / H;
	float s = 0.0;
	if (j < keys(i)) {
		int oo = row(b, i, h);
		int vo = row(b, j, h);
		for (int d = 0; d < Dh; d++) {
			s += dO[oo + d] * v[vo + d];
		}
	}
	dP[int(g)] = s;
}
