//go:build arm64 && !purego

package simd

// rowsAsm says whether the row kernels run in assembly: on the neon path
// (rows_arm64.s). They take a row's visible entries 4 lanes at a time and
// the last 1 to 3 with the scalar instructions, each entry through the
// same float32 operations as rows.go. The row's max is FMAX, which, like
// Go's max, gives NaN if either operand is NaN and +0 for -0 and +0, so
// its lanes and the tail give Go's max in any order, sign of zero and all.
func rowsAsm() bool { return cur == pathNEON }

//go:noescape
func scaleSubMaxKernel(rows, t, causal int, scale float32, x *float32)

//go:noescape
func divRowsKernel(rows, t, causal int, x, sums *float32)

//go:noescape
func scoreGradKernel(rows, t, causal int, scale float32, o, p, dp, rs *float32)

//go:noescape
func transposeKernel(t, dh int, x *float32, ld int, dst *float32)

// ClearMasked runs its loop here.
func clearMaskedKernel(rows, t int, x *float32) bool { return false }
