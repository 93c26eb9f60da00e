// ColSum: out[j] = sum over rows r, in order from 0, of x[r, j]. A
// workgroup per seed and 64 columns (work is the workgroups per seed),
// an invocation per column. With STAGED (GPUs) the rows go through shared
// memory 2048 floats at a time, loaded by the whole workgroup in storage
// order, so that many loads are in flight while each column is summed in
// its order; without it each invocation reads its own column.

layout(std430, binding = 0) readonly buffer Xbuf { float x[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float o[]; };

uniform int R;
uniform int D;

#include "cols.glsl"

void main() {
	int s, j0, cols;
	if (!colGroup(s, j0, cols)) return; // the whole workgroup
	int l = lid();
	int xo = base(0, s) + j0;
	precise float acc = 0.0;
#ifdef STAGED
	int rc = TILE / cols; // rows a chunk
	for (int r0 = 0; r0 < R; r0 += rc) {
		int n = min(rc, R - r0) * cols;
		for (int e = l; e < n; e += WG) {
			int r = e / cols;
			ta[e] = x[xo + (r0 + r) * D + e - r * cols];
		}
		memoryBarrierShared();
		barrier();
		if (l < cols) {
			for (int e = l; e < n; e += cols) {
				acc += ta[e];
			}
		}
		barrier();
	}
#else
	if (l >= cols) return;
	for (int r = 0; r < R; r++) {
		acc += x[xo + r * D + l];
	}
#endif
	if (l < cols) o[base(1, s) + j0 + l] = acc;
}
