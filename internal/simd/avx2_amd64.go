//go:build amd64 && !purego

package simd

// The AVX2 + FMA kernels (avx2_amd64.s). A 6x16 block of C lives in 12 YMM
// registers; each step over p loads 16 values of B's row p, broadcasts 6 of
// A's column p and does 12 fused multiply-adds, so every element gets the
// same single-rounded steps, in the same order, as on AVX-512. Column
// tails load with VMASKMOVPS and a lane mask (masked lanes are never
// read) and store their lanes in pieces of 4, 2 and 1 (STORETAIL,
// tail_amd64.h: masked stores are microcoded on Zen 3 and 4): kern6x16m
// masks columns 8..15, kern6x8m columns 0..7, kern1x16m both halves.

//go:noescape
func kern6x16(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)

//go:noescape
func kern4x16(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)

//go:noescape
func kern6x16m(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)

//go:noescape
func kern6x8m(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)

//go:noescape
func kern1x16(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)

//go:noescape
func kern1x16m(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)

//go:noescape
func geluKernelAVX2(n int, x, y, d *float32)

//go:noescape
func expKernelAVX2(n int, x *float32)

// laneMask: the 8 int32 from &laneMask[8-w] enable the first w lanes (0..8).
var laneMask = [16]int32{-1, -1, -1, -1, -1, -1, -1, -1}

// mask8 is the VMASKMOVPS mask of the first w (clamped to 0..8) of 8 lanes.
func mask8(w int) *int32 { return &laneMask[8-min(max(w, 0), 8)] }

// avx2Gemm runs a large product cache-blocked (avx2Blocked), any other
// as avx2Tiles. Gemm has checked every access.
func avx2Gemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	if useBlocked(m, n, k) {
		avx2Blocked(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
		return
	}
	avx2Tiles(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
}

// avx2Tiles walks C in blocks of 6 rows (then one of 4 where the columns
// are whole, then single rows) by 16 columns, unpacked.
func avx2Tiles(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	if m <= 0 || n <= 0 {
		return
	}
	const f = 4 // bytes per float32
	for j := 0; j < n; j += 16 {
		w := n - j
		m0, m1 := mask8(w), mask8(w-8)
		bj := &b[j]
		var bs *float32
		if bias != nil {
			bs = &bias[j]
		}
		i := 0
		for ; i+6 <= m; i += 6 {
			ap6, cp := &a[i*ai], &c[i*ldc+j]
			switch {
			case w >= 16:
				kern6x16(k, ap6, ai*f, ap*f, bj, ldb*f, cp, ldc*f, bs, m0, m1)
			case w > 8:
				kern6x16m(k, ap6, ai*f, ap*f, bj, ldb*f, cp, ldc*f, bs, m0, m1)
			default:
				kern6x8m(k, ap6, ai*f, ap*f, bj, ldb*f, cp, ldc*f, bs, m0, m1)
			}
		}
		if i+4 <= m && w >= 16 {
			// Four rows at once (a 16-row head leaves 4 after two
			// blocks of 6): 8 FMAs a step where single rows do 2.
			kern4x16(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs, m0, m1)
			i += 4
		}
		for ; i < m; i++ {
			if w >= 16 {
				kern1x16(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs, m0, m1)
			} else {
				kern1x16m(k, &a[i*ai], ai*f, ap*f, bj, ldb*f, &c[i*ldc+j], ldc*f, bs, m0, m1)
			}
		}
	}
}
