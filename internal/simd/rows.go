package simd

import "math"

// The attention softmax's row steps, on a block of rows of t scores whose
// row r is query i = r mod t (a [B*H*T, T] probabilities tensor, or one
// head's [T, T] block). With causal, query i sees its first i+1 keys,
// else all t; the rest of the row is masked. The portable loops here are
// the oracle; the AVX-512 kernels (rows_amd64.s) do the same float32
// operations on each visible entry, so they give the same bits. Only a
// row's max is taken in another order, which changes nothing: a max does
// not depend on its order, a NaN in the row makes it NaN on both, and the
// one thing that can differ, the sign of a zero max, cancels in exp.

// visible is how many keys row r of a t-wide block sees.
func visible(r, t int, causal bool) int {
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
		row := x[r*t : r*t+visible(r, t, causal)]
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
		n := visible(r, t, causal)
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
		n := visible(r, t, causal)
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
