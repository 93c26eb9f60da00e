package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ---- helpers ---------------------------------------------------------------

// build makes an attention batch from per-(n, l, h) T x T matrices.
func build(t testing.TB, causal bool, toks [][]int, L, H int, f func(n, l, h int) [][]float64) *Attention {
	t.Helper()
	N, T := len(toks), len(toks[0])
	a := &Attention{Causal: causal, N: N, L: L, H: H, T: T}
	for _, r := range toks {
		a.Tokens = append(a.Tokens, r...)
	}
	for n := 0; n < N; n++ {
		for l := 0; l < L; l++ {
			for h := 0; h < H; h++ {
				m := f(n, l, h)
				for i := 0; i < T; i++ {
					for j := 0; j < T; j++ {
						a.Probs = append(a.Probs, float32(m[i][j]))
					}
				}
			}
		}
	}
	if err := a.Validate(); err != nil {
		t.Fatalf("test matrix invalid: %v", err)
	}
	return a
}

// one makes a single-example, single-head batch.
func one(t testing.TB, causal bool, toks []int, m [][]float64) *Attention {
	t.Helper()
	return build(t, causal, [][]int{toks}, 1, 1, func(int, int, int) [][]float64 { return m })
}

// oneHot puts all of query i's weight on key at(i).
func oneHot(T int, at func(i int) int) [][]float64 {
	m := make([][]float64, T)
	for i := range m {
		m[i] = make([]float64, T)
		m[i][at(i)] = 1
	}
	return m
}

func seq(T int) []int {
	s := make([]int, T)
	for i := range s {
		s[i] = i
	}
	return s
}

const eps = 1e-9

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func checkScore(t *testing.T, hs HeadScore, pattern string, want float64) {
	t.Helper()
	if got := hs.Scores[pattern]; !near(got, want, 1e-6) {
		t.Errorf("%s score = %v, want %v (all: %v)", pattern, got, want, hs.Scores)
	}
}

func checkLabel(t *testing.T, hs HeadScore, label string) {
	t.Helper()
	if hs.Label != label {
		t.Errorf("label = %q, want %q (scores %v)", hs.Label, label, hs.Scores)
	}
}

// ---- the eight patterns ------------------------------------------------------

func TestPreviousToken(t *testing.T) {
	a := one(t, true, seq(6), oneHot(6, func(i int) int { return max(i-1, 0) }))
	hs := ScoreHead(a, 0, 0)
	checkScore(t, hs, "previous-token", 1)
	checkScore(t, hs, "attention-sink", 1.0/5) // only query 1 hits key 0
	checkLabel(t, hs, "previous-token")
	if hs.Score != 1 || hs.Title() != "previous-token 1.00" || hs.Name != "L0H0" {
		t.Errorf("score %v title %q name %q", hs.Score, hs.Title(), hs.Name)
	}
	if len(hs.Scores) != len(Patterns) {
		t.Errorf("scores has %d keys, want %d", len(hs.Scores), len(Patterns))
	}
}

func TestUniformCausal(t *testing.T) {
	T := 7
	m := make([][]float64, T)
	for i := range m {
		m[i] = make([]float64, T)
		for j := 0; j <= i; j++ {
			m[i][j] = 1 / float64(i+1)
		}
	}
	hs := ScoreHead(one(t, true, seq(T), m), 0, 0)
	checkScore(t, hs, "uniform", 1)
	checkLabel(t, hs, "uniform")
}

func TestUniformNonCausalCountsQueryZero(t *testing.T) {
	// Without the mask query 0 sees T keys and is eligible: a one-hot row 0
	// pulls the mean down to (T-1)/T.
	T := 4
	m := make([][]float64, T)
	for i := range m {
		m[i] = []float64{0.25, 0.25, 0.25, 0.25}
	}
	m[0] = []float64{1, 0, 0, 0}
	hs := ScoreHead(one(t, false, seq(T), m), 0, 0)
	checkScore(t, hs, "uniform", 3.0/4)
}

func TestUniformSkipsQueryZeroCausal(t *testing.T) {
	// Query 0 sees only itself: never eligible, so only query 1 counts.
	m := [][]float64{{1, 0}, {0.5, 0.5}}
	hs := ScoreHead(one(t, true, []int{1, 2}, m), 0, 0)
	checkScore(t, hs, "uniform", 1)
	checkScore(t, hs, "previous-token", 0.5)
	checkScore(t, hs, "attention-sink", 0.5)
}

func TestInduction(t *testing.T) {
	toks := []int{7, 8, 9, 3, 7, 8, 9, 3}
	m := oneHot(8, func(i int) int {
		if i >= 4 {
			return i - 3 // m = i-4, so m+1 = i-3
		}
		return i
	})
	hs := ScoreHead(one(t, true, toks, m), 0, 0)
	checkScore(t, hs, "induction", 1)
	checkScore(t, hs, "matching", 0)
	checkScore(t, hs, "offset", 4.0/5) // query 3 is eligible for d=3 but looks at itself
	if hs.OffsetD != 3 {
		t.Errorf("OffsetD = %d, want 3", hs.OffsetD)
	}
	checkLabel(t, hs, "induction")
}

