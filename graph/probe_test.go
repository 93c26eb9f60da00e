package graph

import (
	"fmt"
	"math"
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// probed builds a probed Net of one model per seed (weights
// InitWeights(c, seed)) with inputs randomBatch(c, batch, seed).
func probed(t *testing.T, c Config, seeds []uint64, batch int) *Net {
	t.Helper()
	var ws []*Weights
	for _, s := range seeds {
		ws = append(ws, InitWeights(c, s))
	}
	b, err := BlockOf(cpu.New(), c, ws)
	if err != nil {
		t.Fatal(err)
	}
	net, err := BuildProbed(b, batch)
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

// outputs runs net and reads its loss, logits, hits and attention.
func outputs(t *testing.T, net *Net) [][]float32 {
	t.Helper()
	if err := net.Run(); err != nil {
		t.Fatal(err)
	}
	out := [][]float32{read(t, net.Losses), read(t, net.Logits), read(t, net.Correct)}
	for l := range net.Config.Layers {
		out = append(out, read(t, func() ([]float32, error) { return net.Probs(l, net.Batch) }))
	}
	return out
}

func sameOutputs(t *testing.T, what string, a, b [][]float32) {
	t.Helper()
	for k := range a {
		if !sameFloats(a[k], b[k]) {
			t.Fatalf("%s: output %d differs", what, k)
		}
	}
}

// TestProbedMatchesEval: with nothing staged, a probed Net computes the
// evaluation Net's loss, logits, hits and attention bit for bit, and so
// it does with heads switched off by SetAblation (zero ablation through
// the row gates is today's zero ablation), on every shape of model.
func TestProbedMatchesEval(t *testing.T) {
	for _, pc := range [][3]bool{{true, true, false}, {false, false, false}, {true, true, true}} {
		c := smallConfig(pc[0], pc[1])
		c.TiedEmbeddings = pc[2]
		const batch = 3
		pn := probed(t, c, []uint64{4}, batch)
		eval := group(t, c, []uint64{4}, batch, false)
		for _, off := range [][][]bool{nil, {{false, true}}, {{true, false}, {true, true}}} {
			pn.SetAblation(0, off)
			eval.SetAblation(0, off)
			sameOutputs(t, fmt.Sprintf("%+v, heads off %v", c, off), outputs(t, eval), outputs(t, pn))
		}
	}
}

// TestProbedCaptures: what a probed Net keeps is the forward pass's own
// activations: each residual stream is the previous one plus what the
// block adds (bit for bit, it is the same add), the heads' outputs
// through the output projection are what attention adds, the final
// scale is the final LayerNorm's, and the logit lens of each block is its
// incoming residual through the final LayerNorm and the unembedding.
func TestProbedCaptures(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 2
	net := probed(t, c, []uint64{7}, batch)
	if err := net.Run(); err != nil {
		t.Fatal(err)
	}
	w := InitWeights(c, 7)
	rows, D, V := batch*c.SeqLen, c.DModel, c.Vocab
	capture := func(site Site, l int) []float32 {
		return read(t, func() ([]float32, error) { return net.Capture(site, l) })
	}
	for l := range c.Layers {
		pre, heads, mid, mlp := capture(ResidPre, l), capture(HeadOut, l), capture(ResidMid, l), capture(MLPOut, l)
		wo, bo := w.Get(fmt.Sprintf("blocks.%d.attn.out.weight", l)).Data, w.Get(fmt.Sprintf("blocks.%d.attn.out.bias", l)).Data
		for r := range rows {
			for j := range D {
				attn := float64(bo[j])
				for i := range D {
					attn += float64(heads[r*D+i]) * float64(wo[i*D+j])
				}
				if got := float64(mid[r*D+j]) - float64(pre[r*D+j]); math.Abs(got-attn) > 1e-5 {
					t.Fatalf("block %d row %d column %d: resid_mid - resid_pre %v, heads through the projection %v", l, r, j, got, attn)
				}
			}
		}
		var next []float32
		if l+1 < c.Layers {
			next = capture(ResidPre, l+1)
		} else {
			next = make([]float32, len(mid))
			for i := range next {
				next[i] = mid[i] + mlp[i]
			}
			// The final LayerNorm's scale of the last residual.
			inv := read(t, net.FinalScale)
			for r := range rows {
				var mean, v float64
				for _, x := range next[r*D : (r+1)*D] {
					mean += float64(x) / float64(D)
				}
				for _, x := range next[r*D : (r+1)*D] {
					v += (float64(x) - mean) * (float64(x) - mean) / float64(D)
				}
				if want := 1 / math.Sqrt(v+kernels.LayerNormEps); math.Abs(float64(inv[r])-want) > 1e-5*want {
					t.Fatalf("row %d: final scale %v, want %v", r, inv[r], want)
				}
			}
		}
		for i := range mid {
			if math.Float32bits(next[i]) != math.Float32bits(mid[i]+mlp[i]) {
				t.Fatalf("block %d element %d: next residual %v, resid_mid + mlp_out %v", l, i, next[i], mid[i]+mlp[i])
			}
		}
		lens := read(t, func() ([]float32, error) { return net.LensLogits(l) })
		gamma, beta := w.Get("ln_f.weight").Data, w.Get("ln_f.bias").Data
		wu, bu := w.Get("unembed.weight").Data, w.Get("unembed.bias").Data
		for r := range rows {
			x := pre[r*D : (r+1)*D]
			var mean, v float64
			for _, e := range x {
				mean += float64(e) / float64(D)
			}
			for _, e := range x {
				v += (float64(e) - mean) * (float64(e) - mean) / float64(D)
			}
			inv := 1 / math.Sqrt(v+kernels.LayerNormEps)
			for k := range V {
				want := float64(bu[k])
				for j := range D {
					want += ((float64(x[j])-mean)*inv*float64(gamma[j]) + float64(beta[j])) * float64(wu[j*V+k])
				}
				if math.Abs(float64(lens[r*V+k])-want) > 1e-4 {
					t.Fatalf("lens of block %d row %d token %d: %v, want %v", l, r, k, lens[r*V+k], want)
				}
			}
		}
	}
	// The lens reads each block's incoming residual: block 0's is the
	// embeddings alone, so it differs from the logits.
	if sameFloats(read(t, func() ([]float32, error) { return net.LensLogits(0) }), read(t, net.Logits)) {
		t.Fatal("the lens of block 0 is the logits")
	}
}

// TestInterventions: a gate of 0 with the activation itself as the
// replacement changes no bit; writing another run's incoming residual
// into block 0 gives that run's logits, bit for bit; a gate of 0 and a
// replacement of 0 on a head is SetAblation's zero ablation; and patching
// one row changes the logits of that row's sequence only.
func TestInterventions(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 2
	net := probed(t, c, []uint64{5}, batch)
	clean := outputs(t, net)
	stage := func(site Site, l int, f func(gate, repl []float32)) {
		g, r, err := net.Intervention(0, site, l)
		if err != nil {
			t.Fatal(err)
		}
		f(g, r)
	}
	for _, site := range []Site{ResidPre, HeadOut} {
		for l := range c.Layers {
			own := read(t, func() ([]float32, error) { return net.Capture(site, l) })
			if err := net.Run(); err != nil { // the capture again, after the read
				t.Fatal(err)
			}
			stage(site, l, func(g, r []float32) {
				clear(g)
				copy(r, own)
			})
			sameOutputs(t, fmt.Sprintf("%v of block %d replaced by itself", site, l), clean, outputs(t, net))
			if err := net.ClearInterventions(-1); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Another batch's residual written into block 0 of this one.
	other := probed(t, c, []uint64{5}, batch)
	tok, tgt := randomBatch(c, batch, 99)
	if err := other.SetInputs(0, tok, tgt); err != nil {
		t.Fatal(err)
	}
	want := outputs(t, other)
	resid := read(t, func() ([]float32, error) { return other.Capture(ResidPre, 0) })
	stage(ResidPre, 0, func(g, r []float32) {
		clear(g)
		copy(r, resid)
	})
	got := outputs(t, net)
	if !sameFloats(got[1], want[1]) {
		t.Fatal("the other batch's residual at block 0 did not give its logits")
	}
	if sameFloats(got[1], clean[1]) {
		t.Fatal("the two batches have the same logits")
	}

	// Zero ablation by hand.
	net.ClearInterventions(0)
	dh := c.HeadDim()
	stage(HeadOut, 1, func(g, r []float32) {
		for row := range batch * c.SeqLen {
			clear(g[row*c.DModel+dh : row*c.DModel+2*dh])
		}
	})
	byHand := outputs(t, net)
	net.SetAblation(0, [][]bool{{false, false}, {false, true}})
	sameOutputs(t, "gates of 0 on L1H1", outputs(t, net), byHand)

	// One row of sequence 1 patched: sequence 0's logits stay.
	net.ClearInterventions(0)
	row := c.SeqLen + 2
	stage(HeadOut, 0, func(g, r []float32) {
		for j := range c.DModel {
			g[row*c.DModel+j], r[row*c.DModel+j] = 0, 1
		}
	})
	patched := outputs(t, net)[1]
	seq := c.SeqLen * c.Vocab
	if !sameFloats(patched[:seq], clean[1][:seq]) {
		t.Fatal("patching a row of sequence 1 changed sequence 0")
	}
	if sameFloats(patched[seq:], clean[1][seq:]) {
		t.Fatal("patching a row of sequence 1 changed nothing")
	}
	for i, v := range patched[seq : seq+2*c.Vocab] { // positions 0 and 1 come before the patched row
		if v != clean[1][seq+i] {
			t.Fatal("patching position 2 changed an earlier position (the mask is causal)")
		}
	}
}

// TestProbedGroup: a probed Net of three models reads back, for each,
// what it gives alone, with an intervention staged on one model only.
func TestProbedGroup(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 2
	seeds := []uint64{31, 32, 33}
	net := probed(t, c, seeds, batch)
	g, r, err := net.Intervention(1, HeadOut, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g[:c.DModel] {
		g[i], r[i] = 0, 0.5
	}
	all := outputs(t, net)
	heads := read(t, func() ([]float32, error) { return net.Capture(HeadOut, 1) })
	per := batch * c.SeqLen * c.DModel
	for i, s := range seeds {
		alone := probed(t, c, []uint64{s}, batch)
		if i == 1 {
			g, r, _ := alone.Intervention(0, HeadOut, 0)
			for k := range g[:c.DModel] {
				g[k], r[k] = 0, 0.5
			}
		}
		one := outputs(t, alone)
		lg := len(one[1])
		if !sameFloats(all[1][i*lg:(i+1)*lg], one[1]) {
			t.Fatalf("model %d: logits in the group differ from alone", i)
		}
		if !sameFloats(heads[i*per:(i+1)*per], read(t, func() ([]float32, error) { return alone.Capture(HeadOut, 1) })) {
			t.Fatalf("model %d: captured heads in the group differ from alone", i)
		}
	}
}

// TestProbeRefusals: a Net that is not probed has nothing to capture or
// replace, and a probed Net refuses sites and blocks it does not have.
func TestProbeRefusals(t *testing.T) {
	c := smallConfig(true, true)
	eval := group(t, c, []uint64{1}, 1, false)
	if _, err := eval.Capture(ResidPre, 0); err == nil {
		t.Error("an evaluation Net captured")
	}
	if _, _, err := eval.Intervention(0, HeadOut, 0); err == nil {
		t.Error("an evaluation Net took an intervention")
	}
	net := probed(t, c, []uint64{1}, 1)
	for _, bad := range []struct {
		site  Site
		l, s  int
		fails bool
	}{{ResidMid, 0, 0, true}, {HeadOut, c.Layers, 0, true}, {HeadOut, 0, 1, true}, {HeadOut, -1, 0, true}, {ResidPre, 1, 0, false}} {
		if _, _, err := net.Intervention(bad.s, bad.site, bad.l); (err != nil) != bad.fails {
			t.Errorf("Intervention(%d, %v, %d): error %v", bad.s, bad.site, bad.l, err)
		}
	}
	if _, err := net.Capture(MLPOut, c.Layers); err == nil {
		t.Error("captured a block past the last")
	}
	if _, err := net.LensLogits(-1); err == nil {
		t.Error("a lens of block -1")
	}
}
