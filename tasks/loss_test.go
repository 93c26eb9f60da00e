package tasks

import (
	"slices"
	"testing"
)

// Under next-token every position but the last has a target: the answer
// where there is one, else the next token; the last has one only as an
// answer. Under answers the targets are the task's own. The positions
// that carry a target are exactly LossPositions.
func TestLossTargets(t *testing.T) {
	for _, name := range Names() {
		task, _ := New(name)
		b := NewStream(task, 5, Train).Next(500)
		for _, loss := range Losses() {
			got := make([]int, len(b.Targets))
			LossTargets(loss, b, got)
			used := map[int]bool{}
			for i, y := range got {
				p, answer := i%b.T, b.Targets[i]
				switch {
				case answer != NoTarget && y != answer:
					t.Fatalf("%s %s: position %d's target %d, its answer is %d", name, loss, p, y, answer)
				case answer == NoTarget && loss == Answers && y != NoTarget:
					t.Fatalf("%s %s: position %d is not an answer but has target %d", name, loss, p, y)
				case answer == NoTarget && loss == NextToken && p < b.T-1 && y != b.Tokens[i+1]:
					t.Fatalf("%s %s: position %d's target %d, the next token is %d", name, loss, p, y, b.Tokens[i+1])
				case answer == NoTarget && p == b.T-1 && y != NoTarget:
					t.Fatalf("%s %s: the last position has target %d and no answer", name, loss, y)
				}
				if y != NoTarget {
					used[p] = true
				}
			}
			var positions []int
			for p := range b.T {
				if used[p] {
					positions = append(positions, p)
				}
			}
			if want := LossPositions(task, loss); !slices.Equal(positions, want) {
				t.Errorf("%s %s: targets fall at %v, LossPositions says %v", name, loss, positions, want)
			}
		}
	}
}

func TestCheckLoss(t *testing.T) {
	for _, l := range Losses() {
		if err := CheckLoss(l); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"", "next_token", "Answers", "all"} {
		if err := CheckLoss(bad); err == nil {
			t.Fatalf("CheckLoss(%q) accepted it", bad)
		}
	}
	if Losses()[0] != NextToken {
		t.Fatalf("the default loss is %s, want %s", Losses()[0], NextToken)
	}
}

// A finite training set yields only examples of the first n the Train
// stream draws, deterministically, picking among all of them, with
// repeats; held-out examples are untouched by it.
func TestTrainingSet(t *testing.T) {
	task, _ := New("induction")
	const n = 40
	set := NewStream(task, 9, Train).Next(n)
	inSet := map[string]bool{}
	for e := 0; e < n; e++ {
		inSet[exampleKey(set, e)] = true
	}
	a := NewTrainingSet(task, 9, n).Next(2000)
	b := NewTrainingSet(task, 9, n).Next(2000)
	if !slices.Equal(a.Tokens, b.Tokens) || !slices.Equal(a.Targets, b.Targets) {
		t.Fatal("the same seed and size gave different batches")
	}
	seen := map[string]bool{}
	for e := 0; e < a.N; e++ {
		k := exampleKey(a, e)
		if !inSet[k] {
			t.Fatalf("example %d is not one of the %d drawn", e, n)
		}
		seen[k] = true
	}
	if len(seen) != n {
		t.Fatalf("2000 picks saw %d of the %d examples", len(seen), n)
	}
	other := NewTrainingSet(task, 10, n).Next(1)
	if inSet[exampleKey(other, 0)] {
		t.Fatal("seed 10's training set shares an example with seed 9's")
	}
}

func exampleKey(b *Batch, e int) string {
	s := make([]rune, 0, 2*b.T)
	for _, x := range b.Tokens[e*b.T : (e+1)*b.T] {
		s = append(s, rune(x+1))
	}
	for _, x := range b.Targets[e*b.T : (e+1)*b.T] {
		s = append(s, rune(x+1))
	}
	return string(s)
}
