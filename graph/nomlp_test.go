package graph

import (
	"fmt"
	"math"
	"testing"
)

// attentionOnly is smallConfig without MLPs (--no-mlp).
func attentionOnly(positions, causal bool) Config {
	c := smallConfig(positions, causal)
	c.NoMLP, c.DFF = true, 0
	return c
}

// An attention-only model has no ln2 and no MLP in any block, and no
// d-ff: a d-ff beside --no-mlp is refused.
func TestAttentionOnlyShape(t *testing.T) {
	full, bare := smallConfig(true, true), attentionOnly(true, true)
	count := func(c Config) int {
		n := 0
		for _, p := range ParamShapes(c) {
			size := 1
			for _, d := range p.Shape {
				size *= d
			}
			n += size
		}
		return n
	}
	D, F := full.DModel, full.DFF
	if got, want := count(full)-count(bare), full.Layers*(2*D+D*F+F+F*D+D); got != want {
		t.Errorf("--no-mlp removes %d parameters, want %d (ln2 and the MLP of %d blocks)", got, want, full.Layers)
	}
	for _, p := range ParamShapes(bare) {
		if hasSuffix(p.Name, "ln2.weight", "ln2.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias") {
			t.Errorf("an attention-only model has %s", p.Name)
		}
	}
	if err := bare.Validate(); err != nil {
		t.Errorf("attention-only model refused: %v", err)
	}
	bad := bare
	bad.DFF = 64
	if err := bad.Validate(); err == nil {
		t.Error("--d-ff 64 with --no-mlp accepted")
	}
}

// A probed attention-only Net computes the evaluation Net's outputs bit
// for bit, keeps the residual streams and head outputs, and has no MLP
// output to read; its residual after a block is the residual after the
// block's attention.
func TestAttentionOnlyProbed(t *testing.T) {
	for _, c := range []Config{attentionOnly(true, true), attentionOnly(false, false)} {
		const batch = 3
		pn := probed(t, c, []uint64{4}, batch)
		eval := group(t, c, []uint64{4}, batch, false)
		sameOutputs(t, fmt.Sprintf("%+v", c), outputs(t, eval), outputs(t, pn))
		if _, err := pn.Capture(MLPOut, 0); err == nil {
			t.Errorf("%v: an attention-only model's MLP output read", c)
		}
		mid := read(t, func() ([]float32, error) { return pn.Capture(ResidMid, 0) })
		next := read(t, func() ([]float32, error) { return pn.Capture(ResidPre, 1) })
		if !sameFloats(mid, next) {
			t.Errorf("%v: block 1's input is not block 0's residual after attention", c)
		}
	}
}

// BuildTrain's rows after the last block's attention give an
// attention-only model's loss and gradients bit for bit.
func TestAttentionOnlyBuildTrain(t *testing.T) {
	c := attentionOnly(true, true)
	for _, answers := range [][]int{{3, 4, 5}, {0, 2, 5}} {
		full, pruned := runBoth(t, c, 3, answers)
		if got, want := read(t, pruned.Losses), read(t, full.Losses); !sameFloats(got, want) {
			t.Fatalf("answers %v: losses %v, the full Net's %v", answers, got, want)
		}
		got := read(t, func() ([]float32, error) { return pruned.read(pruned.Grads()) })
		want := read(t, func() ([]float32, error) { return full.read(full.Grads()) })
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("answers %v: gradient %d is %v, the full Net's %v", answers, j, got[j], want[j])
			}
		}
	}
}
