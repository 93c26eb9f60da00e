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

// TestRunForwardMatchesRun: an edge Net's forward pass alone (RunForward,
// restarting where the first changed addend is read, and RunUntil, which
// stops before a receiver reads its input) computes the logits, loss,
// attention and every kept activation of a whole Run bit for bit, for two
// models on a device of its own and on a group's, whose scratch the
// seeds share; and it restarts late: a later stage's receivers are read
// after an earlier stage's, the first block's after step 0.
func TestRunForwardMatchesRun(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 3
	seeds := []uint64{4, 5}
	for name, dev := range map[string]kernels.Device{"device": cpu.New(), "group": cpu.New().Group()} {
		whole := buildEdgeNet(t, dev, c, seeds, batch, false)
		fwd := buildEdgeNet(t, dev, c, seeds, batch, false)
		rng := rand.New(rand.NewPCG(9, 10))
		state := func(net *Net) [][]float32 {
			out := [][]float32{read(t, net.Losses), read(t, net.Logits)}
			for l := range c.Layers {
				out = append(out, read(t, func() ([]float32, error) { return net.Probs(l, batch) }))
				for _, site := range []Site{ResidPre, HeadOut, ResidMid, MLPOut} {
					out = append(out, read(t, func() ([]float32, error) { return net.Capture(site, l) }))
				}
			}
			return out
		}
		// stage sets r's addend of both Nets to the same random values
		// (zero when clear).
		stage := func(r Receiver, zero bool) {
			for s := range seeds {
				a, err := whole.ReceiverDelta(s, r)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := fwd.ReceiverDelta(s, r)
				for i := range a {
					a[i] = 0
					if !zero {
						a[i] = float32(rng.NormFloat64())
					}
					b[i] = a[i]
				}
			}
		}
		check := func(what string) {
			t.Helper()
			if err := whole.Run(); err != nil {
				t.Fatal(err)
			}
			if err := fwd.RunForward(); err != nil {
				t.Fatal(err)
			}
			sameOutputs(t, name+", "+what, state(whole), state(fwd))
		}
		check("nothing staged")
		logits := Receiver{Kind: ReceiverLogits, Layer: c.Layers}
		mlp1 := Receiver{Kind: ReceiverMLP, Layer: 1}
		q0 := Receiver{Kind: ReceiverQ, Layer: 0, Head: 1}
		v1 := Receiver{Kind: ReceiverV, Layer: 1, Head: 0}
		stage(logits, false)
		check("the logits' addend")
		stage(logits, true)
		stage(mlp1, false)
		check("the last MLP's addend, the logits' cleared")
		// Staged a stage at a time, each read from the pass before.
		stage(q0, false)
		if err := fwd.RunUntil(v1); err != nil {
			t.Fatal(err)
		}
		mid := read(t, func() ([]float32, error) { return fwd.Capture(HeadOut, 0) })
		stage(v1, false)
		check("a first-block query's and a second-block value's addends, staged in turn")
		if !sameFloats(mid, read(t, func() ([]float32, error) { return whole.Capture(HeadOut, 0) })) {
			t.Errorf("%s: RunUntil left the first block's heads' output stale", name)
		}
		if err := fwd.Run(); err != nil {
			t.Fatal(err)
		}
		stage(q0, true)
		check("after a whole Run, the query's addend cleared")

		e := fwd.probe.edges
		at := func(r Receiver) int { return e.fwd.reader(e.delta[e.index[r]]) }
		l1q := Receiver{Kind: ReceiverQ, Layer: 1}
		if !(0 < at(Receiver{Kind: ReceiverQ}) && at(Receiver{Kind: ReceiverQ}) < at(l1q) && at(l1q) < at(mlp1) && at(mlp1) < at(logits)) {
			t.Errorf("%s: the forward pass restarts at step %d (block 0's query), %d (block 1's), %d (its MLP), %d (the logits) of %d",
				name, at(Receiver{Kind: ReceiverQ}), at(l1q), at(mlp1), at(logits), len(e.fwd.vm.steps))
		}
	}
}
