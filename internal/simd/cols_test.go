package simd

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// colShapes are the [rows, n] matrices the column kernel tests cover:
// widths around the vector of 8 and the block of 32, and 0 to 33 rows.
func colShapes() (rows, ns []int) {
	return []int{0, 1, 2, 3, 7, 33}, []int{0, 1, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 41, 63, 64, 72}
}

// TestColsMatchRowLoops: on every path ColScale, ColDot and ColSum give
// the bits of plain row-by-row loops (the products rounded before they
// are added, the rows in order), on values with signed zeros, huge and
// tiny numbers, and write nothing past their outputs.
func TestColsMatchRowLoops(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		rowsList, ns := colShapes()
		for _, rows := range rowsList {
			for _, n := range ns {
				what := fmt.Sprintf("%dx%d", rows, n)
				a, b, g := portFill(r, rows*n), portFill(r, rows*n), portFill(r, n)
				wantScale := make([]float32, rows*n)
				wantDot, wantSum := make([]float32, n), make([]float32, n)
				for i := 0; i < rows; i++ {
					for j := 0; j < n; j++ {
						x, y := a[i*n+j], b[i*n+j]
						wantScale[i*n+j] = x * g[j]
						wantDot[j] += float32(x * y)
						wantSum[j] += x
					}
				}
				got, guards := guarded(r, rows*n)
				ColScale(got, a, g, rows)
				guards(t, "ColScale "+what)
				equalBits(t, "ColScale "+what, got, wantScale)
				in := slices.Clone(a)
				ColScale(in, in, g, rows)
				equalBits(t, "ColScale in place "+what, in, wantScale)

				got, guards = guarded(r, n)
				ColDot(got, a, b, rows)
				guards(t, "ColDot "+what)
				equalBits(t, "ColDot "+what, got, wantDot)

				got, guards = guarded(r, n)
				ColSum(got, a, rows)
				guards(t, "ColSum "+what)
				equalBits(t, "ColSum "+what, got, wantSum)
			}
		}
	})
}

// TestColSumIsOnesProduct: on every path ColSum gives the bits of Sgemm's
// ones[1, rows] x on that path, the product the CPU backend computed it
// as before.
func TestColSumIsOnesProduct(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		rowsList, ns := colShapes()
		for _, rows := range rowsList {
			for _, n := range ns {
				x := portFill(r, rows*n)
				ones := make([]float32, rows)
				for i := range ones {
					ones[i] = 1
				}
				want := make([]float32, n)
				Sgemm(false, false, 1, n, rows, ones, x, want, nil, nil)
				got := make([]float32, n)
				ColSum(got, x, rows)
				equalBits(t, fmt.Sprintf("ColSum %dx%d", rows, n), got, want)
			}
		}
	})
}

// BenchmarkCols: the column kernels on the training step's shape (batch
// 64 x 16 positions, d_model 32).
func BenchmarkCols(b *testing.B) {
	const rows, n = 1024, 32
	r := rand.New(rand.NewPCG(1, 2))
	x, y, g, o := fill(r, rows*n), fill(r, rows*n), fill(r, n), make([]float32, rows*n)
	for _, p := range runnablePaths() {
		b.Run(p.String(), func(b *testing.B) {
			setPath(b, p)
			for b.Loop() {
				ColScale(o, x, g, rows)
				ColDot(o[:n], x, y, rows)
				ColSum(o[:n], x, rows)
			}
		})
	}
}
