package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"headlab/kernels"
)

// Net is the model's graph compiled for a batch size and the S models of
// a Block, on the Block's device. Every tensor it computes stays there;
// SetInputs and SetAblation (and, on a probed Net, Intervention) stage
// host data that Run uploads, and the results are read with Losses,
// Logits, Probs and Correct (and Capture, FinalScale and LensLogits). A
// Net built to train leaves every model's gradients in Grads; Nets built
// from the same Block share its parameters.
type Net struct {
	Config Config
	Batch  int
	Seeds  int

	kind   netKind
	dev    kernels.Device
	block  *Block
	vm     *executor
	params []*G.Node

	// On the device: the batch (token ids and target ids as floats, per
	// model [Batch*SeqLen]), the head gates (per model [Layers*DModel]: 1
	// keeps a column, 0 ablates it; a probed Net has its interventions
	// instead), and the outputs. A training Net also takes the batch's
	// answers (its targets on the answer positions alone) and reports
	// the loss on them beside the training loss.
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

	// probe is what a probed Net keeps and opens to replacement (probe.go);
	// nil in other Nets.
	probe *probe
	// resume is a resumable Net's kept inputs, or a tail's first block
	// (resume.go); nil in other Nets.
	resume *resumable

	// Host staging, uploaded by Run when changed.
	tok, tgt, ans, gate []float32
	inDirty, gateDirty  bool
	host                []float32 // download scratch
}

// netKind is what a Net is built for.
type netKind int

const (
	evalNet       netKind = iota // forward only, heads gated by column
	trainNet                     // forward and gradients
	probedNet                    // forward only, activations kept and open to replacement
	edgeNet                      // a probed Net whose receivers' inputs are open to change, with a metric's gradient (edges.go)
	linearEdgeNet                // an edge Net with no LayerNorm and no GELU (edges.go)
)

// Build compiles the model for batch sequences per model on the models of
// p. With train set it also builds the gradients of the loss for every
// parameter and every head gate.
func Build(p *Block, batch int, train bool) (*Net, error) {
	kind := evalNet
	if train {
		kind = trainNet
	}
	return compileNet(p, batch, kind, nil)
}

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
	return compileNet(p, batch, trainNet, positions)
}

// builder is what compiling a Net holds while forward describes the
// model: the graph, the Net being made, and the tensors it gives nodes.
// Its hooks allocate and bind; the first failure is kept in err and
// compileNet reports it once forward is done.
type builder struct {
	g      *G.ExprGraph
	n      *Net
	shape  kernels.Shape
	rows   int // a model's rows: Batch*SeqLen
	bound  map[*G.Node]kernels.Tensor
	params map[string]*G.Node // the nodes made so far
	index  map[string]int     // every parameter's place in Weights order
	err    error

	tokens, targets *G.Node
	reads           *G.Node // the ids of the rows the loss reads, for a Net of BuildTrain that leaves some out
	gates, probs    G.Nodes
	probe           *probeNodes // a probed Net's nodes (probe.go)
	edges           *edgeNodes  // an edge Net's nodes (edges.go)
	linear          bool        // no LayerNorm, no GELU: a linear edge Net (edges.go)
}

