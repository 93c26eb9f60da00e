// SoftmaxXentGrad: out[r, j] = up * (probs[r, j]*w - w*[j = target]) on
// answer rows, 0 elsewhere, w = 1/(answer rows). Workgroups of 64 rows,
// each of one seed (work is the workgroups per seed), an invocation per
// row; every workgroup counts its seed's answer rows itself (an exact
// integer sum), so one dispatch does it. With STAGED and V <= 64 the rows
// of probs come in, and out goes out, through shared memory. A target
// that is not a whole number below V raises the status flag.

#include "status.glsl"

layout(std430, binding = 0) readonly buffer Tbuf { float targets[]; };
layout(std430, binding = 1) readonly buffer Pbuf { float probs[]; };
layout(std430, binding = 2) readonly buffer UpBuf { float up[]; };
layout(std430, binding = 3) writeonly buffer OutBuf { float o[]; };

#include "reduce.glsl"

uniform int R;
uniform int V;
uniform int bit;

#ifdef STAGED
shared float tile[WG * 65];
#endif

// grad is out[r, j] from probs[r, j] = p.
float grad(float p, float t, float w, float u, int j) {
	if (t < 0.0) return 0.0;
	precise float pw = p * w;
	if (float(j) == t) pw = pw - w;
	return u * pw;
}

void main() {
	int g = group();
	int s = g / work;
	if (s >= S) return; // the whole workgroup
	int tb = base(0, s);
	float w = answerWeight(tb, R);
	int r0 = (g % work) * WG;
	int r = r0 + lid();
	float t = r < R ? targets[tb + r] : -1.0;
	if (r < R && t >= 0.0 && !wholeIn(t, V)) flag(uint(bit));
	float u = up[base(2, s)];
#ifdef STAGED
	if (V <= 64) {
		int rows = min(WG, R - r0);
		int gp = base(1, s) + r0 * V, go = base(3, s) + r0 * V;
		for (int e = lid(); e < rows * V; e += WG) {
			tile[e + e / V] = probs[gp + e];
		}
		memoryBarrierShared();
		barrier();
		int lo = lid() * (V + 1);
		for (int j = 0; j < V && r < R; j++) {
			tile[lo + j] = grad(tile[lo + j], t, w, u, j);
		}
		memoryBarrierShared();
		barrier();
		for (int e = lid(); e < rows * V; e += WG) {
			o[go + e] = tile[e + e / V];
		}
		return;
	}
#endif
	if (r >= R) return;
	int po = base(1, s) + r * V, oo = base(3, s) + r * V;
	for (int j = 0; j < V; j++) {
		o[oo + j] = grad(probs[po + j], t, w, u, j);
	}
}
