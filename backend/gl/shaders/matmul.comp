// MatMul: c = op(a) op(b) + bias. op(a) is M x K (a stored K x M when
// tA), op(b) K x N (b stored N x K when tB). Every element starts at its
// bias (or 0) and adds a(i,p) b(p,j) for p = 0..K-1 in turn, each step
// one fma, as the CPU's kernel does.
//
// A workgroup of 32 (one warp) computes one 32 x 32 tile of one seed's c
// (work is the tiles per seed). Invocation (ty, tx), ty in 0..3 and tx in
// 0..7, holds the 8 x 4 block of rows ty + 4r and columns tx + 8q, so
// that at each (r, q) the workgroup stores 4 rows of 8 neighbouring
// columns: whole 32-byte sectors. With STAGED (GPUs), K goes through
// shared memory in chunks of 32: the chunk's pieces of op(a) and op(b),
// each loaded by the whole workgroup along its stored rows (neighbouring
// invocations read neighbouring floats), read back as vec4s. Without it
// (llvmpipe, where a barrier costs more than the loads it saves) each
// invocation loads its own operands. Either way each element takes the
// same steps in the same order. Rows and columns past the edge load a
// clamped neighbour and are not stored.
//
// Epilogue: with act (Linear), each element y is GELU of the sum and its
// derivative goes to deriv (gelu.glsl); with keepY (MatMulThen) y is
// stored in ys; then c receives then's kernel of y and x, each rounded as
// that kernel rounds it: x + y (THEN_ADD, Add: Linear's residual, a sum
// of gradients), y*x (THEN_MUL, Mul: GELU's derivative) or y*x[j]
// (THEN_SCALE, ColScale: a head gate), or y itself. With sumB
// (WeightGrad: tA, no bias), the workgroups of the first row of tiles
// also sum op(b)'s columns over K, in order from 0, as ColSum does, into
// sums.

#include "gelu.glsl"

layout(std430, binding = 0) readonly buffer Abuf { float a[]; };
layout(std430, binding = 1) readonly buffer Bbuf { float b[]; };
layout(std430, binding = 2) writeonly buffer Cbuf { float c[]; };
layout(std430, binding = 3) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 4) readonly buffer XBuf { float x[]; };
layout(std430, binding = 5) writeonly buffer DerivBuf { float deriv[]; };
layout(std430, binding = 6) writeonly buffer SumBuf { float sums[]; };
layout(std430, binding = 7) writeonly buffer YBuf { float ys[]; };

uniform int M;
uniform int N;
uniform int K;
uniform bool tA;
uniform bool tB;
uniform bool hasBias;
uniform bool act;
uniform int then;
uniform bool sumB;
uniform bool keepY;

// then's values (ops.go's thenAdd, thenMul, thenScale).
#define THEN_ADD 1
#define THEN_MUL 2
#define THEN_SCALE 3

#define TILE 32
#define R 8
#define Q 4

#ifdef STAGED
#define KC 32
// As[p][ty][h] holds op(a) at rows ty + 4r, r = 4h..4h+3, step p0 + p;
// Bs[p][tx] op(b) at step p0 + p, columns tx + 8q, q = 0..3.
shared vec4 As[KC][4][2];
shared vec4 Bs[KC][8];
#endif

