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
// hashes the outputs of Sgemm, GELU, Exp and the attention rows on fixed
// inputs (the rows' alone are the portable path's too, so it checks them
// as well); the want
// values were computed on amd64 on both the AVX-512 and the AVX2 path,
// and every assembly path this machine runs (avx512 and avx2 on amd64,
// neon on arm64, under qemu in scripts/test.sh) must reproduce them. NaNs count as equal whatever their
// bits (GELU(-Inf) is 0xffc00000 on x86, 0x7fc00000 on arm64).
var wantDigests = map[string]string{
	"sgemm": "a010e0da4b5db2b91216cc1fb43006447a5995f1f5876f6a0c0f48d0341fc998",
	"gelu":  "d6cf88e239ac2187efb982ea2d92d7b49e7108066a94def94006ddbeec6c74c6",
	"exp":   "e327eea0f65f0ee07e8041da339501c451fe61c6e2243a01ff830c4da5c1537b",
	"rows":  "e0bcd4efe8a2e9ec02e6a76f9e67f02009953d5bbc6c9975e48884f720c76f26",
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

	// The attention rows: every width around the vector widths, causal or
	// not, three heads a block; each step's output feeds the next.
	var rw []byte
	for w := 1; w <= 33; w++ {
		for _, causal := range []bool{true, false} {
			n := 3 * w * w
			x := portFill(r, n)
			ScaleSubMax(x, w, causal, 0.25) // no Exp: the portable one has other bits
			sums := make([]float32, 3*w)
			RowSums(x, nil, w, causal, sums)
			DivRows(x, w, causal, sums)
			dp, o := portFill(r, n), make([]float32, n)
			RowSums(x, dp, w, causal, sums)
			ScoreGradRows(o, x, dp, w, causal, 0.25, sums)
			tr := make([]float32, n)
			Transpose(tr, o, 0, w, 3*w, w)
			rw = put(put(put(rw, x), o), tr)
		}
	}
	out["rows"] = sum(rw)
	return out
}

// TestKernelDigests: every assembly path gives the bits recorded above.
func TestKernelDigests(t *testing.T) {
	for _, p := range runnablePaths() {
		t.Run(p.String(), func(t *testing.T) {
			setPath(t, p)
			for name, got := range kernelDigests() {
				if (p != pathGo || name == "rows") && got != wantDigests[name] {
					t.Errorf("%s: digest %s, want %s", name, got, wantDigests[name])
				}
			}
		})
	}
}
