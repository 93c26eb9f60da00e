// Package graph builds headlab's transformer as a Gorgonia computation
// graph: parameters, forward pass, loss, symbolic gradients and the head
// gates used for ablation. It reads top to bottom like the model: Config,
// Weights, then Build, whose body is the forward pass. docs/model.md gives
// the exact math.
package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"headlab/kernels"
)

// Config is the model's shape.
type Config struct {
	Vocab     int  `json:"vocab"`
	SeqLen    int  `json:"seq_len"`
	Layers    int  `json:"layers"`
	Heads     int  `json:"heads"`
	DModel    int  `json:"d_model"`
	DFF       int  `json:"d_ff"`
	Positions bool `json:"positions"`
	Causal    bool `json:"causal"`
}

// Validate names the first problem with the shape.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"vocab", c.Vocab}, {"sequence length", c.SeqLen}, {"layers", c.Layers}, {"heads", c.Heads}, {"d-model", c.DModel}, {"d-ff", c.DFF}} {
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
			Param{Name: b + "ln2.weight", Shape: []int{d}}, Param{Name: b + "ln2.bias", Shape: []int{d}},
			Param{Name: b + "mlp.fc1.weight", Shape: []int{d, f}}, Param{Name: b + "mlp.fc1.bias", Shape: []int{f}},
			Param{Name: b + "mlp.fc2.weight", Shape: []int{f, d}}, Param{Name: b + "mlp.fc2.bias", Shape: []int{d}},
		)
	}
	return append(ps,
		Param{Name: "ln_f.weight", Shape: []int{d}}, Param{Name: "ln_f.bias", Shape: []int{d}},
		Param{Name: "unembed.weight", Shape: []int{d, c.Vocab}}, Param{Name: "unembed.bias", Shape: []int{c.Vocab}})
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

// Net is the model's graph compiled for one batch size. Parameter nodes
// share their storage with Weights, so an optimiser step on one Net is
// seen by every other Net built from the same Weights.
type Net struct {
	Config Config
	Batch  int

	g      *G.ExprGraph
	vm     *executor
	params []*G.Node

	tokens, targets *G.Node // inputs: one-hot tokens [N, V], target weights [N, V]
	tokT, tgtT      *tensor.Dense
	gates           []*G.Node // per layer [D]: 1 keeps a head's columns, 0 ablates it
	gateT           []*tensor.Dense

	logits, loss *G.Node
	probs        []*G.Node // per layer [B*H*T, T]
}

// Build compiles the model for batch sequences on backend be. With train
// set it also builds the gradients of the loss for every parameter.
func Build(c Config, w *Weights, be kernels.Backend, batch int, train bool) (*Net, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if batch <= 0 {
		return nil, fmt.Errorf("batch must be positive, got %d", batch)
	}
	n := &Net{Config: c, Batch: batch, g: G.NewGraph()}
	rows, d := batch*c.SeqLen, c.DModel
	param := func(name string) *G.Node {
		p := w.Get(name)
		t := tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(p.Data))
		var node *G.Node
		if len(p.Shape) == 1 {
			node = G.NewVector(n.g, G.Float32, G.WithShape(p.Shape...), G.WithName(name), G.WithValue(t))
		} else {
			node = G.NewMatrix(n.g, G.Float32, G.WithShape(p.Shape...), G.WithName(name), G.WithValue(t))
		}
		n.params = append(n.params, node)
		return node
	}
	input := func(name string, shape ...int) (*G.Node, *tensor.Dense) {
		t := tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float32))
		if len(shape) == 1 {
			return G.NewVector(n.g, G.Float32, G.WithShape(shape...), G.WithName(name), G.WithValue(t)), t
		}
		return G.NewMatrix(n.g, G.Float32, G.WithShape(shape...), G.WithName(name), G.WithValue(t)), t
	}

	n.tokens, n.tokT = input("tokens", rows, c.Vocab)
	n.targets, n.tgtT = input("targets", rows, c.Vocab)
	x := Linear(n.tokens, param("tok_emb"), nil)
	if c.Positions {
		pos, posT := input("positions", rows, c.SeqLen)
		oneHotPositions(posT.Data().([]float32), batch, c.SeqLen)
		x = must(G.Add(x, Linear(pos, param("pos_emb"), nil)))
	}
	s := kernels.Shape{B: batch, T: c.SeqLen, H: c.Heads, Dh: c.HeadDim(), Causal: c.Causal}
	for l := 0; l < c.Layers; l++ {
		b := fmt.Sprintf("blocks.%d.", l)
		gate, gateT := input(b+"gate", d)
		n.gates, n.gateT = append(n.gates, gate), append(n.gateT, gateT)

		h := LayerNorm(x, param(b+"ln1.weight"), param(b+"ln1.bias"))
		q := Linear(h, param(b+"attn.q.weight"), param(b+"attn.q.bias"))
		k := Linear(h, param(b+"attn.k.weight"), param(b+"attn.k.bias"))
		v := Linear(h, param(b+"attn.v.weight"), param(b+"attn.v.bias"))
		p := AttentionProbs(be, s, q, k)
		n.probs = append(n.probs, p)
		o := ColScale(AttentionMix(be, s, p, v), gate)
		x = must(G.Add(x, Linear(o, param(b+"attn.out.weight"), param(b+"attn.out.bias"))))

		h = LayerNorm(x, param(b+"ln2.weight"), param(b+"ln2.bias"))
		h = GELU(Linear(h, param(b+"mlp.fc1.weight"), param(b+"mlp.fc1.bias")))
		x = must(G.Add(x, Linear(h, param(b+"mlp.fc2.weight"), param(b+"mlp.fc2.bias"))))
	}
	x = LayerNorm(x, param("ln_f.weight"), param("ln_f.bias"))
	n.logits = Linear(x, param("unembed.weight"), param("unembed.bias"))
	n.loss = SoftmaxCrossEntropy(n.logits, n.targets)
	n.SetAblation(nil)

	// The executor (exec.go) runs what these outputs need.
	outputs := append(G.Nodes{n.loss, n.logits}, n.probs...)
	if train {
		// The gates' gradients say how much each head matters (pruning).
		wrt := append(append([]*G.Node(nil), n.params...), n.gates...)
		grads, err := G.Grad(n.loss, wrt...)
		if err != nil {
			return nil, fmt.Errorf("graph: gradients: %w", err)
		}
		outputs = append(outputs, grads...)
	}
	vm, err := compile(n.g, outputs)
	if err != nil {
		return nil, err
	}
	n.vm = vm
	return n, nil
}

