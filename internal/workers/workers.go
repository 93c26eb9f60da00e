// Package workers is the one worker pool of headlab's long commands
// (train --seeds, sweep, reproduce): a fixed number of goroutines, each
// taking jobs from one shared source until it runs dry.
package workers

import (
	"iter"
	"sync"
	"sync/atomic"
)

// Run starts n workers and returns when every one has returned. Each is
// work, ranging over the jobs next hands out: each job goes to one
// worker, and a worker's sequence ends when next reports none left. A
// worker that stops early (it could not open its device) leaves the rest
// to the others. next is called from every worker, so it must be safe
// for concurrent use (Indices is).
func Run[J any](n int, next func() (J, bool), work func(jobs iter.Seq[J])) {
	jobs := func(yield func(J) bool) {
		for {
			j, ok := next()
			if !ok || !yield(j) {
				return
			}
		}
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { work(jobs) })
	}
	wg.Wait()
}

// Indices hands out 0, 1, ..., n-1, each once and in that order: the
// jobs of a list.
func Indices(n int) func() (int, bool) {
	var taken atomic.Int64
	return func() (int, bool) {
		i := int(taken.Add(1) - 1)
		return i, i < n
	}
}

// Each calls do(i) for every i in 0..n-1 on at most par workers at once
// (at least one) and returns when every call has returned.
func Each(n, par int, do func(i int)) {
	Run(max(1, min(par, n)), Indices(n), func(jobs iter.Seq[int]) {
		for i := range jobs {
			do(i)
		}
	})
}
