// SoftmaxXentGrad: out[r, j] = up * (probs[r, j]*w - w*[j = target]) on
// answer rows, 0 elsewhere, w = 1/(answer rows). Workgroups of 64 rows,
// each of one seed (work is the workgroups per seed); every workgroup
// counts its seed's answer rows itself (an exact integer sum), so one
// dispatch does it. A target that is not a whole number below V raises
// the status flag.

layout(std430, binding = 0) readonly buffer Tbuf { float targets[]; };
layout(std430, binding = 1) readonly buffer Pbuf { float probs[]; };
layout(std430, binding = 2) readonly buffer UpBuf { float up[]; };
layout(std430, binding = 3) writeonly buffer OutBuf { float o[]; };

#include "reduce.glsl"

uniform int R;
uniform int V;
uniform int bit;

void main() {
	int g = group();
	int s = g / work;
	if (s >= S) return; // the whole workgroup
	int tb = base(0, s);
	float w = answerWeight(tb, R);
	int r = (g % work) * WG + lid();
	if (r >= R) return;
	float t = targets[tb + r];
	int oo = base(3, s) + r * V;
	if (t < 0.0) {
		for (int j = 0; j < V; j++) o[oo + j] = 0.0;
		return;
	}
	if (!wholeIn(t, V)) flag(uint(bit));
	float u = up[base(2, s)];
	int po = base(1, s) + r * V;
	for (int j = 0; j < V; j++) {
		precise float pw = probs[po + j] * w;
		if (float(j) == t) pw = pw - w;
		o[oo + j] = u * pw;
	}
}
