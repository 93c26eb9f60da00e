//go:build (amd64 || arm64) && !purego

package simd

// The elementwise, LayerNorm and Adam kernels, in vec_amd64.s (AVX2) and
// vec_arm64.s (NEON), with the same signatures on both.

//go:noescape
func addKernel(n int, out, a, b *float32)

//go:noescape
func mulKernel(n int, out, a, b *float32)

//go:noescape
func addMulKernel(n int, out, a, b *float32)

//go:noescape
func lnKernel(rows, n int, x, gamma, beta, out, xh, inv *float32, eps float32)

//go:noescape
func lnGradKernel(rows, n int, out, gamma, dy, xh, inv *float32)

//go:noescape
func adamKernel(n int, w, grad, m, v *float32, p *AdamStep)
