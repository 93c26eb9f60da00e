package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// buildEdgeNet builds an edge Net (or a linear one) of one model per seed with
// inputs randomBatch(c, batch, seed), on dev.
func buildEdgeNet(t *testing.T, dev kernels.Device, c Config, seeds []uint64, batch int, linear bool) *Net {
	t.Helper()
	var ws []*Weights
	for _, s := range seeds {
		ws = append(ws, InitWeights(c, s))
	}
	b, err := BlockOf(dev, c, ws)
	if err != nil {
		t.Fatal(err)
	}
	build := BuildEdges
	if linear {
		build = BuildLinearEdges
	}
	net, err := build(b, batch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close(); b.Free() })
	for i, s := range seeds {
		tok, tgt := randomBatch(c, batch, s)
		if err := net.SetInputs(i, tok, tgt); err != nil {
			t.Fatal(err)
		}
	}
	return net
}

// TestEdgesMatchProbed: with every addend zero an edge Net computes the
// probed Net's loss, logits, hits and attention bit for bit, on every
// shape of model.
func TestEdgesMatchProbed(t *testing.T) {
	for _, pc := range [][3]bool{{true, true, false}, {false, false, false}, {true, true, true}} {
		c := smallConfig(pc[0], pc[1])
		c.TiedEmbeddings = pc[2]
		const batch = 3
		en := buildEdgeNet(t, cpu.New(), c, []uint64{4, 5}, batch, false)
		pn := probed(t, c, []uint64{4, 5}, batch)
		sameOutputs(t, fmt.Sprintf("%+v", c), outputs(t, pn), outputs(t, en))
	}
}

// TestReceiverGradients: the gradient an edge Net reads for each receiver
// is the derivative of the staged metric along a random addend of that
// receiver alone (a central difference in float64 of float32 runs), and a
// receiver's addend changes only what reads it: a query's addend leaves
// the block's values, and so a first-block value's addend leaves the
// first block's attention.
func TestReceiverGradients(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 2
	net := buildEdgeNet(t, cpu.New(), c, []uint64{3}, batch, false)
	rng := rand.New(rand.NewPCG(7, 8))
	seed, _ := net.MetricSeed(0)
	for i := range seed {
		seed[i] = float32(rng.NormFloat64())
	}
	metric := func() float64 {
		if err := net.Run(); err != nil {
			t.Fatal(err)
		}
		lg := read(t, net.Logits)
		var m float64
		for i, v := range lg {
			m += float64(v) * float64(seed[i])
		}
		return m
	}
	metric()
	grads := map[Receiver][]float32{}
	for _, r := range Receivers(c) {
		g, err := net.ReceiverGrad(r)
		if err != nil {
			t.Fatal(err)
		}
		grads[r] = append([]float32(nil), g...)
	}
	for _, r := range Receivers(c) {
		dir := make([]float32, batch*c.SeqLen*c.DModel)
		var want float64
		for i := range dir {
			dir[i] = float32(rng.NormFloat64())
			want += float64(dir[i]) * float64(grads[r][i])
		}
		const eps = 1e-2
		at := func(k float32) float64 {
			d, _ := net.ReceiverDelta(0, r)
			for i := range d {
				d[i] = k * dir[i]
			}
			return metric()
		}
		got := (at(eps) - at(-eps)) / (2 * eps)
		at(0)
		if math.Abs(got-want) > 2e-2*math.Max(1, math.Abs(want)) {
			t.Errorf("receiver %+v: difference quotient %.5f, gradient %.5f", r, got, want)
		}
	}
	// A first-block value's addend leaves the first block's attention.
	before := read(t, func() ([]float32, error) { return net.Probs(0, batch) })
	d, _ := net.ReceiverDelta(0, Receiver{Kind: ReceiverV, Layer: 0, Head: 1})
	for i := range d {
		d[i] = 1
	}
	metric()
	if !sameFloats(before, read(t, func() ([]float32, error) { return net.Probs(0, batch) })) {
		t.Error("a value's addend changed the attention")
	}
	if err := net.ClearInterventions(-1); err != nil {
		t.Fatal(err)
	}
}
