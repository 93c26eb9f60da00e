package workers

import (
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEachDoesEveryJobOnce: every index is done exactly once, and no
// more than par at a time.
func TestEachDoesEveryJobOnce(t *testing.T) {
	for _, c := range []struct{ n, par int }{{0, 4}, {1, 4}, {7, 1}, {7, 3}, {100, 8}, {3, 0}} {
		done := make([]atomic.Int32, c.n)
		var running, most atomic.Int32
		Each(c.n, c.par, func(i int) {
			r := running.Add(1)
			for m := most.Load(); r > m && !most.CompareAndSwap(m, r); m = most.Load() {
			}
			time.Sleep(time.Millisecond)
			done[i].Add(1)
			running.Add(-1)
		})
		for i := range done {
			if got := done[i].Load(); got != 1 {
				t.Errorf("n %d par %d: job %d done %d times", c.n, c.par, i, got)
			}
		}
		if want := int32(max(1, min(c.par, c.n))); c.n > 0 && most.Load() > want {
			t.Errorf("n %d par %d: %d jobs at once, want at most %d", c.n, c.par, most.Load(), want)
		}
	}
}

// TestRunSharesOneSource: the workers split one source between them,
// each job to one worker; a worker that stops at once leaves its share
// to the others, and each worker's setup runs once.
func TestRunSharesOneSource(t *testing.T) {
	var mu sync.Mutex
	var got []int
	var started atomic.Int32
	Run(4, Indices(50), func(jobs iter.Seq[int]) {
		if started.Add(1) == 1 {
			return // this worker could not start: the others do its jobs
		}
		for j := range jobs {
			mu.Lock()
			got = append(got, j)
			mu.Unlock()
		}
	})
	slices.Sort(got)
	if want := slices.Collect(func(yield func(int) bool) {
		for i := range 50 {
			if !yield(i) {
				return
			}
		}
	}); !slices.Equal(got, want) || started.Load() != 4 {
		t.Errorf("jobs done %v by %d workers, want 0..49 by 4", got, started.Load())
	}
}

// TestIndicesInOrder: one worker takes the jobs in order, then none.
func TestIndicesInOrder(t *testing.T) {
	next := Indices(3)
	for want := range 3 {
		if i, ok := next(); !ok || i != want {
			t.Fatalf("job %d, %v; want %d", i, ok, want)
		}
	}
	if _, ok := next(); ok {
		t.Fatal("a fourth job of three")
	}
}
