package sweep

import (
	"fmt"
	"runtime"

	"headlab/kernels"
	"headlab/train"
)

// Layout is how a run of pairs uses a device: Workers groups train at
// once, each on a goroutine of its own (internal/workers), and a group
// holds at most Group pairs of one shape. It is the one group-size
// policy of train --seeds, sweep and reproduce.
type Layout struct {
	Workers, Group int
	// Host is whether the device computes on the host (kernels.Host: the
	// CPU), whose groups compute in parallel on its cores, sharing it.
	Host bool
	// asked is whether Group was asked for, to be checked by Fit.
	asked bool
}

// Ask is what a command asks of a layout; 0 takes the default.
type Ask struct {
	Workers, Group int
	// Spread, on a host device, trains every pair at once in groups
	// spread evenly over the workers (train --seeds), instead of one pair
	// a group.
	Spread bool
}

// NewLayout lays out n pairs on dev as ask says, before the device is
// asked what fits (Fit). By default a host device has every CPU a worker
// and one pair a group: a group there runs seed by seed, and a seed-step
// costs what a lone model's does (docs/performance.md, "Groups on the
// CPU"), so groups buy no speed there and a pair a worker, whose runs
// finish one by one, is the default; with Spread, ceil(n / workers) pairs a group, at most
// train.MaxGroup. Another device has one worker, and groups of as many
// pairs as fit (Group 0 until Fit).
func NewLayout(dev kernels.Device, n int, ask Ask) Layout {
	_, host := dev.(kernels.Host)
	l := Layout{Workers: ask.Workers, Group: ask.Group, Host: host, asked: ask.Group > 0}
	if l.Workers == 0 {
		l.Workers = 1
		if host {
			l.Workers = runtime.NumCPU()
		}
	}
	if l.Group == 0 && host {
		l.Group = 1
		if ask.Spread {
			par := max(1, min(l.Workers, n))
			l.Group = min((n+par-1)/par, train.MaxGroup)
		}
	}
	return l
}

// Models is how many models the layout holds at once, at the least, for
// n pairs: every worker's group on a host device (at most n), one group
// on another (a group not sized yet counted as one model).
func (l Layout) Models(n int) int {
	group := max(l.Group, 1)
	if !l.Host {
		return group
	}
	return max(1, min(l.Workers*group, n))
}

// Sharing is how many workers may compute at once on one device that
// they share (train --seeds' groups, reproduce's extra runs): every
// worker on a host device, one elsewhere, where groups take turns.
func (l Layout) Sharing() int {
	if l.Host {
		return l.Workers
	}
	return 1
}

// TooLarge is Fit's refusal of a group size asked for: more than fit.
type TooLarge struct {
	Asked, Limit int
	Why          string // what bounds the limit (GroupLimit)
}

func (e *TooLarge) Error() string {
	return fmt.Sprintf("a group of %d: at most %d fit (%s)", e.Asked, e.Limit, e.Why)
}

// Fit sizes the layout's groups for pairs on dev, each model with the
// probed evaluation graph too when probed (Analysis.Probed), by
// GroupLimit, which builds one model of each shape: a group asked for is
// refused (*TooLarge) when more than fit; a group not sized yet becomes
// the limit, and note then says in one line when that splits a
// configuration's seeds, and why. A host device's default group is left
// as it is and the device not asked.
func (l *Layout) Fit(dev kernels.Device, pairs []Pair, probed bool) (note string, err error) {
	if l.Group > 0 && !l.asked {
		return "", nil
	}
	limit, why, split, err := GroupLimit(dev, pairs, probed)
	if err != nil {
		return "", err
	}
	if l.asked {
		if l.Group > limit {
			return "", &TooLarge{Asked: l.Group, Limit: limit, Why: why}
		}
		return "", nil
	}
	l.Group = limit
	if split {
		note = fmt.Sprintf("training in groups of %d models: %s", limit, why)
	}
	return note, nil
}
