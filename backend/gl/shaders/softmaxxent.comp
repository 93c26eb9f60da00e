// SoftmaxXent: one workgroup per seed. loss = -sum over answer rows of
// w * (logit[target] - lse), w = 1/(answer rows), lse = m + log(sum of
// exp(logit - m)) with m the row's maximum; probs receives each answer
// row's softmax, other rows are left as they are. Each invocation takes
// rows lid, lid+64, ...; the exponentials are exp32 (float), their sum,
// the log and the loss are double, the loss's partial sums added by a
// fixed tree. A target that is not a whole number below V makes the loss
// NaN and raises the status flag.

layout(std430, binding = 0) readonly buffer Lbuf { float logits[]; };
layout(std430, binding = 1) readonly buffer Tbuf { float targets[]; };
layout(std430, binding = 2) buffer Pbuf { float probs[]; };
layout(std430, binding = 3) writeonly buffer LossBuf { float loss[]; };

#include "reduce.glsl"

uniform int R;
uniform int V;
uniform int bit;

void main() {
	int s = group();
	if (s >= S) return; // the whole workgroup
	int tb = base(1, s);
	float w = answerWeight(tb, R);
	precise double l = 0.0lf;
	for (int r = lid(); r < R; r += WG) {
		float t = targets[tb + r];
		if (t < 0.0) continue;
		if (!wholeIn(t, V)) {
			flag(uint(bit));
			l = double(NAN);
			continue;
		}
		int lo = base(0, s) + r * V;
		int po = base(2, s) + r * V;
		float m = logits[lo];
		for (int j = 1; j < V; j++) {
			m = max(m, logits[lo + j]);
		}
		precise double sum = 0.0lf;
		for (int j = 0; j < V; j++) {
			precise float x = logits[lo + j] - m;
			float e = exp32(x);
			probs[po + j] = e;
			sum += double(e);
		}
		precise float lse = m + float(dlog(sum));
		precise float z = logits[lo + int(t)] - lse;
		l -= double(w) * double(z);
		for (int j = 0; j < V; j++) {
			probs[po + j] = float(double(probs[po + j]) / sum);
		}
	}
	double total = sumDouble(l);
	if (lid() == 0) loss[base(3, s)] = float(total);
}
