package tasks

import (
	"slices"
	"testing"
)

func batchOf(t *testing.T, name string, n int) (Task, *Batch) {
	t.Helper()
	task, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	return task, NewStream(task, 1, Train).Next(n)
}

func TestInduction(t *testing.T) {
	task, b := batchOf(t, "induction", 500)
	n := task.SeqLen() / 2
	offsets := map[int]bool{}
	for e := 0; e < b.N; e++ {
		tok, tgt := b.Tokens[e*b.T:(e+1)*b.T], b.Targets[e*b.T:(e+1)*b.T]
		seen := map[int]bool{}
		for i := 0; i < n; i++ {
			if seen[tok[i]] {
				t.Fatalf("example %d: first half repeats token %d", e, tok[i])
			}
			seen[tok[i]] = true
			if tgt[i] != NoTarget {
				t.Fatalf("example %d: first-half position %d has a target", e, i)
			}
		}
		for i := n; i < 2*n; i++ {
			// Exactly one earlier copy, and the answer is what followed it.
			copies := 0
			m := -1
			for j := 0; j < i; j++ {
				if tok[j] == tok[i] {
					copies++
					m = j
				}
			}
			if copies != 1 {
				t.Fatalf("example %d position %d: %d earlier copies", e, i, copies)
			}
			if tgt[i] != tok[m+1] {
				t.Fatalf("example %d position %d: target %d, token after earlier copy %d", e, i, tgt[i], tok[m+1])
			}
			offsets[i-(m+1)] = true
		}
	}
	if len(offsets) < n {
		t.Fatalf("answers sit at only %d distinct offsets: a fixed offset could give them", len(offsets))
	}
}

func TestCopyAndReverse(t *testing.T) {
	for _, name := range []string{"copy", "reverse"} {
		task, b := batchOf(t, name, 200)
		n := task.SeqLen() / 2
		for e := 0; e < b.N; e++ {
			tok, tgt := b.Tokens[e*b.T:(e+1)*b.T], b.Targets[e*b.T:(e+1)*b.T]
			for i := 0; i < n; i++ {
				want := tok[i]
				if name == "reverse" {
					want = tok[n-1-i]
				}
				if tok[n+i] != want {
					t.Fatalf("%s example %d: second half %v does not follow first half", name, e, tok)
				}
			}
			for i, y := range tgt {
				answer := i >= n-1 && i < 2*n-1
				if answer != (y != NoTarget) || (answer && y != tok[i+1]) {
					t.Fatalf("%s example %d position %d: target %d", name, e, i, y)
				}
			}
		}
	}
	if task, _ := New("reverse"); task.Vocab() != 6 || task.Chance() != 1.0/6 {
		t.Fatalf("reverse: vocabulary %d, chance %v; want 6 symbols, chance 1/6", task.Vocab(), task.Chance())
	}
}

func TestMajority(t *testing.T) {
	task, b := batchOf(t, "majority", 300)
	for e := 0; e < b.N; e++ {
		tok, tgt := b.Tokens[e*b.T:(e+1)*b.T], b.Targets[e*b.T:(e+1)*b.T]
		counts := make([]int, task.Vocab())
		for _, x := range tok {
			counts[x]++
		}
		best := slices.Max(counts)
		for i, y := range tgt {
			if i < b.T-1 && y != NoTarget {
				t.Fatalf("example %d: target before the last position", e)
			}
		}
		if counts[tgt[b.T-1]] != best {
			t.Fatalf("example %d: answer %d is not the most frequent of %v", e, tgt[b.T-1], counts)
		}
		n := 0
		for _, c := range counts {
			if c == best {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("example %d: tied majority %v", e, counts)
		}
	}
}

func TestStreamsDeterministicAndSeparate(t *testing.T) {
	for _, name := range Names() {
		task, _ := New(name)
		a := NewStream(task, 3, Train).Next(64)
		b := NewStream(task, 3, Train).Next(64)
		h := NewStream(task, 3, HeldOut).Next(64)
		o := NewStream(task, 4, Train).Next(64)
		if !slices.Equal(a.Tokens, b.Tokens) || !slices.Equal(a.Targets, b.Targets) {
			t.Fatalf("%s: same seed and split gave different batches", name)
		}
		if slices.Equal(a.Tokens, h.Tokens) {
			t.Fatalf("%s: training and held-out streams are the same", name)
		}
		if slices.Equal(a.Tokens, o.Tokens) {
			t.Fatalf("%s: seeds 3 and 4 gave the same batch", name)
		}
		for _, x := range a.Tokens {
			if x < 0 || x >= task.Vocab() {
				t.Fatalf("%s: token %d outside vocabulary %d", name, x, task.Vocab())
			}
		}
		if a.Answers() == 0 {
			t.Fatalf("%s: no answer positions", name)
		}
	}
}

func TestUnknownTask(t *testing.T) {
	if _, err := New("nope"); err == nil {
		t.Fatal("unknown task accepted")
	}
}

func TestInductionUnseen(t *testing.T) {
	task, err := New("induction-unseen")
	if err != nil {
		t.Fatal(err)
	}
	if !HasUnseen(task) {
		t.Fatal("induction-unseen holds nothing back")
	}
	if plain, _ := New("induction"); HasUnseen(plain) {
		t.Fatal("plain induction claims held-back tokens")
	}
	held := task.(UnseenTask).HeldBack()
	lo := task.Vocab() - held
	for _, split := range []Split{Train, HeldOut} {
		b := NewStream(task, 1, split).Next(300)
		for _, x := range b.Tokens {
			if x >= lo {
				t.Fatalf("split %d shows held-back token %d", split, x)
			}
		}
	}
	b := NewStream(task, 1, Unseen).Next(100)
	for e := 0; e < b.N; e++ {
		tok, tgt := b.Tokens[e*b.T:(e+1)*b.T], b.Targets[e*b.T:(e+1)*b.T]
		for i, x := range tok {
			if x < lo {
				t.Fatalf("unseen example uses seen token %d", x)
			}
			if tgt[i] != NoTarget && tgt[i] < lo {
				t.Fatalf("unseen example has seen target %d", tgt[i])
			}
		}
	}
}

// Every task's declared answer positions are exactly those its examples
// use, in every split: a position left out would silently drop answers
// from a training step (graph.BuildTrain reads only these rows), and one
// too many would only cost time, but says the declaration is wrong.
func TestAnswerPositionsAreThoseUsed(t *testing.T) {
	for _, name := range Names() {
		task, _ := New(name)
		want := task.AnswerPositions()
		if !slices.IsSorted(want) || len(slices.Compact(slices.Clone(want))) != len(want) ||
			len(want) == 0 || want[0] < 0 || want[len(want)-1] >= task.SeqLen() {
			t.Errorf("%s: answer positions %v are not ascending distinct positions of 0..%d", name, want, task.SeqLen()-1)
			continue
		}
		splits := []Split{Train, HeldOut}
		if HasUnseen(task) {
			splits = append(splits, Unseen)
		}
		for _, sp := range splits {
			b := NewStream(task, 3, sp).Next(4000)
			used := map[int]bool{}
			for i, tg := range b.Targets {
				if tg != NoTarget {
					used[i%b.T] = true
				}
			}
			var got []int
			for p := range b.T {
				if used[p] {
					got = append(got, p)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s split %v: answers fall at %v, the task declares %v", name, sp, got, want)
			}
		}
	}
}
