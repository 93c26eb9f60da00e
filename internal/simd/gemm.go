// Package simd holds headlab's vector kernels: the float32 matrix multiply
// Sgemm, the GELU and the exponential. Sgemm computes C = op(A) op(B) (+ a
// bias row), row-major, serial. Four paths (path.go), chosen at init from
// the CPU's features or forced by HEADLAB_SIMD=avx512|avx2|neon|go:
//   - avx512: register-blocked assembly micro-kernels, 8 rows x 32 columns
//     of C held in 16 ZMM registers, no packing (the shapes are small);
//   - avx2 (AVX2 + FMA): 6 rows x 16 columns in 12 YMM registers, the same
//     arithmetic, so the same bits as avx512; large products (4M
//     multiply-adds and up) cache-blocked over k with B packed
//     (block_amd64.go), the same bits again;
//   - neon (arm64): 8 rows x 8 columns in 16 Q registers, the same bits;
//   - go: register-blocked Go loops (4 rows x 2 columns), everywhere else.
//
// Summation order, the same on every path: every element of C starts at
// its bias (or 0) and adds A(i,p)*B(p,j) for p = 0, 1, ..., k-1 in turn. The
// assembly rounds each step once (fused multiply-add); the Go loops round
// the product and the sum separately, so the Go path agrees with the others
// to rounding, not bit for bit. A given machine and path always give the
// same results, for any GOMAXPROCS.
package simd

import (
	"fmt"
	"sync"
)

// Scratch is reusable memory for transposing B; the zero value is ready.
// A Scratch must not be shared by concurrent calls.
type Scratch struct{ t []float32 }

func (s *Scratch) get(n int) []float32 {
	if s == nil {
		return make([]float32, n)
	}
	if cap(s.t) < n {
		s.t = make([]float32, n)
	}
	return s.t[:n]
}

// Sgemm computes c = op(a) op(b) + bias, where op(a) is m x k (a is stored
// k x m when tA), op(b) is k x n (b is stored n x k when tB), c is m x n,
// all row-major and dense; bias (length n, added to every row) may be nil.
// s holds the transposed b when tB (nil allocates).
func Sgemm(tA, tB bool, m, n, k int, a, b, c, bias []float32, s *Scratch) {
	if len(a) < m*k || len(b) < k*n || len(c) < m*n || (bias != nil && len(bias) < n) {
		panic(fmt.Sprintf("gemm: slices too short for %dx%dx%d: a %d, b %d, c %d", m, n, k, len(a), len(b), len(c)))
	}
	if m == 0 || n == 0 {
		return
	}
	if tB {
		bt := s.get(k * n)
		Transpose(bt, b, 0, k, n, k) // bt[p*n+j] = b[j*k+p]
		b = bt
	}
	// Element (i, p) of op(a) is a[i*ai + p*ap].
	ai, ap := k, 1
	if tA {
		ai, ap = 1, m
	}
	Gemm(m, n, k, a, ai, ap, b, n, c, n, bias)
}