func must(n *G.Node, err error) *G.Node {
	if err != nil {
		panic(fmt.Sprintf("graph: %v", err))
	}
	return n
}

func oneHotPositions(dst []float32, batch, t int) {
	clear(dst)
	for r := 0; r < batch*t; r++ {
		dst[r*t+r%t] = 1
	}
}

// SetInputs loads a batch: tokens and targets are [Batch*SeqLen], targets
// negative where a position is not an answer. The loss is the mean
// cross-entropy over the answer positions.
func (n *Net) SetInputs(tokens, targets []int) error {
	c := n.Config
	if len(tokens) != n.Batch*c.SeqLen || len(targets) != len(tokens) {
		return fmt.Errorf("graph: batch of %d tokens, want %d", len(tokens), n.Batch*c.SeqLen)
	}
	tok, tgt := n.tokT.Data().([]float32), n.tgtT.Data().([]float32)
	clear(tok)
	clear(tgt)
	answers := 0
	for r, t := range tokens {
		if t < 0 || t >= c.Vocab {
			return fmt.Errorf("graph: token %d out of range 0..%d", t, c.Vocab-1)
		}
		tok[r*c.Vocab+t] = 1
		if targets[r] >= c.Vocab {
			return fmt.Errorf("graph: target %d out of range 0..%d", targets[r], c.Vocab-1)
		}
		if targets[r] >= 0 {
			answers++
		}
	}
	for r, t := range targets {
		if t >= 0 {
			tgt[r*c.Vocab+t] = 1 / float32(answers)
		}
	}
	return nil
}

// SetAblation switches heads off: off[l][h] true zeroes head h of layer l's
// output before the output projection. nil switches every head on.
func (n *Net) SetAblation(off [][]bool) {
	dh := n.Config.HeadDim()
	for l, t := range n.gateT {
		g := t.Data().([]float32)
		for j := range g {
			g[j] = 1
			if l < len(off) && j/dh < len(off[l]) && off[l][j/dh] {
				g[j] = 0
			}
		}
	}
}

// Run executes the graph once (forward, and backward when built to train).
// Values read from the Net (Loss, Logits, Probs, gradients) are overwritten
// by the next Run: copy what must outlive it.
func (n *Net) Run() error { return n.vm.RunAll() }

// Loss is the last run's loss.
func (n *Net) Loss() float32 { return n.loss.Value().Data().(float32) }

// Logits are the last run's logits, [Batch*SeqLen, Vocab].
func (n *Net) Logits() []float32 { return n.logits.Value().Data().([]float32) }

// Probs are the last run's attention probabilities of layer l,
// [Batch, Heads, SeqLen, SeqLen].
func (n *Net) Probs(l int) []float32 { return n.probs[l].Value().Data().([]float32) }

// GateGrads returns, after a training Run, d loss / d gate for every head:
// the gradient of a gate that scales the whole head's output (Michel et
// al. 2019), [layer][head].
func (n *Net) GateGrads() ([][]float64, error) {
	dh := n.Config.HeadDim()
	out := make([][]float64, len(n.gates))
	for l, g := range n.gates {
		gv, err := g.Grad()
		if err != nil {
			return nil, fmt.Errorf("graph: gate gradient: %w", err)
		}
		out[l] = make([]float64, n.Config.Heads)
		for j, v := range gv.Data().([]float32) {
			out[l][j/dh] += float64(v)
		}
	}
	return out, nil
}

// Params are the parameter nodes, in Weights order, for an optimiser.
func (n *Net) Params() []*G.Node { return n.params }

// Close releases the machine.
func (n *Net) Close() error { return n.vm.Close() }
