package graph

import (
	"math/rand/v2"
	"slices"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// TestTailIsTheWholePass: on the CPU device, a tail from block f of a
// resumable Net, after a pass with every head on, gives the bits of a
// whole pass of Build's Net with the same heads off (first one in block
// f): logits, loss and correct answers, for two models at once.
func TestTailIsTheWholePass(t *testing.T) { tailIsTheWholePass(t, cpu.New()) }

func tailIsTheWholePass(t *testing.T, dev kernels.Device) {
	c := Config{Vocab: 12, SeqLen: 8, Arch: Arch{Layers: 3, Heads: 2, DModel: 16, DFF: 32, Positions: true, Causal: true}}
	block, err := BlockOf(dev, c, []*Weights{InitWeights(c, 1), InitWeights(c, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer block.Free()
	const batch = 5
	r := rand.New(rand.NewPCG(3, 4))
	tokens, targets := make([]int, batch*c.SeqLen), make([]int, batch*c.SeqLen)
	for i := range tokens {
		tokens[i], targets[i] = r.IntN(c.Vocab), r.IntN(c.Vocab)
	}
	whole, err := Build(block, batch, false)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	res, err := BuildResumable(block, batch)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if _, err := res.Tail(0); err == nil {
		t.Error("a tail from block 0")
	}
	if _, err := whole.Tail(1); err == nil {
		t.Error("a tail of a Net that is not resumable")
	}
	outputs := func(n *Net) (lg, ls, hits []float32) {
		var err error
		if lg, err = n.Logits(); err == nil {
			lg = slices.Clone(lg)
			if ls, err = n.Losses(); err == nil {
				ls = slices.Clone(ls)
				hits, err = n.Correct()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		return lg, ls, slices.Clone(hits)
	}
	for _, n := range []*Net{whole, res} {
		for s := range 2 {
			if err := n.SetInputs(s, tokens, targets); err != nil {
				t.Fatal(err)
			}
		}
	}
	for from := 1; from < c.Layers; from++ {
		tail, err := res.Tail(from)
		if err != nil {
			t.Fatal(err)
		}
		defer tail.Close()
		for s := range 2 {
			if err := tail.SetInputs(s, tokens, targets); err != nil {
				t.Fatal(err)
			}
		}
		off := [][]bool{{false, false}, {false, false}, {false, false}}
		off[from][1] = true
		if from == 1 {
			off[2][0] = true
		}
		whole.SetAblation(-1, off)
		if err := whole.Run(); err != nil {
			t.Fatal(err)
		}
		wl, wls, wh := outputs(whole)
		res.SetAblation(-1, nil)
		if err := res.Run(); err != nil {
			t.Fatal(err)
		}
		cl, _, _ := outputs(res)
		tail.SetAblation(-1, off)
		if err := tail.Run(); err != nil {
			t.Fatal(err)
		}
		tl, tls, th := outputs(tail)
		if !slices.Equal(tl, wl) || !slices.Equal(tls, wls) || !slices.Equal(th, wh) {
			t.Errorf("tail from block %d: loss %v hits %v, the whole pass %v and %v", from, tls, th, wls, wh)
		}
		if slices.Equal(cl, wl) {
			t.Errorf("block %d: the heads off change no logit", from)
		}
	}
}
