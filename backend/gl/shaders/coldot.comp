// ColDot: out[j] = sum over rows r, in order, of a[r, j]*b[r, j], the
// product and the sum each rounded. A workgroup per seed and 64 columns,
// an invocation per column; with STAGED the rows go through shared memory
// as in colsum.comp. With sumA (ColDotSum) it also sums a's columns, in
// order from 0 as ColSum does, into sums.

layout(std430, binding = 0) readonly buffer Abuf { float a[]; };
layout(std430, binding = 1) readonly buffer Bbuf { float b[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };
layout(std430, binding = 3) writeonly buffer SumBuf { float sums[]; };

uniform int R;
uniform int D;
uniform bool sumA;

#include "cols.glsl"

#ifdef STAGED
shared float tb[TILE];
#endif

void main() {
	int s, j0, cols;
	if (!colGroup(s, j0, cols)) return; // the whole workgroup
	int l = lid();
	int ao = base(0, s) + j0, bo = base(1, s) + j0;
	precise float acc = 0.0, sa = 0.0;
#ifdef STAGED
	int rc = TILE / cols;
	for (int r0 = 0; r0 < R; r0 += rc) {
		int n = min(rc, R - r0) * cols;
		for (int e = l; e < n; e += WG) {
			int r = e / cols;
			int at = (r0 + r) * D + e - r * cols;
			ta[e] = a[ao + at];
			tb[e] = b[bo + at];
		}
		memoryBarrierShared();
		barrier();
		if (l < cols) {
			for (int e = l; e < n; e += cols) {
				precise float p = ta[e] * tb[e];
				acc += p;
				sa += ta[e];
			}
		}
		barrier();
	}
#else
	if (l >= cols) return;
	for (int r = 0; r < R; r++) {
		float x = a[ao + r * D + l];
		precise float p = x * b[bo + r * D + l];
		acc += p;
		sa += x;
	}
#endif
	if (l < cols) {
		o[base(2, s) + j0 + l] = acc;
		if (sumA) sums[base(3, s) + j0 + l] = sa;
	}
}
