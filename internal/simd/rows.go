package simd

import "math"

// The attention softmax's row steps, on a block of rows of t scores whose
// row r is query i = r mod t (a [B*H*T, T] probabilities tensor, or one
// head's [T, T] block). With causal, query i sees its first i+1 keys,
// else all t; the rest of the row is masked. The portable loops here are
// the oracle; the assembly kernels (rows_amd64.s: AVX-512,
// rows_avx2_amd64.s: AVX2, rows_arm64.s: NEON) do the same float32
// operations on each visible entry, so they give the same bits. Only a
// row's max is taken in another order, as a max that orders floats as
// Go's max does (-0 below +0: an integer max over order keys on amd64,
// FMAX on arm64), so it is the same max, zero signs included; a NaN in
// the row makes it NaN on every path.

// Visible is how many keys row r of a t-wide block sees: query r mod t
// sees its first r mod t + 1 keys (causal), else all t. Masked keys are a
// suffix of the row. It is the causal rule's one definition for the
// kernels (kernels.Shape's Causal); the assembly kernels compute the same
// bound, and the GL kernels write it in GLSL. analysis keeps its own
// (numVisible), since it imports no headlab package.
func Visible(r, t int, causal bool) int {
	if causal {
		return r%t + 1
	}
	return t
}

func rowsOf(x []float32, t int) int {
	if t <= 0 || len(x)%t != 0 {
		panic("simd: rows of a block whose length is not a multiple of t")
	}
	return len(x) / t
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ScaleSubMax sets each visible x[j] to float32(x[j]*scale), then
// subtracts the largest of them from each: the scores ready for exp.
// Masked entries are left as they are.
func ScaleSubMax(x []float32, t int, causal bool, scale float32) {
	rows := rowsOf(x, t)
	if rowsAsm() && rows > 0 {
		scaleSubMaxKernel(rows, t, flag(causal), scale, &x[0])
		return
	}
	for r := 0; r < rows; r++ {
		row := x[r*t : r*t+Visible(r, t, causal)]
		m := float32(math.Inf(-1))
		for j, v := range row {
			v = float32(v * scale)
			row[j] = v
			m = max(m, v)
		}
		for j := range row {
			row[j] -= m
		}
	}
}

// DivRows sets each visible x[j] of row r to x[j]/sums[r], and the
// masked entries to 0.
func DivRows(x []float32, t int, causal bool, sums []float32) {
	rows := rowsOf(x, t)
	sums = sums[:rows]
	if rowsAsm() && rows > 0 {
		divRowsKernel(rows, t, flag(causal), &x[0], &sums[0])
		return
	}
	for r, s := range sums {
		row := x[r*t : r*t+t]
		n := Visible(r, t, causal)
		for j, v := range row[:n] {
			row[j] = v / s
		}
		clear(row[n:])
	}
}

// ScoreGradRows sets each visible o[j] of row r to
// scale * (p[j] * (dp[j] - rs[r])), the softmax's gradient as the score
// gradient, and the masked entries to 0.
func ScoreGradRows(o, p, dp []float32, t int, causal bool, scale float32, rs []float32) {
	rows := rowsOf(o, t)
	p, dp, rs = p[:len(o)], dp[:len(o)], rs[:rows]
	if rowsAsm() && rows > 0 {
		scoreGradKernel(rows, t, flag(causal), scale, &o[0], &p[0], &dp[0], &rs[0])
		return
	}
	for r, rsum := range rs {
		n := Visible(r, t, causal)
		or, pr, dr := o[r*t:r*t+t], p[r*t:r*t+n], dp[r*t:r*t+n]
		for j, v := range pr {
			or[j] = scale * (v * (dr[j] - rsum))
		}
		clear(or[n:])
	}
}

// Transpose writes the [t, dh] block of x starting at off, rows ld apart,
// into dst as [dh, t] (dst[d*t+j] = x[off+j*ld+d]): a key or value block
// made the right-hand side of a product. Copies only, so every path gives
// the same bits.
func Transpose(dst, x []float32, off, ld, t, dh int) {
	if t <= 0 || dh <= 0 {
		return
	}
	dst = dst[:dh*t]
	_ = x[off+(t-1)*ld+dh-1]
	if rowsAsm() && ld < 1<<24 { // the kernel's offsets are int32
		transposeKernel(t, dh, &x[off], ld, &dst[0])
		return
	}
	for d := 0; d < dh; d++ {
		out, src := dst[d*t:d*t+t], x[off+d:]
		for j := range out {
			out[j] = src[j*ld]
		}
	}
}

// RowSums sets sums[r] to the sum from left to right of row r's visible
// entries of a (b nil) or of their products with b's, each product
// rounded before it is added: the softmax's denominators and the row
// sums of its gradient. Four rows run at once, so four independent chains
// are in flight where one row's adds would wait on each other; each row
// keeps its own order, so the bits are those of one row at a time. On
// amd64's vector paths whole groups of 8 rows (t >= 8) take
// rowSumsAVX2, one row a lane, in the same order.
func RowSums(a, b []float32, t int, causal bool, sums []float32) {
	rows := rowsOf(a, t)
	sums = sums[:rows]
	var bp *float32
	if b != nil {
		b = b[:len(a)]
		if rows > 0 {
			bp = &b[0]
		}
	}
	r := 0
	if rowSumsAsm() && t >= 8 && rows >= 8 {
		r = rows &^ 7
		rowSumsAVX2(r/8, t, flag(causal), &a[0], bp, &sums[0])
	}
	for ; r+4 <= rows; r += 4 {
		// n: the shortest of the four rows (the first, unless a new head
		// starts among them).
		n := min(Visible(r, t, causal), Visible(r+1, t, causal), Visible(r+2, t, causal), Visible(r+3, t, causal))
		r0 := a[r*t : r*t+n]
		r1, r2, r3 := a[(r+1)*t:(r+1)*t+n], a[(r+2)*t:(r+2)*t+n], a[(r+3)*t:(r+3)*t+n]
		var s0, s1, s2, s3 float32
		if b == nil {
			for j, v := range r0 {
				s0 += v
				s1 += r1[j]
				s2 += r2[j]
				s3 += r3[j]
			}
		} else {
			b0 := b[r*t : r*t+n]
			b1, b2, b3 := b[(r+1)*t:(r+1)*t+n], b[(r+2)*t:(r+2)*t+n], b[(r+3)*t:(r+3)*t+n]
			for j, v := range r0 {
				s0 += float32(v * b0[j])
				s1 += float32(r1[j] * b1[j])
				s2 += float32(r2[j] * b2[j])
				s3 += float32(r3[j] * b3[j])
			}
		}
		for k, s := range [4]float32{s0, s1, s2, s3} {
			sums[r+k] = rowTail(a, b, (r+k)*t, n, Visible(r+k, t, causal), s)
		}
	}
	for ; r < rows; r++ {
		sums[r] = rowTail(a, b, r*t, 0, Visible(r, t, causal), 0)
	}
}

// rowTail adds entries from..to-1 of the row at off to sum, in order.
func rowTail(a, b []float32, off, from, to int, sum float32) float32 {
	for j := off + from; j < off+to; j++ {
		if b == nil {
			sum += a[j]
		} else {
			sum += float32(a[j] * b[j])
		}
	}
	return sum
}

// ClearMasked sets each row's masked entries to 0: the cells of a
// gradient that no query sees.
func ClearMasked(x []float32, t int, causal bool) {
	rows := rowsOf(x, t)
	if causal && rows > 0 && clearMaskedKernel(rows, t, &x[0]) {
		return
	}
	for r := 0; causal && r < rows; r++ {
		clear(x[r*t+Visible(r, t, causal) : r*t+t])
	}
}