func TestInductionUsesLastOccurrence(t *testing.T) {
	// Token 5 at 0, 2 and 4: for query 4, m = 2 (the last), so the cell is 3.
	toks := []int{5, 1, 5, 2, 5}
	m := oneHot(5, func(i int) int { return i })
	m[4] = []float64{0, 0, 0, 1, 0}
	m[2] = []float64{0, 1, 0, 0, 0}
	hs := ScoreHead(one(t, true, toks, m), 0, 0)
	// Eligible: query 2 (m=0, cell 1: 1) and query 4 (m=2, cell 3: 1).
	checkScore(t, hs, "induction", 1)
	// Matching cells: query 2 -> 0 (0), query 4 -> 2 (0).
	checkScore(t, hs, "matching", 0)
}

func TestMatching(t *testing.T) {
	toks := []int{5, 1, 2, 5, 3, 1, 4, 2}
	// m: query 3 -> 0, query 5 -> 1, query 7 -> 2.
	prev := map[int]int{3: 0, 5: 1, 7: 2}
	m := oneHot(8, func(i int) int {
		if p, ok := prev[i]; ok {
			return p
		}
		return i
	})
	hs := ScoreHead(one(t, true, toks, m), 0, 0)
	checkScore(t, hs, "matching", 1)
	checkScore(t, hs, "induction", 0)
	checkLabel(t, hs, "matching")
}

func TestNoRepeatedTokens(t *testing.T) {
	// Attention everywhere, but no token repeats: no eligible query.
	T := 6
	m := make([][]float64, T)
	for i := range m {
		m[i] = make([]float64, T)
		for j := 0; j <= i; j++ {
			m[i][j] = 1 / float64(i+1)
		}
	}
	hs := ScoreHead(one(t, true, seq(T), m), 0, 0)
	checkScore(t, hs, "induction", 0)
	checkScore(t, hs, "matching", 0)
}

func TestMirrorNonCausal(t *testing.T) {
	T := 5
	m := oneHot(T, func(i int) int { return T - 1 - i })
	// The middle query is excluded from mirror: sending it elsewhere changes
	// nothing.
	m[2] = []float64{1, 0, 0, 0, 0}
	hs := ScoreHead(one(t, false, seq(T), m), 0, 0)
	checkScore(t, hs, "mirror", 1)
	checkLabel(t, hs, "mirror")
	// Non-causal attention-sink: queries 1..4, of which 2 and 4 look at 0.
	checkScore(t, hs, "attention-sink", 0.5)
}

func TestMirrorCausal(t *testing.T) {
	// Causal T=6: T-1-i visible only for i >= 3 (i = 2.5 is no position).
	T := 6
	m := oneHot(T, func(i int) int {
		if i >= 3 {
			return T - 1 - i
		}
		return i
	})
	hs := ScoreHead(one(t, true, seq(T), m), 0, 0)
	checkScore(t, hs, "mirror", 1)
	// T=5 causal: query 2 is the middle and excluded; 3 and 4 remain.
	m5 := oneHot(5, func(i int) int { return i })
	m5[3] = []float64{0, 1, 0, 0, 0}
	hs = ScoreHead(one(t, true, seq(5), m5), 0, 0)
	checkScore(t, hs, "mirror", 0.5)
}

func TestMirrorShifted(t *testing.T) {
	// Non-causal T=6 on the anti-diagonal c = T-2 = 4: query 2 is its own
	// reflection and excluded, query 5 has no cell (4-5 < 0), so sending
	// both elsewhere changes nothing.
	T := 6
	m := oneHot(T, func(i int) int { return max(T-2-i, 0) })
	m[2] = []float64{0, 0, 0, 0, 0, 1}
	hs := ScoreHead(one(t, false, seq(T), m), 0, 0)
	checkScore(t, hs, "mirror", 1)
	checkLabel(t, hs, "mirror shifted")
	if hs.MirrorC != T-2 {
		t.Errorf("mirror_c = %d, want %d", hs.MirrorC, T-2)
	}
	// Causal, as a reverse model predicting the next token looks: T=16,
	// the second-half query i reads the first-half token at 14-i.
	T = 16
	m = oneHot(T, func(i int) int {
		if i >= 8 {
			return max(T-2-i, 0)
		}
		return i
	})
	hs = ScoreHead(one(t, true, seq(T), m), 0, 0)
	checkScore(t, hs, "mirror", 1)
	checkLabel(t, hs, "mirror shifted")
	if hs.MirrorC != 14 {
		t.Errorf("mirror_c = %d, want 14", hs.MirrorC)
	}
}

func TestMirrorTieGoesToCentre(t *testing.T) {
	// Every row uniform: both anti-diagonals score 1/T; the tie keeps T-1.
	T := 6
	m := make([][]float64, T)
	for i := range m {
		m[i] = make([]float64, T)
		for j := range m[i] {
			m[i][j] = 1.0 / float64(T)
		}
	}
	hs := ScoreHead(one(t, false, seq(T), m), 0, 0)
	if hs.MirrorC != T-1 {
		t.Errorf("mirror_c = %d on a tie, want %d", hs.MirrorC, T-1)
	}
	checkScore(t, hs, "mirror", 1.0/6)
	// Half the weight on each anti-diagonal of an even T (T-1-i != i for
	// every i): c = T-1 sees 0.5 on every query, c = T-2 0.5 on queries
	// 0..4 but query 2 is excluded there, so both score 0.5: a tie.
	for i := range m {
		for j := range m[i] {
			m[i][j] = 0
		}
		m[i][T-1-i] += 0.5
		if k := T - 2 - i; k >= 0 {
			m[i][k] += 0.5
		} else {
			m[i][T-1-i] += 0.5
		}
	}
	hs = ScoreHead(one(t, false, seq(T), m), 0, 0)
	checkLabel(t, hs, "mirror")
	if hs.MirrorC != T-1 {
		t.Errorf("mirror_c = %d, want %d (scores %v)", hs.MirrorC, T-1, hs.Scores)
	}
}

