//go:build !(amd64 || arm64) || purego

package simd

// canRun: only the portable path is built here.
func canRun(p path) bool { return p == pathGo }

func asmGemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	goGemm(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
}

func geluAsm(n int, x, y, d *float32) { panic("simd: no GELU kernel") }

func expAsm(n int, x *float32) { panic("simd: no exp kernel") }
