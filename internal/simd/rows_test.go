package simd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// exactMax says whether the path's row max is Go's max to the sign of a
// zero, so that ScaleSubMax gives the Go loop's bits exactly: go, and neon
// (FMAX). Elsewhere a zero max may have the other sign (see rows.go).
func exactMax() bool { return cur == pathGo || cur == pathNEON }

// TestRowsMatchGo: on every path, the row kernels give the portable loops'
// bits for every row width around the vector width, causal or not, with
// the query index wrapping from head to head, and write nothing outside
// the block. Where the max may differ in the sign of a zero (exactMax),
// ScaleSubMax's output is compared as values; a NaN makes its whole row
// NaN on every path.
func TestRowsMatchGo(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for w := 1; w <= 40; w++ {
			for _, causal := range []bool{true, false} {
				rows := 2*w + 3
				n := rows * w
				scale := float32(0.25)

				x0 := portFill(r, n)
				x0[r.IntN(n)] = float32(math.NaN())
				x0[r.IntN(n)] = float32(math.Inf(1))
				x0[r.IntN(n)] = float32(math.Inf(-1))
				want := slices.Clone(x0)
				onPath(pathGo, func() { ScaleSubMax(want, w, causal, scale) })
				got, guards := guarded(r, n)
				copy(got, x0)
				ScaleSubMax(got, w, causal, scale)
				guards(t, "ScaleSubMax")
				if exactMax() {
					equalBits(t, "ScaleSubMax", got, want)
				}
				for i := range want {
					if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
						t.Fatalf("width %d causal %v: ScaleSubMax [%d] = %v, the Go loop gives %v", w, causal, i, got[i], want[i])
					}
				}

				sums := fill(r, rows)
				sums[0] = 0
				x1 := portFill(r, n)
				want = slices.Clone(x1)
				onPath(pathGo, func() { DivRows(want, w, causal, sums) })
				got, guards = guarded(r, n)
				copy(got, x1)
				DivRows(got, w, causal, sums)
				guards(t, "DivRows")
				equalBits(t, "DivRows", got, want)

				p, dp, rs := portFill(r, n), portFill(r, n), portFill(r, rows)
				want = portFill(r, n)
				onPath(pathGo, func() { ScoreGradRows(want, p, dp, w, causal, scale, rs) })
				got, guards = guarded(r, n)
				ScoreGradRows(got, p, dp, w, causal, scale, rs)
				guards(t, "ScoreGradRows")
				equalBits(t, "ScoreGradRows", got, want)
			}
		}
	})
}

// TestRowsFormula holds the portable loops to what they promise, on one
// causal block written out by hand.
func TestRowsFormula(t *testing.T) {
	onPath(pathGo, func() {
		x := []float32{2, 9, 9, 4, 8, 9, 1, 3, 6}
		ScaleSubMax(x, 3, true, 0.5)
		if want := []float32{0, 9, 9, -2, 0, 9, -2.5, -1.5, 0}; !slices.Equal(x, want) {
			t.Fatalf("ScaleSubMax = %v, want %v", x, want)
		}
		DivRows(x, 3, true, []float32{2, 4, -0.5})
		if want := []float32{0, 0, 0, -0.5, 0, 0, 5, 3, 0}; !slices.Equal(x, want) {
			t.Fatalf("DivRows = %v, want %v", x, want)
		}
		o := make([]float32, 4)
		ScoreGradRows(o, []float32{1, 2, 3, 4}, []float32{5, 6, 7, 8}, 2, false, 2, []float32{1, 2})
		if want := []float32{8, 20, 30, 48}; !slices.Equal(o, want) {
			t.Fatalf("ScoreGradRows = %v, want %v", o, want)
		}
	})
}

// TestTranspose: every path transposes blocks of every shape around the
// vector width, out of a wider matrix, writing nothing past dst's block.
func TestTranspose(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for rows := 1; rows <= 35; rows++ {
			for _, dh := range []int{1, 3, 16, 17} {
				ld, off := dh+r.IntN(3), r.IntN(5)
				x := portFill(r, off+rows*ld)
				got, guards := guarded(r, rows*dh)
				Transpose(got, x, off, ld, rows, dh)
				guards(t, "Transpose")
				for d := 0; d < dh; d++ {
					for j := 0; j < rows; j++ {
						if !sameBits(got[d*rows+j], x[off+j*ld+d]) {
							t.Fatalf("%dx%d (ld %d): dst[%d][%d] = %v, want x[%d][%d] = %v", rows, dh, ld, d, j, got[d*rows+j], j, d, x[off+j*ld+d])
						}
					}
				}
			}
		}
	})
}

// TestRowMaxSpecials: ScaleSubMax's max on rows made to tell max
// instructions apart, with the special value at every place of the row
// (vector lanes and scalar tails alike). A NaN makes every visible entry
// NaN on every path (an FMAXNM-like max, which skips NaNs, would not). A
// row whose max is a zero of either sign gives the Go loop's bits where
// exactMax, elsewhere its values.
func TestRowMaxSpecials(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	forEachPath(t, func(t *testing.T) {
		for w := 1; w <= 13; w++ {
			row := func() []float32 {
				x := make([]float32, w)
				for j := range x {
					x[j] = -float32(j + 1)
				}
				return x
			}
			for k := range w {
				x := row()
				x[k] = float32(math.NaN())
				ScaleSubMax(x, w, false, 0.5)
				for j, v := range x {
					if v == v {
						t.Fatalf("width %d, NaN at %d: [%d] = %v, want NaN", w, k, j, v)
					}
				}
				for _, zs := range [][2]float32{{0, negZero}, {negZero, 0}, {negZero, negZero}} {
					x := row()
					x[(k+1)%w], x[k] = zs[1], zs[0]
					want := slices.Clone(x)
					onPath(pathGo, func() { ScaleSubMax(want, w, false, 0.5) })
					ScaleSubMax(x, w, false, 0.5)
					if exactMax() {
						equalBits(t, "ScaleSubMax", x, want)
					} else if !slices.Equal(x, want) {
						t.Fatalf("width %d, zeros %v at %d: %v, the Go loop gives %v", w, zs, k, x, want)
					}
				}
			}
		}
	})
}
