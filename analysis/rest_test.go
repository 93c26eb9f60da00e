package analysis

import "testing"

// An induction head that parks on key 0 wherever its token has no earlier
// copy rests there with mass 1; one that spreads those rows evenly rests
// with 1/(i+1) on average; a previous-token head always has its cell, so
// no rest mass; and the sink score is the attention-sink score.
func TestRestMass(t *testing.T) {
	tok := [][]int{{3, 1, 4, 5, 9, 2, 6, 8, 4, 5, 9, 2, 6, 8, 3, 1}}
	T := len(tok[0])
	prevSame := func(i int) int {
		for m := i - 1; m >= 0; m-- {
			if tok[0][m] == tok[0][i] {
				return m
			}
		}
		return -1
	}
	a := build(t, true, tok, 1, 3, func(_, _, h int) [][]float64 {
		switch h {
		case 0: // induction, parked on 0
			return oneHot(T, func(i int) int {
				if m := prevSame(i); m >= 0 {
					return m + 1
				}
				return 0
			})
		case 1: // induction, spread evenly where it has nothing
			m := make([][]float64, T)
			for i := range m {
				m[i] = make([]float64, T)
				if p := prevSame(i); p >= 0 {
					m[i][p+1] = 1
					continue
				}
				for j := 0; j <= i; j++ {
					m[i][j] = 1 / float64(i+1)
				}
			}
			return m
		}
		return oneHot(T, func(i int) int { return max(i-1, 0) })
	})
	hs := ScoreAll(a)
	// Queries 1..7 have no earlier copy (query 0 sees one key); every
	// later one has.
	want := 0.0
	for i := 1; i < 8; i++ {
		want += 1 / float64(i+1)
	}
	want /= 7
	for k, w := range []float64{1, want} {
		h := hs[k]
		if h.Label != "induction" || h.RestMass == nil || !near(*h.RestMass, w, 1e-6) {
			t.Errorf("%s: label %q, rest mass %v, want induction resting %.4f", h.Name, h.Label, fmtPtr(h.RestMass), w)
		}
		if h.Sink != h.Scores["attention-sink"] {
			t.Errorf("%s: sink %v, attention-sink score %v", h.Name, h.Sink, h.Scores["attention-sink"])
		}
	}
	if h := hs[2]; h.Label != "previous-token" || h.RestMass != nil {
		t.Errorf("%s: label %q, rest mass %v, want previous-token and none", h.Name, h.Label, fmtPtr(h.RestMass))
	}
}
