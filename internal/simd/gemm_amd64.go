//go:build amd64 && !purego

package simd

import "golang.org/x/sys/cpu"

// canRun says whether this CPU and OS run path p's kernels (x/sys/cpu
// checks that the OS saves the YMM and ZMM state).
func canRun(p path) bool {
	switch p {
	case pathGo:
		return true
	case pathAVX2:
		return cpu.X86.HasAVX2 && cpu.X86.HasFMA
	case pathAVX512:
		return cpu.X86.HasAVX512F
	}
	return false
}

//go:noescape
func kern8x32(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 uint64)

//go:noescape
func kern8x16(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 uint64)

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

// asmGemm runs Gemm's checked call on the path's kernels.
func asmGemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	switch cur {
	case pathAVX512:
		avx512Gemm(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
	case pathAVX2:
		avx2Gemm(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
	default:
		goGemm(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
	}
}

// avx512Gemm walks C in blocks of 8 rows (then single rows) by 32 columns
// (a last block of at most 16 columns by kern8x16). Gemm has checked every
// access (masked lanes are never touched). Every element sums its products
// in the same order whatever its block, so the blocks do not change bits.
func avx512Gemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	const f = 4 // bytes per float32
	for j := 0; j < n; j += 32 {
		m0, m1 := masks(n - j)
		bj := &b[j]
		var bs *float32
		if bias != nil {
			bs = &bias[j]
		}
		kern := kern8x32
		if n-j <= 16 {
			kern = kern8x16
		}
		i := 0
		for ; i+8 <= m; i += 8 {
			kern(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs, m0, m1)
		}
		for ; i < m; i++ {
			kern1x32(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs, m0, m1)
		}
	}
}

// geluAsm and expAsm run the path's GELU and exp kernels on n (a positive
// multiple of 16) elements.
func geluAsm(n int, x, y, d *float32) {
	if cur == pathAVX2 {
		geluKernelAVX2(n, x, y, d)
		return
	}
	geluKernel(n, x, y, d)
}

func expAsm(n int, x *float32) {
	if cur == pathAVX2 {
		expKernelAVX2(n, x)
		return
	}
	expKernel(n, x)
}

//go:noescape
func geluKernel(n int, x, y, d *float32)

//go:noescape
func expKernel(n int, x *float32)
