package simd

// Column kernels over a [rows, n] row-major matrix: scale every row by one
// vector, and sum the rows (or the rows of a product) into one. Each
// element is computed exactly as a per-row loop of Mul, Add or AddMul
// computes it, in row order, so every path keeps those loops' bits; on
// amd64 (cols_amd64.s, AVX2 on the avx2 and avx512 paths alike) the whole
// matrix is one call, so a row of 32 floats no longer pays a call. The
// columns past the last whole vector of 8, and every other path, take the
// per-row loops.

// ColScale sets out[r*n+j] = x[r*n+j] * g[j] for the rows of n = len(g)
// floats; out may be x.
func ColScale(out, x, g []float32, rows int) {
	n := len(g)
	out, x = out[:rows*n], x[:rows*n]
	done := colsDone(rows, n)
	if done > 0 {
		colScaleKernel(rows, done, n, &out[0], &x[0], &g[0])
	}
	if done == n {
		return
	}
	for r := 0; r < rows*n; r += n {
		Mul(out[r+done:r+n], x[r+done:r+n], g[done:])
	}
}

// ColDot sets out[j] to the sum over rows r, in order, of
// a[r*n+j] * b[r*n+j] for n = len(out), each product rounded before it
// is added, the sum starting at 0.
func ColDot(out, a, b []float32, rows int) {
	n := len(out)
	a, b = a[:rows*n], b[:rows*n]
	clear(out)
	done := colsDone(rows, n)
	if done > 0 {
		colDotKernel(rows, done, n, &out[0], &a[0], &b[0])
	}
	if done == n {
		return
	}
	for r := 0; r < rows*n; r += n {
		AddMul(out[done:], a[r+done:r+n], b[r+done:r+n])
	}
}

// ColSum sets out[j] to the sum over rows r, in order, of x[r*n+j] for
// n = len(out), starting at 0: the bits of Sgemm's ones[1, rows] x, whose
// every step 1*v + acc rounds as v + acc does.
func ColSum(out, x []float32, rows int) {
	n := len(out)
	x = x[:rows*n]
	clear(out)
	done := colsDone(rows, n)
	if done > 0 {
		colSumKernel(rows, done, n, &out[0], &x[0])
	}
	if done == n {
		return
	}
	for r := 0; r < rows*n; r += n {
		Add(out[done:], out[done:], x[r+done:r+n])
	}
}

// colsDone is how many leading columns of a [rows, n] matrix the column
// kernels take: whole vectors of 8, where there are kernels and rows.
func colsDone(rows, n int) int {
	if !colsAsm() || rows <= 0 {
		return 0
	}
	return n &^ 7
}
