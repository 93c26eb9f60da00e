package circuit

import (
	"math"
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
