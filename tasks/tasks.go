// Package tasks generates the toy sequence tasks that headlab trains on.
//
// Every task produces fixed-length token sequences and, at some positions
// (the answer positions), the token the model must predict there. The
// accuracy counts answer positions only; the loss counts them alone or
// every position's next token (LossPositions). Generators are
// deterministic: a Stream built from the same task, seed and split yields
// the same batches, and each split draws from a random stream of its own.
package tasks

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// NoTarget marks a position that is not an answer position.
const NoTarget = -1

// Task is one generator of examples.
type Task interface {
	// Name is the task's command-line name.
	Name() string
	// Vocab is the number of token ids: tokens are 0..Vocab()-1.
	Vocab() int
	// SeqLen is the length T of every sequence.
	SeqLen() int
	// Chance is the accuracy of the best guess that ignores the context
	// mechanism the task tests (documented per task).
	Chance() float64
	// DefaultSteps is the number of training steps after which the default
	// model has reached its plateau on this task.
	DefaultSteps() int
	// Describe says in one line what the inputs and answers are.
	Describe() string
	// Sample writes one example: tokens and targets both of length SeqLen,
	// targets NoTarget except at the answer positions.
	Sample(rng *rand.Rand, tokens, targets []int)
	// AnswerPositions lists, ascending, every position at which some
	// example may have an answer. A training step computes the model's
	// last layers on these rows alone (graph.BuildTrain).
	AnswerPositions() []int
}

// span is the positions lo..hi.
func span(lo, hi int) []int {
	p := make([]int, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		p = append(p, i)
	}
	return p
}

var registry = map[string]Task{
	"induction": Induction{N: 8, V: 16},
	"copy":      Repeat{N: 8, V: 16},
	"reverse":   Repeat{N: 8, V: 6, Reversed: true},
	"majority":  Majority{N: 15, V: 3},
	// induction over 24 tokens, of which the last 8 never appear in
	// training or held-out data: the Unseen split is made only of them.
	"induction-unseen": Induction{N: 8, V: 24, Unseen: 8},
	"agreement":        Agreement{},
	"modular-addition": ModAdd{P: 113},
	"sort":             Sort{N: 8, V: 17},
	"histogram":        Histogram{T: 10, L: 6},
}

// Names lists the known tasks, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns the named task with its default settings; file:PATH is
// the task read from folder PATH (ReadData).
func New(name string) (Task, error) {
	if IsFile(name) {
		return ReadData(strings.TrimPrefix(name, FilePrefix))
	}
	t, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown task %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return t, nil
}

// Batch holds N examples of length T, row-major.
type Batch struct {
	N, T    int
	Tokens  []int
	Targets []int
}

// Answers counts the answer positions in the batch.
func (b *Batch) Answers() int {
	n := 0
	for _, t := range b.Targets {
		if t != NoTarget {
			n++
		}
	}
	return n
}

// Split names a data stream.
type Split uint64

// Each split draws from a random stream of its own of the same seed.
const (
	Train   Split = 1
	HeldOut Split = 2
	// Unseen draws from the vocabulary a task held back from the other
	// splits; only tasks that implement UnseenTask have it.
	Unseen Split = 3
)

// UnseenTask is a task that holds part of its vocabulary back from
// training, to test whether a model copies by content.
type UnseenTask interface {
	Task
	// HeldBack is how many token ids the task holds back (0: none).
	HeldBack() int
	// SampleUnseen writes one example made only of held-back tokens.
	SampleUnseen(rng *rand.Rand, tokens, targets []int)
}

// HasUnseen reports whether t holds back part of its vocabulary.
func HasUnseen(t Task) bool {
	u, ok := t.(UnseenTask)
	return ok && u.HeldBack() > 0
}

// Stream yields batches of one task from one seeded random stream.
type Stream struct {
	task   Task
	rng    *rand.Rand
	sample func(rng *rand.Rand, tokens, targets []int)
}

// NewStream returns the stream of task examples for seed and split. The
// Unseen split of a task without held-back tokens is its HeldOut split.
func NewStream(t Task, seed uint64, split Split) *Stream {
	s := &Stream{task: t, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^uint64(split))), sample: t.Sample}
	if sp, ok := t.(splitter); ok {
		s.sample = sp.sampler(split)
	}
	if split == Unseen && HasUnseen(t) {
		s.sample = t.(UnseenTask).SampleUnseen
	}
	return s
}

// Next returns a fresh batch of n examples.
func (s *Stream) Next(n int) *Batch {
	b := &Batch{N: n, T: s.task.SeqLen()}
	b.Tokens = make([]int, n*b.T)
	b.Targets = make([]int, n*b.T)
	s.Fill(b)
	return b
}

