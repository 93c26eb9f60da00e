// Package simd holds headlab's vector kernels: the float32 matrix multiply
// Sgemm, the GELU and the exponential. Sgemm computes C = op(A) op(B) (+ a
// bias row), row-major, serial. Three paths (path.go), chosen at init from
// the CPU's features or forced by HEADLAB_SIMD=avx512|avx2|go:
//   - avx512: register-blocked assembly micro-kernels, 8 rows x 32 columns
//     of C held in 16 ZMM registers, no packing (the shapes are small);
//   - avx2 (AVX2 + FMA): 6 rows x 16 columns in 12 YMM registers, the same
//     arithmetic, so the same bits as avx512;
//   - go: plain Go loops, everywhere else.
//
// Summation order, the same on every path: every element of C starts at
// its bias (or 0) and adds A(i,p)*B(p,j) for p = 0, 1, ..., k-1 in turn. The
// assembly rounds each step once (fused multiply-add); the Go loops round
// the product and the sum separately, so the Go path agrees with the others
// to rounding, not bit for bit. A given machine and path always give the
// same results, for any GOMAXPROCS.
package simd

import "fmt"

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
		for j := 0; j < n; j++ {
			row := b[j*k : j*k+k]
			for p, v := range row {
				bt[p*n+j] = v
			}
		}
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

// goGemm is the portable path, in the documented order.
func goGemm(m, n, k int, a []float32, ai, ap int, b []float32, ldb int, c []float32, ldc int, bias []float32) {
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		if bias != nil {
			copy(ci, bias[:n])
		} else {
			clear(ci)
		}
		for p := 0; p < k; p++ {
			x := a[i*ai+p*ap]
			bp := b[p*ldb : p*ldb+n]
			for j, v := range bp {
				ci[j] += float32(x * v) // the conversion keeps the product rounded on its own (no FMA, any GOAMD64)
			}
		}
	}
}

// Flops is the arithmetic of one Sgemm call counted as 2*m*n*k.
func Flops(m, n, k int) float64 { return 2 * float64(m) * float64(n) * float64(k) }
