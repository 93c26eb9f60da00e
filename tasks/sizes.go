package tasks

import "fmt"

// The largest sizes any task takes (--seq-len, --vocab): bounds that
// keep a typo from asking for a model no machine holds.
const (
	MaxSeqLen = 1024
	MaxVocab  = 1 << 16
)

// Sizes are a task's sequence length T and vocabulary V; a zero field
// is the task's default.
type Sizes struct {
	SeqLen int
	Vocab  int
}

// resizer is a task that can be made at sizes other than its default.
type resizer interface {
	Task
	// sizes says in words which sequence lengths and vocabularies the
	// task takes (docs/tasks.md's table says the same).
	sizes() string
	// resize is the task at T and V, or an error naming what it takes.
	resize(T, V int) (Task, error)
}

// Make returns the named task at sizes s, zero fields taking the task's
// default; the defaults give the task New returns, bit for bit. A size
// the task cannot take is an error naming the values it takes.
func Make(name string, s Sizes) (Task, error) {
	t, err := New(name)
	if err != nil {
		return nil, err
	}
	return Resize(t, s)
}

// Resize is t at sizes s (zero fields: t's own).
func Resize(t Task, s Sizes) (Task, error) {
	if s.SeqLen == 0 {
		s.SeqLen = t.SeqLen()
	}
	if s.Vocab == 0 {
		s.Vocab = t.Vocab()
	}
	if s.SeqLen == t.SeqLen() && s.Vocab == t.Vocab() {
		return t, nil
	}
	r, ok := t.(resizer)
	if !ok || s.SeqLen < 0 || s.SeqLen > MaxSeqLen || s.Vocab < 0 || s.Vocab > MaxVocab {
		return nil, sizeError(t.Name(), SizesAccepted(t), s.SeqLen, s.Vocab)
	}
	return r.resize(s.SeqLen, s.Vocab)
}

// SizesAccepted says which --seq-len and --vocab t takes.
func SizesAccepted(t Task) string {
	if r, ok := t.(resizer); ok {
		return r.sizes()
	}
	return fmt.Sprintf("only --seq-len %d --vocab %d", t.SeqLen(), t.Vocab())
}

// sizeError is the refusal of sizes T, V by task name, which takes what
// sizes says.
func sizeError(name, sizes string, T, V int) error {
	return fmt.Errorf("task %s takes %s; got --seq-len %d --vocab %d", name, sizes, T, V)
}

// sizes implements resizer.
func (t Induction) sizes() string {
	if t.Unseen > 0 {
		return fmt.Sprintf("an even --seq-len T in 4..%d and --vocab in T..%d (half the sequence's worth of tokens are held back)", MaxSeqLen, MaxVocab)
	}
	return fmt.Sprintf("an even --seq-len T in 4..%d and --vocab in T/2..%d", MaxSeqLen, MaxVocab)
}

// resize implements resizer: N = T/2 distinct tokens; induction-unseen
// holds N tokens back, so that its unseen split can be drawn.
func (t Induction) resize(T, V int) (Task, error) {
	n := Induction{N: T / 2, V: V}
	if t.Unseen > 0 {
		n.Unseen = n.N
	}
	if T%2 != 0 || T < 4 || V-n.Unseen < n.N {
		return nil, sizeError(t.Name(), t.sizes(), T, V)
	}
	return n, nil
}

// sizes implements resizer.
func (t Repeat) sizes() string {
	return fmt.Sprintf("an even --seq-len in 2..%d and --vocab in 2..%d", MaxSeqLen, MaxVocab)
}

// resize implements resizer: N = T/2 tokens, then their copy.
func (t Repeat) resize(T, V int) (Task, error) {
	if T%2 != 0 || T < 2 || V < 2 {
		return nil, sizeError(t.Name(), t.sizes(), T, V)
	}
	return Repeat{N: T / 2, V: V, Reversed: t.Reversed}, nil
}

// sizes implements resizer.
func (t Majority) sizes() string {
	return fmt.Sprintf("--seq-len T in 3..%d and --vocab in 2..T (more symbols than positions rarely have a unique most frequent one)", MaxSeqLen)
}

// resize implements resizer.
func (t Majority) resize(T, V int) (Task, error) {
	if T < 3 || V < 2 || V > T {
		return nil, sizeError(t.Name(), t.sizes(), T, V)
	}
	return Majority{N: T, V: V}, nil
}