// compileNet builds the graph of kind for p, reading only the given
// positions when positions is non-nil and leaves some out, and compiles
// it.
func compileNet(p *Block, batch int, kind netKind, positions []int, rs ...*resumable) (_ *Net, err error) {
	c := p.Config
	if batch <= 0 {
		return nil, fmt.Errorf("batch must be positive, got %d", batch)
	}
	S, d := p.S, p.Dev
	n := &Net{Config: c, Batch: batch, Seeds: S, kind: kind, dev: d, block: p}
	if len(rs) > 0 {
		n.resume = rs[0] // resume.go
	}
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
	n.mem = kernels.Arena{Dev: d, S: S}
	b := &builder{g: G.NewGraph(), n: n, rows: batch * c.SeqLen, bound: map[*G.Node]kernels.Tensor{}, params: map[string]*G.Node{}, index: paramIndex(c),
		shape: kernels.Shape{B: batch, T: c.SeqLen, H: c.Heads, Dh: c.HeadDim(), Causal: c.Causal}}
	out := b.inputs()
	logits, loss := b.forward()
	b.probeOutputs(logits)
	n.logits, n.loss = b.bind(logits, out*c.Vocab), b.bind(loss, 1)
	if b.err != nil {
		return nil, b.err
	}
	n.SetAblation(-1, nil)

	// The executor (exec.go) runs what these outputs need.
	outputs := append(G.Nodes{loss, logits}, b.probs...)
	outputs = append(outputs, b.probeNodes()...)
	if kind == trainNet {
		outputs = append(outputs, b.answerLoss(logits, out))
		if b.err != nil {
			return nil, b.err
		}
		grads, err := b.gradients(loss)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, grads...)
	} else if n.correct, err = n.mem.Dense(1); err != nil {
		return nil, err
	}
	// A probed Net reads its final LayerNorm's aux tensors after a run.
	if n.vm, err = compile(b.g, outputs, d, S, b.bound, n.probe != nil); err != nil {
		return nil, err
	}
	b.probeCompiled()
	if kind >= edgeNet {
		// Path patching runs the forward pass alone (edges.go).
		if err := b.compileForward(append(G.Nodes{loss, logits}, b.probs...)); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// inputs allocates and binds the Net's inputs: tokens, targets, the read
// rows' ids, and the head gates (a probed Net's probes instead). It
// returns the rows of output a model has.
func (b *builder) inputs() int {
	n, c, S := b.n, b.n.Config, b.n.Seeds
	out := n.outRows()
	n.tokens, n.targets = b.alloc(b.rows), b.alloc(out)
	n.tok, n.tgt = make([]float32, S*b.rows), make([]float32, S*out)
	for i := range n.tgt {
		n.tgt[i] = -1
	}
	b.tokens, b.targets = b.input("tokens", n.tokens, b.rows), b.input("targets", n.targets, out)
	if n.reads != nil {
		// The read rows' ids within a model's rows, shared by every
		// model: the last block looks them up as the embeddings look up
		// tokens.
		ids := make([]float32, len(n.reads))
		for i, r := range n.reads {
			ids[i] = float32(r)
		}
		b.reads = b.input("read_rows", b.shared(ids), out)
	}
	if n.kind.probed() {
		b.startProbe()
	} else {
		n.gates = b.alloc(c.Layers * c.DModel)
		n.gate = make([]float32, S*c.Layers*c.DModel)
	}
	return out
}

// gradients builds d loss / d w for every parameter, bound into the
// Net's gradient block, and d loss / d gate for every head gate: the
// gates' gradients say how much each head matters (pruning).
func (b *builder) gradients(loss *G.Node) (G.Nodes, error) {
	n, p := b.n, b.n.block
	wrt := append(append(G.Nodes(nil), n.params...), b.gates...)
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		return nil, fmt.Errorf("graph: gradients: %w", err)
	}
	if n.grads, err = n.mem.Dense(p.P); err != nil {
		return nil, err
	}
	for i, gr := range grads {
		if _, dup := b.bound[gr]; dup {
			return nil, fmt.Errorf("graph: gradient %d is bound twice", i)
		}
		if i < len(n.params) {
			j := b.index[n.params[i].Name()]
			b.bound[gr] = n.grads.View(p.offs[j], p.Param(j).Len)
			continue
		}
		t, err := n.mem.Dense(n.Config.DModel)
		if err != nil {
			return nil, err
		}
		b.bound[gr] = t
		n.gateGrads = append(n.gateGrads, t)
	}
	return grads, nil
}

// answerLoss is a training Net's loss on the answers alone, of the same
// logits: reported beside the training loss, never differentiated.
func (b *builder) answerLoss(logits *G.Node, out int) *G.Node {
	n := b.n
	n.answers = b.alloc(out)
	n.ans = make([]float32, n.Seeds*out)
	for i := range n.ans {
		n.ans[i] = -1
	}
	al := softmaxXent(logits, b.input("answers", n.answers, out))
	n.answerLoss = b.bind(al, 1)
	return al
}

// paramIndex maps each parameter's name to its place in Weights order.
func paramIndex(c Config) map[string]int {
	m := map[string]int{}
	for i, s := range ParamShapes(c) {
		m[s.Name] = i
	}
	return m
}

// The builder's hooks that every Net uses.

// node makes a named vector or matrix node of shape.
func (b *builder) node(name string, shape ...int) *G.Node {
	if len(shape) == 1 {
		return G.NewVector(b.g, G.Float32, G.WithShape(shape...), G.WithName(name))
	}
	return G.NewMatrix(b.g, G.Float32, G.WithShape(shape...), G.WithName(name))
}

// alloc makes a dense tensor of n floats per model, owned by the Net.
func (b *builder) alloc(n int) kernels.Tensor {
	t, err := b.n.mem.Dense(n)
	if err != nil && b.err == nil {
		b.err = err
	}
	return t
}

