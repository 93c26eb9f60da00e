// Mix: O = P V, one invocation per element (b, i, h, d) of O.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer Pbuf { float p[]; };
layout(std430, binding = 1) readonly buffer Vbuf { float v[]; };
layout(std430, binding = 2) writeonly buffer Obuf { float o[]; };

void main() {
	int s, x;
	if (!item(s, x)) return;
	int g = x;
	int d = x % Dh; x /= Dh;
	int h = x % H; x /= H;
	int i = x % T;
	int b = x / T;
	int po = base(0, s) + prow(b, h, i);
	int vb = base(1, s);
	int n = keys(i);
	precise float acc = 0.0;
	for (int j = 0; j < n; j++) {
		acc = fma(p[po + j], v[vb + row(b, j, h) + d], acc);
	}
	o[base(2, s) + g] = acc;
}