// Gemm is Sgemm's strided core: for i < m, j < n,
// c[i*ldc + j] = bias[j] + sum over p < k, in order, of a[i*ai + p*ap] * b[p*ldb + j]
// (bias nil: 0). Any a layout (a block of rows, a transpose) is a choice
// of ai and ap; b and c are row blocks with leading dimensions ldb, ldc.
func Gemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	if m <= 0 || n <= 0 {
		return
	}
	if k < 0 || ai < 0 || ap < 0 || ldb < n || ldc < n ||
		(k > 0 && ((m-1)*ai+(k-1)*ap >= len(a) || (k-1)*ldb+n > len(b))) ||
		(m-1)*ldc+n > len(c) || (bias != nil && len(bias) < n) {
		panic(fmt.Sprintf("gemm: %dx%dx%d out of range: a %d (%d, %d), b %d (%d), c %d (%d)", m, n, k, len(a), ai, ap, len(b), ldb, len(c), ldc))
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			if bias != nil {
				copy(c[i*ldc:i*ldc+n], bias[:n])
			} else {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	if cur != pathGo {
		asmGemm(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
		return
	}
	goGemm(m, n, k, a, ai, ap, b, ldb, c, ldc, bias)
}

// goGemm is the portable path, in the documented order: every element of
// c starts at its bias (or 0) and adds float32(a(i,p)*b(p,j)) for
// p = 0, 1, ..., k-1 in turn, the product and the sum rounded separately
// (the conversions forbid fusing under any GOAMD64): the bits of a plain
// row-by-row loop (TestGoGemmBits).
//
// It is register blocked: a block of 4 rows x 2 columns of c is held in
// eight local sums while p runs over all of k, so each step loads 4 values
// of a and 2 of b for 8 multiply-adds. The rows of a are first packed into
// panels of [4]float32 per p and the columns of b into panels of
// [2]float32 per p (zero-padded past m and n; those sums are never
// stored), so the micro-kernel (dot4x2) reads both with constant indices
// and no bounds checks. Packing costs O(mk + nk) against O(mnk).
func goGemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	mb, nb := (m+3)/4, (n+1)/2
	w := packPool.Get().(*packed)
	defer packPool.Put(w)
	pa, pb := w.grow(mb*k, nb*k)
	packRows(pa, a, m, k, ai, ap)
	packCols(pb, b, n, k, ldb)
	for ib := range mb {
		i0 := ib * 4
		rows := min(4, m-i0)
		xa := pa[ib*k : ib*k+k]
		for jb := range nb {
			j0 := jb * 2
			var b0, b1 float32
			if bias != nil {
				b0 = bias[j0]
				if j0+1 < n {
					b1 = bias[j0+1]
				}
			}
			s00, s01, s10, s11, s20, s21, s30, s31 := dot4x2(xa, pb[jb*k:jb*k+k], b0, b1)
			if rows == 4 && j0+2 <= n {
				o := i0*ldc + j0
				c0, c1, c2, c3 := c[o:o+2:o+2], c[o+ldc:o+ldc+2:o+ldc+2], c[o+2*ldc:o+2*ldc+2:o+2*ldc+2], c[o+3*ldc:o+3*ldc+2:o+3*ldc+2]
				c0[0], c0[1], c1[0], c1[1] = s00, s01, s10, s11
				c2[0], c2[1], c3[0], c3[1] = s20, s21, s30, s31
				continue
			}
			s := [8]float32{s00, s01, s10, s11, s20, s21, s30, s31}
			for r := range rows {
				ci := c[(i0+r)*ldc+j0:]
				ci[0] = s[2*r]
				if j0+1 < n {
					ci[1] = s[2*r+1]
				}
			}
		}
	}
}

// packRows packs the rows of a (m of them, row i at i*ai, step p at p*ap)
// into panels of 4 rows: pa[ib*k+p] holds a's rows 4ib to 4ib+3 at p,
// zero past m.
func packRows(pa [][4]float32, a []float32, m, k, ai, ap int) {
	mb := (m + 3) / 4
	for ib := range mb {
		i0 := ib * 4
		panel := pa[ib*k : ib*k+k]
		o := i0 * ai
		if i0+4 <= m {
			for p := range panel {
				panel[p] = [4]float32{a[o], a[o+ai], a[o+2*ai], a[o+3*ai]}
				o += ap
			}
			continue
		}
		for p := range panel {
			var q [4]float32
			for r := range m - i0 {
				q[r] = a[o+r*ai]
			}
			panel[p] = q
			o += ap
		}
	}
}

// packCols packs the n columns of b (row stride ldb) into panels of 2
// columns: pb[jb*k+p] holds b's columns 2jb and 2jb+1 at row p, zero past n.
func packCols(pb [][2]float32, b []float32, n, k, ldb int) {
	nb := (n + 1) / 2
	for jb := range nb {
		j0 := jb * 2
		panel := pb[jb*k : jb*k+k]
		o := j0
		if j0+2 <= n {
			for p := range panel {
				panel[p] = [2]float32{b[o], b[o+1]}
				o += ldb
			}
			continue
		}
		for p := range panel {
			panel[p] = [2]float32{b[o], 0}
			o += ldb
		}
	}
}

// packed is goGemm's reusable packing memory.
type packed struct {
	a [][4]float32
	b [][2]float32
}

var packPool = sync.Pool{New: func() any { return new(packed) }}

func (w *packed) grow(na, nb int) ([][4]float32, [][2]float32) {
	if cap(w.a) < na {
		w.a = make([][4]float32, na)
	}
	if cap(w.b) < nb {
		w.b = make([][2]float32, nb)
	}
	return w.a[:na], w.b[:nb]
}

// dot4x2 returns the 4x2 block of sums (row-major) that start at b0, b1
// in every row and add xa[p][r]*yb[p][c] for p in order. Within 16 steps
// the sums are locals; between them they wait in s (an array in memory,
// which holds them exactly), so that every sum has a use in the loop body
// and the scheduler keeps each add next to its multiply (a sum carried
// round the loop in a register is scheduled after all the products, which
// then spill).
func dot4x2(xa [][4]float32, yb [][2]float32, b0, b1 float32) (s00, s01, s10, s11, s20, s21, s30, s31 float32) {
	s := [8]float32{b0, b1, b0, b1, b0, b1, b0, b1}
	for len(xa) >= 16 && len(yb) >= 16 {
		x, y := (*[16][4]float32)(xa), (*[16][2]float32)(yb)
		s00, s01, s10, s11, s20, s21, s30, s31 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
		// 16 steps unrolled, p = 0 to 15, three lines each: the loads, then
		// the 8 multiply-adds.
		y0, y1, x0, x1, x2, x3 := y[0][0], y[0][1], x[0][0], x[0][1], x[0][2], x[0][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[1][0], y[1][1], x[1][0], x[1][1], x[1][2], x[1][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[2][0], y[2][1], x[2][0], x[2][1], x[2][2], x[2][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[3][0], y[3][1], x[3][0], x[3][1], x[3][2], x[3][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[4][0], y[4][1], x[4][0], x[4][1], x[4][2], x[4][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[5][0], y[5][1], x[5][0], x[5][1], x[5][2], x[5][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[6][0], y[6][1], x[6][0], x[6][1], x[6][2], x[6][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[7][0], y[7][1], x[7][0], x[7][1], x[7][2], x[7][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[8][0], y[8][1], x[8][0], x[8][1], x[8][2], x[8][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[9][0], y[9][1], x[9][0], x[9][1], x[9][2], x[9][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[10][0], y[10][1], x[10][0], x[10][1], x[10][2], x[10][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[11][0], y[11][1], x[11][0], x[11][1], x[11][2], x[11][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[12][0], y[12][1], x[12][0], x[12][1], x[12][2], x[12][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[13][0], y[13][1], x[13][0], x[13][1], x[13][2], x[13][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[14][0], y[14][1], x[14][0], x[14][1], x[14][2], x[14][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		y0, y1, x0, x1, x2, x3 = y[15][0], y[15][1], x[15][0], x[15][1], x[15][2], x[15][3]
		s00, s01, s10, s11 = s00+float32(x0*y0), s01+float32(x0*y1), s10+float32(x1*y0), s11+float32(x1*y1)
		s20, s21, s30, s31 = s20+float32(x2*y0), s21+float32(x2*y1), s30+float32(x3*y0), s31+float32(x3*y1)
		s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = s00, s01, s10, s11, s20, s21, s30, s31
		xa, yb = xa[16:], yb[16:]
	}
	yb = yb[:len(xa)]
	for p := range xa {
		x, y := &xa[p], &yb[p]
		y0, y1 := y[0], y[1]
		for r, v := range x {
			s[2*r] += float32(v * y0)
			s[2*r+1] += float32(v * y1)
		}
	}
	return s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
}

// Flops is the arithmetic of one Sgemm call counted as 2*m*n*k.
func Flops(m, n, k int) float64 { return 2 * float64(m) * float64(n) * float64(k) }
