package sweep

import (
	"fmt"
	"testing"

	"headlab/backend/cpu"
	"headlab/inspect"
	"headlab/kernels"
	"headlab/train"
)

// boundedDevice is a CPU device whose largest buffer holds floats.
type boundedDevice struct {
	kernels.Device
	floats int
}

func (d boundedDevice) MaxBufferFloats() int       { return d.floats }
func (d boundedDevice) MemoryBytes() (int64, bool) { return 0, false }

// TestGroupLimit: the smallest limit over the pairs' shapes binds, with
// its reason; a shape with more pairs than the limit splits.
func TestGroupLimit(t *testing.T) {
	small, large := train.Defaults("induction"), train.Defaults("induction")
	small.Layers, large.Layers = 1, 2
	pairs := func(c train.Config, seeds ...uint64) []Pair {
		var out []Pair
		for _, s := range seeds {
			c.Seed = s
			out = append(out, Pair{Key: Key(c), Config: c})
		}
		return out
	}
	mixed := append(pairs(small, 1, 2, 3, 4), pairs(large, 1, 2, 3)...)

	limit, why, split, err := GroupLimit(cpu.New(), mixed, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("headlab's cap is %d", train.MaxGroup); limit != train.MaxGroup || why != want || split {
		t.Errorf("no capacity: %d (%q), split %v; want %d (%q), no split", limit, why, split, train.MaxGroup, want)
	}

	largest, _, err := train.Footprint(large, false)
	if err != nil {
		t.Fatal(err)
	}
	dev := boundedDevice{Device: cpu.New(), floats: 3 * largest}
	want, wantWhy, err := train.GroupLimit(dev, large, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		pairs []Pair
		split bool
	}{
		{"three of the larger shape fit", mixed, true},
		{"the larger shape alone", pairs(large, 1, 2, 3), false},
		{"four of the larger shape split", pairs(large, 1, 2, 3, 4), true},
	} {
		limit, why, split, err := GroupLimit(dev, c.pairs, false)
		if err != nil {
			t.Fatal(err)
		}
		if limit != want || why != wantWhy || split != c.split {
			t.Errorf("%s: %d (%q), split %v; want %d (%q), split %v", c.name, limit, why, split, want, wantWhy, c.split)
		}
	}
	if want != 3 {
		t.Errorf("a device of 3 models' largest buffer holds %d", want)
	}
}

// memoryDevice is a CPU device with bytes of memory.
type memoryDevice struct {
	kernels.Device
	bytes int64
}

func (d memoryDevice) MaxBufferFloats() int       { return 1 << 30 }
func (d memoryDevice) MemoryBytes() (int64, bool) { return d.bytes, true }

// TestGroupLimitBudgetsTheProbedGraph: a sweep whose analysis runs the
// probed graph sizes its groups with it, so fewer models fit the same
// memory; one that does not, as before.
func TestGroupLimitBudgetsTheProbedGraph(t *testing.T) {
	c := train.Defaults("induction")
	_, plain, err := train.Footprint(c, false)
	if err != nil {
		t.Fatal(err)
	}
	_, probed, err := train.Footprint(c, true)
	if err != nil {
		t.Fatal(err)
	}
	// Room for 10 models without the probed graph, after the fifth
	// GroupLimit leaves for the driver.
	dev := memoryDevice{Device: cpu.New(), bytes: int64(4*plain) * 10 * 5 / 4}
	var pairs []Pair
	for s := uint64(1); s <= 20; s++ {
		c.Seed = s
		pairs = append(pairs, Pair{Key: Key(c), Config: c})
	}
	for _, a := range []Analysis{{}, {Measure: AllMeasures()}, {Ablation: inspect.AblateResample}} {
		limit, _, split, err := GroupLimit(dev, pairs, a.Probed())
		if err != nil {
			t.Fatal(err)
		}
		want := 10
		if a.Probed() {
			want = int(int64(4*plain) * 10 / int64(4*probed))
		}
		if limit != want || !split {
			t.Errorf("%+v: %d models fit (split %v), want %d", a, limit, split, want)
		}
	}
	if (Analysis{Measure: MeasureSet{MeasureCircuit}}).Probed() {
		t.Error("the circuit scores alone run the probed graph")
	}
}
