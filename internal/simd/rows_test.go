package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestVisible: with the causal mask, row r of a t-wide block is query
// r mod t and sees keys 0..r mod t; without it, every key.
func TestVisible(t *testing.T) {
	for _, c := range []struct {
		r, t   int
		causal bool
		want   int
	}{{0, 4, true, 1}, {2, 4, true, 3}, {3, 4, true, 4}, {4, 4, true, 1}, {6, 4, true, 3}, {2, 4, false, 4}, {5, 4, false, 4}} {
		if got := Visible(c.r, c.t, c.causal); got != c.want {
			t.Errorf("Visible(%d, %d, %t) = %d, want %d", c.r, c.t, c.causal, got, c.want)
		}
	}
}

// TestRowsMatchGo: on every path, the row kernels give the portable loops'
// bits for every row width around both vector widths (8 and 16), causal
// or not, with the query index wrapping from head to head, and write
// nothing outside the block. ScaleSubMax's rows mix zeros of both signs
// (some rows have no positive entry, so their max is a zero whose sign
// must be Go's); a NaN makes its whole row NaN on every path, and a NaN
// in a masked entry changes nothing.
func TestRowsMatchGo(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for w := 1; w <= 41; w++ {
			for _, causal := range []bool{true, false} {
				rows := 2*w + 3
				n := rows * w
				scale := float32(0.25)

				x0 := portFill(r, n)
				for i := range x0 {
					if (i/w)%3 == 1 { // a row of zeros and negatives
						x0[i] = []float32{0, float32(math.Copysign(0, -1)), -1, -x0[i] * x0[i]}[r.IntN(4)]
					}
				}
				x0[r.IntN(n)] = float32(math.NaN())
				x0[r.IntN(n)] = float32(math.Inf(1))
				x0[r.IntN(n)] = float32(math.Inf(-1))
				want := slices.Clone(x0)
				onPath(pathGo, func() { ScaleSubMax(want, w, causal, scale) })
				got, guards := guarded(r, n)
				copy(got, x0)
				ScaleSubMax(got, w, causal, scale)
				guards(t, "ScaleSubMax")
				equalBits(t, "ScaleSubMax", got, want)

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

// TestRowsFormula holds every path to what the row steps promise, on
// blocks written out by hand; the last is a row whose max is a zero, +0
// where Go's max gives it (-0 < +0), however far apart the two zeros lie.
func TestRowsFormula(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		x := []float32{2, 9, 9, 4, 8, 9, 1, 3, 6}
		ScaleSubMax(x, 3, true, 0.5)
		if want := []float32{0, 9, 9, -2, 0, 9, -2.5, -1.5, 0}; !slices.Equal(x, want) {
			t.Fatalf("ScaleSubMax = %v, want %v", x, want)
		}
		nz := float32(math.Copysign(0, -1))
		z := []float32{-1, nz, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, 0, nz}
		want := slices.Clone(z) // minus +0: the same bits
		ScaleSubMax(z, len(z), false, 1)
		equalBits(t, "ScaleSubMax with a zero max", z, want)
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
// vector widths (whole 8x8 blocks and the rows and columns left over on
// avx2; 16-row gathers on avx512), out of a wider matrix, writing nothing
// past dst's block.
func TestTranspose(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for rows := 1; rows <= 35; rows++ {
			for _, dh := range []int{1, 3, 7, 8, 9, 16, 17, 24} {
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
// row whose max is a zero of either sign gives the Go loop's bits.
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
					equalBits(t, "ScaleSubMax", x, want)
				}
			}
		}
	})
}

// TestRowSums: on every path the sums (four rows at once in Go, eight a
// vector on amd64) have the bits of one row at a time, summed left to
// right, on every row length a mask leaves and on blocks of several
// heads, whose queries start again at 0 inside a group of rows. Masked
// cells hold NaNs, which must not reach a sum; zeros of both signs are
// mixed in.
func TestRowSums(t *testing.T) {
	forEachPath(t, testRowSums)
}

func testRowSums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for w := 1; w <= 27; w++ {
		for _, heads := range []int{1, 3} {
			for _, causal := range []bool{true, false} {
				n := heads * w * w
				a, b := portFill(r, n), portFill(r, n)
				for i := range a {
					// Magnitudes far apart, so that another order rounds differently.
					a[i] *= float32(math.Pow(10, float64(r.IntN(8))))
					if i%w >= Visible(i/w, w, causal) {
						a[i], b[i] = float32(math.NaN()), float32(math.Inf(1))
					}
				}
				got, gotDot := make([]float32, heads*w), make([]float32, heads*w)
				RowSums(a, nil, w, causal, got)
				RowSums(a, b, w, causal, gotDot)
				for i := range got {
					var want, wantDot float32
					for j := 0; j < Visible(i, w, causal); j++ {
						want += a[i*w+j]
						wantDot += float32(a[i*w+j] * b[i*w+j])
					}
					if !sameBits(got[i], want) || !sameBits(gotDot[i], wantDot) {
						t.Fatalf("width %d heads %d causal %v row %d: sums %v, %v; one row at a time %v, %v", w, heads, causal, i, got[i], gotDot[i], want, wantDot)
					}
				}
			}
		}
	}
}

