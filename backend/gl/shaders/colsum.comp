// ColSum: out[j] = sum over rows r, in order from 0, of x[r, j]; one
// invocation per column.

layout(std430, binding = 0) readonly buffer Xbuf { float x[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float o[]; };

uniform int R;
uniform int D;

void main() {
	int s, j;
	if (!item(s, j)) return;
	int xo = base(0, s) + j;
	precise float acc = 0.0;
	for (int r = 0; r < R; r++) {
		acc += x[xo + r * D];
	}
	o[base(1, s) + j] = acc;
}
