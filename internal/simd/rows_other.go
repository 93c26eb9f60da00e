//go:build !(amd64 || arm64) || purego

package simd

// Only the portable loops of rows.go run here.
func rowsAsm() bool { return false }

func scaleSubMaxKernel(rows, t, causal int, scale float32, x *float32) {
	panic("simd: no row kernels")
}

func divRowsKernel(rows, t, causal int, x, sums *float32) { panic("simd: no row kernels") }

func scoreGradKernel(rows, t, causal int, scale float32, o, p, dp, rs *float32) {
	panic("simd: no row kernels")
}

func clearMaskedKernel(rows, t int, x *float32) bool { return false }

func transposeKernel(t, dh int, x *float32, ld int, dst *float32) { panic("simd: no row kernels") }
