//go:build !amd64 || purego

package simd

// The column kernels run as per-row loops of the elementwise kernels here.
func colsAsm() bool { return false }

func colScaleKernel(rows, n, ld int, out, x, v *float32) { panic("simd: no column kernels") }
func colDotKernel(rows, n, ld int, out, a, b *float32)   { panic("simd: no column kernels") }
func colSumKernel(rows, n, ld int, out, x *float32)      { panic("simd: no column kernels") }
