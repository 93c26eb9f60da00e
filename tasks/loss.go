package tasks

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The training objectives: which positions carry a target, and which
// (docs/tasks.md, "Targets under each loss").
const (
	// NextToken is the note's loss: every position i < T-1 has a target,
	// the task's answer where i is an answer position, else the next
	// token x[i+1]; position T-1 has one only where it is an answer
	// position.
	NextToken = "next-token"
	// Answers is the task's answer positions alone.
	Answers = "answers"
)

// Losses lists the objectives, the default first.
func Losses() []string { return []string{NextToken, Answers} }

// CheckLoss says why loss is not one of Losses.
func CheckLoss(loss string) error {
	for _, l := range Losses() {
		if loss == l {
			return nil
		}
	}
	return fmt.Errorf("unknown --loss %q (known: %s)", loss, strings.Join(Losses(), ", "))
}

// LossPositions lists, ascending, every position of t's sequences that
// may carry a target under loss: a training step computes the model's
// last layers on these rows alone (graph.BuildTrain).
func LossPositions(t Task, loss string) []int {
	answers := t.AnswerPositions()
	if loss == Answers {
		return answers
	}
	last := t.SeqLen() - 1
	p := span(0, last-1)
	if answers[len(answers)-1] == last {
		p = append(p, last)
	}
	return p
}

// LossTargets writes into dst, of len(b.Targets), the targets of b's
// examples under loss: b.Targets (the answers) for Answers; for
// NextToken, each answer where there is one and the next token at every
// other position but the last.
func LossTargets(loss string, b *Batch, dst []int) {
	copy(dst, b.Targets)
	if loss != NextToken {
		return
	}
	for e := 0; e < b.N; e++ {
		tok, tgt := b.Tokens[e*b.T:(e+1)*b.T], dst[e*b.T:(e+1)*b.T]
		for i := 0; i+1 < b.T; i++ {
			if tgt[i] == NoTarget {
				tgt[i] = tok[i+1]
			}
		}
	}
}

// MaxTrainingSet bounds a finite training set (NewTrainingSet).
const MaxTrainingSet = 1_000_000

// NewTrainingSet returns a stream over a finite training set: n examples
// drawn once from t's Train stream of seed (the first n it yields), then
// sampled with replacement, each pick uniform over the n, from a random
// stream of its own (seed, 0x9e3779b97f4a7c15 ^ 4). Held-out examples
// keep their own stream.
func NewTrainingSet(t Task, seed uint64, n int) *Stream {
	set := NewStream(t, seed, Train).Next(n)
	T := t.SeqLen()
	return &Stream{task: t, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^4)),
		sample: func(rng *rand.Rand, tokens, targets []int) {
			k := rng.IntN(n)
			copy(tokens, set.Tokens[k*T:(k+1)*T])
			copy(targets, set.Targets[k*T:(k+1)*T])
		}}
}
