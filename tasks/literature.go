package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// The tasks of the toy-model literature (docs/tasks.md gives each one's
// source): modular addition, on which Power et al. (2022) saw grokking
// and Nanda et al. (2023) reverse-engineered it, and sort and histogram
// from the case lists of tracr (Lindner et al. 2023) and InterpBench
// (Gupta et al. 2024).

// splitter is a task whose splits draw from different examples (modular
// addition: training pairs and held-out pairs), rather than from the
// same distribution with streams of their own.
type splitter interface {
	sampler(s Split) func(rng *rand.Rand, tokens, targets []int)
}

// ModAdd is modular addition: `a + b =` with a, b in 0..P-1, ids P for
// `+` and P+1 for `=`; the one answer position is `=`'s and the answer is
// (a+b) mod P. The P² pairs are split once, by a fixed hash of the pair,
// into training pairs (about 30%, the fraction of Nanda et al.) and
// held-out pairs, so held-out accuracy is on sums training never showed:
// the setting in which grokking shows. Chance is 1/P.
type ModAdd struct{ P int }

// modAddTrainTenths is the share of pairs (in tenths) held for training.
const modAddTrainTenths = 3

// maxModulus bounds P: every pair is counted when the task is made.
const maxModulus = 1000

// Name implements Task.
func (ModAdd) Name() string { return "modular-addition" }

// Vocab implements Task.
func (t ModAdd) Vocab() int { return t.P + 2 }

// SeqLen implements Task.
func (ModAdd) SeqLen() int { return 4 }

// Chance implements Task.
func (t ModAdd) Chance() float64 { return 1 / float64(t.P) }

// DefaultSteps implements Task.
func (ModAdd) DefaultSteps() int { return 3000 }

// Describe implements Task.
func (t ModAdd) Describe() string {
	return fmt.Sprintf("a + b = with a, b in 0..%d; answer at =: (a+b) mod %d; about 30%% of the pairs train, the rest are held out", t.P-1, t.P)
}

// AnswerPositions implements Task: `=`.
func (ModAdd) AnswerPositions() []int { return []int{3} }

// Training reports whether pair (a, b) is a training pair: splitmix64 of
// a·P+b, modulo 10, below 3.
func (t ModAdd) Training(a, b int) bool {
	return splitmix64(uint64(a*t.P+b))%10 < modAddTrainTenths
}

// splitmix64 is Steele, Lea and Flood's 64-bit mix, a fixed hash.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Sample implements Task: a training pair.
func (t ModAdd) Sample(rng *rand.Rand, tokens, targets []int) { t.draw(true, rng, tokens, targets) }

// sampler implements splitter: the held-out (and unseen) splits draw
// the pairs training never shows.
func (t ModAdd) sampler(s Split) func(rng *rand.Rand, tokens, targets []int) {
	train := s == Train
	return func(rng *rand.Rand, tokens, targets []int) { t.draw(train, rng, tokens, targets) }
}

// draw writes a pair drawn uniformly from the training pairs, or from
// the others.
func (t ModAdd) draw(train bool, rng *rand.Rand, tokens, targets []int) {
	a, b := rng.IntN(t.P), rng.IntN(t.P)
	for t.Training(a, b) != train {
		a, b = rng.IntN(t.P), rng.IntN(t.P)
	}
	noTargets(targets)
	tokens[0], tokens[1], tokens[2], tokens[3] = a, t.P, b, t.P+1
	targets[3] = (a + b) % t.P
}

// sizes implements resizer.
func (ModAdd) sizes() string {
	return fmt.Sprintf("only --seq-len 4 and --vocab P+2 for a modulus P in 5..%d", maxModulus)
}

// resize implements resizer.
func (t ModAdd) resize(T, V int) (Task, error) {
	n := ModAdd{P: V - 2}
	if T != 4 || n.P < 5 || n.P > maxModulus {
		return nil, sizeError(t.Name(), t.sizes(), T, V)
	}
	train := 0
	for k := range n.P * n.P {
		if n.Training(k/n.P, k%n.P) {
			train++
		}
	}
	if train == 0 || train == n.P*n.P {
		return nil, fmt.Errorf("task %s: modulus %d leaves no pair on one side of the split; take another --vocab", t.Name(), n.P)
	}
	return n, nil
}

// Sort: N values drawn with replacement from 0..V-2, the separator V-1,
// then the same values sorted ascending. The answers are the sorted
// values: at the separator and every sorted position but the last, the
// next token (tracr's and InterpBench's sort, as a decoder writes it).
// Chance is 1/(V-1), a guess among the values.
type Sort struct{ N, V int }