func TestAttentionSink(t *testing.T) {
	hs := ScoreHead(one(t, true, seq(6), oneHot(6, func(int) int { return 0 })), 0, 0)
	checkScore(t, hs, "attention-sink", 1)
	checkScore(t, hs, "previous-token", 1.0/5)
	checkLabel(t, hs, "attention-sink")
}

func TestOffset(t *testing.T) {
	m := oneHot(8, func(i int) int {
		if i >= 3 {
			return i - 3
		}
		return 0
	})
	hs := ScoreHead(one(t, true, seq(8), m), 0, 0)
	checkScore(t, hs, "offset", 1)
	if hs.OffsetD != 3 {
		t.Errorf("OffsetD = %d, want 3", hs.OffsetD)
	}
	checkLabel(t, hs, "offset -3")
	if hs.Title() != "offset -3 1.00" {
		t.Errorf("Title = %q", hs.Title())
	}
}

func TestPosition(t *testing.T) {
	// Causal T=12: j=5 is a candidate (queries 6..11, 6 of 12).
	m := oneHot(12, func(i int) int {
		if i >= 5 {
			return 5
		}
		return 0
	})
	hs := ScoreHead(one(t, true, seq(12), m), 0, 0)
	checkScore(t, hs, "position", 1)
	if hs.PositionJ != 5 {
		t.Errorf("PositionJ = %d, want 5", hs.PositionJ)
	}
	checkLabel(t, hs, "position-5")
}

func TestPositionNonCausalLateKey(t *testing.T) {
	// Without the mask every j in 1..T-1 is a candidate, even j = T-1.
	T := 6
	m := oneHot(T, func(int) int { return 5 })
	m[5] = []float64{1, 0, 0, 0, 0, 0}
	hs := ScoreHead(one(t, false, seq(T), m), 0, 0)
	checkScore(t, hs, "position", 1)
	if hs.PositionJ != 5 {
		t.Errorf("PositionJ = %d, want 5", hs.PositionJ)
	}
	checkLabel(t, hs, "position-5")
	// The same attention under the mask is invalid, so compare a causal
	// head that looks at the last half: j = 5 is no candidate for T = 10.
	m10 := oneHot(10, func(i int) int {
		if i > 5 {
			return 5
		}
		return 0
	})
	hs = ScoreHead(one(t, true, seq(10), m10), 0, 0)
	if hs.PositionJ == 5 || hs.Scores["position"] != 0 {
		t.Errorf("causal T=10: j=5 must not be a candidate; got j=%d score %v", hs.PositionJ, hs.Scores["position"])
	}
}

// ---- eligibility and candidates -----------------------------------------

func TestT1(t *testing.T) {
	for _, causal := range []bool{true, false} {
		hs := ScoreHead(one(t, causal, []int{3}, [][]float64{{1}}), 0, 0)
		for _, p := range Patterns {
			if hs.Scores[p] != 0 {
				t.Errorf("causal=%v: %s = %v, want 0", causal, p, hs.Scores[p])
			}
		}
		if hs.OffsetD != 0 || hs.PositionJ != 0 || hs.MirrorC != 0 {
			t.Errorf("causal=%v: d=%d j=%d c=%d, want 0 0 0", causal, hs.OffsetD, hs.PositionJ, hs.MirrorC)
		}
		checkLabel(t, hs, NoClearPattern)
		if hs.Title() != "no clear pattern 0.00" {
			t.Errorf("Title = %q", hs.Title())
		}
	}
}

func TestCandidates(t *testing.T) {
	cases := []struct {
		causal bool
		T      int
		ds, js []int
	}{
		{true, 8, []int{2, 3, 4}, []int{1, 2, 3}},
		{true, 9, []int{2, 3, 4}, []int{1, 2, 3}}, // d=4: 5 of 9; j=4: 4 of 9
		{true, 4, []int{2}, []int{1}},
		{true, 3, nil, nil}, // d=2: 1 of 3; j=1: 1 of 3
		{true, 2, nil, nil},
		{false, 2, nil, []int{1}},
		{false, 3, nil, []int{1, 2}},
		{false, 4, []int{2}, []int{1, 2, 3}},
		{false, 7, []int{2, 3}, []int{1, 2, 3, 4, 5, 6}},
	}
	for _, c := range cases {
		a := one(t, c.causal, seq(c.T), oneHot(c.T, func(i int) int { return i }))
		var ds, js []int
		for d := 2; d < c.T; d++ {
			if isCandidate(a, func(_, i int) (int, bool) { return i - d, i >= d }) {
				ds = append(ds, d)
			}
		}
		for j := 1; j < c.T; j++ {
			if isCandidate(a, func(_, i int) (int, bool) { return j, j != i }) {
				js = append(js, j)
			}
		}
		if fmt.Sprint(ds) != fmt.Sprint(c.ds) || fmt.Sprint(js) != fmt.Sprint(c.js) {
			t.Errorf("causal=%v T=%d: d %v j %v, want d %v j %v", c.causal, c.T, ds, js, c.ds, c.js)
		}
	}
}

