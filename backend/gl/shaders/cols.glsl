// The column reductions' grid (colsum.comp, coldot.comp): a workgroup per
// seed and block of 64 columns of a [R, D] array.

#ifdef STAGED
// TILE floats of rows staged at a time, whole rows of the block.
#define TILE 2048
shared float ta[TILE];
#endif

// colGroup sets this workgroup's seed, first column and number of
// columns; it is false past the grid.
bool colGroup(out int s, out int j0, out int cols) {
	int g = group();
	s = g / work;
	j0 = (g - s * work) * WG;
	cols = min(WG, D - j0);
	return s < S;
}
