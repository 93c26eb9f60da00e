//go:build amd64 && !purego

package simd

import "golang.org/x/sys/cpu"

// useAsm is true where the AVX-512 kernels can run (the OS saves ZMM state).
var useAsm = cpu.X86.HasAVX512F

//go:noescape
func kern8x32(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 uint64)

//go:noescape
func kern1x32(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 uint64)

// masks returns the lane masks of a 32-column block with w valid columns.
func masks(w int) (uint64, uint64) {
	if w >= 32 {
		return 0xffff, 0xffff
	}
	if w >= 16 {
		return 0xffff, (1 << (w - 16)) - 1
	}
	return (1 << w) - 1, 0
}

// asmGemm walks C in blocks of 8 rows (then single rows) by 32 columns.
// Gemm has checked every access (masked lanes are never touched).
func asmGemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	const f = 4 // bytes per float32
	for j := 0; j < n; j += 32 {
		m0, m1 := masks(n - j)
		bj := &b[j]
		var bs *float32
		if bias != nil {
			bs = &bias[j]
		}
		i := 0
		for ; i+8 <= m; i += 8 {
			kern8x32(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs, m0, m1)
		}
		for ; i < m; i++ {
			kern1x32(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs, m0, m1)
		}
	}
}

//go:noescape
func geluKernel(n int, x, y, d *float32)

//go:noescape
func expKernel(n int, x *float32)
