// Package graph builds headlab's transformer as a Gorgonia computation
// graph: parameters, forward pass, loss, symbolic gradients, the head
// gates used for ablation, and the probes of the causal tools. model.go
// holds the shape, the weights and their device Block; forward.go the
// forward pass, top to bottom; net.go the Net that compiles it and binds
// its tensors; probe.go what a probed Net keeps and lets callers replace;
// ops.go and attention.go the ops, each a kernel beside its gradient;
// exec.go the executor that runs them. graph computes through
// kernels.Device alone: the backend is chosen by its callers.
// docs/model.md gives the exact math.
package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	"headlab/kernels"
)

// Arch is the part of the model's shape a run chooses, whatever the task:
// the one declaration of it, which Config and train.Config both embed.
// Embedded, its fields read and marshal as the outer struct's own.
type Arch struct {
	Layers    int  `json:"layers"`
	Heads     int  `json:"heads"`
	DModel    int  `json:"d_model"`
	DFF       int  `json:"d_ff"`
	Positions bool `json:"positions"`
	Causal    bool `json:"causal"`
	// TiedEmbeddings makes the unembedding the token embedding transposed:
	// logits = x tok_embᵀ + unembed.bias, with no unembed.weight.
	TiedEmbeddings bool `json:"tied_embeddings,omitempty"`
	// NoMLP leaves every block's MLP out, and the LayerNorm before it:
	// an attention-only model (Elhage et al. 2021), whose DFF is 0.
	NoMLP bool `json:"no_mlp,omitempty"`
}

// Config is the model's shape: the task's vocabulary and sequence length,
// and the architecture.
type Config struct {
	Vocab  int `json:"vocab"`
	SeqLen int `json:"seq_len"`
	Arch
}

// String writes the shape flat, field by field (%+v would nest Arch's
// fields in braces of their own).
func (c Config) String() string {
	s := fmt.Sprintf("{Vocab:%d SeqLen:%d Layers:%d Heads:%d DModel:%d DFF:%d Positions:%t Causal:%t TiedEmbeddings:%t",
		c.Vocab, c.SeqLen, c.Layers, c.Heads, c.DModel, c.DFF, c.Positions, c.Causal, c.TiedEmbeddings)
	if c.NoMLP {
		s += " NoMLP:true"
	}
	return s + "}"
}

// Validate names the first problem with the shape.
func (c Config) Validate() error {
	dims := []struct {
		name string
		v    int
	}{{"vocab", c.Vocab}, {"sequence length", c.SeqLen}, {"layers", c.Layers}, {"heads", c.Heads}, {"d-model", c.DModel}, {"d-ff", c.DFF}}
	if c.NoMLP {
		if c.DFF != 0 {
			return fmt.Errorf("--d-ff %d with --no-mlp: an attention-only model has no MLP to size", c.DFF)
		}
		dims = dims[:len(dims)-1]
	}
	for _, f := range dims {
		if f.v <= 0 {
			return fmt.Errorf("%s must be positive, got %d", f.name, f.v)
		}
	}
	if c.DModel%c.Heads != 0 {
		return fmt.Errorf("--heads %d does not divide --d-model %d", c.Heads, c.DModel)
	}
	if c.Layers > 64 || c.Heads > 64 || c.DModel > 4096 || c.DFF > 16384 {
		return fmt.Errorf("model too large: at most 64 layers, 64 heads, d-model 4096, d-ff 16384")
	}
	return nil
}

// HeadDim is the width of one head.
func (c Config) HeadDim() int { return c.DModel / c.Heads }

// Param is one named parameter tensor, row-major float32.
type Param struct {
	Name  string
	Shape []int
	Data  []float32
}

// Weights holds every parameter of a model, in a fixed order.
type Weights struct {
	Params []*Param
	byName map[string]*Param
}

// Count is the number of scalar parameters.
func (w *Weights) Count() int {
	n := 0
	for _, p := range w.Params {
		n += len(p.Data)
	}
	return n
}

// Get returns the parameter with the given name, or nil.
func (w *Weights) Get(name string) *Param { return w.byName[name] }

func (w *Weights) add(name string, shape ...int) *Param {
	n := 1
	for _, s := range shape {
		n *= s
	}
	p := &Param{Name: name, Shape: shape, Data: make([]float32, n)}
	w.Params = append(w.Params, p)
	w.byName[name] = p
	return p
}

