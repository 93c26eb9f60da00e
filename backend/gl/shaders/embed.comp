// Embed: out[r] = table[ids[r]], rows of D, one invocation per element.
// An id that is not a whole number in 0..V-1 writes NaN and raises the
// kernel's status flag.

#include "status.glsl"

layout(std430, binding = 0) readonly buffer IdBuf { float ids[]; };
layout(std430, binding = 1) readonly buffer TableBuf { float table[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };

uniform int D;
uniform int V;
uniform int bit;

void main() {
	int s, i;
	if (!item(s, i)) return;
	int r = i / D;
	float id = ids[base(0, s) + r];
	float y = NAN;
	if (wholeIn(id, V)) {
		y = table[base(1, s) + int(id) * D + i % D];
	} else if (i % D == 0) {
		flag(uint(bit));
	}
	o[base(2, s) + i] = y;
}
