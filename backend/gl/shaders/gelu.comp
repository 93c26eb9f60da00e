// GELU, one invocation per element: out = x Phi(x), deriv = Phi(x) +
// x phi(x) (gelu.glsl).

#include "gelu.glsl"

layout(std430, binding = 0) readonly buffer Xbuf { float x[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float o[]; };
layout(std430, binding = 2) writeonly buffer DBuf { float deriv[]; };

void main() {
	int s, i;
	if (!item(s, i)) return;
	float y, d;
	gelu(x[base(0, s) + i], y, d);
	o[base(1, s) + i] = y;
	deriv[base(2, s) + i] = d;
}