// Fill overwrites b with b.N fresh examples, reusing its slices.
func (s *Stream) Fill(b *Batch) {
	for i := 0; i < b.N; i++ {
		s.sample(s.rng, b.Tokens[i*b.T:(i+1)*b.T], b.Targets[i*b.T:(i+1)*b.T])
	}
}

func noTargets(t []int) {
	for i := range t {
		t[i] = NoTarget
	}
}

// Induction: N distinct tokens drawn from V, then the same N tokens rotated
// by a random r in 0..N-1. At each second-half position i the answer is the
// token that followed the earlier copy of tok[i], i.e. tok[m+1] where m is
// the first-half position holding tok[i]. The rotation makes the distance
// from a query to its answer's position vary, so no fixed position or offset
// gives the answer. Chance is 1/(N-1): guessing among the other tokens of
// the context.
//
// With Unseen > 0 the last Unseen ids of the vocabulary never appear in the
// Train and HeldOut splits; SampleUnseen draws sequences only from them.
type Induction struct{ N, V, Unseen int }

// Name implements Task.
func (t Induction) Name() string {
	if t.Unseen > 0 {
		return "induction-unseen"
	}
	return "induction"
}

// Vocab implements Task.
func (t Induction) Vocab() int { return t.V }

// SeqLen implements Task.
func (t Induction) SeqLen() int { return 2 * t.N }

// Chance implements Task.
func (t Induction) Chance() float64 { return 1 / float64(t.N-1) }

// DefaultSteps implements Task.
func (Induction) DefaultSteps() int { return 2500 }

// Describe implements Task.
func (t Induction) Describe() string {
	d := fmt.Sprintf("%d distinct tokens of %d, then the same rotated; answer at each second-half position: the token after its earlier copy", t.N, t.V-t.Unseen)
	if t.Unseen > 0 {
		d += fmt.Sprintf("; %d more tokens are never shown in training", t.Unseen)
	}
	return d
}

// AnswerPositions implements Task: the second half.
func (t Induction) AnswerPositions() []int { return span(t.N, 2*t.N-1) }

// Sample implements Task.
func (t Induction) Sample(rng *rand.Rand, tokens, targets []int) {
	t.sample(rng, 0, t.V-t.Unseen, tokens, targets)
}

// HeldBack implements UnseenTask.
func (t Induction) HeldBack() int { return t.Unseen }

// SampleUnseen implements UnseenTask. It panics when the task holds back
// fewer than N tokens, which the registry never does.
func (t Induction) SampleUnseen(rng *rand.Rand, tokens, targets []int) {
	t.sample(rng, t.V-t.Unseen, t.V, tokens, targets)
}

// sample draws the N distinct tokens from ids lo..hi-1.
func (t Induction) sample(rng *rand.Rand, lo, hi int, tokens, targets []int) {
	perm := rng.Perm(hi - lo)[:t.N]
	for i := range perm {
		perm[i] += lo
	}
	r := rng.IntN(t.N)
	noTargets(targets)
	for i := 0; i < t.N; i++ {
		tokens[i] = perm[i]
		tokens[t.N+i] = perm[(i+r)%t.N]
	}
	for i := 0; i < t.N; i++ {
		m := (i + r) % t.N // earlier copy of tokens[N+i]
		targets[t.N+i] = tokens[m+1]
	}
}

// Repeat: a random sequence of N tokens over V, then the same sequence
// again: in order for the copy task, reversed (Reversed) for the reverse
// task. Answer positions are N-1..2N-2, each predicting the next token, a
// copy of the first-half token N positions back, or of its mirror image
// when Reversed. Chance is 1/V.
type Repeat struct {
	N, V     int
	Reversed bool
}

// Name implements Task.
func (t Repeat) Name() string {
	if t.Reversed {
		return "reverse"
	}
	return "copy"
}

// Vocab implements Task.
func (t Repeat) Vocab() int { return t.V }

// SeqLen implements Task.
func (t Repeat) SeqLen() int { return 2 * t.N }

// Chance implements Task.
func (t Repeat) Chance() float64 { return 1 / float64(t.V) }

// DefaultSteps implements Task.
func (t Repeat) DefaultSteps() int {
	if t.Reversed {
		return 2000
	}
	return 1500
}

// Describe implements Task.
func (t Repeat) Describe() string {
	what, then := "tokens", "the same again"
	if t.Reversed {
		what, then = "symbols", "the reverse"
	}
	return fmt.Sprintf("%d random %s of %d, then %s; answers: the next token from position %d on", t.N, what, t.V, then, t.N-1)
}