func TestNonCandidateCannotWin(t *testing.T) {
	// Causal T=8: d=5 is seen by 3 queries only and must not be scored.
	m := oneHot(8, func(i int) int {
		if i >= 5 {
			return i - 5
		}
		return i
	})
	hs := ScoreHead(one(t, true, seq(8), m), 0, 0)
	if hs.Scores["offset"] != 0 || hs.OffsetD != 2 {
		t.Errorf("offset %v d=%d, want 0 with d=2 (smallest of tied candidates)", hs.Scores["offset"], hs.OffsetD)
	}
}

func TestOffsetTieTakesSmallerD(t *testing.T) {
	T := 8
	m := make([][]float64, T)
	for i := range m {
		m[i] = make([]float64, T)
		switch {
		case i >= 3:
			m[i][i-2], m[i][i-3] = 0.5, 0.5
		case i == 2:
			m[i][0], m[i][2] = 0.5, 0.5
		default:
			m[i][0] = 1
		}
	}
	hs := ScoreHead(one(t, true, seq(T), m), 0, 0)
	checkScore(t, hs, "offset", 0.5)
	if hs.OffsetD != 2 {
		t.Errorf("OffsetD = %d, want 2", hs.OffsetD)
	}
	checkLabel(t, hs, "offset -2")
}

func TestPositionTieTakesSmallerJ(t *testing.T) {
	T := 4
	m := make([][]float64, T)
	for i := range m {
		m[i] = []float64{0, 0, 0, 0}
	}
	// Every query i gives 0.5 to each of keys 1 and 2, except where the key
	// is itself; j=1 and j=2 then both average 0.5.
	m[0] = []float64{0, 0.5, 0.5, 0}
	m[1] = []float64{0.5, 0, 0.5, 0}
	m[2] = []float64{0.5, 0.5, 0, 0}
	m[3] = []float64{0, 0.5, 0.5, 0}
	hs := ScoreHead(one(t, false, seq(T), m), 0, 0)
	if !near(hs.Scores["position"], 0.5, eps) || hs.PositionJ != 1 {
		t.Errorf("position %v j=%d, want 0.5 with j=1", hs.Scores["position"], hs.PositionJ)
	}
}

func TestBatchMeanSkipsExamplesWithoutEligibleQuery(t *testing.T) {
	// Example 0 repeats a token (matching value 1), example 1 has none:
	// the batch score is 1, not 0.5.
	toks := [][]int{{4, 4, 1}, {1, 2, 3}}
	a := build(t, true, toks, 1, 1, func(int, int, int) [][]float64 {
		return oneHot(3, func(i int) int { return max(i-1, 0) })
	})
	hs := ScoreHead(a, 0, 0)
	checkScore(t, hs, "matching", 1)
	// Per-example mean first: example 0 has matching only at query 1 (1),
	// and the batch mean of previous-token is the mean of two 1s.
	checkScore(t, hs, "previous-token", 1)
}

func TestBatchMeanIsMeanOfExampleMeans(t *testing.T) {
	// Example 0: two eligible queries for matching (values 1, 1); example 1:
	// one (value 0). Mean of example means = 0.5; a pooled mean would be 2/3.
	toks := [][]int{{4, 4, 4}, {4, 4, 1}}
	a := build(t, true, toks, 1, 1, func(n, _, _ int) [][]float64 {
		if n == 0 {
			return oneHot(3, func(i int) int { return max(i-1, 0) })
		}
		return oneHot(3, func(i int) int { return i })
	})
	checkScore(t, ScoreHead(a, 0, 0), "matching", 0.5)
}

// ---- labels --------------------------------------------------------------

// sinkHead: non-causal T=16, every query i >= 1 puts w on key 0 and 1-w on
// itself, so attention-sink = w and every other pattern stays well below.
func sinkHead(t *testing.T, w float32) HeadScore {
	T := 16
	m := make([][]float64, T)
	for i := range m {
		m[i] = make([]float64, T)
		m[i][0] = float64(w)
		m[i][i] += float64(1 - w)
	}
	return ScoreHead(one(t, false, seq(T), m), 0, 0)
}

func TestLabelThreshold(t *testing.T) {
	hs := sinkHead(t, 0.4)
	checkLabel(t, hs, "attention-sink")
	if hs.Title() != "attention-sink 0.40" {
		t.Errorf("Title = %q", hs.Title())
	}
	hs = sinkHead(t, 0.39)
	checkLabel(t, hs, NoClearPattern)
	if !near(hs.Score, 0.39, 1e-6) || hs.Title() != "no clear pattern 0.39" {
		t.Errorf("score %v title %q", hs.Score, hs.Title())
	}
	// A score of exactly 0.4 (2 of 5 queries on key 0, mean 2.0/5) counts.
	m := oneHot(6, func(i int) int {
		if i <= 2 {
			return 0
		}
		return i
	})
	hs = ScoreHead(one(t, true, seq(6), m), 0, 0)
	if hs.Scores["attention-sink"] != 0.4 {
		t.Fatalf("attention-sink = %v, want exactly 0.4", hs.Scores["attention-sink"])
	}
	checkLabel(t, hs, "attention-sink")
	// The float32 just below 0.4 is below the threshold.
	checkLabel(t, sinkHead(t, math.Nextafter32(0.4, 0)), NoClearPattern)
}

