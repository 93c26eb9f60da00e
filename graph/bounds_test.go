package graph

import (
	"math"
	"testing"

	"headlab/backend/cpu"
)

// TestConfigValidateBounds: the largest model of each dimension is
// accepted and one more is refused (docs/model.md's limits).
func TestConfigValidateBounds(t *testing.T) {
	base := Config{Vocab: 16, SeqLen: 16, Arch: Arch{Layers: 1, Heads: 1, DModel: 64, DFF: 8}}
	for _, c := range []struct {
		name string
		set  func(c *Config, at int)
		max  int
	}{
		{"layers", func(c *Config, v int) { c.Layers = v }, 64},
		{"heads", func(c *Config, v int) { c.Heads, c.DModel = v, v }, 64},
		{"d-model", func(c *Config, v int) { c.DModel = v }, 4096},
		{"d-ff", func(c *Config, v int) { c.DFF = v }, 16384},
	} {
		ok, over := base, base
		c.set(&ok, c.max)
		c.set(&over, c.max+1)
		if err := ok.Validate(); err != nil {
			t.Errorf("%s %d refused: %v", c.name, c.max, err)
		}
		if err := over.Validate(); err == nil {
			t.Errorf("%s %d accepted", c.name, c.max+1)
		}
	}
}

// TestInitWeightsDistributions: embeddings N(0,1), linear weights
// U(-1/sqrt(in), 1/sqrt(in)) filling that range, biases 0, LayerNorm
// gains 1 (docs/model.md).
func TestInitWeightsDistributions(t *testing.T) {
	c := Config{Vocab: 16, SeqLen: 16, Arch: Arch{Layers: 1, Heads: 2, DModel: 64, DFF: 128, Positions: true}}
	w := InitWeights(c, 3)
	for _, p := range w.Params {
		lo, hi, sum, sq := math.Inf(1), math.Inf(-1), 0.0, 0.0
		for _, v := range p.Data {
			x := float64(v)
			lo, hi, sum, sq = math.Min(lo, x), math.Max(hi, x), sum+x, sq+x*x
		}
		n := float64(len(p.Data))
		mean, sd := sum/n, math.Sqrt(sq/n-sum*sum/n/n)
		switch {
		case p.Name == "tok_emb" || p.Name == "pos_emb":
			if math.Abs(mean) > 0.15 || math.Abs(sd-1) > 0.15 {
				t.Errorf("%s: mean %.3f, sd %.3f, want N(0,1)", p.Name, mean, sd)
			}
		case len(p.Shape) == 2:
			lim := 1 / math.Sqrt(float64(p.Shape[0]))
			if lo < -lim || hi > lim || lo > -0.9*lim || hi < 0.9*lim || math.Abs(mean) > 0.1*lim {
				t.Errorf("%s: values in [%.4f, %.4f] with mean %.4f, want U(-%.4f, %.4f)", p.Name, lo, hi, mean, lim, lim)
			}
		case hasSuffix(p.Name, "ln1.weight", "ln2.weight", "ln_f.weight"):
			if lo != 1 || hi != 1 {
				t.Errorf("%s: gains in [%v, %v], want 1", p.Name, lo, hi)
			}
		default:
			if lo != 0 || hi != 0 {
				t.Errorf("%s: biases in [%v, %v], want 0", p.Name, lo, hi)
			}
		}
	}
}

// TestBoundsOfBlocksAndInputs: no models, no batch, a model index, token
// or target one past the end are refused; the last of each is accepted;
// a short ablation list switches off only what it names.
func TestBoundsOfBlocksAndInputs(t *testing.T) {
	c := smallConfig(true, true)
	if _, err := NewBlock(cpu.New(), c, 0); err == nil {
		t.Error("a block of 0 models")
	}
	b, err := NewBlock(cpu.New(), c, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if _, err := Build(b, 0, false); err == nil {
		t.Error("a batch of 0")
	}
	n, err := Build(b, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	rows := c.SeqLen
	tok, tgt := make([]int, rows), make([]int, rows)
	for i := range tgt {
		tgt[i] = -1
	}
	tok[0], tgt[rows-1] = c.Vocab-1, c.Vocab-1
	if err := n.SetInputs(1, tok, tgt); err != nil {
		t.Errorf("the last model, token and target: %v", err)
	}
	if err := n.SetInputs(2, tok, tgt); err == nil {
		t.Error("model 2 of 2")
	}
	if err := n.SetInputs(-1, tok, tgt); err == nil {
		t.Error("model -1")
	}
	tok[0] = c.Vocab
	if err := n.SetInputs(0, tok, tgt); err == nil {
		t.Error("token = vocab")
	}
	tok[0], tgt[rows-1] = -1, -1
	if err := n.SetInputs(0, tok, tgt); err == nil {
		t.Error("token -1")
	}
	tok[0], tgt[rows-1] = 0, c.Vocab
	if err := n.SetInputs(0, tok, tgt); err == nil {
		t.Error("target = vocab")
	}
	// Ablation lists shorter than the model: what is named, and only that.
	n.SetAblation(1, [][]bool{{false, true}})
	per := c.Layers * c.DModel
	dh := c.DModel / c.Heads
	for i, g := range n.gate {
		s, rest := i/per, i%per
		l, h := rest/c.DModel, (rest%c.DModel)/dh
		want := float32(1)
		if s == 1 && l == 0 && h == 1 {
			want = 0
		}
		if g != want {
			t.Fatalf("gate of model %d L%dH%d = %v, want %v", s, l, h, g, want)
		}
	}
	// A row shorter than the heads: L0H0 off, and its missing L0H1 on.
	n.SetAblation(1, [][]bool{{true}})
	for i, g := range n.gate[per : 2*per] {
		l, h := i/c.DModel, (i%c.DModel)/dh
		if want := float32(1 - b2f(l == 0 && h == 0)); g != want {
			t.Fatalf("after {{true}}: gate of L%dH%d = %v, want %v", l, h, g, want)
		}
	}
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}
