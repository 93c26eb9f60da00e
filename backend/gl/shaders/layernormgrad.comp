// LayerNormGrad: a LayerNorm's three gradients in one pass over its rows,
// a workgroup per seed: dx = LayerNormGradX's out (then res + dx, as Add
// adds, with hasRes), dgamma = ColDot(dy, xh) and dbeta = ColSum(dy).
// Blocks of RW = max(min(WG, 1024/D), 1) rows of dy and xh come in through
// shared memory in turn, loaded in storage order and padded as rows.glsl's
// are. In each block an invocation per row computes its row of dx
// (lngradrow.glsl, LayerNormGradX's steps) into a tile of its own, and an
// invocation per column adds the block's rows to that column's two sums,
// in row order (the sums stay in shared memory from block to block, as
// ColDot and ColSum keep theirs in a register); then the block's dx goes
// out by neighbouring invocations. D is at most 1024 (ops.go).

layout(std430, binding = 0) readonly buffer Gbuf { float gamma[]; };
layout(std430, binding = 1) readonly buffer DYbuf { float dy[]; };
layout(std430, binding = 2) readonly buffer XhBuf { float xh[]; };
layout(std430, binding = 3) readonly buffer InvBuf { float inv[]; };
layout(std430, binding = 4) readonly buffer ResBuf { float res[]; };
layout(std430, binding = 5) writeonly buffer DXbuf { float dx[]; };
layout(std430, binding = 6) writeonly buffer DGbuf { float dgamma[]; };
layout(std430, binding = 7) writeonly buffer DBbuf { float dbeta[]; };

uniform int R;
uniform int D;
uniform bool hasRes;

// LNCOLS is the longest row; a block is at most LNCOLS floats of rows,
// each row padded by one float.
#define LNCOLS 1024
#define LNTILE (LNCOLS + WG)
shared float tdy[LNTILE];
shared float txh[LNTILE];
shared float tdx[LNTILE];
shared float cg[LNCOLS];
shared float cb[LNCOLS];

#define DY(j) tdy[so + (j)]
#define XH(j) txh[so + (j)]
#define STORE(j, v) tdx[so + (j)] = (v)

void main() {
	int s = group();
	if (s >= S) return; // the whole workgroup
	int l = lid();
	int rw = max(min(WG, LNCOLS / D), 1);
	int go = base(0, s);
	for (int c = l; c < D; c += WG) {
		cg[c] = 0.0;
		cb[c] = 0.0;
	}
	for (int r0 = 0; r0 < R; r0 += rw) {
		int rows = min(rw, R - r0);
		int gy = base(1, s) + r0 * D, gh = base(2, s) + r0 * D;
		for (int e = l; e < rows * D; e += WG) {
			int r = e / D;
			tdy[e + r] = dy[gy + e];
			txh[e + r] = xh[gh + e];
		}
		memoryBarrierShared();
		barrier();
		if (l < rows) {
			int so = l * (D + 1);
			float iv = inv[base(3, s) + r0 + l];
#include "lngradrow.glsl"
		}
		for (int c = l; c < D; c += WG) {
			precise float dot = cg[c], sum = cb[c];
			for (int r = 0; r < rows; r++) {
				float y = tdy[r * (D + 1) + c];
				precise float p = y * txh[r * (D + 1) + c];
				dot += p;
				sum += y;
			}
			cg[c] = dot;
			cb[c] = sum;
		}
		memoryBarrierShared();
		barrier();
		int xo = base(5, s) + r0 * D, ro = base(4, s) + r0 * D;
		for (int e = l; e < rows * D; e += WG) {
			float v = tdx[e + e / D];
			if (hasRes) {
				precise float z = res[ro + e] + v;
				v = z;
			}
			dx[xo + e] = v;
		}
		// The next block's loads overwrite tdy and txh, which every
		// invocation has finished reading at the barrier above, and its
		// rows write tdx after the barrier that follows those loads.
	}
	// Each column's sums belong to the invocation that added them.
	for (int c = l; c < D; c += WG) {
		dgamma[base(6, s) + c] = cg[c];
		dbeta[base(7, s) + c] = cb[c];
	}
}
