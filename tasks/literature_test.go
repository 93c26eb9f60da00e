package tasks

import (
	"slices"
	"strings"
	"testing"
)

// TestModAdd: every example is `a + b =` with the answer (a+b) mod p at
// `=`; the training stream holds training pairs only and the held-out
// stream the others, and about 30% of the pairs are training pairs.
func TestModAdd(t *testing.T) {
	task, err := Make("modular-addition", Sizes{Vocab: 25})
	if err != nil {
		t.Fatal(err)
	}
	m := task.(ModAdd)
	if m.P != 23 || task.SeqLen() != 4 {
		t.Fatalf("--vocab 25 gives %+v", m)
	}
	train := 0
	for k := range m.P * m.P {
		if m.Training(k/m.P, k%m.P) {
			train++
		}
	}
	if f := float64(train) / float64(m.P*m.P); f < 0.2 || f > 0.4 {
		t.Errorf("%d of %d pairs train (%.2f), want about 30%%", train, m.P*m.P, f)
	}
	for _, split := range []Split{Train, HeldOut} {
		b := NewStream(task, 3, split).Next(400)
		seen := map[[2]int]bool{}
		for e := range b.N {
			x, y := b.Tokens[e*4:e*4+4], b.Targets[e*4:e*4+4]
			a, c := x[0], x[2]
			if x[1] != m.P || x[3] != m.P+1 || a >= m.P || c >= m.P || y[3] != (a+c)%m.P || y[0] != NoTarget || y[1] != NoTarget || y[2] != NoTarget {
				t.Fatalf("split %d: example %v targets %v", split, x, y)
			}
			if m.Training(a, c) != (split == Train) {
				t.Fatalf("split %d drew pair (%d, %d), a training pair: %v", split, a, c, m.Training(a, c))
			}
			seen[[2]int{a, c}] = true
		}
		if len(seen) < 50 {
			t.Errorf("split %d: only %d distinct pairs in 400 draws", split, len(seen))
		}
	}
}

// TestSort: the input, the separator, then the input sorted; the answer
// at the separator and every sorted position but the last is the next
// token.
func TestSort(t *testing.T) {
	task, err := Make("sort", Sizes{SeqLen: 11, Vocab: 6})
	if err != nil {
		t.Fatal(err)
	}
	b := NewStream(task, 1, Train).Next(200)
	for e := range b.N {
		x, y := b.Tokens[e*11:(e+1)*11], b.Targets[e*11:(e+1)*11]
		in := slices.Clone(x[:5])
		slices.Sort(in)
		if x[5] != 5 || !slices.Equal(x[6:], in) || slices.Contains(x[:5], 5) {
			t.Fatalf("example %v is not input, separator 5, sorted input", x)
		}
		for i, v := range y {
			if want := map[bool]int{true: x[min(i+1, 10)], false: NoTarget}[i >= 5 && i < 10]; v != want {
				t.Fatalf("example %v: target at %d is %d, want %d", x, i, v, want)
			}
		}
	}
}

// TestHistogram: the answer at every position is the count of its token
// so far, as count token L+count-1; letters are below L.
func TestHistogram(t *testing.T) {
	task, err := Make("histogram", Sizes{SeqLen: 12, Vocab: 15})
	if err != nil {
		t.Fatal(err)
	}
	h := task.(Histogram)
	if h.L != 3 {
		t.Fatalf("--seq-len 12 --vocab 15 gives %+v", h)
	}
	b := NewStream(task, 2, HeldOut).Next(100)
	for e := range b.N {
		x, y := b.Tokens[e*12:(e+1)*12], b.Targets[e*12:(e+1)*12]
		counts := map[int]int{}
		for i, v := range x {
			counts[v]++
			if v >= 3 || y[i] != 3+counts[v]-1 {
				t.Fatalf("example %v: target %d at %d", x, y[i], i)
			}
		}
	}
	// Three letters: position 0's count is 1 always, position 1's is 1
	// with probability 2/3.
	if c := (Histogram{T: 2, L: 3}).Chance(); c < 0.8333 || c > 0.8334 {
		t.Errorf("chance of two positions over three letters %v, want 5/6", c)
	}
}

// TestSizes: every task at sizes it takes makes examples of that length
// over that vocabulary, with answers where it declares them; the
// defaults give the registered task itself; a size a task cannot take
// is refused in one line that names what it takes.
func TestSizes(t *testing.T) {
	for _, name := range Names() {
		def, _ := New(name)
		if same, err := Make(name, Sizes{}); err != nil || same != def {
			t.Errorf("%s at sizes 0: %v, %v", name, same, err)
		}
		if same, err := Make(name, Sizes{SeqLen: def.SeqLen(), Vocab: def.Vocab()}); err != nil || same != def {
			t.Errorf("%s at its own sizes: %v, %v", name, same, err)
		}
	}
	for _, c := range []struct {
		name string
		T, V int
	}{
		{"induction", 32, 64}, {"induction", 4, 2}, {"induction-unseen", 20, 20}, {"copy", 40, 3}, {"reverse", 2, 2},
		{"majority", 9, 9}, {"agreement", 24, 20}, {"modular-addition", 4, 7}, {"sort", 3, 3}, {"histogram", 30, 40},
	} {
		task, err := Make(c.name, Sizes{SeqLen: c.T, Vocab: c.V})
		if err != nil {
			t.Errorf("%s T=%d V=%d: %v", c.name, c.T, c.V, err)
			continue
		}
		if task.SeqLen() != c.T || task.Vocab() != c.V {
			t.Errorf("%s T=%d V=%d made T=%d V=%d", c.name, c.T, c.V, task.SeqLen(), task.Vocab())
		}
		answers := task.AnswerPositions()
		for _, split := range []Split{Train, HeldOut, Unseen} {
			b := NewStream(task, 7, split).Next(300)
			for i, v := range b.Tokens {
				if v < 0 || v >= c.V || b.Targets[i] >= c.V || b.Targets[i] < NoTarget {
					t.Fatalf("%s T=%d V=%d: token %d, target %d", c.name, c.T, c.V, v, b.Targets[i])
				}
				if b.Targets[i] != NoTarget && !slices.Contains(answers, i%c.T) {
					t.Fatalf("%s T=%d V=%d: an answer at %d, not declared in %v", c.name, c.T, c.V, i%c.T, answers)
				}
			}
			if b.Answers() == 0 {
				t.Errorf("%s T=%d V=%d: no answers", c.name, c.T, c.V)
			}
		}
	}
	for _, c := range []struct {
		name string
		T, V int
		want string
	}{
		{"induction", 15, 16, "even --seq-len T in 4..1024"},
		{"induction", 16, 7, "--vocab in T/2.."},
		{"induction-unseen", 16, 15, "--vocab in T.."},
		{"copy", 1024 + 2, 16, "even --seq-len in 2..1024"},
		{"majority", 15, 16, "--vocab in 2..T"},
		{"agreement", 15, 20, "--seq-len in 16..1024"},
		{"agreement", 16, 21, "only --vocab 20"},
		{"modular-addition", 5, 115, "only --seq-len 4"},
		{"modular-addition", 4, 1003, "modulus P in 5..1000"},
		{"sort", 16, 17, "odd --seq-len"},
		{"histogram", 10, 11, "--vocab in T+2.."},
		{"copy", 16, -1, "--vocab in 2..65536"},
	} {
		_, err := Make(c.name, Sizes{SeqLen: c.T, Vocab: c.V})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s T=%d V=%d: %v, want a line with %q", c.name, c.T, c.V, err, c.want)
		}
	}
}
