//go:build amd64 && !purego

package simd

import "unsafe"

// rowsAsm says whether the row kernels run in assembly: on the AVX-512
// path (rows_amd64.s), whose mask registers make a row of any width one
// loop, and on the AVX2 path (rows_avx2_amd64.s), with lane masks from a
// compare. Each kernel below picks its path's.
func rowsAsm() bool { return cur == pathAVX512 || cur == pathAVX2 }

func scaleSubMaxKernel(rows, t, causal int, scale float32, x *float32) {
	if cur == pathAVX512 {
		scaleSubMax512(rows, t, causal, scale, x)
	} else {
		scaleSubMaxAVX2(rows, t, causal, scale, x)
	}
}

func divRowsKernel(rows, t, causal int, x, sums *float32) {
	if cur == pathAVX512 {
		divRows512(rows, t, causal, x, sums)
	} else {
		divRowsAVX2(rows, t, causal, x, sums)
	}
}

func scoreGradKernel(rows, t, causal int, scale float32, o, p, dp, rs *float32) {
	if cur == pathAVX512 {
		scoreGrad512(rows, t, causal, scale, o, p, dp, rs)
	} else {
		scoreGradAVX2(rows, t, causal, scale, o, p, dp, rs)
	}
}

func transposeKernel(t, dh int, x *float32, ld int, dst *float32) {
	if cur == pathAVX512 && t%16 == 0 && dh%16 == 0 {
		// Whole 16x16 blocks (the heads of the default model) go by
		// shuffles, several times faster than 16 gathers.
		for d := 0; d < dh; d += 16 {
			for j := 0; j < t; j += 16 {
				transpose16(at(x, j*ld+d), ld, at(dst, d*t+j), t)
			}
		}
		return
	}
	if cur == pathAVX512 {
		transpose512(t, dh, x, ld, dst)
	} else {
		transposeAVX2(t, dh, x, ld, dst)
	}
}

// clearMaskedKernel zeroes causal rows' masked cells on avx512 (masked
// stores) and reports whether it ran; elsewhere ClearMasked's loop does.
func clearMaskedKernel(rows, t int, x *float32) bool {
	if cur != pathAVX512 {
		return false
	}
	clearMasked512(rows, t, x)
	return true
}

//go:noescape
func clearMasked512(rows, t int, x *float32)

// at is &p[i] for the element i places after p; Transpose has checked
// every element the blocks touch.
func at(p *float32, i int) *float32 { return (*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }

//go:noescape
func transpose16(x *float32, ld int, dst *float32, ldd int)

//go:noescape
func scaleSubMax512(rows, t, causal int, scale float32, x *float32)

//go:noescape
func divRows512(rows, t, causal int, x, sums *float32)

//go:noescape
func scoreGrad512(rows, t, causal int, scale float32, o, p, dp, rs *float32)

//go:noescape
func transpose512(t, dh int, x *float32, ld int, dst *float32)

//go:noescape
func scaleSubMaxAVX2(rows, t, causal int, scale float32, x *float32)

//go:noescape
func divRowsAVX2(rows, t, causal int, x, sums *float32)

//go:noescape
func scoreGradAVX2(rows, t, causal int, scale float32, o, p, dp, rs *float32)

//go:noescape
func transposeAVX2(t, dh int, x *float32, ld int, dst *float32)

// rowSumsAsm says whether RowSums runs rowSumsAVX2 on groups of 8 rows:
// on both vector paths (it needs AVX2 only, and gives the portable bits).
func rowSumsAsm() bool { return rowsAsm() }

//go:noescape
func rowSumsAVX2(groups, t, causal int, a, b, sums *float32)
