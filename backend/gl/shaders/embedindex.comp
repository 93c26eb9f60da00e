// EmbedIndex, EmbedGrad's first pass: for the ids of one seed (one
// workgroup a seed, or one for ids every seed shares), the rows of each
// id in row order, as an index in the device's scratch: start[0..V] and
// then order[0..R-1], the rows of id v being order[start[v] ..
// start[v+1]-1] in increasing order. cursor[0..V-1] follows, scratch of
// its own. An id that is not a whole number in 0..V-1 is left out and
// raises the status flag.
//
// Rows go 64 at a time through shared memory: a row's place among the
// rows of its id is the count of its id before it in the chunk, plus what
// earlier chunks gave that id; the last row of an id in a chunk moves
// that id's count on. No atomics: every write has one writer, in an order
// fixed by the rows alone.

#include "status.glsl"

layout(std430, binding = 0) readonly buffer IdBuf { float ids[]; };
layout(std430, binding = 1) coherent buffer IdxBuf { int idx[]; };

uniform int R;
uniform int V;
uniform int bit;

shared int chunk[WG];
shared int part[WG];

// sync orders this workgroup's index writes before what follows.
void sync() {
	memoryBarrierBuffer();
	memoryBarrierShared();
	barrier();
}

// place reads chunk[0..WG-1]: how many rows before l in the chunk share
// id, and whether l is the chunk's last row of it.
int place(int l, int id, out bool last) {
	int rank = 0;
	last = true;
	for (int k = 0; k < WG; k++) {
		if (chunk[k] == id) {
			if (k < l) rank++;
			if (k > l) last = false;
		}
	}
	return rank;
}

void main() {
	int s = group();
	if (s >= S) return; // the whole workgroup
	int l = lid();
	int ib = base(0, s);
	int start = base(1, s), order = start + V + 1, cursor = order + R;
	for (int v = l; v <= V; v += WG) {
		idx[start + v] = 0;
	}
	sync();
	// Counts: start[v+1] is how many rows have id v.
	bool bad = false;
	for (int c0 = 0; c0 < R; c0 += WG) {
		int id = -1;
		if (c0 + l < R) {
			float x = ids[ib + c0 + l];
			if (wholeIn(x, V)) {
				id = int(x);
			} else {
				bad = true;
			}
		}
		chunk[l] = id;
		sync();
		bool last;
		int rank = place(l, id, last);
		if (id >= 0 && last) idx[start + id + 1] += rank + 1;
		sync();
	}
	if (bad) flag(uint(bit));
	// Prefix sums, a block of ids an invocation: start[v] is the rows of
	// ids below v.
	int per = (V + WG - 1) / WG;
	int v0 = min(l * per, V), v1 = min(v0 + per, V);
	int sum = 0;
	for (int v = v0; v < v1; v++) {
		sum += idx[start + v + 1];
	}
	part[l] = sum;
	sync();
	int before = 0;
	for (int k = 0; k < l; k++) {
		before += part[k];
	}
	for (int v = v0; v < v1; v++) {
		before += idx[start + v + 1];
		idx[start + v + 1] = before;
	}
	sync();
	for (int v = l; v < V; v += WG) {
		idx[cursor + v] = idx[start + v];
	}
	sync();
	// Placement, chunk by chunk in row order.
	for (int c0 = 0; c0 < R; c0 += WG) {
		int id = -1;
		if (c0 + l < R) {
			float x = ids[ib + c0 + l];
			if (wholeIn(x, V)) id = int(x);
		}
		chunk[l] = id;
		sync();
		bool last;
		int rank = place(l, id, last);
		int at = id >= 0 ? idx[cursor + id] : 0;
		if (id >= 0) idx[order + at + rank] = c0 + l;
		sync();
		if (id >= 0 && last) idx[cursor + id] = at + rank + 1;
		sync();
	}
}
