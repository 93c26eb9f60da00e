//go:build amd64 && !purego

package simd

// colsAsm: the column kernels (cols_amd64.s, AVX2) run on the avx2 and
// avx512 paths. Each takes the first n columns (a positive multiple of 8)
// of rows > 0 rows of ld floats.
func colsAsm() bool { return cur != pathGo }

//go:noescape
func colScaleKernel(rows, n, ld int, out, x, v *float32)

//go:noescape
func colDotKernel(rows, n, ld int, out, a, b *float32)

//go:noescape
func colSumKernel(rows, n, ld int, out, x *float32)
