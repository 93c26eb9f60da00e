package simd

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The assembly paths (avx512, avx2, neon) do the same float32 operations
// in the same order, so they must give the same bits. kernelDigests
// hashes the outputs of Sgemm, GELU and Exp on fixed inputs; the want
// values were computed on amd64 on both the AVX-512 and the AVX2 path,
// and every assembly path this machine runs (avx512 and avx2 on amd64,
// neon on arm64, under qemu in scripts/test.sh) must reproduce them. NaNs count as equal whatever their
// bits (GELU(-Inf) is 0xffc00000 on x86, 0x7fc00000 on arm64).
// "rows" hashes the row kernels' outputs, which are the portable loops'
// bits on every path, go included (computed on amd64 on avx512, avx2 and
// go, and on arm64 under qemu on neon and go).
var wantDigests = map[string]string{
	"sgemm": "a010e0da4b5db2b91216cc1fb43006447a5995f1f5876f6a0c0f48d0341fc998",
	"gelu":  "d6cf88e239ac2187efb982ea2d92d7b49e7108066a94def94006ddbeec6c74c6",
	"exp":   "e327eea0f65f0ee07e8041da339501c451fe61c6e2243a01ff830c4da5c1537b",
	"rows":  "fadd3211c40df52599ea209e839c55034546eebca328d353e5ab13f71195779f",
}

func kernelDigests() map[string]string {
	out := map[string]string{}
	put := func(h []byte, xs []float32) []byte {
		for _, v := range xs {
			bits := math.Float32bits(v)
			if v != v {
				bits = 0x7fc00000 // x86 and arm64 make different default NaNs
			}
			h = binary.LittleEndian.AppendUint32(h, bits)
		}
		return h
	}
	sum := func(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }

	r := rand.New(rand.NewPCG(11, 12))
	var s Scratch
	var g []byte
	dims := []int{1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 33, 40}
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range []int{1, 2, 7, 33} {
				tA, tB := (m+k)%2 == 1, (n+k)%3 == 1
				var bias []float32
				if (m+n)%2 == 0 {
					bias = fill(r, n)
				}
				a, b, c := fill(r, m*k), fill(r, k*n), make([]float32, m*n)
				Sgemm(tA, tB, m, n, k, a, b, c, bias, &s)
				g = put(g, c)
			}
		}
	}
	out["sgemm"] = sum(g)

	var xs []float32
	for v := -16.0; v <= 16; v += 1.0 / 1024 {
		xs = append(xs, float32(v))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-40, 100, -100, 1e30, -1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), 3) // 3: a tail
	y, d := make([]float32, len(xs)), make([]float32, len(xs))
	GELU(xs, y, d)
	out["gelu"] = sum(put(put(nil, y), d))

	var es []float32
	for v := -110.0; v <= 90; v += 1.0 / 256 {
		es = append(es, float32(v))
	}
	es = append(es, float32(math.Inf(1)), float32(math.Inf(-1)), 1e30, -1e30, 0, 1e-40, 7)
	Exp(es)
	out["exp"] = sum(put(nil, es))

	// The row kernels on blocks of every width around the vector widths,
	// causal or not. No zeros in ScaleSubMax's input: the sign of a zero
	// max is the one thing a path may change (rows.go).
	g = nil
	for w := 1; w <= 20; w++ {
		for _, causal := range []bool{true, false} {
			rows := 2*w + 1
			n := rows * w
			x := fill(r, n)
			x[r.IntN(n)] = float32(math.NaN())
			ScaleSubMax(x, w, causal, 0.125)
			sums, p, dp, rs := portFill(r, rows), portFill(r, n), portFill(r, n), portFill(r, rows)
			y, o := portFill(r, n), make([]float32, n)
			DivRows(y, w, causal, sums)
			ScoreGradRows(o, p, dp, w, causal, 0.125, rs)
			tr := make([]float32, n)
			Transpose(tr, p, 0, w, rows, w)
			g = put(put(put(put(g, x), y), o), tr)
		}
	}
	out["rows"] = sum(g)
	return out
}

// TestKernelDigests: every assembly path gives the bits recorded above,
// and the go path those of "rows" (its products and GELU round otherwise).
func TestKernelDigests(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for name, got := range kernelDigests() {
			if cur == pathGo && name != "rows" {
				continue
			}
			if got != wantDigests[name] {
				t.Errorf("%s: digest %s, want %s", name, got, wantDigests[name])
			}
		}
	})
}