// ParamShapes lists every parameter's name and shape for cfg, in order.
// Linear weights are [in, out]: the layer computes x W + b.
func ParamShapes(c Config) []Param {
	d, f := c.DModel, c.DFF
	ps := []Param{{Name: "tok_emb", Shape: []int{c.Vocab, d}}}
	if c.Positions {
		ps = append(ps, Param{Name: "pos_emb", Shape: []int{c.SeqLen, d}})
	}
	for l := 0; l < c.Layers; l++ {
		b := fmt.Sprintf("blocks.%d.", l)
		ps = append(ps,
			Param{Name: b + "ln1.weight", Shape: []int{d}}, Param{Name: b + "ln1.bias", Shape: []int{d}},
			Param{Name: b + "attn.q.weight", Shape: []int{d, d}}, Param{Name: b + "attn.q.bias", Shape: []int{d}},
			Param{Name: b + "attn.k.weight", Shape: []int{d, d}}, Param{Name: b + "attn.k.bias", Shape: []int{d}},
			Param{Name: b + "attn.v.weight", Shape: []int{d, d}}, Param{Name: b + "attn.v.bias", Shape: []int{d}},
			Param{Name: b + "attn.out.weight", Shape: []int{d, d}}, Param{Name: b + "attn.out.bias", Shape: []int{d}},
		)
		if c.NoMLP {
			continue
		}
		ps = append(ps,
			Param{Name: b + "ln2.weight", Shape: []int{d}}, Param{Name: b + "ln2.bias", Shape: []int{d}},
			Param{Name: b + "mlp.fc1.weight", Shape: []int{d, f}}, Param{Name: b + "mlp.fc1.bias", Shape: []int{f}},
			Param{Name: b + "mlp.fc2.weight", Shape: []int{f, d}}, Param{Name: b + "mlp.fc2.bias", Shape: []int{d}},
		)
	}
	ps = append(ps, Param{Name: "ln_f.weight", Shape: []int{d}}, Param{Name: "ln_f.bias", Shape: []int{d}})
	if !c.TiedEmbeddings {
		ps = append(ps, Param{Name: "unembed.weight", Shape: []int{d, c.Vocab}})
	}
	return append(ps, Param{Name: "unembed.bias", Shape: []int{c.Vocab}})
}

// NewWeights allocates zeroed weights of the right shapes for c.
func NewWeights(c Config) *Weights {
	w := &Weights{byName: map[string]*Param{}}
	for _, p := range ParamShapes(c) {
		w.add(p.Name, p.Shape...)
	}
	return w
}

// InitWeights returns freshly initialised weights, deterministic in seed:
// embeddings N(0, 1); linear weights U(-1/sqrt(in), 1/sqrt(in)); biases 0;
// LayerNorm gains 1. Gorgonia's initialisers seed from the clock, so none
// of them is used.
func InitWeights(c Config, seed uint64) *Weights {
	rng := rand.New(rand.NewPCG(seed, 0x5eed0f4ead5))
	w := NewWeights(c)
	for _, p := range w.Params {
		switch {
		case p.Name == "tok_emb" || p.Name == "pos_emb":
			for i := range p.Data {
				p.Data[i] = float32(rng.NormFloat64())
			}
		case len(p.Shape) == 2:
			lim := 1 / math.Sqrt(float64(p.Shape[0]))
			for i := range p.Data {
				p.Data[i] = float32((2*rng.Float64() - 1) * lim)
			}
		case hasSuffix(p.Name, "ln1.weight", "ln2.weight", "ln_f.weight"):
			for i := range p.Data {
				p.Data[i] = 1
			}
		}
	}
	return w
}

func hasSuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if len(s) >= len(x) && s[len(s)-len(x):] == x {
			return true
		}
	}
	return false
}

// Block holds the parameters of S models of one shape on a device: one
// dense [S][P] tensor, each model's P parameters in Weights order, so
// that one Adam dispatch updates every model.
type Block struct {
	Dev    kernels.Device
	Config Config
	S, P   int
	T      kernels.Tensor
	offs   []int // each parameter's offset within a model's P
}

// NewBlock allocates zeroed parameters for S models of shape c on d.
func NewBlock(d kernels.Device, c Config, S int) (*Block, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if S <= 0 {
		return nil, fmt.Errorf("graph: %d models", S)
	}
	b := &Block{Dev: d, Config: c, S: S}
	for _, p := range ParamShapes(c) {
		n := 1
		for _, s := range p.Shape {
			n *= s
		}
		b.offs = append(b.offs, b.P)
		b.P += n
	}
	buf, err := d.Alloc(S * b.P)
	if err != nil {
		return nil, err
	}
	b.T = kernels.Dense(buf, b.P)
	return b, nil
}

// BlockOf puts the weights of len(ws) models of shape c on d.
func BlockOf(d kernels.Device, c Config, ws []*Weights) (*Block, error) {
	b, err := NewBlock(d, c, len(ws))
	if err != nil {
		return nil, err
	}
	if err := b.Upload(ws); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// Free releases the block's storage.
func (b *Block) Free() { b.Dev.Free(b.T.Buf) }

// Param is parameter i (in Weights order) of every model.
func (b *Block) Param(i int) kernels.Tensor {
	n := b.P - b.offs[i]
	if i+1 < len(b.offs) {
		n = b.offs[i+1] - b.offs[i]
	}
	return b.T.View(b.offs[i], n)
}

// Upload sets model s's parameters to ws[s], for every s < len(ws).
func (b *Block) Upload(ws []*Weights) error {
	host := make([]float32, 0, len(ws)*b.P)
	for _, w := range ws {
		if len(w.Params) != len(b.offs) {
			return fmt.Errorf("graph: weights of %d tensors, the model has %d", len(w.Params), len(b.offs))
		}
		for _, p := range w.Params {
			host = append(host, p.Data...)
		}
	}
	if len(host) != len(ws)*b.P {
		return fmt.Errorf("graph: weights of %d floats, want %d", len(host), len(ws)*b.P)
	}
	return b.Dev.Upload(b.T, len(ws), host)
}

// Download copies model s's parameters into ws[s], for every s < len(ws).
func (b *Block) Download(ws []*Weights) error {
	host := make([]float32, len(ws)*b.P)
	if err := b.Dev.Download(host, b.T, len(ws)); err != nil {
		return err
	}
	for s, w := range ws {
		at := host[s*b.P:]
		for _, p := range w.Params {
			at = at[copy(p.Data, at):]
		}
	}
	return nil
}
