package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"headlab/backend/cpu"
)

func smallConfig(positions, causal bool) Config {
	return Config{Vocab: 5, SeqLen: 6, Arch: Arch{Layers: 2, Heads: 2, DModel: 8, DFF: 12, Positions: positions, Causal: causal}}
}

// build compiles c on the CPU device for one model with weights w.
func build(t *testing.T, c Config, w *Weights, batch int, train bool) *Net {
	t.Helper()
	b, err := NewBlock(cpu.New(), c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Upload([]*Weights{w}); err != nil {
		t.Fatal(err)
	}
	net, err := Build(b, batch, train)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// read returns what a Net read method gives, or fails the test.
func read(t *testing.T, f func() ([]float32, error)) []float32 {
	t.Helper()
	v, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), v...)
}

func randomBatch(c Config, batch int, seed uint64) (tok, tgt []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	tok = make([]int, batch*c.SeqLen)
	tgt = make([]int, len(tok))
	for i := range tok {
		tok[i] = rng.IntN(c.Vocab)
		tgt[i] = -1
		if i%c.SeqLen >= c.SeqLen/2 {
			tgt[i] = rng.IntN(c.Vocab)
		}
	}
	return tok, tgt
}

// TestModelGradients checks d loss / d w for elements of every parameter
// tensor of the whole model against central finite differences.
//
// With tied embeddings the token embedding is also the unembedding: every
// element of it is checked, so the gradient must be the sum of both uses.
func TestModelGradients(t *testing.T) {
	for _, pc := range [][3]bool{{true, true, false}, {false, false, false}, {true, true, true}} {
		c := smallConfig(pc[0], pc[1])
		c.TiedEmbeddings = pc[2]
		w := InitWeights(c, 3)
		net := build(t, c, w, 3, true)
		tok, tgt := randomBatch(c, 3, 4)
		if err := net.SetInputs(0, tok, tgt); err != nil {
			t.Fatal(err)
		}
		// Ablate one head so the gate path is exercised too.
		net.SetAblation(0, [][]bool{{false, true}})
		if err := net.Run(); err != nil {
			t.Fatal(err)
		}
		grads := map[string][]float32{}
		flat := read(t, func() ([]float32, error) { return net.read(net.Grads()) })
		at := 0
		for _, p := range w.Params {
			grads[p.Name] = flat[at : at+len(p.Data)]
			at += len(p.Data)
		}
		fwd := build(t, c, w, 3, false)
		if err := fwd.SetInputs(0, tok, tgt); err != nil {
			t.Fatal(err)
		}
		fwd.SetAblation(0, [][]bool{{false, true}})
		loss := func() float64 {
			if err := fwd.Block().Upload([]*Weights{w}); err != nil {
				t.Fatal(err)
			}
			if err := fwd.Run(); err != nil {
				t.Fatal(err)
			}
			return float64(read(t, fwd.Losses)[0])
		}
		rng := rand.New(rand.NewPCG(5, 6))
		const eps = 1e-2
		for _, p := range w.Params {
			g := grads[p.Name]
			if len(g) != len(p.Data) {
				t.Fatalf("%s: gradient of %d elements, want %d", p.Name, len(g), len(p.Data))
			}
			checks := 4
			if c.TiedEmbeddings && p.Name == "tok_emb" {
				checks = len(p.Data)
			}
			for k := 0; k < checks; k++ {
				j := rng.IntN(len(p.Data))
				if checks == len(p.Data) {
					j = k
				}
				orig := p.Data[j]
				p.Data[j] = orig + eps
				up := loss()
				p.Data[j] = orig - eps
				down := loss()
				p.Data[j] = orig
				fd := (up - down) / (2 * eps)
				if math.Abs(fd-float64(g[j])) > 2e-3+3e-2*math.Abs(fd) {
					t.Errorf("positions=%v causal=%v tied=%v %s[%d]: symbolic %.6f, finite difference %.6f", c.Positions, c.Causal, c.TiedEmbeddings, p.Name, j, g[j], fd)
				}
			}
		}
		// The ablated head's value weights get no gradient through attention.
		dv := grads["blocks.0.attn.v.weight"]
		for r := 0; r < c.DModel; r++ {
			for col := c.HeadDim(); col < c.DModel; col++ {
				if dv[r*c.DModel+col] != 0 {
					t.Fatalf("ablated head 1's value weights have gradient %v", dv[r*c.DModel+col])
				}
			}
		}
	}
}