// TestClearMasked: on a causal block of two heads only the cells past
// each query's keys become 0; without causal nothing changes.
func TestClearMasked(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	ClearMasked(x, 2, false)
	if want := []float32{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(x, want) {
		t.Fatalf("not causal: %v, want %v", x, want)
	}
	ClearMasked(x, 2, true)
	if want := []float32{1, 0, 3, 4, 5, 0, 7, 8}; !slices.Equal(x, want) {
		t.Fatalf("causal: %v, want %v", x, want)
	}
}

// BenchmarkRows: the attention softmax's and its gradient's row steps
// (with the K transpose) on the default model's blocks, 64 heads of
// T = Dh = 16, causal, and on blocks of T = 15, whose rows end inside a
// vector (the kernels' tails), on every path this CPU runs (with a copy of
// the scores, the same on every path).
func BenchmarkRows(b *testing.B) {
	const heads = 64
	for _, T := range []int{16, 15} {
		r := rand.New(rand.NewPCG(9, 10))
		p0, dp, o := fill(r, heads*T*T), fill(r, heads*T*T), make([]float32, heads*T*T)
		p := make([]float32, len(p0))
		k, kt, sums := fill(r, heads*T*T), make([]float32, T*T), make([]float32, heads*T)
		for _, pa := range runnablePaths() {
			b.Run(fmt.Sprintf("%s/T%d", pa, T), func(b *testing.B) {
				setPath(b, pa)
				for b.Loop() {
					copy(p, p0) // the same scores each round
					for h := range heads {
						Transpose(kt, k, h*T*T, T, T, T)
					}
					ScaleSubMax(p, T, true, 0.25)
					RowSums(p, nil, T, true, sums)
					DivRows(p, T, true, sums)
					RowSums(p, dp, T, true, sums)
					ScoreGradRows(o, p, dp, T, true, 0.25, sums)
				}
			})
		}
	}
}

// TestClearMaskedPaths: on every path ClearMasked zeroes exactly the
// loop's cells (+0, past each causal query's keys) for row widths around
// the vector widths and several heads, and writes nothing past x.
func TestClearMaskedPaths(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		for w := 1; w <= 35; w++ {
			for _, heads := range []int{1, 3} {
				x0 := portFill(r, heads*w*w)
				want := slices.Clone(x0)
				for row := 0; row < heads*w; row++ {
					for j := Visible(row, w, true); j < w; j++ {
						want[row*w+j] = 0
					}
				}
				got, guards := guarded(r, len(x0))
				copy(got, x0)
				ClearMasked(got, w, true)
				guards(t, "ClearMasked")
				equalBits(t, fmt.Sprintf("ClearMasked t=%d heads=%d", w, heads), got, want)
				copy(got, x0)
				ClearMasked(got, w, false)
				equalBits(t, "ClearMasked not causal", got, x0)
			}
		}
	})
}
