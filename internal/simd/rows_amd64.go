//go:build amd64 && !purego

package simd

// rowsAsm says whether the row kernels run in assembly: on the AVX-512
// path, whose mask registers make a row of any width one loop.
func rowsAsm() bool { return cur == pathAVX512 }

//go:noescape
func scaleSubMaxKernel(rows, t, causal int, scale float32, x *float32)

//go:noescape
func divRowsKernel(rows, t, causal int, x, sums *float32)

//go:noescape
func scoreGradKernel(rows, t, causal int, scale float32, o, p, dp, rs *float32)

//go:noescape
func transposeKernel(t, dh int, x *float32, ld int, dst *float32)