func TestParamCount(t *testing.T) {
	c := Config{Vocab: 16, SeqLen: 16, Arch: Arch{Layers: 2, Heads: 2, DModel: 32, DFF: 64, Positions: true, Causal: true}}
	// tok 16*32 + pos 16*32 + 2 blocks * (2 LN * 64 + 4 * (32*32+32) + 32*64+64 + 64*32+32) + ln_f 64 + 32*16+16
	want := 512 + 512 + 2*(128+4*1056+2112+2080) + 64 + 528
	if got := NewWeights(c).Count(); got != want {
		t.Fatalf("parameter count %d, want %d", got, want)
	}
	// Tied embeddings drop unembed.weight and keep its bias.
	c.TiedEmbeddings = true
	w := NewWeights(c)
	if got := w.Count(); got != want-32*16 || w.Get("unembed.weight") != nil || w.Get("unembed.bias") == nil {
		t.Fatalf("tied: parameter count %d, want %d", got, want-32*16)
	}
}

func TestConfigValidate(t *testing.T) {
	good := smallConfig(true, true)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := good
	bad.Heads = 3
	if err := bad.Validate(); err == nil {
		t.Fatal("heads 3 with d-model 8 accepted")
	}
	bad = good
	bad.DFF = 0
	if err := bad.Validate(); err == nil {
		t.Fatal("d-ff 0 accepted")
	}
}

func TestAblationZeroesHeadOutput(t *testing.T) {
	c := smallConfig(true, true)
	w := InitWeights(c, 9)
	net := build(t, c, w, 2, false)
	tok, tgt := randomBatch(c, 2, 1)
	if err := net.SetInputs(0, tok, tgt); err != nil {
		t.Fatal(err)
	}
	logits := func(off [][]bool) []float32 {
		if err := net.Block().Upload([]*Weights{w}); err != nil {
			t.Fatal(err)
		}
		net.SetAblation(0, off)
		if err := net.Run(); err != nil {
			t.Fatal(err)
		}
		return read(t, net.Logits)
	}
	intact := logits(nil)
	// Zeroing every head's output is the same as zeroing the output
	// projection's weights while keeping its bias.
	all := logits([][]bool{{true, true}, {true, true}})
	for l := 0; l < c.Layers; l++ {
		clear(w.Get(fmt.Sprintf("blocks.%d.attn.out.weight", l)).Data)
	}
	zeroed := logits(nil)
	for i := range all {
		if math.Abs(float64(all[i]-zeroed[i])) > 1e-5 {
			t.Fatalf("logit %d: all heads ablated %v, zero output weights %v", i, all[i], zeroed[i])
		}
	}
	same := true
	for i := range all {
		same = same && all[i] == intact[i]
	}
	if same {
		t.Fatal("ablating every head changed nothing")
	}
}

// TestGateGradients checks d loss / d gate of every head against finite
// differences of a gate scaling that head's whole output.
func TestGateGradients(t *testing.T) {
	c := smallConfig(true, true)
	w := InitWeights(c, 11)
	net := build(t, c, w, 2, true)
	tok, tgt := randomBatch(c, 2, 12)
	if err := net.SetInputs(0, tok, tgt); err != nil {
		t.Fatal(err)
	}
	if err := net.Run(); err != nil {
		t.Fatal(err)
	}
	all, err := net.GateGrads()
	if err != nil {
		t.Fatal(err)
	}
	grads := all[0]
	setGate := func(l, h int, v float32) {
		g := net.gate[l*c.DModel:]
		for j := h * c.HeadDim(); j < (h+1)*c.HeadDim(); j++ {
			g[j] = v
		}
		net.gateDirty = true
	}
	loss := func() float64 {
		if err := net.Run(); err != nil {
			t.Fatal(err)
		}
		return float64(read(t, net.Losses)[0])
	}
	const eps = 1e-2
	for l := 0; l < c.Layers; l++ {
		for h := 0; h < c.Heads; h++ {
			setGate(l, h, 1+eps)
			up := loss()
			setGate(l, h, 1-eps)
			down := loss()
			setGate(l, h, 1)
			fd := (up - down) / (2 * eps)
			if math.Abs(fd-grads[l][h]) > 2e-3+3e-2*math.Abs(fd) {
				t.Errorf("gate L%dH%d: symbolic %.6f, finite difference %.6f", l, h, grads[l][h], fd)
			}
		}
	}
}

