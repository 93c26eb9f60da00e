//go:build !amd64 || purego

package simd

const useAsm = false

func asmGemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	goGemm(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
}

func geluKernel(n int, x, y, d *float32) { panic("simd: no GELU kernel") }

func expKernel(n int, x *float32) { panic("simd: no exp kernel") }
