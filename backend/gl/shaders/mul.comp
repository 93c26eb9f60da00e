// Mul: out = a*b, one invocation per element.

layout(std430, binding = 0) readonly buffer Abuf { float a[]; };
layout(std430, binding = 1) readonly buffer Bbuf { float b[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };

void main() {
	int s, i;
	if (!item(s, i)) return;
	precise float y = a[base(0, s) + i] * b[base(1, s) + i];
	o[base(2, s) + i] = y;
}
