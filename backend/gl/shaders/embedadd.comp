// EmbedAdd: out[r] = table[ids[r]] + table2[ids2[r]] (Embed twice, then
// Add), rows of D, one invocation per element. An id that is not a whole
// number in range gives NaN for its lookup, as Embed does, and raises
// Embed's status flag.

#include "status.glsl"

layout(std430, binding = 0) readonly buffer IdBuf { float ids[]; };
layout(std430, binding = 1) readonly buffer TableBuf { float table[]; };
layout(std430, binding = 2) readonly buffer Id2Buf { float ids2[]; };
layout(std430, binding = 3) readonly buffer Table2Buf { float table2[]; };
layout(std430, binding = 4) writeonly buffer OutBuf { float o[]; };

uniform int D;
uniform int V;
uniform int V2;
uniform int bit;

void main() {
	int s, i;
	if (!item(s, i)) return;
	int r = i / D;
	int j = i - r * D;
	float id = ids[base(0, s) + r], id2 = ids2[base(2, s) + r];
	float a = NAN, b = NAN;
	if (wholeIn(id, V)) {
		a = table[base(1, s) + int(id) * D + j];
	} else if (j == 0) {
		flag(uint(bit));
	}
	if (wholeIn(id2, V2)) {
		b = table2[base(3, s) + int(id2) * D + j];
	} else if (j == 0) {
		flag(uint(bit));
	}
	precise float y = a + b;
	o[base(4, s) + i] = y;
}