func TestLabelTieGoesToEarlierRow(t *testing.T) {
	// Causal T=2: query 1 on key 0 is both previous-token and sink.
	hs := ScoreHead(one(t, true, []int{1, 2}, [][]float64{{1, 0}, {1, 0}}), 0, 0)
	checkScore(t, hs, "previous-token", 1)
	checkScore(t, hs, "attention-sink", 1)
	checkLabel(t, hs, "previous-token")

	// A period-4 sequence read at i-4: matching and offset -4 both score 1.
	toks := []int{1, 2, 3, 4, 1, 2, 3, 4}
	m := oneHot(8, func(i int) int {
		if i >= 4 {
			return i - 4
		}
		return i
	})
	hs = ScoreHead(one(t, true, toks, m), 0, 0)
	checkScore(t, hs, "matching", 1)
	checkScore(t, hs, "offset", 1)
	checkLabel(t, hs, "matching")
}

func TestScoreAllOrderAndJSON(t *testing.T) {
	a := build(t, true, [][]int{seq(4)}, 2, 3, func(_, l, h int) [][]float64 {
		return oneHot(4, func(i int) int { return max(i-l-1, 0) })
	})
	all := ScoreAll(a)
	if len(all) != 6 {
		t.Fatalf("len = %d", len(all))
	}
	for k, hs := range all {
		if hs.Layer != k/3 || hs.Head != k%3 || hs.Name != fmt.Sprintf("L%dH%d", k/3, k%3) {
			t.Errorf("ScoreAll[%d] = %s (L%d H%d)", k, hs.Name, hs.Layer, hs.Head)
		}
	}
	b, err := json.Marshal(all[0])
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	keys := []string{`"name"`, `"layer"`, `"head"`, `"label"`, `"score"`, `"scores"`, `"offset_d"`, `"position_j"`, `"mirror_c"`}
	last := -1
	for _, k := range keys {
		at := strings.Index(s, k+":")
		if at <= last {
			t.Errorf("key %s missing or out of order in %s", k, s)
		}
		last = at
	}
	var back struct {
		Scores map[string]float64 `json:"scores"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Scores) != 8 {
		t.Errorf("scores in JSON: %v %v", back.Scores, err)
	}
}

// ---- file I/O ----------------------------------------------------------------

// randomAttention makes a valid batch with random (sometimes peaked) rows.
func randomAttention(rng *rand.Rand, causal bool, N, L, H, T, vocab int) *Attention {
	a := &Attention{Causal: causal, N: N, L: L, H: H, T: T}
	for k := 0; k < N*T; k++ {
		a.Tokens = append(a.Tokens, rng.Intn(vocab))
	}
	temp := 0.3 + 3*rng.Float64()
	for r := 0; r < N*L*H*T; r++ {
		i := r % T
		nv := T
		if causal {
			nv = i + 1
		}
		row := make([]float64, T)
		sum := 0.0
		for j := 0; j < nv; j++ {
			row[j] = math.Exp(rng.NormFloat64() * temp)
			if rng.Intn(8) == 0 {
				row[j] = 0
			}
			sum += row[j]
		}
		if sum == 0 {
			row[0], sum = 1, 1
		}
		for j := 0; j < T; j++ {
			a.Probs = append(a.Probs, float32(row[j]/sum))
		}
	}
	return a
}

// mixedAttention blends random rows with one planted pattern per head
// (previous-token, sink, an offset, a position, mirror, induction,
// matching or the shifted mirror) at a random strength, so labels of every kind, and scores near
// the threshold, turn up.
func mixedAttention(rng *rand.Rand, causal bool, N, L, H, T, vocab int) *Attention {
	a := randomAttention(rng, causal, N, L, H, T, vocab)
	for l := 0; l < L; l++ {
		for h := 0; h < H; h++ {
			kind, w := rng.Intn(8), 0.2+0.7*rng.Float64()
			d, j := 2+rng.Intn(T/2-1), 1+rng.Intn(T-1)
			for n := 0; n < N; n++ {
				last := map[int]int{}
				for i := 0; i < T; i++ {
					tok := a.Tokens[n*T+i]
					m, seen := last[tok]
					last[tok] = i
					c := -1
					switch kind {
					case 0:
						c = i - 1
					case 1:
						c = 0
					case 2:
						c = i - d
					case 3:
						c = j
					case 4:
						c = T - 1 - i
					case 5:
						if seen {
							c = m + 1
						}
					case 6:
						if seen {
							c = m
						}
					case 7:
						c = T - 2 - i
					}
					if c < 0 || !a.visible(i, c) {
						continue
					}
					row := a.row(n, l, h, i)
					for k := range row {
						row[k] = float32((1 - w) * float64(row[k]))
					}
					row[c] += float32(w)
				}
			}
		}
	}
	return a
}

func sameAttention(a, b *Attention) bool {
	if a.Causal != b.Causal || a.N != b.N || a.L != b.L || a.H != b.H || a.T != b.T ||
		len(a.Tokens) != len(b.Tokens) || len(a.Probs) != len(b.Probs) {
		return false
	}
	for k := range a.Tokens {
		if a.Tokens[k] != b.Tokens[k] {
			return false
		}
	}
	for k := range a.Probs {
		if math.Float32bits(a.Probs[k]) != math.Float32bits(b.Probs[k]) {
			return false
		}
	}
	return true
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for k, causal := range []bool{true, false, true} {
		a := randomAttention(rng, causal, 2+k, 2, 3, 5+k, 4)
		// Awkward float32s: the smallest subnormal, tiny normals.
		a.Probs[a.T], a.Probs[a.T+1] = 1, math.SmallestNonzeroFloat32
		for j := 2; j < a.T; j++ {
			a.Probs[a.T+j] = 0
		}
		if !causal {
			a.Probs[0] += a.Probs[2]
			a.Probs[2] = 1.1754944e-38
		}
		a.Tokens[0] = 1 << 40
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteAttention(&buf, a); err != nil {
			t.Fatal(err)
		}
		b, err := ReadAttention(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		if !sameAttention(a, b) {
			t.Errorf("round trip differs (causal=%v)", causal)
		}
		// A task without relations declares none (head-patterns.md).
		if bytes.Contains(buf.Bytes(), []byte(`"relations"`)) {
			t.Errorf("a file without relations has a relations key")
		}
	}
}

func TestWriteRejectsInvalid(t *testing.T) {
	a := &Attention{N: 1, L: 1, H: 1, T: 1, Tokens: []int{0}, Probs: []float32{float32(math.NaN())}}
	if err := WriteAttention(&bytes.Buffer{}, a); err == nil {
		t.Error("NaN written without error")
	}
}

func TestReadValidSmall(t *testing.T) {
	in := `{"causal": true, "tokens": [[3, 4]], "attention": [[[[[1, 0], [0.25, 0.75]]]]], "model": "x"}` + "\n\n"
	a, err := ReadAttention(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Causal || a.N != 1 || a.L != 1 || a.H != 1 || a.T != 2 || a.Tokens[1] != 4 || a.At(0, 0, 0, 1, 1) != 0.75 {
		t.Errorf("read %+v", a)
	}
}

func TestReadMalformed(t *testing.T) {
	good := `[[[[[1,0],[0.5,0.5]]]]]`
	cases := map[string]struct{ in, want string }{
		"empty input":       {``, "empty"},
		"truncated":         {`{"causal":true,"tokens":[[1,2]],"attention":[[[[[1,0],[0.5`, "truncated"},
		"trailing garbage":  {`{"causal":true,"tokens":[[1,2]],"attention":` + good + `} x`, "trailing"},
		"two objects":       {`{"causal":true,"tokens":[[1,2]],"attention":` + good + `}{}`, "trailing"},
		"not an object":     {`[1,2]`, ""},
		"missing causal":    {`{"tokens":[[1,2]],"attention":` + good + `}`, "causal"},
		"null causal":       {`{"causal":null,"tokens":[[1,2]],"attention":` + good + `}`, "causal"},
		"missing attention": {`{"causal":true,"tokens":[[1,2]]}`, "attention"},
		"empty tokens":      {`{"causal":true,"tokens":[],"attention":` + good + `}`, "empty"},
		"empty token row":   {`{"causal":true,"tokens":[[]],"attention":` + good + `}`, "empty"},
		"empty attention":   {`{"causal":true,"tokens":[[1,2]],"attention":[]}`, "empty"},
		"ragged tokens":     {`{"causal":true,"tokens":[[1,2],[1]],"attention":[` + good[1:len(good)-1] + `,` + good[1:len(good)-1] + `]}`, "ragged"},
		"ragged rows":       {`{"causal":true,"tokens":[[1,2]],"attention":[[[[[1,0],[1]]]]]}`, "keys"},
		"ragged heads":      {`{"causal":true,"tokens":[[1,2],[1,2]],"attention":[[[[[1,0],[0,1]]],[[[1,0],[0,1]],[[1,0],[0,1]]]],[[[[1,0],[0,1]]],[[[1,0],[0,1]]]]]}`, "ragged"},
		"N mismatch":        {`{"causal":true,"tokens":[[1,2],[1,2]],"attention":` + good + `}`, "examples"},
		"token count":       {`{"causal":true,"tokens":[[1,2,3]],"attention":` + good + `}`, "T = 3"},
		"negative token":    {`{"causal":true,"tokens":[[1,-2]],"attention":` + good + `}`, "negative"},
		"fractional token":  {`{"causal":true,"tokens":[[1,2.5]],"attention":` + good + `}`, "integer"},
		"string token":      {`{"causal":true,"tokens":[[1,"2"]],"attention":` + good + `}`, "string"},
		"null token":        {`{"causal":true,"tokens":[[1,null]],"attention":` + good + `}`, "null"},
		"row sum":           {`{"causal":true,"tokens":[[1,2]],"attention":[[[[[1,0],[0.5,0.4]]]]]}`, "sum"},
		"row sum 1.002":     {`{"causal":false,"tokens":[[1,2]],"attention":[[[[[1,0.002],[0.5,0.5]]]]]}`, "sum"},
		"masked nonzero":    {`{"causal":true,"tokens":[[1,2]],"attention":[[[[[0.9,0.1],[0.5,0.5]]]]]}`, "mask"},
		"NaN literal":       {`{"causal":true,"tokens":[[1,2]],"attention":[[[[[NaN,0],[0.5,0.5]]]]]}`, ""},
		"huge weight":       {`{"causal":true,"tokens":[[1,2]],"attention":[[[[[1e39,0],[0.5,0.5]]]]]}`, "float32"},
		"negative weight":   {`{"causal":false,"tokens":[[1,2]],"attention":[[[[[1.5,-0.5],[0.5,0.5]]]]]}`, "negative"},
		"null weight":       {`{"causal":true,"tokens":[[1,2]],"attention":[[[[[null,0],[0.5,0.5]]]]]}`, "null"},
		"string weight":     {`{"causal":true,"tokens":[[1,2]],"attention":[[[[["1",0],[0.5,0.5]]]]]}`, "string"},
		"too deep":          {`{"causal":true,"tokens":[[1,2]],"attention":[[[[[[1],0],[0.5,0.5]]]]]}`, "array"},
	}
	for name, c := range cases {
		a, err := ReadAttention(strings.NewReader(c.in))
		if err == nil {
			t.Errorf("%s: no error, got %+v", name, a)
			continue
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\r") {
			t.Errorf("%s: multi-line error %q", name, msg)
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q does not mention %q", name, msg, c.want)
		}
	}
	// Masked cells within 1e-6 of 0 and rows within 1e-3 of 1 are fine.
	ok := `{"causal":true,"tokens":[[1,2]],"attention":[[[[[0.9995,1e-7],[0.5,0.5]]]]]}`
	if _, err := ReadAttention(strings.NewReader(ok)); err != nil {
		t.Errorf("tolerated deviations rejected: %v", err)
	}
}

func TestValidateShapes(t *testing.T) {
	bad := []*Attention{
		nil,
		{N: 0, L: 1, H: 1, T: 1},
		{N: 1, L: 1, H: 1, T: 2, Tokens: []int{0}, Probs: make([]float32, 4)},
		{N: 1, L: 1, H: 1, T: 1, Tokens: []int{0}, Probs: nil},
		{N: math.MaxInt / 2, L: 3, H: 1, T: 1},
	}
	for k, a := range bad {
		if a.Validate() == nil {
			t.Errorf("case %d: no error", k)
		}
	}
}

func FuzzReadAttention(f *testing.F) {
	rng := rand.New(rand.NewSource(2))
	for _, causal := range []bool{true, false} {
		var buf bytes.Buffer
		if err := WriteAttention(&buf, randomAttention(rng, causal, 2, 1, 2, 3, 3)); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
		f.Add(buf.Bytes()[:buf.Len()/2])
	}
	f.Add([]byte(`{"causal":true,"tokens":[[1,2]],"attention":[[[[[1,0],[0.5,0.5]]]]]}`))
	f.Add([]byte(`{"causal":false,"tokens":[[1]],"attention":[[[[[1]]]]]}`))
	f.Add([]byte(`{"causal":true,"tokens":[[1,2]],"attention":[[[[[1,0],[0.5,0.4]]]]]}`))
	f.Add([]byte(`{"causal":true,"tokens":[[1,2],[3]],"attention":[]}`))
	f.Add([]byte(`{"causal":true,"tokens":[[1,-2]],"attention":[[[[[1,0],[null,"x"]]]]]} junk`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadAttention(bytes.NewReader(data))
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("accepted an invalid file: %v", err)
		}
		var buf bytes.Buffer
		if err := WriteAttention(&buf, a); err != nil {
			t.Fatalf("write: %v", err)
		}
		b, err := ReadAttention(&buf)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		if !sameAttention(a, b) {
			t.Fatal("round trip differs")
		}
		if a.N*a.L*a.H*a.T*a.T > 1<<16 {
			return // scoring is covered elsewhere; keep the fuzzer fast
		}
		for _, hs := range ScoreAll(a) {
			for p, s := range hs.Scores {
				if math.IsNaN(s) || s < 0 || s > 1.01 {
					t.Fatalf("%s %s = %v", hs.Name, p, s)
				}
			}
		}
	})
}

// ---- cross-check against tools/headpatterns_ref.py ---------------------------

type refHead struct {
	Name      string             `json:"name"`
	Label     string             `json:"label"`
	Score     float64            `json:"score"`
	Scores    map[string]float64 `json:"scores"`
	OffsetD   int                `json:"offset_d"`
	PositionJ int                `json:"position_j"`
	MirrorC   *int               `json:"mirror_c"`
	Sink      *float64           `json:"sink"`
	RestMass  *float64           `json:"rest_mass"`
	RunnerUp  *string            `json:"runner_up"`
	RunnerUpS *float64           `json:"runner_up_score"`
}

func TestCrossCheckPythonReference(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("python3 not found")
		}
		t.Fatal("python3 not found and CI is set")
	}
	script := filepath.Join("..", "tools", "headpatterns_ref.py")

	// Hand-made heads, several per file so that labels of every kind and
	// exact ties are compared, plus random batches with repeated tokens.
	files := map[string]*Attention{}
	rng := rand.New(rand.NewSource(3))
	for k := 0; k < 4; k++ {
		causal := k%2 == 0
		files[fmt.Sprintf("random%d", k)] = randomAttention(rng, causal, 3, 2, 3, 6+3*k, 3+k)
	}
	// Peaked random heads are more likely to pass the threshold.
	files["random-peaked"] = randomAttention(rand.New(rand.NewSource(4)), false, 4, 3, 4, 9, 3)
	for k := 0; k < 4; k++ {
		files[fmt.Sprintf("mixed%d", k)] = mixedAttention(rng, k%2 == 1, 3, 3, 4, 8+2*k, 4)
	}
	T := 12
	pats := []func(i int) int{
		func(i int) int { return max(i-1, 0) },
		func(int) int { return 0 },
		func(i int) int {
			if i >= 3 {
				return i - 3
			}
			return 0
		},
		func(i int) int {
			if i >= 5 {
				return 5
			}
			return i
		},
		func(i int) int {
			if i >= T/2 {
				return i - T/2 + 1
			}
			return i
		},
		// The shifted mirror a reverse model grows: T-2-i.
		func(i int) int {
			if i >= T/2 {
				return max(T-2-i, 0)
			}
			return i
		},
	}
	toks := [][]int{{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, {9, 8, 7, 9, 8, 7, 9, 8, 7, 9, 8, 7}}
	files["hand-causal"] = build(t, true, toks, 1, len(pats), func(_, _, h int) [][]float64 { return oneHot(T, pats[h]) })
	files["hand-noncausal"] = build(t, false, toks, 2, 3, func(_, l, h int) [][]float64 {
		switch l*3 + h {
		case 0:
			return oneHot(T, func(i int) int { return T - 1 - i })
		case 1:
			return oneHot(T, func(int) int { return 11 })
		case 2:
			m := make([][]float64, T)
			for i := range m {
				m[i] = make([]float64, T)
				for j := range m[i] {
					m[i][j] = 1.0 / 12
				}
			}
			return m
		default:
			return oneHot(T, pats[l*3+h-3])
		}
	})
	// Split heads: each row's mass shared between the previous key and key
	// 0 (a close call between previous-token and attention-sink), and
	// between the previous key and a flat spread (the layer-0 head the
	// first rule called uniform).
	files["hand-split"] = build(t, true, toks, 1, 2, func(_, _, h int) [][]float64 {
		m := make([][]float64, T)
		for i := range m {
			m[i] = make([]float64, T)
			if i == 0 {
				m[0][0] = 1
				continue
			}
			switch h {
			case 0:
				m[i][i-1] += 0.55
				m[i][0] += 0.45
			default:
				m[i][i-1] += 0.5
				for j := 0; j <= i; j++ {
					m[i][j] += 0.5 / float64(i+1)
				}
			}
		}
		return m
	})
	dir := t.TempDir()
	rested, runners, relabelled := 0, 0, 0
	for name, a := range files {
		path := filepath.Join(dir, name+".json")
		var buf bytes.Buffer
		if err := WriteAttention(&buf, a); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, script, path).Output()
		if err != nil {
			t.Fatalf("%s: %s failed: %v", name, script, err)
		}
		var ref []refHead
		if err := json.Unmarshal(out, &ref); err != nil {
			t.Fatalf("%s: reference output: %v", name, err)
		}
		got := ScoreAll(a)
		if len(ref) != len(got) {
			t.Fatalf("%s: reference has %d heads, Go %d", name, len(ref), len(got))
		}
		labelled := 0
		for k, g := range got {
			r := ref[k]
			if r.MirrorC == nil {
				t.Fatalf("%s %s: the reference gives no mirror_c", name, r.Name)
			}
			if r.Name != g.Name || r.Label != g.Label || r.OffsetD != g.OffsetD || r.PositionJ != g.PositionJ || *r.MirrorC != g.MirrorC {
				t.Errorf("%s %s: Go %q d=%d j=%d c=%d, reference %s %q d=%d j=%d c=%d",
					name, g.Name, g.Label, g.OffsetD, g.PositionJ, g.MirrorC, r.Name, r.Label, r.OffsetD, r.PositionJ, *r.MirrorC)
			}
			if !near(r.Score, g.Score, 1e-4) {
				t.Errorf("%s %s: score Go %v, reference %v", name, g.Name, g.Score, r.Score)
			}
			if r.Sink == nil || !near(*r.Sink, g.Sink, 1e-4) || g.Sink != g.Scores["attention-sink"] {
				t.Errorf("%s %s: sink Go %v (score %v), reference %v", name, g.Name, g.Sink, g.Scores["attention-sink"], r.Sink)
			}
			if (r.RestMass == nil) != (g.RestMass == nil) || r.RestMass != nil && !near(*r.RestMass, *g.RestMass, 1e-4) {
				t.Errorf("%s %s (%s): rest mass Go %v, reference %v", name, g.Name, g.Label, fmtPtr(g.RestMass), fmtPtr(r.RestMass))
			}
			if g.RestMass != nil {
				rested++
			}
			if (r.RunnerUp == nil) != (g.RunnerUp == "") || r.RunnerUp != nil && (*r.RunnerUp != g.RunnerUp || !near(*r.RunnerUpS, g.RunnerUpScore, 1e-4)) {
				t.Errorf("%s %s: runner-up Go %q %v, reference %v", name, g.Name, g.RunnerUp, g.RunnerUpScore, r.RunnerUp)
			}
			if g.RunnerUp != "" {
				runners++
			}
			if first, _ := g.Relabel(FirstRule, a.T); first.Label != g.Label {
				relabelled++
			}
			for _, p := range Patterns {
				rv, ok := r.Scores[p]
				if !ok || !near(rv, g.Scores[p], 1e-4) {
					t.Errorf("%s %s %s: Go %v, reference %v (present %v)", name, g.Name, p, g.Scores[p], rv, ok)
				}
			}
			if g.Label != NoClearPattern {
				labelled++
			}
		}
		if strings.HasPrefix(name, "hand") && labelled != len(got) {
			t.Errorf("%s: only %d of %d hand-made heads got a label", name, labelled, len(got))
		}
	}
	if rested == 0 {
		t.Error("no head of any file has a rest mass: the comparison tested nothing")
	}
	if runners == 0 || relabelled == 0 {
		t.Errorf("%d heads with a runner-up, %d that the first rule labels otherwise: the comparison tested neither", runners, relabelled)
	}
}

// fmtPtr prints a *float64, or nil.
func fmtPtr(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