// TestGroupIsBatchInvariant trains nothing but runs forward and backward
// for three models at once: each model's loss and gradients are, bit for
// bit, what it gives alone, whatever the other models hold.
func TestGroupIsBatchInvariant(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 2
	grads := func(net *Net) []float32 {
		return read(t, func() ([]float32, error) { return net.read(net.Grads()) })
	}
	seeds := []uint64{5, 6, 7}
	net := group(t, c, seeds, batch, true)
	losses, all := read(t, net.Losses), grads(net)
	P := net.Block().P
	for i, s := range seeds {
		alone := group(t, c, []uint64{s}, batch, true)
		l, g := read(t, alone.Losses)[0], grads(alone)
		if math.Float32bits(losses[i]) != math.Float32bits(l) {
			t.Fatalf("model %d: loss %v in the group, %v alone", i, losses[i], l)
		}
		for j, v := range g {
			if math.Float32bits(all[i*P+j]) != math.Float32bits(v) {
				t.Fatalf("model %d: gradient %d is %v in the group, %v alone", i, j, all[i*P+j], v)
			}
		}
	}
	if losses[0] == losses[1] {
		t.Fatal("different models gave the same loss")
	}
}

// TestFusion: in every block the executor runs the MLP's first product
// with its GELU, and the attention output and the MLP's second product
// with their residual adds, as one kernel each; the products' results
// never get a tensor.
func TestFusion(t *testing.T) {
	for _, train := range []bool{false, true} {
		c := smallConfig(true, true)
		net := build(t, c, InitWeights(c, 1), 2, train)
		gelu, res := 0, 0
		for _, s := range net.vm.steps {
			if s.name != "fused linear" {
				continue
			}
			// x, w, bias, res, deriv
			if s.reads[4].Buf != nil {
				gelu++
			}
			if s.reads[3].Buf != nil {
				res++
			}
			if s.reads[2].Buf == nil {
				t.Errorf("a fused product without its bias")
			}
		}
		if gelu != c.Layers || res != 2*c.Layers {
			t.Errorf("train=%v: %d products fused with GELU and %d with a residual add, want %d and %d", train, gelu, res, c.Layers, 2*c.Layers)
		}
	}
}

// TestForwardIgnoresGradients: an op's forward does not depend on
// whether a gradient was asked for. A Net built to train and one built
// without gradients give the same loss, logits and attention, bit for
// bit, for every shape of model.
func TestForwardIgnoresGradients(t *testing.T) {
	for _, pc := range [][3]bool{{true, true, false}, {false, true, true}, {true, false, true}} {
		c := smallConfig(pc[0], pc[1])
		c.TiedEmbeddings = pc[2]
		w := InitWeights(c, 3)
		tok, tgt := randomBatch(c, 2, 3)
		var outs [2][][]float32
		for i, train := range []bool{false, true} {
			net := build(t, c, w, 2, train)
			if err := net.SetInputs(0, tok, tgt); err != nil {
				t.Fatal(err)
			}
			if err := net.Run(); err != nil {
				t.Fatal(err)
			}
			outs[i] = append(outs[i], read(t, net.Losses), read(t, net.Logits))
			for l := 0; l < c.Layers; l++ {
				outs[i] = append(outs[i], read(t, func() ([]float32, error) { return net.Probs(l, 2) }))
			}
			net.Close()
		}
		for k := range outs[0] {
			for j, v := range outs[0][k] {
				if math.Float32bits(v) != math.Float32bits(outs[1][k][j]) {
					t.Fatalf("%+v: output %d, element %d: %v without gradients, %v with", c, k, j, v, outs[1][k][j])
				}
			}
		}
	}
}
