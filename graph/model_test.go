package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"headlab/backend/cpu"
)

func smallConfig(positions, causal bool) Config {
	return Config{Vocab: 5, SeqLen: 6, Layers: 2, Heads: 2, DModel: 8, DFF: 12, Positions: positions, Causal: causal}
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
func TestModelGradients(t *testing.T) {
	for _, pc := range [][2]bool{{true, true}, {false, false}} {
		c := smallConfig(pc[0], pc[1])
		w := InitWeights(c, 3)
		net, err := Build(c, w, cpu.New(), 3, true)
		if err != nil {
			t.Fatal(err)
		}
		tok, tgt := randomBatch(c, 3, 4)
		if err := net.SetInputs(tok, tgt); err != nil {
			t.Fatal(err)
		}
		// Ablate one head so the gate path is exercised too.
		net.SetAblation([][]bool{{false, true}})
		if err := net.Run(); err != nil {
			t.Fatal(err)
		}
		grads := map[string][]float32{}
		for _, n := range net.Params() {
			g, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			grads[n.Name()] = append([]float32(nil), g.Data().([]float32)...)
		}
		fwd, err := Build(c, w, cpu.New(), 3, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := fwd.SetInputs(tok, tgt); err != nil {
			t.Fatal(err)
		}
		fwd.SetAblation([][]bool{{false, true}})
		loss := func() float64 {
			if err := fwd.Run(); err != nil {
				t.Fatal(err)
			}
			return float64(fwd.Loss())
		}
		rng := rand.New(rand.NewPCG(5, 6))
		const eps = 1e-2
		for _, p := range w.Params {
			g := grads[p.Name]
			if len(g) != len(p.Data) {
				t.Fatalf("%s: gradient of %d elements, want %d", p.Name, len(g), len(p.Data))
			}
			for k := 0; k < 4; k++ {
				j := rng.IntN(len(p.Data))
				orig := p.Data[j]
				p.Data[j] = orig + eps
				up := loss()
				p.Data[j] = orig - eps
				down := loss()
				p.Data[j] = orig
				fd := (up - down) / (2 * eps)
				if math.Abs(fd-float64(g[j])) > 2e-3+3e-2*math.Abs(fd) {
					t.Errorf("positions=%v causal=%v %s[%d]: symbolic %.6f, finite difference %.6f", c.Positions, c.Causal, p.Name, j, g[j], fd)
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
	c := Config{Vocab: 16, SeqLen: 16, Layers: 2, Heads: 2, DModel: 32, DFF: 64, Positions: true, Causal: true}
	// tok 16*32 + pos 16*32 + 2 blocks * (2 LN * 64 + 4 * (32*32+32) + 32*64+64 + 64*32+32) + ln_f 64 + 32*16+16
	want := 512 + 512 + 2*(128+4*1056+2112+2080) + 64 + 528
	if got := NewWeights(c).Count(); got != want {
		t.Fatalf("parameter count %d, want %d", got, want)
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
	net, err := Build(c, w, cpu.New(), 2, false)
	if err != nil {
		t.Fatal(err)
	}
	tok, tgt := randomBatch(c, 2, 1)
	if err := net.SetInputs(tok, tgt); err != nil {
		t.Fatal(err)
	}
	logits := func(off [][]bool) []float32 {
		net.SetAblation(off)
		if err := net.Run(); err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), net.Logits()...)
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
	net, err := Build(c, w, cpu.New(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	tok, tgt := randomBatch(c, 2, 12)
	if err := net.SetInputs(tok, tgt); err != nil {
		t.Fatal(err)
	}
	if err := net.Run(); err != nil {
		t.Fatal(err)
	}
	grads, err := net.GateGrads()
	if err != nil {
		t.Fatal(err)
	}
	setGate := func(l, h int, v float32) {
		g := net.gateT[l].Data().([]float32)
		for j := h * c.HeadDim(); j < (h+1)*c.HeadDim(); j++ {
			g[j] = v
		}
	}
	loss := func() float64 {
		if err := net.Run(); err != nil {
			t.Fatal(err)
		}
		return float64(net.Loss())
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
