//go:build !(amd64 || arm64) || purego

package simd

// Only the portable loops are built here: vec.go never calls these.
const asmLanes = 1

func addKernel(n int, out, a, b *float32)    { panic("simd: no vector kernels") }
func mulKernel(n int, out, a, b *float32)    { panic("simd: no vector kernels") }
func addMulKernel(n int, out, a, b *float32) { panic("simd: no vector kernels") }

func lnKernel(rows, n int, x, gamma, beta, out, xh, inv *float32, eps float32) {
	panic("simd: no vector kernels")
}

func lnGradKernel(rows, n int, out, gamma, dy, xh, inv *float32) { panic("simd: no vector kernels") }

func adamKernel(n int, w, grad, m, v *float32, p *AdamStep) { panic("simd: no vector kernels") }
