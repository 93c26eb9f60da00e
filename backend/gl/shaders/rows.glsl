// Row blocks, for the kernels that give each invocation one row of D
// (layernorm.comp, layernormgradx.comp): a workgroup per block of RW rows
// of one seed, RW = min(64, 2048/D) (work is the blocks per seed). With
// STAGED, and rows of at most 2048, a block goes through shared memory:
// loaded and stored in storage order by the whole workgroup, its rows
// padded to D+1 floats so that the invocations reading one row each hit
// distinct banks.

#define ROWTILE 2112 // 2048 + 64: any block of rows of D <= 2048, padded

// rowBlock sets this workgroup's seed, first row and rows; it is false
// past the grid.
bool rowBlock(int R, int D, out int s, out int r0, out int rows) {
	int rw = max(min(WG, 2048 / max(D, 1)), 1);
	int g = group();
	s = g / work;
	r0 = (g - s * work) * rw;
	rows = min(rw, R - r0);
	return s < S;
}
