package cpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"headlab/kernels"
)

// refXent is the cross-entropy in float64: the mean over answer rows
// (target >= 0) of -log softmax(row)[target], and each answer row's
// probabilities.
func refXent(rows, v int, lg, tg []float32) (loss float64, probs [][]float64) {
	answers := 0
	for r, t := range tg[:rows] {
		if t < 0 {
			probs = append(probs, nil)
			continue
		}
		answers++
		row := lg[r*v : r*v+v]
		m := math.Inf(-1)
		for _, x := range row {
			m = math.Max(m, float64(x))
		}
		var sum float64
		p := make([]float64, v)
		for j, x := range row {
			p[j] = math.Exp(float64(x) - m)
			sum += p[j]
		}
		for j := range p {
			p[j] /= sum
		}
		loss -= math.Log(p[int(t)])
		probs = append(probs, p)
	}
	if answers > 0 {
		loss /= float64(answers)
	}
	return loss, probs
}

// TestSoftmaxXentMatchesFloat64 holds the vectorised cross-entropy to the
// float64 reference for several seeds at once, on vocabularies narrower
// and wider than a vector (and not a multiple of one), with rows that are
// not answers (their probabilities are left as they were), a seed with
// no answers at all (loss 0) and a seed whose logits would overflow exp.
func TestSoftmaxXentMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	d := New()
	for _, v := range []int{1, 3, 8, 16, 17, 40} {
		const S, rows = 3, 21
		lg, tg := make([]float32, S*rows*v), make([]float32, S*rows)
		for i := range lg {
			lg[i] = float32(4 * r.NormFloat64())
			if i/(rows*v) == 1 {
				lg[i] += 100 // exp(100) overflows float32: the max must come off first
			}
		}
		for i := range tg {
			tg[i] = float32(r.IntN(v))
			if i/rows == 2 || r.IntN(3) == 0 { // seed 2 has no answers
				tg[i] = -1
			}
		}
		pr := make([]float32, S*rows*v)
		for i := range pr {
			pr[i] = 7 // what a non-answer row must keep
		}
		loss := make([]float32, S)
		wrap := func(x []float32, n int) kernels.Tensor {
			t := Wrap(x)
			t.Len, t.Stride = n, n
			return t
		}
		if err := d.SoftmaxXent(S, rows, v, wrap(lg, rows*v), wrap(tg, rows), wrap(pr, rows*v), wrap(loss, 1)); err != nil {
			t.Fatal(err)
		}
		for s := 0; s < S; s++ {
			want, probs := refXent(rows, v, lg[s*rows*v:], tg[s*rows:])
			if math.Abs(float64(loss[s])-want) > 1e-6*(1+want) {
				t.Errorf("v %d seed %d: loss %v, float64 %v", v, s, loss[s], want)
			}
			for row, p := range probs {
				got := pr[(s*rows+row)*v : (s*rows+row)*v+v]
				for j, g := range got {
					switch {
					case p == nil && g != 7:
						t.Fatalf("v %d seed %d row %d: a row that is not an answer was written (%v)", v, s, row, g)
					case p != nil && math.Abs(float64(g)-p[j]) > 2e-7+4e-7*p[j]:
						t.Fatalf("v %d seed %d row %d [%d]: probability %v, float64 %v", v, s, row, j, g, p[j])
					}
				}
			}
		}
	}
}

// TestSoftmaxXentRefusesABadTarget: a target that is not a whole number
// in 0..v-1 is an error, not a silent loss.
func TestSoftmaxXentRefusesABadTarget(t *testing.T) {
	d := New()
	for _, bad := range []float32{4, 1.5, float32(math.NaN())} {
		lg, tg, pr, loss := make([]float32, 8), []float32{0, bad}, make([]float32, 8), make([]float32, 1)
		err := d.SoftmaxXent(1, 2, 4, Wrap(lg), Wrap(tg), Wrap(pr), Wrap(loss))
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("target %v: %v, want an out-of-range error", bad, err)
		}
	}
}