// shared makes a constant every model reads.
func (b *builder) shared(data []float32) kernels.Tensor {
	t, err := b.n.mem.Shared(data)
	if err != nil && b.err == nil {
		b.err = err
	}
	return t
}

// input is a node the Net fills: t, of shape.
func (b *builder) input(name string, t kernels.Tensor, shape ...int) *G.Node {
	nd := b.node(name, shape...)
	b.bound[nd] = t
	return nd
}

// bind gives nd a tensor of its own, n floats per model, that it keeps
// after a run.
func (b *builder) bind(nd *G.Node, n int) kernels.Tensor {
	t := b.alloc(n)
	b.bound[nd] = t
	return t
}

// param is the parameter of that name: one node per parameter, read in
// the Block.
func (b *builder) param(name string) *G.Node {
	if nd, ok := b.params[name]; ok {
		return nd
	}
	i, ok := b.index[name]
	if !ok {
		panic("graph: no parameter " + name)
	}
	nd := b.input(name, b.n.block.Param(i), ParamShapes(b.n.Config)[i].Shape...)
	b.params[name] = nd
	b.n.params = append(b.n.params, nd)
	return nd
}

// positions is every row's position id, the same for every model.
func (b *builder) positions() *G.Node {
	ids := make([]float32, b.rows)
	for r := range ids {
		ids[r] = float32(r % b.n.Config.SeqLen)
	}
	return b.input("positions", b.shared(ids), b.rows)
}

// gate is block l's head gate: in a Net that trains or evaluates, one
// value per column of the heads' output, [DModel] (Gorgonia
// differentiates it); a probed Net gates every row on its own (heads).
func (b *builder) gate(l int) *G.Node {
	if b.n.probe != nil {
		return nil
	}
	dm := b.n.Config.DModel
	g := b.input(fmt.Sprintf("blocks.%d.gate", l), b.n.gates.View(l*dm, dm), dm)
	b.gates = append(b.gates, g)
	return g
}

// heads is block l's heads' output o through its gate: o*gate, column
// by column; in a probed Net o*gate + replacement, row by row (probe.go).
// Zeroing a head's gate ablates it.
func (b *builder) heads(l int, o, gate *G.Node) *G.Node {
	if b.n.probe != nil {
		return b.probeHeads(l, o)
	}
	return colScale(o, gate)
}

// attention keeps block l's attention probabilities pr on the device.
func (b *builder) attention(l int, pr *G.Node) *G.Node {
	b.n.probs = append(b.n.probs, b.bind(pr, b.shape.ProbsLen()))
	b.probs = append(b.probs, pr)
	return pr
}

// readRows cuts x to the rows the loss reads after the last block's
// attention, in a Net of BuildTrain that reads some rows only.
func (b *builder) readRows(l int, x *G.Node) *G.Node {
	if l == b.n.Config.Layers-1 && b.reads != nil {
		return embed(b.reads, x)
	}
	return x
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
// head on. A negative s sets every model. On a probed Net it also clears
// every other intervention of the model (ClearInterventions).
func (n *Net) SetAblation(s int, off [][]bool) {
	if s < 0 {
		for k := 0; k < n.Seeds; k++ {
			n.SetAblation(k, off)
		}
		return
	}
	if n.probe != nil {
		n.probe.ablate(s, off)
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

// Run uploads what SetInputs, SetAblation and Intervention staged and
// executes the graph once for every model (forward, and backward when
// built to train). Values read from the Net are overwritten by the next
// Run.
func (n *Net) Run() error {
	if err := n.upload(); err != nil {
		return err
	}
	e := n.edgeState()
	if e != nil {
		e.fwd.fresh = 0 // until the run is whole
	}
	if err := n.vm.RunAll(); err != nil {
		return err
	}
	if e != nil {
		e.fwd.fresh = len(e.fwd.vm.steps)
	}
	if n.correct.Buf != nil {
		c := n.Config
		return n.dev.CountCorrect(n.Seeds, n.Batch*c.SeqLen, c.Vocab, n.logits, n.targets, n.correct)
	}
	return nil
}

// upload sends what SetInputs, SetAblation, Intervention and an edge
// Net's addends and seed staged.
func (n *Net) upload() error {
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
	if n.probe != nil {
		return n.probe.upload(n)
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
	if e := n.edgeState(); e != nil && e.fwd != nil {
		e.fwd.vm.close()
	}
	n.mem.Free()
	return nil
}
