// Adam: one step on every parameter (s, i) of every seed whose failed is
// 0 (docs/model.md; the CPU device's rounding, step for step):
//   m = g*(1-b1) + m*b1;  v = (g*g)*(1-b2) + v*b2;
//   w = w*decay + ((m*c1)*negLR) / (float(sqrt(double(v*c2))) + eps)
// decay is AdamW's 1 - lr*wd (1: none, and w*1 is w exactly).
// A failed seed's w, m and v are left as they are.

layout(std430, binding = 0) buffer Wbuf { float w[]; };
layout(std430, binding = 1) readonly buffer Gbuf { float g[]; };
layout(std430, binding = 2) buffer Mbuf { float m[]; };
layout(std430, binding = 3) buffer Vbuf { float v[]; };
layout(std430, binding = 4) readonly buffer LRbuf { float negLR[]; };
layout(std430, binding = 5) readonly buffer Fbuf { float failed[]; };
layout(std430, binding = 6) readonly buffer Dbuf { float decay[]; };

uniform float c1;
uniform float c2;
uniform float b1;
uniform float b2;
uniform float omb1;
uniform float omb2;
uniform float eps;

void main() {
	int s, i;
	if (!item(s, i)) return;
	if (nonzero(failed[base(5, s)])) return;
	float eta = negLR[base(4, s)];
	int wi = base(0, s) + i, mi = base(2, s) + i, vi = base(3, s) + i;
	float gr = g[base(1, s) + i];
	precise float m1 = gr * omb1;
	precise float m2 = m[mi] * b1;
	precise float mj = m1 + m2;
	precise float gg = gr * gr;
	precise float v1 = gg * omb2;
	precise float v2 = v[vi] * b2;
	precise float vj = v1 + v2;
	m[mi] = mj;
	v[vi] = vj;
	precise float vc = vj * c2;
	precise float den = float(sqrt(double(vc))) + eps;
	precise float mc = mj * c1;
	precise float num = mc * eta;
	precise float wd = w[wi] * decay[base(6, s)];
	w[wi] = wd + div(num, den);
}
