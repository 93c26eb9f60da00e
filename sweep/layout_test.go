package sweep

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
	"headlab/train"
)

// seedPairs is n pairs of c, seeds 1..n.
func seedPairs(c train.Config, n int) []Pair {
	var out []Pair
	for s := 1; s <= n; s++ {
		c.Seed = uint64(s)
		out = append(out, Pair{Key: Key(c), Config: c})
	}
	return out
}

// TestLayoutPolicy: the group-size policy of train --seeds, sweep and
// reproduce, on the CPU (a host device) and on a device with memory of
// its own that holds three models.
func TestLayoutPolicy(t *testing.T) {
	c := train.Defaults("induction")
	largest, _, err := train.Footprint(c, false)
	if err != nil {
		t.Fatal(err)
	}
	gpu := boundedDevice{Device: cpu.New(), floats: 3 * largest}
	why := "the device's largest buffer holds 3 models'"
	// A shape GroupLimit cannot build: a layout that asks the device
	// what fits fails on it.
	broken := c
	broken.Layers = 0
	cpus := runtime.NumCPU()
	for _, tc := range []struct {
		name          string
		gpu           bool
		pairs         []Pair
		ask           Ask
		workers, grp  int
		models, share int
		note, refused string
	}{
		{name: "cpu: every CPU a worker, a pair a group, the device unasked", pairs: seedPairs(broken, 10),
			workers: cpus, grp: 1, models: min(cpus, 10), share: cpus},
		{name: "cpu: workers asked", pairs: seedPairs(c, 10), ask: Ask{Workers: 3},
			workers: 3, grp: 1, models: 3, share: 3},
		{name: "cpu: spread over the workers, every pair at once", pairs: seedPairs(broken, 9), ask: Ask{Workers: 2, Spread: true},
			workers: 2, grp: 5, models: 9, share: 2},
		{name: "cpu: spread, fewer pairs than workers", pairs: seedPairs(c, 3), ask: Ask{Workers: 8, Spread: true},
			workers: 8, grp: 1, models: 3, share: 8},
		{name: "cpu: a group asked for is checked", pairs: seedPairs(c, 4), ask: Ask{Group: 4},
			workers: cpus, grp: 4, models: 4, share: cpus},
		{name: "cpu: more than headlab's cap", pairs: seedPairs(c, 4), ask: Ask{Group: train.MaxGroup + 1},
			refused: "headlab's cap is 1024"},
		{name: "device: one worker, as many as fit, split", gpu: true, pairs: seedPairs(c, 4),
			workers: 1, grp: 3, models: 1, share: 1, note: "training in groups of 3 models: " + why},
		{name: "device: all fit, no note", gpu: true, pairs: seedPairs(c, 3),
			workers: 1, grp: 3, models: 1, share: 1},
		{name: "device: workers asked, each its own device", gpu: true, pairs: seedPairs(c, 2), ask: Ask{Workers: 2},
			workers: 2, grp: 3, models: 1, share: 1},
		{name: "device: spread changes nothing", gpu: true, pairs: seedPairs(c, 4), ask: Ask{Spread: true},
			workers: 1, grp: 3, models: 1, share: 1, note: "training in groups of 3 models"},
		{name: "device: a group that fits", gpu: true, pairs: seedPairs(c, 4), ask: Ask{Group: 2},
			workers: 1, grp: 2, models: 2, share: 1},
		{name: "device: a group that does not", gpu: true, pairs: seedPairs(c, 4), ask: Ask{Group: 4},
			refused: "a group of 4: at most 3 fit (" + why},
		{name: "device: a shape that cannot be built", gpu: true, pairs: seedPairs(broken, 2),
			refused: "layers"},
	} {
		dev := kernelsOf(tc.gpu, gpu)
		l := NewLayout(dev, len(tc.pairs), tc.ask)
		models, share := l.Models(len(tc.pairs)), l.Sharing()
		note, err := l.Fit(dev, tc.pairs, false)
		if tc.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%s: %v, want refused with %q", tc.name, err, tc.refused)
			}
			var tl *TooLarge
			if strings.Contains(tc.refused, "at most") && (!errors.As(err, &tl) || tl.Asked != tc.ask.Group || tl.Limit != 3) {
				t.Errorf("%s: %#v is not the TooLarge refusal", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if l.Workers != tc.workers || l.Group != tc.grp || models != tc.models || share != tc.share || !strings.HasPrefix(note, tc.note) || (tc.note == "") != (note == "") {
			t.Errorf("%s: %d workers, groups of %d, %d models at once, %d sharing a device, note %q; want %d, %d, %d, %d, %q",
				tc.name, l.Workers, l.Group, models, share, note, tc.workers, tc.grp, tc.models, tc.share, tc.note)
		}
	}
}

// kernelsOf is the CPU, or gpu when asked for.
func kernelsOf(useGPU bool, gpu boundedDevice) kernels.Device {
	if useGPU {
		return gpu
	}
	return cpu.New()
}
