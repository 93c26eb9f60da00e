// MatMul: c = op(a) op(b) + bias, one invocation per 4 x 8 block of c (a
// register block: each step loads 4 + 8 values for 32 fmas, where one
// element per invocation loads 2 for 1). op(a) is M x K (a stored K x M
// when tA), op(b) K x N (b stored N x K when tB). Every element starts at
// its bias (or 0) and adds a(i,p) b(p,j) for p = 0..K-1 in turn, each step
// one fma, as the CPU's kernel does: the block changes what an invocation
// holds, not any element's order. Rows and columns past the edge load a
// clamped neighbour and are not stored.
//
// Epilogue (Linear): with act, each stored element is GELU of the sum and
// its derivative goes to deriv (gelu.glsl); with hasRes, res + the result
// is stored, as Add rounds it. Only Linear sets them, with tA and tB false.

#include "gelu.glsl"

layout(std430, binding = 0) readonly buffer Abuf { float a[]; };
layout(std430, binding = 1) readonly buffer Bbuf { float b[]; };
layout(std430, binding = 2) writeonly buffer Cbuf { float c[]; };
layout(std430, binding = 3) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 4) readonly buffer ResBuf { float res[]; };
layout(std430, binding = 5) writeonly buffer DerivBuf { float deriv[]; };

uniform int M;
uniform int N;
uniform int K;
uniform bool tA;
uniform bool tB;
uniform bool hasBias;
uniform bool act;
uniform bool hasRes;

#define R 4
#define Q 8

void main() {
	int s, e;
	if (!item(s, e)) return;
	int bn = (N + Q - 1) / Q;
	int i0 = (e / bn) * R;
	int j0 = (e % bn) * Q;
	// Element (i, p) of op(a) is a[ai[r] + p*ap]; (p, j) of op(b) is b[bj[q] + p*bp].
	int ap = tA ? M : 1;
	int bp = tB ? 1 : N;
	int ai[R];
	int bj[Q];
	for (int r = 0; r < R; r++) {
		int i = min(i0 + r, M - 1);
		ai[r] = base(0, s) + (tA ? i : i * K);
	}
	for (int q = 0; q < Q; q++) {
		int j = min(j0 + q, N - 1);
		bj[q] = base(1, s) + (tB ? j * K : j);
	}
	precise float acc[R][Q];
	for (int q = 0; q < Q; q++) {
		float b0 = hasBias ? bias[base(3, s) + min(j0 + q, N - 1)] : 0.0;
		for (int r = 0; r < R; r++) {
			acc[r][q] = b0;
		}
	}
	for (int p = 0; p < K; p++) {
		float av[R];
		float bv[Q];
		for (int r = 0; r < R; r++) {
			av[r] = a[ai[r] + p * ap];
		}
		for (int q = 0; q < Q; q++) {
			bv[q] = b[bj[q] + p * bp];
		}
		for (int r = 0; r < R; r++) {
			for (int q = 0; q < Q; q++) {
				acc[r][q] = fma(av[r], bv[q], acc[r][q]);
			}
		}
	}
	for (int r = 0; r < R; r++) {
		for (int q = 0; q < Q; q++) {
			if (i0 + r < M && j0 + q < N) {
				int ce = (i0 + r) * N + j0 + q;
				float y = acc[r][q];
				if (act) {
					float g, d;
					gelu(y, g, d);
					y = g;
					deriv[base(5, s) + ce] = d;
				}
				if (hasRes) {
					precise float sum = res[base(4, s) + ce] + y;
					y = sum;
				}
				c[base(2, s) + ce] = y;
			}
		}
	}
}
