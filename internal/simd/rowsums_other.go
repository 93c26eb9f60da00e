//go:build !amd64 || purego

package simd

// RowSums runs as the portable loops here.
func rowSumsAsm() bool { return false }

func rowSumsAVX2(groups, t, causal int, a, b, sums *float32) { panic("simd: no row sums kernel") }
