// ColScale: out[r, j] = x[r, j]*g[j], one invocation per element.

layout(std430, binding = 0) readonly buffer Xbuf { float x[]; };
layout(std430, binding = 1) readonly buffer Gbuf { float g[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };

uniform int D;

void main() {
	int s, i;
	if (!item(s, i)) return;
	precise float y = x[base(0, s) + i] * g[base(1, s) + i % D];
	o[base(2, s) + i] = y;
}
