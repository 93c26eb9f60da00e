//go:build amd64 && !purego

package simd

import "sync"

// Sgemm's cache-blocked AVX2 path, for products whose operands overflow
// the caches (a 4-layer, d-model 256 model at batch 32: 2048 x 256 x 1024).
// The whole 6x16 tiles of C are computed from packed copies: B in panels
// of blockK rows by 16 columns (16 KiB, kept in L1 while a block of A
// streams past), A, when it is not row-major (a transpose: the weight
// gradients), in panels of 6 rows by blockK (blockM rows, 96 KiB, in
// L2), k taken blockK at a time with C stored and reloaded between the
// blocks (kern6x16acc). Every element of C still starts at its bias and
// adds its products for p = 0, 1, ..., k-1, one FMA each, so the bits are
// those of the unblocked walk (TestBlockedBits). The rows and columns past
// the last whole tile take the unblocked walk.
const (
	blockK = 256
	blockM = 96 // a multiple of 6
)

//go:noescape
func kern6x16acc(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int)

// useBlocked says whether a product is large enough for packing to pay.
func useBlocked(m, n, k int) bool {
	return m >= 48 && n >= 64 && k >= 64 && m*n*k >= 1<<22
}

// blockBuf holds the packed panels of one call.
type blockBuf struct{ a, b []float32 }

var blockPool = sync.Pool{New: func() any { return new(blockBuf) }}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// avx2Blocked is avx2Gemm for large products (useBlocked).
func avx2Blocked(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	const f = 4 // bytes per float32
	mw, nw := m-m%6, n-n%16
	w := blockPool.Get().(*blockBuf)
	defer blockPool.Put(w)
	w.b = grow(w.b, min(k, blockK)*nw)
	w.a = grow(w.a, min(k, blockK)*min(mw, blockM))
	pa, pb := w.a, w.b
	m0, m1 := mask8(16), mask8(8)
	for p0 := 0; p0 < k; p0 += blockK {
		kc := min(blockK, k-p0)
		// B(p0+p, 16jp+c) at pb[jp*kc*16 + p*16 + c].
		for jp := range nw / 16 {
			dst := pb[jp*kc*16 : (jp+1)*kc*16]
			o := p0*ldb + jp*16
			for p := range kc {
				*(*[16]float32)(dst[p*16:]) = *(*[16]float32)(b[o:])
				o += ldb
			}
		}
		for i0 := 0; i0 < mw; i0 += blockM {
			mc := min(blockM, mw-i0)
			// A(i0+6ip+r, p0+p) at pa[ip*kc*6 + p*6 + r].
			// A's rows, when contiguous (ap 1), are read in place:
			// packing them cost 7% of a step and saved nothing.
			packed := ap != 1
			if packed {
				packA(pa, a, i0, p0, mc, kc, ai, ap)
			}
			for jp := range nw / 16 {
				bj := &pb[jp*kc*16]
				var bs *float32
				if bias != nil {
					bs = &bias[jp*16]
				}
				for ip := range mc / 6 {
					cp := &c[(i0+ip*6)*ldc+jp*16]
					ak, sr, sp := &a[(i0+ip*6)*ai+p0], ai*f, f
					if packed {
						ak, sr, sp = &pa[ip*kc*6], f, 6*f
					}
					if p0 == 0 {
						kern6x16(kc, ak, sr, sp, bj, 16*f, cp, ldc*f, bs, m0, m1)
					} else {
						kern6x16acc(kc, ak, sr, sp, bj, 16*f, cp, ldc*f)
					}
				}
			}
		}
	}
	if nw < n { // the columns past the last whole tile, rows 0..mw
		var bs []float32
		if bias != nil {
			bs = bias[nw:]
		}
		avx2Tiles(mw, n-nw, k, a, ai, ap, b[nw:], ldb, c[nw:], ldc, bs)
	}
	if mw < m { // the rows past the last whole tile, every column
		avx2Tiles(m-mw, n, k, a[mw*ai:], ai, ap, b, ldb, c[mw*ldc:], ldc, bias)
	}
}

// packA packs the block of A at rows i0..i0+mc (mc a multiple of 6),
// columns p0..p0+kc into panels of 6 rows, column by column:
// A(i0+6q+r, p0+p) at dst[q*kc*6 + p*6 + r]. It reads A in its own order
// (a transposed A, ai 1, a row of the transpose at a time).
func packA(dst, a []float32, i0, p0, mc, kc, ai, ap int) {
	if ai == 1 {
		for p := range kc {
			o := i0 + (p0+p)*ap
			src := a[o : o+mc : o+mc]
			for q := range mc / 6 {
				s, d := src[6*q:6*q+6:6*q+6], dst[q*kc*6+p*6:q*kc*6+p*6+6:q*kc*6+p*6+6]
				d[0], d[1], d[2], d[3], d[4], d[5] = s[0], s[1], s[2], s[3], s[4], s[5]
			}
		}
		return
	}
	for q := range mc / 6 {
		o := (i0+6*q)*ai + p0*ap
		r0, r1, r2 := a[o:], a[o+ai:], a[o+2*ai:]
		r3, r4, r5 := a[o+3*ai:], a[o+4*ai:], a[o+5*ai:]
		panel := dst[q*kc*6 : (q+1)*kc*6]
		for p := range kc {
			d, x := panel[6*p:6*p+6:6*p+6], p*ap
			d[0], d[1], d[2], d[3], d[4], d[5] = r0[x], r1[x], r2[x], r3[x], r4[x], r5[x]
		}
	}
}
