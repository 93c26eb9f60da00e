package sweep

import (
	"slices"
	"testing"

	"headlab/tasks"
	"headlab/train"
)

// TestSplitModesBoundaries: the two-mode rule of docs/sweeps.md at each
// boundary: 3 values at least, a gap of at least ModeGap, more than twice
// either side's spread (values chosen exact in binary).
func TestSplitModesBoundaries(t *testing.T) {
	cases := []struct {
		xs   []float64
		want bool
	}{
		{[]float64{0, 1}, false},                   // two values never split
		{[]float64{0, 0, 1}, true},                 // three do
		{[]float64{0, 0, ModeGap}, true},           // a gap of exactly ModeGap
		{[]float64{0, 0, 0.125}, false},            // below it
		{[]float64{0, 0.125, 0.375, 0.375}, false}, // gap exactly twice the spread
		{[]float64{0, 0.125, 0.5, 0.5}, true},      // more than twice
		{[]float64{0.1, 0.2, 0.3, 0.4, 0.5}, false},
	}
	for _, c := range cases {
		m := SplitModes(c.xs)
		if m.Split != c.want {
			t.Errorf("SplitModes(%v).Split = %v, want %v", c.xs, m.Split, c.want)
		}
		if m.Split && (m.Low == nil || m.High == nil || m.Low.Max >= m.Cut || m.High.Min <= m.Cut) {
			t.Errorf("SplitModes(%v) = %+v: the cut does not separate the modes", c.xs, m)
		}
	}
}

func TestWilsonEdges(t *testing.T) {
	if lo, hi := Wilson(0, 0); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0, 0) = [%v, %v], want [0, 1]", lo, hi)
	}
	for _, kn := range [][2]int{{0, 1}, {1, 1}, {0, 30}, {30, 30}, {10, 30}} {
		lo, hi := Wilson(kn[0], kn[1])
		p := float64(kn[0]) / float64(kn[1])
		if !(lo >= 0 && lo <= p && p <= hi && hi <= 1 && hi-lo > 0) {
			t.Errorf("Wilson(%d, %d) = [%v, %v]", kn[0], kn[1], lo, hi)
		}
	}
}

// TestParseShardAndSeedsBoundaries: the first and last shard, one past
// them, and a range of one seed.
func TestParseShardAndSeedsBoundaries(t *testing.T) {
	for _, s := range []string{"0/1", "0/4", "3/4"} {
		if _, err := ParseShard(s); err != nil {
			t.Errorf("%s refused: %v", s, err)
		}
	}
	for _, s := range []string{"1/1", "4/4", "-1/4", "0/0", "0/-1"} {
		if _, err := ParseShard(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
	if got, err := ParseSeeds("3-3,5"); err != nil || !slices.Equal(got, []uint64{3, 5}) {
		t.Errorf("ParseSeeds(3-3,5) = %v, %v", got, err)
	}
}

// TestConfigNameTellsCellsApart: configurations that differ in any
// setting a grid moves have different names.
func TestConfigNameTellsCellsApart(t *testing.T) {
	base := train.Defaults("induction")
	if got, want := ConfigName(base), "induction, 2 layers x 2 heads, d-model 32, positions on, causal on, 2500 steps of batch 32 at lr 0.003, next-token loss"; got != want {
		t.Errorf("ConfigName(default) = %q, want %q", got, want)
	}
	seen := map[string]bool{ConfigName(base): true}
	for _, f := range []func(*train.Config){
		func(c *train.Config) { c.DModel, c.DFF = 64, 128 }, func(c *train.Config) { c.DFF = 96 }, func(c *train.Config) { c.LR = 1e-3 },
		func(c *train.Config) { c.Batch = 8 }, func(c *train.Config) { c.Steps = 1000 }, func(c *train.Config) { c.TiedEmbeddings = true },
		func(c *train.Config) { c.Layers = 1 }, func(c *train.Config) { c.Positions = false },
		func(c *train.Config) { c.Loss = tasks.Answers }, func(c *train.Config) { c.TrainExamples = 2000 },
		func(c *train.Config) { c.WeightDecay = 0.1 },
	} {
		c := base
		f(&c)
		if n := ConfigName(c); seen[n] {
			t.Errorf("two configurations named %q", n)
		} else {
			seen[n] = true
		}
	}
}
