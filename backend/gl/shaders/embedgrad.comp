// EmbedGrad: out[v] = sum over rows r with ids[r] = v, in row order from
// 0, of dy[r]; out has V rows of D. One invocation per element (v, j) of
// out adds its rows as the index of embedindex.comp lists them (binding
// 0: a block per seed, or one every seed shares), so each element reads
// only its own rows and no atomics are needed.

layout(std430, binding = 0) readonly buffer IdxBuf { int idx[]; };
layout(std430, binding = 1) readonly buffer DYbuf { float dy[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float o[]; };

uniform int R;
uniform int D;
uniform int V;

void main() {
	int s, i;
	if (!item(s, i)) return;
	int v = i / D;
	int j = i - v * D;
	int start = base(0, s), order = start + V + 1;
	int yo = base(1, s) + j;
	int end = idx[start + v + 1];
	precise float acc = 0.0;
	for (int k = idx[start + v]; k < end; k++) {
		acc += dy[yo + idx[order + k] * D];
	}
	o[base(2, s) + i] = acc;
}
