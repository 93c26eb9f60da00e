// CountCorrect: one workgroup per seed; out = the number of answer rows
// whose logits' argmax (the first maximum: ties go to the smaller id) is
// the target, as a float. A NaN is never greater, as in Go.

layout(std430, binding = 0) readonly buffer Lbuf { float logits[]; };
layout(std430, binding = 1) readonly buffer Tbuf { float targets[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };

#include "reduce.glsl"

uniform int R;
uniform int V;

void main() {
	int s = group();
	if (s >= S) return; // the whole workgroup
	int tb = base(1, s);
	int c = 0;
	for (int r = lid(); r < R; r += WG) {
		float t = targets[tb + r];
		if (t < 0.0) continue;
		int lo = base(0, s) + r * V;
		int best = 0;
		float bv = V > 0 ? logits[lo] : 0.0;
		for (int j = 1; j < V; j++) {
			float x = logits[lo + j];
			if (x > bv && !isNaN(x) && !isNaN(bv)) { // GLSL need not order NaN
				best = j;
				bv = x;
			}
		}
		if (float(best) == t) c++;
	}
	int right = sumInt(c);
	if (lid() == 0) o[base(2, s)] = float(right);
}
