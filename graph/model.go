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
	"slices"

	G "gorgonia.org/gorgonia"

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
}

// Config is the model's shape: the task's vocabulary and sequence length,
// and the architecture.
type Config struct {
	Vocab  int `json:"vocab"`
	SeqLen int `json:"seq_len"`
	Arch
}

// String writes the shape flat, field by field, as %+v did before Arch
// was embedded.
func (c Config) String() string {
	return fmt.Sprintf("{Vocab:%d SeqLen:%d Layers:%d Heads:%d DModel:%d DFF:%d Positions:%t Causal:%t TiedEmbeddings:%t}",
		c.Vocab, c.SeqLen, c.Layers, c.Heads, c.DModel, c.DFF, c.Positions, c.Causal, c.TiedEmbeddings)
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

// Net is the model's graph compiled for a batch size and the S models of
// a Block, on the Block's device. Every tensor it computes stays there;
// SetInputs and SetAblation stage host data that Run uploads, and the
// results are read with Losses, Logits, Probs and Correct. A Net built
// to train leaves every model's gradients in Grads; Nets built from the
// same Block share its parameters.
type Net struct {
	Config Config
	Batch  int
	Seeds  int

	dev    kernels.Device
	block  *Block
	vm     *executor
	params []*G.Node

	// On the device: the batch (token ids and target ids as floats, per
	// model [Batch*SeqLen]), the gates (per model [Layers*DModel]: 1 keeps
	// a column, 0 ablates it), and the outputs. A training Net also
	// takes the batch's answers (its targets on the answer positions
	// alone) and reports the loss on them beside the training loss.
	tokens, targets, gates kernels.Tensor
	answers, answerLoss    kernels.Tensor
	loss, logits           kernels.Tensor
	correct                kernels.Tensor // argmax hits, for Nets built without gradients
	probs                  []kernels.Tensor
	grads                  kernels.Tensor // [S][P], when built to train
	gateGrads              []kernels.Tensor
	mem                    kernels.Arena

	// reads are the rows (of a model's Batch*SeqLen) the loss reads, in
	// order, for a Net of BuildTrain that leaves some out; nil when it
	// reads every row.
	reads []int

	// Host staging, uploaded by Run when changed.
	tok, tgt, ans, gate []float32
	inDirty, gateDirty  bool
	host                []float32 // download scratch
}

// Build compiles the model for batch sequences per model on the models of
// p. With train set it also builds the gradients of the loss for every
// parameter and every head gate.
func Build(p *Block, batch int, train bool) (*Net, error) { return compileNet(p, batch, train, nil) }

// BuildTrain compiles a training Net whose loss reads only the positions
// given (ascending positions within a sequence, as tasks.LossPositions
// gives them for a task and loss: every one that may carry a target). No
// other row of the last block's output reaches the loss, so from the last
// block's attention on, the Net computes those rows alone: their MLP, the
// final LayerNorm, the unembedding and the loss. The loss and every
// gradient are those of Build's training Net, bit for bit: the rows left
// out add only zeros to the sums over rows. Logits holds just those rows,
// and SetInputs refuses a target anywhere else.
func BuildTrain(p *Block, batch int, positions []int) (*Net, error) {
	c := p.Config
	for i, a := range positions {
		if a < 0 || a >= c.SeqLen || i > 0 && a <= positions[i-1] {
			return nil, fmt.Errorf("graph: positions %v are not ascending positions of 0..%d", positions, c.SeqLen-1)
		}
	}
	if len(positions) == 0 {
		return nil, fmt.Errorf("graph: a training Net needs positions to read")
	}
	return compileNet(p, batch, true, positions)
}

// compileNet is Build, reading only the given positions when positions
// is non-nil and leaves some out.
func compileNet(p *Block, batch int, train bool, positions []int) (_ *Net, err error) {
	c := p.Config
	if batch <= 0 {
		return nil, fmt.Errorf("batch must be positive, got %d", batch)
	}
	S, d := p.S, p.Dev
	n := &Net{Config: c, Batch: batch, Seeds: S, dev: d, block: p}
	if len(positions) < c.SeqLen {
		for b := range batch {
			for _, a := range positions {
				n.reads = append(n.reads, b*c.SeqLen+a)
			}
		}
	}
	// A failure frees what was made.
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	g := G.NewGraph()
	rows, dm := batch*c.SeqLen, c.DModel
	bound := map[*G.Node]kernels.Tensor{}
	n.mem = kernels.Arena{Dev: d, S: S}
	alloc := n.mem.Dense
	node := func(name string, shape ...int) *G.Node {
		if len(shape) == 1 {
			return G.NewVector(g, G.Float32, G.WithShape(shape...), G.WithName(name))
		}
		return G.NewMatrix(g, G.Float32, G.WithShape(shape...), G.WithName(name))
	}
	shapes := ParamShapes(c)
	byName := map[string]int{}
	for i, s := range shapes {
		byName[s.Name] = i
	}
	param := func(name string) *G.Node {
		i := byName[name]
		nd := node(name, shapes[i].Shape...)
		bound[nd] = p.Param(i)
		n.params = append(n.params, nd)
		return nd
	}
	// out is the rows the loss reads: all of them, or the answer rows.
	out := n.outRows()
	if n.tokens, err = alloc(rows); err != nil {
		return nil, err
	}
	if n.targets, err = alloc(out); err != nil {
		return nil, err
	}
	if n.gates, err = alloc(c.Layers * dm); err != nil {
		return nil, err
	}
	n.tok, n.tgt = make([]float32, S*rows), make([]float32, S*out)
	for i := range n.tgt {
		n.tgt[i] = -1
	}
	if train {
		if n.answers, err = alloc(out); err != nil {
			return nil, err
		}
		if n.answerLoss, err = alloc(1); err != nil {
			return nil, err
		}
		n.ans = slices.Clone(n.tgt)
	}
	n.gate = make([]float32, S*c.Layers*dm)
	tokens, targets := node("tokens", rows), node("targets", out)
	bound[tokens], bound[targets] = n.tokens, n.targets
	// The answer rows' ids within a model's rows, shared by every model:
	// the last block looks them up as the embeddings look up tokens.
	var answerRows *G.Node
	if n.reads != nil {
		ids := make([]float32, len(n.reads))
		for i, r := range n.reads {
			ids[i] = float32(r)
		}
		t, err := n.mem.Shared(ids)
		if err != nil {
			return nil, err
		}
		answerRows = node("answer_rows", out)
		bound[answerRows] = t
	}

	// One node for the token embedding: with tied embeddings the
	// unembedding reads it too, and Gorgonia sums both gradients into it.
	tokEmb := param("tok_emb")
	x := embed(tokens, tokEmb)
	if c.Positions {
		// Every model reads the same position ids: one shared tensor.
		ids := make([]float32, rows)
		for r := range ids {
			ids[r] = float32(r % c.SeqLen)
		}
		t, err := n.mem.Shared(ids)
		if err != nil {
			return nil, err
		}
		pos := node("positions", rows)
		bound[pos] = t
		x = add(x, embed(pos, param("pos_emb")))
	}
	s := kernels.Shape{B: batch, T: c.SeqLen, H: c.Heads, Dh: c.HeadDim(), Causal: c.Causal}
	var gates, probs G.Nodes
	for l := 0; l < c.Layers; l++ {
		b := fmt.Sprintf("blocks.%d.", l)
		gate := node(b+"gate", dm)
		bound[gate] = n.gates.View(l*dm, dm)
		gates = append(gates, gate)

		h := layerNorm(x, param(b+"ln1.weight"), param(b+"ln1.bias"))
		q := linear(h, param(b+"attn.q.weight"), param(b+"attn.q.bias"))
		k := linear(h, param(b+"attn.k.weight"), param(b+"attn.k.bias"))
		v := linear(h, param(b+"attn.v.weight"), param(b+"attn.v.bias"))
		pr := attentionProbs(s, q, k)
		t, err := alloc(s.ProbsLen())
		if err != nil {
			return nil, err
		}
		bound[pr] = t
		n.probs, probs = append(n.probs, t), append(probs, pr)
		o := colScale(attentionMix(s, pr, v), gate)
		x = add(x, linear(o, param(b+"attn.out.weight"), param(b+"attn.out.bias")))
		if l == c.Layers-1 && answerRows != nil {
			x = embed(answerRows, x)
		}

		h = layerNorm(x, param(b+"ln2.weight"), param(b+"ln2.bias"))
		h = gelu(linear(h, param(b+"mlp.fc1.weight"), param(b+"mlp.fc1.bias")))
		x = add(x, linear(h, param(b+"mlp.fc2.weight"), param(b+"mlp.fc2.bias")))
	}
	x = layerNorm(x, param("ln_f.weight"), param("ln_f.bias"))
	var logits *G.Node
	if c.TiedEmbeddings {
		logits = linearT(x, tokEmb, param("unembed.bias"))
	} else {
		logits = linear(x, param("unembed.weight"), param("unembed.bias"))
	}
	loss := softmaxXent(logits, targets)
	if n.logits, err = alloc(out * c.Vocab); err != nil {
		return nil, err
	}
	if n.loss, err = alloc(1); err != nil {
		return nil, err
	}
	bound[logits], bound[loss] = n.logits, n.loss
	n.SetAblation(-1, nil)

	// The executor (exec.go) runs what these outputs need.
	outputs := append(G.Nodes{loss, logits}, probs...)
	if train {
		// The loss on the answers alone: reported, never differentiated.
		ans := node("answers", out)
		al := softmaxXent(logits, ans)
		bound[ans], bound[al] = n.answers, n.answerLoss
		outputs = append(outputs, al)
		// The gates' gradients say how much each head matters (pruning).
		wrt := append(append(G.Nodes(nil), n.params...), gates...)
		grads, err := G.Grad(loss, wrt...)
		if err != nil {
			return nil, fmt.Errorf("graph: gradients: %w", err)
		}
		if n.grads, err = alloc(p.P); err != nil {
			return nil, err
		}
		for i, gr := range grads {
			if _, dup := bound[gr]; dup {
				return nil, fmt.Errorf("graph: gradient %d is bound twice", i)
			}
			if i < len(n.params) {
				j := byName[n.params[i].Name()]
				bound[gr] = n.grads.View(p.offs[j], p.Param(j).Len)
				continue
			}
			t, err := alloc(dm)
			if err != nil {
				return nil, err
			}
			bound[gr] = t
			n.gateGrads = append(n.gateGrads, t)
		}
		outputs = append(outputs, grads...)
	} else if n.correct, err = alloc(1); err != nil {
		return nil, err
	}
	if n.vm, err = compile(g, outputs, d, S, bound); err != nil {
		return nil, err
	}
	return n, nil
}

// Block is the parameters the Net computes with.
func (n *Net) Block() *Block { return n.block }

// SetInputs stages model s's batch: tokens and targets are
// [Batch*SeqLen], targets negative where a position has none. The loss
// is the mean cross-entropy over the positions with a target.
func (n *Net) SetInputs(s int, tokens, targets []int) error {
	c := n.Config
	rows := n.Batch * c.SeqLen
	if s < 0 || s >= n.Seeds {
		return fmt.Errorf("graph: model %d of %d", s, n.Seeds)
	}
	if len(tokens) != rows || len(targets) != len(tokens) {
		return fmt.Errorf("graph: batch of %d tokens, want %d", len(tokens), rows)
	}
	tok := n.tok[s*rows : (s+1)*rows]
	for r, t := range tokens {
		if t < 0 || t >= c.Vocab {
			return fmt.Errorf("graph: token %d out of range 0..%d", t, c.Vocab-1)
		}
		tok[r] = float32(t)
	}
	return n.stageTargets(n.tgt, s, targets)
}

// SetAnswers stages, for a training Net, model s's answers: the targets
// of its batch's answer positions alone ([Batch*SeqLen], negative
// elsewhere), whose loss AnswerLosses reports.
func (n *Net) SetAnswers(s int, answers []int) error {
	if n.ans == nil {
		return fmt.Errorf("graph: only a training Net takes answers")
	}
	if s < 0 || s >= n.Seeds {
		return fmt.Errorf("graph: model %d of %d", s, n.Seeds)
	}
	if len(answers) != n.Batch*n.Config.SeqLen {
		return fmt.Errorf("graph: %d answers, want %d", len(answers), n.Batch*n.Config.SeqLen)
	}
	return n.stageTargets(n.ans, s, answers)
}

// stageTargets puts model s's targets of every row into dst's rows that
// the loss reads; a target on a row it does not read is refused.
func (n *Net) stageTargets(dst []float32, s int, targets []int) error {
	c, out := n.Config, n.outRows()
	tgt := dst[s*out : (s+1)*out]
	next := 0 // the read row the next read position fills
	for r, y := range targets {
		if y >= c.Vocab {
			return fmt.Errorf("graph: target %d out of range 0..%d", y, c.Vocab-1)
		}
		switch {
		case n.reads == nil:
			tgt[r] = float32(max(y, -1))
		case next < out && n.reads[next] == r:
			tgt[next] = float32(max(y, -1))
			next++
		case y >= 0:
			// The first sequence's rows are the positions read.
			return fmt.Errorf("graph: a target at position %d, which this Net does not read (it reads %v)", r%c.SeqLen, n.reads[:out/n.Batch])
		}
	}
	n.inDirty = true
	return nil
}

// outRows is the number of rows the loss reads per model.
func (n *Net) outRows() int {
	if n.reads != nil {
		return len(n.reads)
	}
	return n.Batch * n.Config.SeqLen
}

// SetAblation switches heads off for model s: off[l][h] true zeroes head
// h of layer l's output before the output projection. nil switches every
// head on. A negative s sets every model.
func (n *Net) SetAblation(s int, off [][]bool) {
	if s < 0 {
		for k := 0; k < n.Seeds; k++ {
			n.SetAblation(k, off)
		}
		return
	}
	c := n.Config
	dh, per := c.HeadDim(), c.Layers*c.DModel
	g := n.gate[s*per : (s+1)*per]
	for j := range g {
		l, h := j/c.DModel, j%c.DModel/dh
		g[j] = 1
		if l < len(off) && h < len(off[l]) && off[l][h] {
			g[j] = 0
		}
	}
	n.gateDirty = true
}

// Run uploads what SetInputs and SetAblation staged and executes the graph
// once for every model (forward, and backward when built to train).
// Values read from the Net are overwritten by the next Run.
func (n *Net) Run() error {
	if n.inDirty {
		if err := n.dev.Upload(n.tokens, n.Seeds, n.tok); err != nil {
			return err
		}
		if err := n.dev.Upload(n.targets, n.Seeds, n.tgt); err != nil {
			return err
		}
		if n.ans != nil {
			if err := n.dev.Upload(n.answers, n.Seeds, n.ans); err != nil {
				return err
			}
		}
		n.inDirty = false
	}
	if n.gateDirty {
		if err := n.dev.Upload(n.gates, n.Seeds, n.gate); err != nil {
			return err
		}
		n.gateDirty = false
	}
	if err := n.vm.RunAll(); err != nil {
		return err
	}
	if n.correct.Buf != nil {
		c := n.Config
		return n.dev.CountCorrect(n.Seeds, n.Batch*c.SeqLen, c.Vocab, n.logits, n.targets, n.correct)
	}
	return nil
}

// read downloads every model's t into the Net's scratch, valid until the
// next read.
func (n *Net) read(t kernels.Tensor) ([]float32, error) {
	size := n.Seeds * t.Len
	if cap(n.host) < size {
		n.host = make([]float32, size)
	}
	h := n.host[:size]
	return h, n.dev.Download(h, t, n.Seeds)
}

// Losses reads the last run's loss of every model.
func (n *Net) Losses() ([]float32, error) { return n.read(n.loss) }

// AnswerLosses reads, after a training Run, every model's loss on the
// answers SetAnswers staged (0 for a model with none).
func (n *Net) AnswerLosses() ([]float32, error) {
	if n.ans == nil {
		return nil, fmt.Errorf("graph: only a training Net has an answer loss")
	}
	return n.read(n.answerLoss)
}

// LossTensor is where each model's loss lands (1 float per model).
func (n *Net) LossTensor() kernels.Tensor { return n.loss }

// Correct reads, after a run of a Net built without gradients, each
// model's number of answer positions whose argmax is the target.
func (n *Net) Correct() ([]float32, error) {
	if n.correct.Buf == nil {
		return nil, fmt.Errorf("graph: a training Net does not count hits")
	}
	return n.read(n.correct)
}

// Logits reads the last run's logits, [Seeds][Batch*SeqLen][Vocab]; for
// a Net of BuildTrain, only the rows it reads, [Seeds][Batch*len(positions)][Vocab].
func (n *Net) Logits() ([]float32, error) { return n.read(n.logits) }

// Probs reads the last run's attention probabilities of layer l for the
// first k sequences of every model, [Seeds][k][Heads][SeqLen][SeqLen].
func (n *Net) Probs(l, k int) ([]float32, error) {
	c := n.Config
	if k < 0 || k > n.Batch {
		return nil, fmt.Errorf("graph: %d sequences of a batch of %d", k, n.Batch)
	}
	return n.read(n.probs[l].View(0, k*c.Heads*c.SeqLen*c.SeqLen))
}

// ProbsTensor is where layer l's attention probabilities land, for a
// caller that reads them on the device (the viewer's textures).
func (n *Net) ProbsTensor(l int) kernels.Tensor { return n.probs[l] }

// Grads is, after a training Run, every model's gradient block: [S][P],
// laid out as the Block.
func (n *Net) Grads() kernels.Tensor { return n.grads }

// GateGrads reads, after a training Run, d loss / d gate for every model
// and head: the gradient of a gate that scales the whole head's output
// (Michel et al. 2019), [model][layer][head].
func (n *Net) GateGrads() ([][][]float64, error) {
	if n.grads.Buf == nil {
		return nil, fmt.Errorf("graph: gate gradients need a Net built to train")
	}
	c := n.Config
	dh := c.HeadDim()
	out := make([][][]float64, n.Seeds)
	for s := range out {
		out[s] = make([][]float64, c.Layers)
		for l := range out[s] {
			out[s][l] = make([]float64, c.Heads)
		}
	}
	for l, t := range n.gateGrads {
		g, err := n.read(t)
		if err != nil {
			return nil, err
		}
		for s := range out {
			for j, v := range g[s*c.DModel : (s+1)*c.DModel] {
				out[s][l][j/dh] += float64(v)
			}
		}
	}
	return out, nil
}

// Traffic is the bytes one Run moves per model, counted as every kernel
// reading its inputs and writing its output once; Kernels is the number
// of kernel launches a Run makes (for all models at once).
func (n *Net) Traffic() (bytes int64, kernels int) { return n.vm.traffic(), len(n.vm.steps) }

// Close frees the Net's tensors on the device (not the Block's).
func (n *Net) Close() error {
	if n.vm != nil {
		n.vm.close()
	}
	n.mem.Free()
	return nil
}
