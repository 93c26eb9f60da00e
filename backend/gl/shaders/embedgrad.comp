// EmbedGrad: out[v] = sum over rows r with ids[r] = v, in row order from
// 0, of dy[r]; out has V rows of D. One invocation per element (v, j) of
// out gathers over all rows, so no atomics are needed. Element (0, 0)
// raises the status flag for an id that is not a whole number in 0..V-1.

layout(std430, binding = 0) readonly buffer IdBuf { float ids[]; };
layout(std430, binding = 1) readonly buffer DYbuf { float dy[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };

uniform int R;
uniform int D;
uniform int V;
uniform int bit;

void main() {
	int s, i;
	if (!item(s, i)) return;
	int v = i / D;
	int j = i % D;
	int io = base(0, s), yo = base(1, s) + j;
	float fv = float(v);
	bool bad = false;
	precise float acc = 0.0;
	for (int r = 0; r < R; r++) {
		float id = ids[io + r];
		if (id == fv) {
			acc += dy[yo + r * D];
		}
		bad = bad || !wholeIn(id, V);
	}
	if (bad && i == 0) flag(uint(bit));
	o[base(2, s) + i] = acc;
}
