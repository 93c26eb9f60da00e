//go:build arm64 && !purego

package simd

// The NEON (ASIMD) kernels (neon_arm64.s). Every arm64 CPU has ASIMD, so
// the neon path always runs here. An 8x8 block of C lives in 16 Q
// registers; each step over p loads 8 values of B's row p, broadcasts 8 of
// A's column p and does 16 fused multiply-adds (FMLA), so every element
// gets the same single-rounded steps, in the same order, as on AVX-512 and
// AVX2. Column tails: a block of 4 columns (kern8x4, kern1x4), then up to 3
// columns with scalar FMADDS (kernTail); row tails use the 1-row kernels.
// GELU and Exp are the AVX kernels' float32 operations, 4 lanes at a time.

// canRun: the portable path and NEON.
func canRun(p path) bool { return p == pathGo || p == pathNEON }

//go:noescape
func kern8x8(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32)

//go:noescape
func kern8x4(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32)

//go:noescape
func kern1x8(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32)

//go:noescape
func kern1x4(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32)

//go:noescape
func kernTail(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, rows, cols int)

//go:noescape
func geluKernel(n int, x, y, d *float32)

//go:noescape
func expKernel(n int, x *float32)

// asmGemm walks C in blocks of 8 columns (then 4, then the last 1 to 3
// one element at a time) by 8 rows (then single rows). Gemm has checked
// every access; the kernels touch only the block's own elements.
func asmGemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	if cur != pathNEON {
		goGemm(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
		return
	}
	const f = 4 // bytes per float32
	biasAt := func(j int) *float32 {
		if bias == nil {
			return nil
		}
		return &bias[j]
	}
	j := 0
	for ; j+8 <= n; j += 8 {
		bj, bs := &b[j], biasAt(j)
		i := 0
		for ; i+8 <= m; i += 8 {
			kern8x8(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs)
		}
		for ; i < m; i++ {
			kern1x8(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs)
		}
	}
	if j+4 <= n {
		bj, bs := &b[j], biasAt(j)
		i := 0
		for ; i+8 <= m; i += 8 {
			kern8x4(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs)
		}
		for ; i < m; i++ {
			kern1x4(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs)
		}
		j += 4
	}
	if j < n {
		kernTail(k, &a[0], ai*f, ap*f, &b[j], ldb*f, &c[j], ldc*f, biasAt(j), m, n-j)
	}
}

// geluAsm and expAsm run the NEON GELU and exp kernels on n (a positive
// multiple of 16) elements.
func geluAsm(n int, x, y, d *float32) { geluKernel(n, x, y, d) }

func expAsm(n int, x *float32) { expKernel(n, x) }