// AnswerPositions implements Task: N-1..2N-2.
func (t Repeat) AnswerPositions() []int { return span(t.N-1, 2*t.N-2) }

// Sample implements Task.
func (t Repeat) Sample(rng *rand.Rand, tokens, targets []int) {
	noTargets(targets)
	for i := 0; i < t.N; i++ {
		tokens[i] = rng.IntN(t.V)
	}
	for i := 0; i < t.N; i++ {
		from := i
		if t.Reversed {
			from = t.N - 1 - i
		}
		tokens[t.N+i] = tokens[from]
	}
	for i := t.N - 1; i < 2*t.N-1; i++ {
		targets[i] = tokens[i+1]
	}
}

// Majority: N tokens over V symbols with a unique most frequent symbol
// (sequences with a tie are redrawn). The one answer position is the last,
// and the answer is the most frequent symbol. Chance is 1/V.
type Majority struct{ N, V int }

// Name implements Task.
func (Majority) Name() string { return "majority" }

// Vocab implements Task.
func (t Majority) Vocab() int { return t.V }

// SeqLen implements Task.
func (t Majority) SeqLen() int { return t.N }

// Chance implements Task.
func (t Majority) Chance() float64 { return 1 / float64(t.V) }

// DefaultSteps implements Task.
func (Majority) DefaultSteps() int { return 2000 }

// Describe implements Task.
func (t Majority) Describe() string {
	return fmt.Sprintf("%d symbols of %d with a unique most frequent one; answer at the last position: that symbol", t.N, t.V)
}

// AnswerPositions implements Task: the last position.
func (t Majority) AnswerPositions() []int { return []int{t.N - 1} }

// Sample implements Task.
func (t Majority) Sample(rng *rand.Rand, tokens, targets []int) {
	noTargets(targets)
	counts := make([]int, t.V)
	for {
		clear(counts)
		for i := range tokens {
			tokens[i] = rng.IntN(t.V)
			counts[tokens[i]]++
		}
		if best, unique := mode(counts); unique {
			targets[t.N-1] = best
			return
		}
	}
}

// mode returns the index of the largest count and whether it is unique.
func mode(counts []int) (int, bool) {
	best, unique := 0, true
	for i := 1; i < len(counts); i++ {
		switch {
		case counts[i] > counts[best]:
			best, unique = i, true
		case counts[i] == counts[best]:
			unique = false
		}
	}
	return best, unique
}

// RelationTask is a task that declares grammatical relations: for each
// query position of an example, the key position a named relation points
// to. Tasks without relations do not implement it.
type RelationTask interface {
	Task
	// Relations names the declared relations, in a fixed order.
	Relations() []string
	// Relate writes, for every position i of one example's tokens, the
	// position relation r (an index into Relations) points to from i, or
	// NoTarget where i is not a query of r. keys has the length of tokens.
	Relate(r int, tokens, keys []int)
}

// Relations lists t's declared relations; nil when it declares none.
func Relations(t Task) []string {
	if r, ok := t.(RelationTask); ok {
		return r.Relations()
	}
	return nil
}

// RelationIndex is the index of relation name among t's declared
// relations, or an error naming those it declares.
func RelationIndex(t Task, name string) (int, error) {
	rels := Relations(t)
	for i, r := range rels {
		if r == name {
			return i, nil
		}
	}
	if len(rels) == 0 {
		return 0, fmt.Errorf("task %s declares no relations, so it has no %q", t.Name(), name)
	}
	return 0, fmt.Errorf("task %s declares no relation %q (it declares: %s)", t.Name(), name, strings.Join(rels, ", "))
}

// KindTask is a task whose examples fall into named kinds that accuracy
// is reported on separately (agreement: with and without an attractor).
type KindTask interface {
	Task
	// Kinds names the kinds, in a fixed order.
	Kinds() []string
	// Kind is the index into Kinds of one example, from its tokens.
	Kind(tokens []int) int
}

// TokenName is how pictures and tables show token id of task t: the
// name vocab.txt gives it for a task read from a folder that has one,
// else TokenLabel.
func TokenName(t Task, id int) string {
	if d, ok := t.(*Data); ok && id >= 0 && id < len(d.names) {
		return d.names[id]
	}
	return TokenLabel(id)
}

// TokenLabel is how pictures and tables show token id: letters A..Z for the
// first 26 ids, numbers after.
func TokenLabel(id int) string {
	if id >= 0 && id < 26 {
		return string(rune('A' + id))
	}
	return fmt.Sprint(id)
}
