package sweep

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"headlab/internal/progress"
	"headlab/internal/workers"
	"headlab/kernels"
	"headlab/train"
)

// Seeds is train --seeds: every seed of one configuration trained at
// once, in groups on one device.
type Seeds struct {
	Config train.Config
	Seeds  []uint64
	// Group is the models of a group (0: as Layout says, the seeds
	// spread over the cores).
	Group int
	// Every is the steps between progress lines on Stderr (0: none).
	Every  int
	Stderr io.Writer
}

// SeedsResult is what TrainSeeds trained: a record per seed, the time it
// took and the groups' size.
type SeedsResult struct {
	Records []Record
	Seconds float64
	Group   int
}

// TrainSeeds trains every seed of s on pl's device, in groups laid out
// as LayOut says (every seed at once), the groups sharing the device: on
// the host all at once, elsewhere in turn.
func TrainSeeds(s Seeds, pl Platform) (SeedsResult, error) {
	c := s.Config
	pairs := Pairs([]train.Config{c}, s.Seeds)
	lay, err := LayOut(s.Stderr, pl.Device, pairs, Ask{Group: s.Group, Spread: true}, false)
	if err != nil {
		return SeedsResult{}, err
	}
	groups := Groups(pairs, lay.Group)
	outs := make([][]*Outcome, len(groups))
	errs := make([]error, len(groups))
	start := time.Now()
	bar := progress.New(s.Stderr, "train", "seed-steps", len(pairs)*c.Steps)
	var mu sync.Mutex                // guards done
	done := make([]int, len(groups)) // seed-steps each group has trained
	workers.Each(len(groups), lay.Sharing(), func(i int) {
		g := groups[i]
		h := GroupHooks{}
		if s.Every > 0 {
			h.Every = s.Every
			h.Progress = func(step, _ int, losses []float64) {
				mean := 0.0
				for _, l := range losses {
					mean += l / float64(len(losses))
				}
				mu.Lock()
				done[i] = step * len(losses)
				sum := 0
				for _, d := range done {
					sum += d
				}
				mu.Unlock()
				bar.Update(sum, fmt.Sprintf("seeds %d-%d at step %d, mean loss %.4f", g[0].Index+1, g[len(g)-1].Index+1, step, mean))
			}
		}
		outs[i], errs[i] = RunGroup(g, pl, Analysis{}, h)
	})
	bar.Finish()
	res := SeedsResult{Seconds: time.Since(start).Seconds(), Group: lay.Group}
	for i := range groups {
		if errs[i] != nil {
			return res, errs[i]
		}
		for _, out := range outs[i] {
			res.Records = append(res.Records, out.Record)
		}
	}
	return res, nil
}

// WriteSeeds writes a line per seed: its accuracy, loss and heads, or
// why it failed.
func WriteSeeds(w io.Writer, recs []Record) {
	for _, r := range recs {
		if r.Status != StatusOK {
			fmt.Fprintf(w, "seed %d  FAILED: %s\n", r.Config.Seed, r.Error)
			continue
		}
		var heads []string
		for _, h := range r.Heads {
			heads = append(heads, h.Name+" "+h.Title())
		}
		fmt.Fprintf(w, "seed %d  accuracy %.4f (chance %.4f)  loss %.4f  heads: %s\n",
			r.Config.Seed, r.Accuracy, r.Chance, r.Loss, strings.Join(heads, "; "))
	}
}

// EachShown runs do(0) ... do(n-1) on dev, par at once (a layout's
// Sharing), with a progress bar on stderr named name (unless quiet),
// counted in unit and described by note. It returns every error do
// returned.
func EachShown(stderr io.Writer, name string, n int, dev kernels.Device, par int, quiet bool, unit, note string, do func(i int, d kernels.Device) error) error {
	if n == 0 {
		return nil
	}
	errs := make([]error, n)
	var bar *progress.Bar
	var done atomic.Int64
	if !quiet {
		bar = progress.New(stderr, name, unit, n)
		bar.Update(0, note)
	}
	workers.Each(n, par, func(i int) {
		errs[i] = do(i, dev)
		if bar != nil {
			bar.Update(int(done.Add(1)), note)
		}
	})
	if bar != nil {
		bar.Finish()
	}
	return errors.Join(errs...)
}

// Write is train --seeds' text of r: a line per seed on w (WriteSeeds),
// and one line on stderr saying what trained where (device).
func (r SeedsResult) Write(w, stderr io.Writer, device string) {
	WriteSeeds(w, r.Records)
	fmt.Fprintf(stderr, "trained %d seeds in %.1f s on %s, groups of up to %d\n", len(r.Records), r.Seconds, device, r.Group)
}
