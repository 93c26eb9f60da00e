// MixGradP: dP = dO V^T, one invocation per element (b, h, i, j) of dP.
// Masked cells are written as exactly 0.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer DObuf { float dO[]; };
layout(std430, binding = 1) readonly buffer Vbuf { float v[]; };
layout(std430, binding = 2) writeonly buffer DPbuf { float dP[]; };

void main() {
	int s, x;
	if (!item(s, x)) return;
	int g = x;
	int j = x % T; x /= T;
	int i = x % T; x /= T;
	int h = x % H;
	int b = x / H;
	precise float acc = 0.0;
	if (j < keys(i)) {
		int oo = base(0, s) + row(b, i, h);
		int vo = base(1, s) + row(b, j, h);
		for (int d = 0; d < Dh; d++) {
			acc = fma(dO[oo + d], v[vo + d], acc);
		}
	}
	dP[base(2, s) + g] = acc;
}
