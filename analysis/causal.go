package analysis

import (
	"fmt"
	"math"

	gonum "gonum.org/v1/gonum/mat"
)

// The task-independent head scores and the in-context learning score of
// docs/causal.md.

// CopyingScore is the copying score of a full OV circuit m [V, V] (row:
// the token attended to, column: the logit it raises), after Elhage et
// al. (2021): the sum of the real parts of its eigenvalues over the sum of
// their magnitudes, in [-1, 1]; 1 when every eigenvalue is positive, as
// for a circuit that raises the logit of the token it reads. 0 for a zero
// matrix; an error for one with an entry that is not finite.
func CopyingScore(m Matrix) (float64, error) {
	if m.Rows != m.Cols || m.Rows == 0 {
		return 0, fmt.Errorf("analysis: the copying score of a %dx%d matrix", m.Rows, m.Cols)
	}
	// gonum's eigensolver never returns on a matrix of NaNs (a diverged
	// model's).
	for _, v := range m.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("analysis: the OV circuit is not finite")
		}
	}
	var e gonum.Eigen
	if !e.Factorize(gonum.NewDense(m.Rows, m.Cols, append([]float64(nil), m.Data...)), gonum.EigenNone) {
		return 0, fmt.Errorf("analysis: the eigenvalues of the OV circuit did not converge")
	}
	var re, abs float64
	for _, v := range e.Values(nil) {
		re += real(v)
		abs += math.Hypot(real(v), imag(v))
	}
	if abs == 0 {
		return 0, nil
	}
	return re / abs, nil
}

// CopyAccuracy is the fraction of rows of a full OV circuit m [V, V]
// whose largest entry is on the diagonal (the first largest on a tie):
// the tokens whose own logit the circuit raises most (ARENA's top-1
// accuracy of the full OV circuit).
func CopyAccuracy(m Matrix) float64 {
	hits := 0
	for i := range m.Rows {
		row := m.Data[i*m.Cols : (i+1)*m.Cols]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if best == i {
			hits++
		}
	}
	return float64(hits) / float64(m.Rows)
}

// PrefixMatching is every head's prefix-matching score (Olsson et al.
// 2022) on attention a over sequences whose first 2*half tokens are a
// random run of half tokens repeated (a longer sequence repeats it on):
// the mean, over the examples and over the queries t of the second copy
// (half <= t < 2*half), of A[t, t-half+1], the weight on the token after
// the query's earlier copy. Layer-major, [L*H].
func PrefixMatching(a *Attention, half int) ([]float64, error) {
	if half < 1 || 2*half > a.T {
		return nil, fmt.Errorf("analysis: a repeated run of %d tokens in sequences of %d", half, a.T)
	}
	out := make([]float64, a.L*a.H)
	for l := range a.L {
		for h := range a.H {
			var sum float64
			for n := range a.N {
				for t := half; t < 2*half; t++ {
					sum += float64(a.At(n, l, h, t, t-half+1))
				}
			}
			out[l*a.H+h] = sum / float64(a.N*half)
		}
	}
	return out, nil
}

// ICLPositions are the early and late positions of the in-context
// learning score for sequences of length T: with h = T/2 (rounded down),
// early t = 0 .. h-2 and late t = h .. T-2, each predicting token t+1.
func ICLPositions(T int) (early, late []int) {
	h := T / 2
	for t := 0; t <= h-2; t++ {
		early = append(early, t)
	}
	for t := h; t <= T-2; t++ {
		late = append(late, t)
	}
	return early, late
}

// ICLScore is the in-context learning score (Olsson et al. 2022) of
// logits [N*T][V] on tokens [N*T]: the mean next-token loss (the
// cross-entropy at position t of token t+1, in nats) at the late
// positions minus at the early ones (ICLPositions); negative when the
// model predicts better late in the context.
func ICLScore(tokens []int, logits []float32, N, T, V int) (float64, error) {
	early, late := ICLPositions(T)
	if len(early) == 0 || len(late) == 0 || len(tokens) < N*T || len(logits) < N*T*V || N < 1 {
		return 0, fmt.Errorf("analysis: no in-context learning score for %d sequences of %d tokens", N, T)
	}
	loss := func(ts []int) float64 {
		var sum float64
		for n := range N {
			for _, t := range ts {
				row := logits[(n*T+t)*V : (n*T+t+1)*V]
				sum += NextTokenLoss(row, tokens[n*T+t+1])
			}
		}
		return sum / float64(N*len(ts))
	}
	return loss(late) - loss(early), nil
}

// NextTokenLoss is -log softmax(row)[target], in float64.
func NextTokenLoss(row []float32, target int) float64 {
	top := math.Inf(-1)
	for _, v := range row {
		top = max(top, float64(v))
	}
	var sum float64
	for _, v := range row {
		sum += math.Exp(float64(v) - top)
	}
	return math.Log(sum) - (float64(row[target]) - top)
}
