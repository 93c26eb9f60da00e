package circuit

import (
	"math"
	"math/rand/v2"
	"testing"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/train"
)

// model is a model of the default induction configuration with weights
// InitWeights(shape, seed), untrained.
func model(t testing.TB, seed uint64) *train.Model {
	t.Helper()
	c := train.Defaults("induction")
	task, err := c.NewTask()
	if err != nil {
		t.Fatal(err)
	}
	shape := c.Model(task)
	return &train.Model{Train: c, Shape: shape, Task: task, Weights: graph.InitWeights(shape, seed)}
}

// TestAttributionEqualsPathPatchingWhenLinear: on a model linear in what
// edges patch (no LayerNorm, no GELU: graph.BuildLinearEdges; queries and
// keys constant, so attention is uniform whatever is patched), the metric
// is linear in every receiver's input, so attribution patching's
// first-order estimate of each edge is exactly path patching's effect:
// within 1e-5, in both directions and under both corruptions. Every
// edge's effect is not zero (the check has something to check).
func TestAttributionEqualsPathPatchingWhenLinear(t *testing.T) {
	m := model(t, 3)
	for l := range m.Shape.Layers {
		for _, n := range []string{"attn.q.weight", "attn.k.weight"} {
			clear(m.Weights.Get("blocks." + string(rune('0'+l)) + "." + n).Data)
		}
	}
	for _, dir := range []string{Noising, Denoising} {
		for _, corr := range []string{"first-half", "other"} {
			r, err := NewRunner(m, cpu.New(), Options{Examples: 40, Corruption: corr, Direction: dir, Linear: true})
			if err != nil {
				t.Fatal(err)
			}
			exact, err := r.PathPatch()
			if err != nil {
				t.Fatal(err)
			}
			eap, err := r.Attribute()
			if err != nil {
				t.Fatal(err)
			}
			var nonzero int
			for i, e := range r.Edges() {
				if d := math.Abs(exact[i] - eap[i]); d > 1e-5 {
					t.Errorf("%s, %s: %v: path patching %.7f, attribution %.7f", dir, corr, e, exact[i], eap[i])
				}
				if math.Abs(exact[i]) > 1e-3 {
					nonzero++
				}
			}
			if nonzero < len(exact)/3 {
				t.Errorf("%s, %s: only %d of %d edges have an effect", dir, corr, nonzero, len(exact))
			}
			r.Close()
		}
	}
}

// TestPatchedRemembersNothingWrong: Patched on a Runner that has patched
// other edge sets before (and run Attribute between) returns the bits a
// new Runner returns for the same set: restaging only the receivers that
// changed, starting the pass at the first of them and reusing senders'
// outputs read before leave no stale addend or sender behind. The sets
// are random, of every size, so they reach every stage.
func TestPatchedRemembersNothingWrong(t *testing.T) {
	m := model(t, 2)
	for _, dir := range []string{Noising, Denoising} {
		o := Options{Examples: 6, Corruption: "first-half", Direction: dir}
		long, err := NewRunner(m, cpu.New(), o)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(11, 12))
		E := len(long.Edges())
		for trial := range 40 {
			var set []Edge
			keep := rng.Float64()
			for _, e := range long.Edges() {
				if rng.Float64() < keep {
					set = append(set, e)
				}
			}
			if trial%3 == 1 { // a set that differs from the last by one edge
				set = append(set[:0:0], long.Edges()[rng.IntN(E)])
			}
			if trial%7 == 3 {
				if _, err := long.Attribute(); err != nil {
					t.Fatal(err)
				}
			}
			got, err := long.Patched(set)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := NewRunner(m, cpu.New(), o)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Patched(set)
			fresh.Close()
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%s, trial %d (%d edges): %.9f after other sets, %.9f on a new Runner", dir, trial, len(set), got, want)
			}
		}
		long.Close()
	}
}
