package train

import (
	"math/rand/v2"
	"testing"
)

// TestEstimateBounds checks EstimateBytes against what Footprint measures
// by building the model, over random shapes of every task, with and
// without the probed evaluation graph: never below it, and at most 3.5
// times it; and the probed graph costs something.
func TestEstimateBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	names := []string{"induction", "majority", "reverse", "copy", "induction-unseen"}
	for i := 0; i < 40; i++ {
		c := Defaults(names[r.IntN(len(names))])
		c.Batch = 1 + r.IntN(128)
		c.Layers = 1 + r.IntN(4)
		c.Heads = []int{1, 2, 4}[r.IntN(3)]
		c.DModel = c.Heads * (4 + 4*r.IntN(10))
		c.DFF = 8 + 8*r.IntN(20)
		c.Positions = r.IntN(2) == 0
		probed := i%2 == 1
		_, total, err := Footprint(c, probed)
		if err != nil {
			t.Fatal(err)
		}
		// Footprint counts device floats; the estimate adds the host's
		// copy of the weights (and of the probed graph's interventions).
		ratio := float64(EstimateBytes(c, probed)) / float64(4*total)
		if ratio < 1 || ratio > 3.5 {
			t.Errorf("%+v, probed %v: estimate %d bytes, measured %d: ratio %.2f, want 1..3.5", c, probed, EstimateBytes(c, probed), 4*total, ratio)
		}
		if probed {
			_, plain, err := Footprint(c, false)
			if err != nil {
				t.Fatal(err)
			}
			if plain >= total || EstimateBytes(c, false) >= EstimateBytes(c, true) {
				t.Errorf("%+v: the probed graph costs nothing (%d against %d floats)", c, total, plain)
			}
		}
	}
}

// TestEstimateOfTheLargestShape is the shape that used to kill the Go
// runtime: its estimate is computed without allocating, and is huge.
func TestEstimateOfTheLargestShape(t *testing.T) {
	c := Defaults("induction")
	c.Layers, c.DModel, c.DFF, c.Heads = 64, 4096, 16384, 64
	if b := EstimateBytes(c, false); b < 12e9*4*5 {
		t.Fatalf("estimate %d bytes for 12.9e9 parameters", b)
	}
}
