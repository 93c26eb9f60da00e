package analysis

import (
	"math"
	"strings"
	"testing"
)

// TestCopyingScore: the identity copies (1), its negation anti-copies
// (-1), a rotation's eigenvalues are +-i (0), a projection onto one token
// copies that token alone (1: its one eigenvalue is positive), and the
// score is invariant to scale; a non-square matrix, and one that is not
// finite, is refused.
func TestCopyingScore(t *testing.T) {
	eye := func(n int, v float64) Matrix {
		m := Matrix{Rows: n, Cols: n, Data: make([]float64, n*n)}
		for i := range n {
			m.Data[i*n+i] = v
		}
		return m
	}
	rot := Matrix{Rows: 2, Cols: 2, Data: []float64{0, -1, 1, 0}}
	proj := Matrix{Rows: 3, Cols: 3, Data: []float64{0, 0, 0, 0, 5, 0, 0, 0, 0}}
	mixed := Matrix{Rows: 2, Cols: 2, Data: []float64{3, 0, 0, -1}} // (3 - 1) / (3 + 1)
	for _, c := range []struct {
		name string
		m    Matrix
		want float64
	}{{"identity", eye(4, 1), 1}, {"negated", eye(4, -2), -1}, {"rotation", rot, 0}, {"projection", proj, 1},
		{"3 and -1", mixed, 0.5}, {"zero", eye(3, 0), 0}} {
		got, err := CopyingScore(c.m)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := CopyingScore(Matrix{Rows: 2, Cols: 3, Data: make([]float64, 6)}); err == nil {
		t.Error("a 2x3 matrix scored")
	}
	// A diverged model's circuit is refused (gonum would never return on
	// the NaNs).
	for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
		m := eye(16, bad)
		for i := range m.Data {
			m.Data[i] = bad
		}
		if _, err := CopyingScore(m); err == nil || !strings.Contains(err.Error(), "not finite") {
			t.Errorf("a circuit of %v: %v", bad, err)
		}
	}
	// Top-1: rows whose largest entry is on the diagonal.
	m := Matrix{Rows: 3, Cols: 3, Data: []float64{2, 1, 0, 3, 1, 0, 0, 0, 1}}
	if got := CopyAccuracy(m); math.Abs(got-2.0/3) > 1e-15 {
		t.Errorf("copy accuracy %v, want 2/3", got)
	}
}

// TestPrefixMatching: a head that attends from every second-copy token
// to the token after its earlier copy scores 1; a previous-token head
// scores 0; a uniform head 1/(t+1) averaged.
func TestPrefixMatching(t *testing.T) {
	const T, half = 8, 4
	a := &Attention{Causal: true, N: 2, L: 1, H: 3, T: T, Tokens: make([]int, 2*T)}
	a.Probs = make([]float32, a.N*a.H*T*T)
	set := func(n, h, i, j int, w float32) { a.Probs[((n*a.H+h)*T+i)*T+j] = w }
	var uniform float64
	for n := range a.N {
		for i := range T {
			set(n, 0, i, max(i-half+1, 0), 1)
			if i < half {
				set(n, 0, i, 0, 1)
			}
			set(n, 1, i, max(i-1, 0), 1)
			for j := 0; j <= i; j++ {
				set(n, 2, i, j, 1/float32(i+1))
			}
			if i >= half {
				uniform += 1 / float64(i+1) / float64(a.N*half)
			}
		}
	}
	got, err := PrefixMatching(a, half)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0, uniform}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-6 {
			t.Errorf("head %d: %v, want %v", k, got[k], want[k])
		}
	}
	if _, err := PrefixMatching(a, 5); err == nil {
		t.Error("a run of 5 repeated in 8 tokens")
	}
}

// TestICLScore: logits that put all their weight on the next token late
// in the sequence and spread it evenly early give late loss 0 and early
// loss log V, so the score is -log V; ICLPositions splits T = 8 at 4.
func TestICLScore(t *testing.T) {
	const N, T, V = 3, 8, 5
	early, late := ICLPositions(T)
	if len(early) != 3 || early[2] != 2 || len(late) != 3 || late[0] != 4 || late[2] != 6 {
		t.Fatalf("positions %v and %v", early, late)
	}
	tokens := make([]int, N*T)
	logits := make([]float32, N*T*V)
	for i := range tokens {
		tokens[i] = (7*i + 1) % V
	}
	for n := range N {
		for p := 4; p < T-1; p++ {
			logits[(n*T+p)*V+tokens[n*T+p+1]] = 200
		}
	}
	got, err := ICLScore(tokens, logits, N, T, V)
	if err != nil || math.Abs(got+math.Log(V)) > 1e-12 {
		t.Errorf("score %v, %v; want %v", got, err, -math.Log(V))
	}
	if _, err := ICLScore(tokens[:T], logits, 1, 2, V); err == nil {
		t.Error("a score for sequences of two tokens")
	}
}
