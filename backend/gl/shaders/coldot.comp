// ColDot: out[j] = sum over rows r, in order, of a[r, j]*b[r, j], the
// product and the sum each rounded; one invocation per column.

layout(std430, binding = 0) readonly buffer Abuf { float a[]; };
layout(std430, binding = 1) readonly buffer Bbuf { float b[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };

uniform int R;
uniform int D;

void main() {
	int s, j;
	if (!item(s, j)) return;
	int ao = base(0, s) + j;
	int bo = base(1, s) + j;
	precise float acc = 0.0;
	for (int r = 0; r < R; r++) {
		precise float p = a[ao + r * D] * b[bo + r * D];
		acc += p;
	}
	o[base(2, s) + j] = acc;
}
