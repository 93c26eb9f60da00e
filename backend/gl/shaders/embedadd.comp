// EmbedAdd: out[r] = table[ids[r]] + table2[ids2[r]] (Embed twice, then
// Add), rows of D. A workgroup takes EB elements of one seed's out (work
// is the blocks per seed), an invocation every WG-th of them, so that
// neighbouring invocations load and store neighbouring floats; its row and
// column step on by stepR rows and stepJ columns (WG = stepR*D + stepJ)
// with no division. An id that is not a whole number in range gives NaN
// for its lookup, as Embed does, and raises Embed's status flag.

#include "status.glsl"

layout(std430, binding = 0) readonly buffer IdBuf { float ids[]; };
layout(std430, binding = 1) readonly buffer TableBuf { float table[]; };
layout(std430, binding = 2) readonly buffer Id2Buf { float ids2[]; };
layout(std430, binding = 3) readonly buffer Table2Buf { float table2[]; };
layout(std430, binding = 4) writeonly buffer OutBuf { float o[]; };

uniform int N; // elements of out per seed
uniform int D;
uniform int V;
uniform int V2;
uniform int stepR;
uniform int stepJ;
uniform int bit;

// EB is the elements a workgroup takes (ops.go's embedBlock).
#define EB (8 * WG)

void main() {
	int g = group();
	int s = g / work;
	if (s >= S) return; // the whole workgroup
	int e = (g - s * work) * EB + lid();
	int end = min(e - lid() + EB, N);
	int r = e / D, j = e - r * D;
	int ib = base(0, s), tb = base(1, s), ib2 = base(2, s), tb2 = base(3, s), ob = base(4, s);
	for (; e < end; e += WG) {
		float id = ids[ib + r], id2 = ids2[ib2 + r];
		float a = NAN, b = NAN;
		if (wholeIn(id, V)) {
			a = table[tb + int(id) * D + j];
		} else if (j == 0) {
			flag(uint(bit));
		}
		if (wholeIn(id2, V2)) {
			b = table2[tb2 + int(id2) * D + j];
		} else if (j == 0) {
			flag(uint(bit));
		}
		precise float y = a + b;
		o[ob + e] = y;
		r += stepR;
		j += stepJ;
		if (j >= D) {
			j -= D;
			r++;
		}
	}
}
