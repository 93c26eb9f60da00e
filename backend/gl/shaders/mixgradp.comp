// MixGradP: dP = dO V^T, a workgroup per head (attn.glsl), an invocation
// per cell (i, j) of the head's block of dP in turn; masked cells are
// written as exactly 0. Staged: dO's and V's blocks in; dP's block out by
// neighbouring invocations either way.

#include "attn.glsl"

layout(std430, binding = 0) readonly buffer DObuf { float dO[]; };
layout(std430, binding = 1) readonly buffer Vbuf { float v[]; };
layout(std430, binding = 2) writeonly buffer DPbuf { float dP[]; };

void main() {
	int s, b, h;
	if (!head(s, b, h)) return; // the whole workgroup
	int ob = base(0, s), vb = base(1, s), pb = base(2, s) + prow(b, h, 0);
	int l = lid();
#ifdef STAGED
	if (staged(2, 0, 0)) {
		int Oa = 0, Va = T * (Dh + 1);
		STAGE_QKV(Oa, dO, ob)
		STAGE_QKV(Va, v, vb)
		sync();
		for (int c = l; c < T * T; c += WG) {
			int i = c / T, j = c - i * T;
			precise float acc = 0.0;
			if (j < keys(i)) {
				for (int d = 0; d < Dh; d++) {
					acc = fma(QS(Oa, i, d), QS(Va, j, d), acc);
				}
			}
			dP[pb + c] = acc;
		}
		return;
	}
#endif
	for (int c = l; c < T * T; c += WG) {
		int i = c / T, j = c - i * T;
		precise float acc = 0.0;
		if (j < keys(i)) {
			int oo = ob + row(b, i, h);
			int vo = vb + row(b, j, h);
			for (int d = 0; d < Dh; d++) {
				acc = fma(dO[oo + d], v[vo + d], acc);
			}
		}
		dP[pb + c] = acc;
	}
}
