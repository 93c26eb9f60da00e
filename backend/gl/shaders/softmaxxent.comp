// SoftmaxXent: one workgroup per seed. loss = -sum over answer rows of
// w * (logit[target] - lse), w = 1/(answer rows), lse = m + log(sum of
// exp(logit - m)) with m the row's maximum (NaN when a logit is NaN, as
// on the CPU); probs receives each answer row's softmax, other rows are
// left as they are. Each invocation takes rows lid, lid+64, ...; the
// exponentials are exp32 (float), their sum, the log and the loss are
// double, the loss's partial sums added by a fixed tree. With STAGED the
// rows go 64 at a time through shared memory, loaded and stored by
// neighbouring invocations. A target that is not a whole number below V
// makes the loss NaN and raises the status flag.

#include "status.glsl"

layout(std430, binding = 0) readonly buffer Lbuf { float logits[]; };
layout(std430, binding = 1) readonly buffer Tbuf { float targets[]; };
layout(std430, binding = 2) buffer Pbuf { float probs[]; };
layout(std430, binding = 3) writeonly buffer LossBuf { float loss[]; };

#include "reduce.glsl"

uniform int R;
uniform int V;
uniform int bit;

// With STAGED and V <= 64, 64 rows of V, padded to V+1 floats.
#ifdef STAGED
shared float tile[WG * 65];
shared bool answer[WG];
#endif

// The row's logits and its probabilities: in the tile at lo (staged), or
// in the buffers at lo and po.
float getL(bool st, int lo, int j) {
#ifdef STAGED
	if (st) return tile[lo + j];
#endif
	return logits[lo + j];
}

float getP(bool st, int lo, int po, int j) {
#ifdef STAGED
	if (st) return tile[lo + j];
#endif
	return probs[po + j];
}

void setP(bool st, int lo, int po, int j, float v) {
#ifdef STAGED
	if (st) {
		tile[lo + j] = v;
		return;
	}
#endif
	probs[po + j] = v;
}

// row adds answer row r's term to l, leaving its softmax in P.
void row(bool st, float t, float w, inout double l, int lo, int po) {
	float m = getL(st, lo, 0);
	for (int j = 1; j < V; j++) {
		m = maxNaN(m, getL(st, lo, j));
	}
	float xt = getL(st, lo, int(t));
	precise double sum = 0.0lf;
	for (int j = 0; j < V; j++) {
		precise float x = getL(st, lo, j) - m;
		float e = exp32(x);
		setP(st, lo, po, j, e);
		sum += double(e);
	}
	precise float lse = m + float(dlog(sum));
	precise float z = xt - lse;
	l -= double(w) * double(z);
	for (int j = 0; j < V; j++) {
		setP(st, lo, po, j, float(double(getP(st, lo, po, j)) / sum));
	}
}

void main() {
	int s = group();
	if (s >= S) return; // the whole workgroup
	int tb = base(1, s);
	float w = answerWeight(tb, R);
	int l0 = lid();
	precise double l = 0.0lf;
#ifdef STAGED
	if (V <= 64) {
		int gl = base(0, s), gp = base(2, s);
		for (int r0 = 0; r0 < R; r0 += WG) {
			int rows = min(WG, R - r0);
			for (int e = l0; e < rows * V; e += WG) {
				tile[e + e / V] = logits[gl + r0 * V + e];
			}
			memoryBarrierShared();
			barrier();
			int r = r0 + l0;
			answer[l0] = false;
			if (r < R) {
				float t = targets[tb + r];
				if (t >= 0.0 && !wholeIn(t, V)) {
					flag(uint(bit));
					l = double(NAN);
				} else if (t >= 0.0) {
					row(true, t, w, l, l0 * (V + 1), 0);
					answer[l0] = true;
				}
			}
			memoryBarrierShared();
			barrier();
			for (int e = l0; e < rows * V; e += WG) {
				if (answer[e / V]) probs[gp + r0 * V + e] = tile[e + e / V];
			}
			barrier();
		}
	} else
#endif
	{
		for (int r = l0; r < R; r += WG) {
			float t = targets[tb + r];
			if (t < 0.0) continue;
			if (!wholeIn(t, V)) {
				flag(uint(bit));
				l = double(NAN);
				continue;
			}
			row(false, t, w, l, base(0, s) + r * V, base(2, s) + r * V);
		}
	}
	double total = sumDouble(l);
	if (lid() == 0) loss[base(3, s)] = float(total);
}
