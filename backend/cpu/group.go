package cpu

import "headlab/kernels"

// A group's device runs a step seed by seed. train.Group calls each
// kernel once for all S seeds, and a Device from New runs it at once
// over every seed in turn: at S = 64 each kernel then streams 64 seeds'
// activations through the caches before the next kernel reads the first
// seed's again, and a seed-step costs about 1.6 times a lone model's on
// one core (docs/performance.md). A group's device queues the kernels
// instead (the divergence mark among them), and when the host next touches
// its tensors (Upload, Download, Sync, a Buffer's Data), or Adam ends a
// step, runs every queued kernel on seed 0, then on seed 1, and so on
// (Adam last): each seed's step runs as a lone model's does, its
// activations in the caches, and its update reads its gradients while
// they are there. Being SeedSerial,
// it also lets a step's intermediates be one buffer every seed uses in
// turn (graph's executor allocates them with kernels.Arena.Scratch), so
// the group's seeds work in the same memory a lone model does. Every
// kernel computes each seed alone, so the bits are the same in either
// order.

// seeds is a window of seeds, lo to hi-1.
type seeds struct{ lo, hi int }

// every is the window of all S seeds.
func every(S int) seeds { return seeds{0, S} }

// queue is a group's device's kernels waiting to run, each on a window of
// seeds, and the first error of a run whose caller could not take it.
type queue struct {
	S     int
	calls []func(seeds) error
	err   error
}

// Group implements kernels.Host: a device for one train.Group's kernels,
// on one goroutine, that queues kernels of more than one seed and runs
// them seed by seed. It counts on d's counters.
func (d *Device) Group() kernels.Device {
	return withFused(&Device{parent: d.counts(), q: &queue{}})
}

// SeedSerial implements kernels.SeedSerial: a group's device runs its
// queued kernels seed by seed.
func (d *Device) SeedSerial() bool { return d.q != nil }

// queues reports whether a kernel of S seeds is to be queued rather than
// run now. When not, anything queued runs first (keeping the order of
// the calls); a kernel of another S than those queued also runs them
// first.
func (d *Device) queues(S int) bool {
	if d.q == nil {
		return false
	}
	if len(d.q.calls) > 0 && d.q.S != S {
		d.flushKeep()
	}
	if S <= 1 {
		d.flushKeep()
		return false
	}
	d.q.S = S
	return true
}

// later queues a kernel (queues said so).
func (d *Device) later(f func(seeds) error) error {
	d.q.calls = append(d.q.calls, f)
	return nil
}

// flush runs the queued kernels seed by seed and returns the first error,
// of this run or one kept from before.
func (d *Device) flush() error {
	if d.q == nil {
		return nil
	}
	d.flushKeep()
	err := d.q.err
	d.q.err = nil
	return err
}

// flushKeep runs the queued kernels seed by seed, keeping the first error
// for flush to return. A seed stops at its first failing kernel.
func (d *Device) flushKeep() {
	q := d.q
	if q == nil || len(q.calls) == 0 {
		return
	}
	for s := 0; s < q.S; s++ {
		for _, f := range q.calls {
			if err := f(seeds{s, s + 1}); err != nil {
				if q.err == nil {
					q.err = err
				}
				break
			}
		}
	}
	clear(q.calls)
	q.calls = q.calls[:0]
}