// Name implements Task.
func (Sort) Name() string { return "sort" }

// Vocab implements Task.
func (t Sort) Vocab() int { return t.V }

// SeqLen implements Task.
func (t Sort) SeqLen() int { return 2*t.N + 1 }

// Chance implements Task.
func (t Sort) Chance() float64 { return 1 / float64(t.V-1) }

// DefaultSteps implements Task.
func (Sort) DefaultSteps() int { return 2000 }

// Describe implements Task.
func (t Sort) Describe() string {
	return fmt.Sprintf("%d values of %d, a separator, then the values sorted; answers: the next sorted value from the separator on", t.N, t.V-1)
}

// AnswerPositions implements Task: the separator N and N+1..2N-1.
func (t Sort) AnswerPositions() []int { return span(t.N, 2*t.N-1) }

// Sample implements Task.
func (t Sort) Sample(rng *rand.Rand, tokens, targets []int) {
	noTargets(targets)
	for i := range t.N {
		tokens[i] = rng.IntN(t.V - 1)
	}
	tokens[t.N] = t.V - 1
	sorted := tokens[t.N+1 : 2*t.N+1]
	copy(sorted, tokens[:t.N])
	slices.Sort(sorted)
	for i := t.N; i < 2*t.N; i++ {
		targets[i] = tokens[i+1]
	}
}

// sizes implements resizer.
func (Sort) sizes() string {
	return fmt.Sprintf("an odd --seq-len in 3..%d and --vocab in 3..%d (the values and the separator)", MaxSeqLen, MaxVocab)
}

// resize implements resizer.
func (t Sort) resize(T, V int) (Task, error) {
	if T%2 != 1 || T < 3 || V < 3 {
		return nil, sizeError(t.Name(), t.sizes(), T, V)
	}
	return Sort{N: T / 2, V: V}, nil
}

// Histogram: T letters drawn from L; at every position the answer is how
// many times its letter has occurred so far, itself included (1..T),
// written as token L+count-1 (tracr's and InterpBench's histogram,
// counted causally). The vocabulary is the L letters and the T counts.
// Chance is the best guess from the position alone: the likeliest count
// there, averaged over positions.
type Histogram struct{ T, L int }

// Name implements Task.
func (Histogram) Name() string { return "histogram" }

// Vocab implements Task.
func (t Histogram) Vocab() int { return t.L + t.T }

// SeqLen implements Task.
func (t Histogram) SeqLen() int { return t.T }

// Chance implements Task: at position i the count is 1 plus a
// binomial(i, 1/L); the likeliest count's probability, averaged.
func (t Histogram) Chance() float64 {
	p, sum := 1/float64(t.L), 0.0
	for i := range t.T {
		best := 0.0
		for k := 0; k <= i; k++ {
			lg, _ := math.Lgamma(float64(i + 1))
			la, _ := math.Lgamma(float64(k + 1))
			lb, _ := math.Lgamma(float64(i - k + 1))
			best = max(best, math.Exp(lg-la-lb+float64(k)*math.Log(p)+float64(i-k)*math.Log1p(-p)))
		}
		sum += best
	}
	return sum / float64(t.T)
}

// DefaultSteps implements Task.
func (Histogram) DefaultSteps() int { return 2000 }

// Describe implements Task.
func (t Histogram) Describe() string {
	return fmt.Sprintf("%d letters of %d; answer at every position: how often its letter has occurred so far (a count token)", t.T, t.L)
}

// AnswerPositions implements Task: every position.
func (t Histogram) AnswerPositions() []int { return span(0, t.T-1) }

// Sample implements Task.
func (t Histogram) Sample(rng *rand.Rand, tokens, targets []int) {
	counts := make([]int, t.L)
	for i := range t.T {
		tokens[i] = rng.IntN(t.L)
		counts[tokens[i]]++
		targets[i] = t.L + counts[tokens[i]] - 1
	}
}

// sizes implements resizer.
func (Histogram) sizes() string {
	return fmt.Sprintf("--seq-len T in 2..%d and --vocab in T+2..%d (at least two letters, then the T counts)", MaxSeqLen, MaxVocab)
}

// resize implements resizer.
func (t Histogram) resize(T, V int) (Task, error) {
	if T < 2 || V < T+2 {
		return nil, sizeError(t.Name(), t.sizes(), T, V)
	}
	return Histogram{T: T, L: V - T}, nil
}
