// LayerNormGradX, an invocation per row of D (rows.glsl's blocks), each
// row by lngradrow.glsl. With STAGED the block's rows of dy and xh come
// in, and out goes out, through shared memory.

layout(std430, binding = 0) readonly buffer Gbuf { float gamma[]; };
layout(std430, binding = 1) readonly buffer DYbuf { float dy[]; };
layout(std430, binding = 2) readonly buffer XhBuf { float xh[]; };
layout(std430, binding = 3) readonly buffer InvBuf { float inv[]; };
layout(std430, binding = 4) writeonly buffer OutBuf { float o[]; };

uniform int R;
uniform int D;

#include "rows.glsl"

#ifdef STAGED
shared float tdy[ROWTILE];
shared float txh[ROWTILE];
#define DY(j) (st ? tdy[so + (j)] : dy[yo + (j)])
#define XH(j) (st ? txh[so + (j)] : xh[ho + (j)])
// out, in place of dy when staged
#define STORE(j, v) if (st) tdy[so + (j)] = (v); else o[base(4, s) + (r0 + l) * D + (j)] = (v)
#else
#define DY(j) dy[yo + (j)]
#define XH(j) xh[ho + (j)]
#define STORE(j, v) o[base(4, s) + (r0 + l) * D + (j)] = (v)
#endif

void main() {
	int s, r0, rows;
	if (!rowBlock(R, D, s, r0, rows)) return; // the whole workgroup
	int l = lid();
	int go = base(0, s);
	int yo = base(1, s) + (r0 + l) * D, ho = base(2, s) + (r0 + l) * D;
#ifdef STAGED
	bool st = D <= 2048;
	int so = l * (D + 1);
	if (st) {
		int gy = base(1, s) + r0 * D, gh = base(2, s) + r0 * D;
		for (int e = l; e < rows * D; e += WG) {
			int r = e / D;
			tdy[e + r] = dy[gy + e];
			txh[e + r] = xh[gh + e];
		}
		memoryBarrierShared();
		barrier();
	}
#endif
	if (l < rows) {
		float iv = inv[base(3, s) + r0 + l];
#include "lngradrow.glsl"
	}
#ifdef STAGED
	if (!st) return;
	memoryBarrierShared();
	barrier();
	int oo = base(4, s) + r0 * D;
	for (int e = l; e < rows * D; e += WG) {
		o[oo + e] = tdy[e + e / D];
	}
#endif
}