void main() {
	int g = group();
	int s = g / work;
	if (s >= S) return; // the whole workgroup
	int tilesN = (N + TILE - 1) / TILE;
	int t = g % work;
	int i0 = (t / tilesN) * TILE;
	int j0 = (t % tilesN) * TILE;
	int l = lid();
	int ty = l / 8, tx = l % 8;
	// op(a)(i, p) is a[ab + i*ai + p*ap], op(b)(p, j) is b[bb + p*bp + j*bj].
	int ab = base(0, s), bb = base(1, s);
	int ai = tA ? 1 : K, ap = tA ? M : 1;
	int bp = tB ? 1 : N, bj = tB ? K : 1;

	// The column sums of op(b): invocations of the first row (ty = 0) of
	// the first row of tiles.
	bool sumsHere = sumB && i0 == 0 && ty == 0;
	precise float sb[Q] = float[Q](0.0, 0.0, 0.0, 0.0);
	precise float acc[R][Q];
	for (int q = 0; q < Q; q++) {
		float b0 = hasBias ? bias[base(3, s) + min(j0 + tx + 8 * q, N - 1)] : 0.0;
		for (int r = 0; r < R; r++) {
			acc[r][q] = b0;
		}
	}
#ifdef STAGED
	for (int p0 = 0; p0 < K; p0 += KC) {
		// Each piece in storage order: its stored rows run fastest across
		// invocations. Past the edge, a clamped neighbour no stored
		// element reads.
		for (int e = l; e < TILE * KC; e += WG) {
			int i = tA ? e % TILE : e / KC;
			int p = tA ? e / TILE : e % KC;
			int r = i / 4;
			As[p][i % 4][r / 4][r % 4] = a[ab + min(i0 + i, M - 1) * ai + min(p0 + p, K - 1) * ap];
			int j = tB ? e / KC : e % TILE;
			p = tB ? e % KC : e / TILE;
			Bs[p][j % 8][j / 8] = b[bb + min(p0 + p, K - 1) * bp + min(j0 + j, N - 1) * bj];
		}
		memoryBarrierShared();
		barrier();
		int pn = min(KC, K - p0);
		for (int p = 0; p < pn; p++) {
			vec4 a0 = As[p][ty][0], a1 = As[p][ty][1];
			vec4 bv = Bs[p][tx];
			float av[R] = float[R](a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w);
			if (sumsHere) {
				for (int q = 0; q < Q; q++) {
					sb[q] += bv[q];
				}
			}
			for (int r = 0; r < R; r++) {
				for (int q = 0; q < Q; q++) {
					acc[r][q] = fma(av[r], bv[q], acc[r][q]);
				}
			}
		}
		barrier();
	}
#else
	int ar[R];
	int bc[Q];
	for (int r = 0; r < R; r++) {
		ar[r] = ab + min(i0 + ty + 4 * r, M - 1) * ai;
	}
	for (int q = 0; q < Q; q++) {
		bc[q] = bb + min(j0 + tx + 8 * q, N - 1) * bj;
	}
	for (int p = 0; p < K; p++) {
		float av[R];
		float bv[Q];
		for (int r = 0; r < R; r++) {
			av[r] = a[ar[r] + p * ap];
		}
		for (int q = 0; q < Q; q++) {
			bv[q] = b[bc[q] + p * bp];
		}
		if (sumsHere) {
			for (int q = 0; q < Q; q++) {
				sb[q] += bv[q];
			}
		}
		for (int r = 0; r < R; r++) {
			for (int q = 0; q < Q; q++) {
				acc[r][q] = fma(av[r], bv[q], acc[r][q]);
			}
		}
	}
#endif
	if (sumsHere) {
		for (int q = 0; q < Q; q++) {
			if (j0 + tx + 8 * q < N) sums[base(6, s) + j0 + tx + 8 * q] = sb[q];
		}
	}
	for (int r = 0; r < R; r++) {
		int i = i0 + ty + 4 * r;
		for (int q = 0; q < Q; q++) {
			int j = j0 + tx + 8 * q;
			if (i < M && j < N) {
				int ce = i * N + j;
				float y = acc[r][q];
				if (act) {
					float gv, d;
					gelu(y, gv, d);
					y = gv;
					deriv[base(5, s) + ce] = d;
				}
				if (keepY) {
					ys[base(7, s) + ce] = y;
				}
				if (then == THEN_ADD) {
					precise float z = x[base(4, s) + ce] + y;
					y = z;
				} else if (then == THEN_MUL) {
					precise float z = y * x[base(4, s) + ce];
					y = z;
				} else if (then == THEN_SCALE) {
					precise float z = y * x[base(4, s) + j];
					y = z;
				}
				c[base(2, s) + ce] = y;
			}
		}
	}
}
