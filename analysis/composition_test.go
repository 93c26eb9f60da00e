package analysis

import (
	"math"
	"testing"
)

func mat(r, c int, v ...float64) Matrix { return Matrix{Rows: r, Cols: c, Data: v} }

func TestCompositionScore(t *testing.T) {
	id := mat(2, 2, 1, 0, 0, 1)
	// ||I I|| / (||I|| ||I||) = sqrt2 / 2.
	if got := CompositionScore(id, id); math.Abs(got-math.Sqrt2/2) > 1e-12 {
		t.Fatalf("identity: %v", got)
	}
	// Orthogonal subspaces: a writes only dimension 0, b reads only 1.
	a := mat(2, 2, 1, 0, 0, 0)
	b := mat(2, 2, 0, 0, 0, 1)
	if got := CompositionScore(a, b); got != 0 {
		t.Fatalf("orthogonal: %v", got)
	}
	// Rank one aligned: the bound 1 is reached.
	if got := CompositionScore(a, a); math.Abs(got-1) > 1e-12 {
		t.Fatalf("aligned rank one: %v", got)
	}
	if got := CompositionScore(Matrix{Rows: 2, Cols: 2, Data: make([]float64, 4)}, id); got != 0 {
		t.Fatalf("zero matrix: %v", got)
	}
}

// TestKComposition builds a layer-0 head that writes into dimension 2 and
// a layer-1 head whose keys read only dimension 2 and whose queries and
// values read only dimension 0: it K-composes fully and Q/V-composes not
// at all.
func TestKComposition(t *testing.T) {
	const d = 3
	e := func(i int) Matrix { // d x 1 unit column
		m := Matrix{Rows: d, Cols: 1, Data: make([]float64, d)}
		m.Data[i] = 1
		return m
	}
	a := HeadWeights{Layer: 0, Head: 0, Q: e(1), K: e(1), V: e(0), O: e(2).T()}
	b := HeadWeights{Layer: 1, Head: 0, Q: e(0), K: e(2), V: e(1), O: e(1).T()}
	cs := Compositions([]HeadWeights{a, b})
	if len(cs) != 1 || cs[0].From != "L0H0" || cs[0].To != "L1H0" {
		t.Fatalf("%+v", cs)
	}
	c := cs[0]
	if math.Abs(c.K-1) > 1e-12 || c.Q != 0 || c.V != 0 {
		t.Fatalf("want K 1, Q 0, V 0: %+v", c)
	}
}

func TestCompositionBaseline(t *testing.T) {
	b := CompositionBaseline(32, 16, 50, 1)
	for _, v := range []float64{b.Q, b.K, b.V} {
		// Random [32,32] products of rank 16: well below 1, well above 0.
		if v < 0.05 || v > 0.5 {
			t.Fatalf("baseline %+v", b)
		}
	}
	if b != CompositionBaseline(32, 16, 50, 1) {
		t.Fatal("baseline not deterministic")
	}
}

// TestMulAndTranspose: a 2x3 times a 3x2 product and a transpose, worked
// by hand; rectangular and unsymmetric, so a swapped index fails.
func TestMulAndTranspose(t *testing.T) {
	a := mat(2, 3, 1, 2, 3, 4, 5, 6)
	b := mat(3, 2, 7, 8, 9, 10, 11, 12)
	c := Mul(a, b)
	want := []float64{58, 64, 139, 154}
	if c.Rows != 2 || c.Cols != 2 {
		t.Fatalf("product is %dx%d, want 2x2", c.Rows, c.Cols)
	}
	for i, w := range want {
		if c.Data[i] != w {
			t.Fatalf("product %v, want %v", c.Data, want)
		}
	}
	at := a.T()
	wantT := []float64{1, 4, 2, 5, 3, 6}
	if at.Rows != 3 || at.Cols != 2 {
		t.Fatalf("transpose is %dx%d, want 3x2", at.Rows, at.Cols)
	}
	for i, w := range wantT {
		if at.Data[i] != w {
			t.Fatalf("transpose %v, want %v", at.Data, wantT)
		}
	}
}
