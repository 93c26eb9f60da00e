package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"headlab/kernels"
)

// An edge Net (BuildEdges) is a probed Net in which every receiver (each
// head's query, key and value input apart, each MLP's input, the logits'
// final LayerNorm) reads the residual stream plus an addend of its own,
// d_r, that the caller stages per model: receiver r reads x + d_r, every
// other reads x. With every d_r zero it computes the probed Net's logits
// bit for bit. Path patching stages, as d_r, a sender's corrupted output
// less its clean one; attribution patching reads dM/d(x + d_r), the
// gradient of a metric M = sum of seed * logits for a seed the caller
// stages, from the same run's backward pass (docs/circuits.md). An edge
// Net takes no interventions: Intervention refuses, and SetAblation
// switches nothing off in it.

// ReceiverKind is what a receiver is: a head's query, key or value input,
// an MLP's input or the logits.
type ReceiverKind int

const (
	ReceiverQ ReceiverKind = iota
	ReceiverK
	ReceiverV
	ReceiverMLP
	ReceiverLogits
)

func (k ReceiverKind) String() string {
	return [...]string{"q", "k", "v", "mlp", "logits"}[k]
}

// Receiver is one input of the model that an edge reaches: head Head's
// query, key or value input of block Layer, block Layer's MLP input, or
// the logits (Layer = Layers, the final LayerNorm's input).
type Receiver struct {
	Kind  ReceiverKind
	Layer int
	Head  int // for ReceiverQ, ReceiverK and ReceiverV
}

// Receivers lists c's receivers in the order an edge Net holds them:
// block by block each head's query input (heads ascending), then each
// key, then each value, then the MLP's (none in an attention-only model);
// the logits last.
func Receivers(c Config) []Receiver {
	var rs []Receiver
	for l := range c.Layers {
		for _, k := range []ReceiverKind{ReceiverQ, ReceiverK, ReceiverV} {
			for h := range c.Heads {
				rs = append(rs, Receiver{Kind: k, Layer: l, Head: h})
			}
		}
		if !c.NoMLP {
			rs = append(rs, Receiver{Kind: ReceiverMLP, Layer: l})
		}
	}
	return append(rs, Receiver{Kind: ReceiverLogits, Layer: c.Layers})
}

// BuildEdges compiles an edge Net: a probed Net (BuildProbed) with every
// receiver's addend and the gradient of the staged metric with respect
// to every receiver's input.
func BuildEdges(p *Block, batch int) (*Net, error) { return compileNet(p, batch, edgeNet, nil) }

// BuildLinearEdges compiles an edge Net of a model with every LayerNorm
// and GELU taken out (each the identity; the LayerNorms' gains and biases
// unread), so that with its attention patterns fixed the logits are
// linear in every receiver's addend: the model on which attribution
// patching must equal path patching (docs/circuits.md). It is a model of
// its own, for checking tools, not the trained one.
func BuildLinearEdges(p *Block, batch int) (*Net, error) {
	return compileNet(p, batch, linearEdgeNet, nil)
}

// probed says whether a Net of kind k keeps activations and takes
// interventions: every kind from probedNet on.
func (k netKind) probed() bool { return k >= probedNet }

// norm is the LayerNorm of x with the parameters named prefix.weight and
// prefix.bias; in a linear edge Net, x itself.
func (b *builder) norm(x *G.Node, prefix string) *G.Node {
	if b.linear {
		return x
	}
	return layerNorm(x, b.param(prefix+".weight"), b.param(prefix+".bias"))
}

// act is the MLP's GELU of x; in a linear edge Net, x itself.
func (b *builder) act(x *G.Node) *G.Node {
	if b.linear {
		return x
	}
	return gelu(x)
}

// edges is an edge Net's tensors: each receiver's addend on the device
// and staged on the host, the metric's seed (dM/dlogits), and each
// receiver's gradient.
type edges struct {
	index     map[Receiver]int
	delta     []kernels.Tensor // [receiver], [rows*d]
	hostDelta [][]float32      // [receiver][S*rows*d]
	seed      kernels.Tensor   // [rows*vocab]
	hostSeed  []float32
	grad      []kernels.Tensor // [receiver], [rows*d]
	// dirty says which addends were handed out since their last upload,
	// seedDirty whether the seed was: only those are sent, and the
	// forward pass restarts where the first of them is read.
	dirty     []bool
	seedDirty bool
	fwd       *forwardPass
}

// edgeNodes are an edge Net's nodes the builder needs later: the
// addends, the seed.
type edgeNodes struct {
	delta G.Nodes
	seed  *G.Node
}

// startEdges allocates an edge Net's tensors.
func (b *builder) startEdges() {
	c, n := b.n.Config, b.n
	e := &edges{index: map[Receiver]int{}}
	size := b.rows * c.DModel
	for i, r := range Receivers(c) {
		e.index[r] = i
		e.delta = append(e.delta, b.alloc(size))
		e.hostDelta = append(e.hostDelta, make([]float32, n.Seeds*size))
		e.dirty = append(e.dirty, true)
	}
	e.seed = b.alloc(b.rows * c.Vocab)
	e.hostSeed = make([]float32, n.Seeds*b.rows*c.Vocab)
	e.seedDirty = true
	n.probe.edges = e
	b.edges = &edgeNodes{delta: make(G.Nodes, len(e.delta))}
	b.linear = n.kind == linearEdgeNet
}

// receive is what receiver r reads of the residual x: in an edge Net x +
// d_r, elsewhere x.
func (b *builder) receive(r Receiver, x *G.Node) *G.Node {
	if b.edges == nil {
		return x
	}
	i := b.n.probe.edges.index[r]
	d := b.input(fmt.Sprintf("receiver.%d.%v.%d", r.Layer, r.Kind, r.Head), b.n.probe.edges.delta[i], b.rows, b.n.Config.DModel)
	b.edges.delta[i] = d
	return add(x, d)
}

// edgeQKV is block l's queries, keys and values in an edge Net: each
// head's query, key and value from their own receiver's input through the
// LayerNorm and the whole projection, its columns kept by a mask of 0s
// and 1s, the heads' masked products summed (adding zeros: with every
// addend zero, the bits of qkv's).
func (b *builder) edgeQKV(l int, x *G.Node) (q, k, v *G.Node) {
	c := b.n.Config
	p := fmt.Sprintf("blocks.%d.", l)
	dh := c.HeadDim()
	var out [3]*G.Node
	for j, kind := range []ReceiverKind{ReceiverQ, ReceiverK, ReceiverV} {
		name := p + "attn." + kind.String()
		for h := range c.Heads {
			xr := b.receive(Receiver{Kind: kind, Layer: l, Head: h}, x)
			y := linear(b.norm(xr, p+"ln1"), b.param(name+".weight"), b.param(name+".bias"))
			if c.Heads > 1 {
				mask := make([]float32, c.DModel)
				for i := h * dh; i < (h+1)*dh; i++ {
					mask[i] = 1
				}
				y = colScale(y, b.input(fmt.Sprintf("%s.mask.%d", name, h), b.shared(mask), c.DModel))
			}
			if out[j] == nil {
				out[j] = y
			} else {
				out[j] = add(out[j], y)
			}
		}
	}
	return out[0], out[1], out[2]
}

// edgeGradients builds, in an edge Net, dM/d(x + d_r) for every receiver
// r, M the sum of seed * logits: Gorgonia's reverse pass from the logits
// with the seed as their gradient.
func (b *builder) edgeGradients(logits *G.Node) G.Nodes {
	if b.edges == nil || b.err != nil {
		return nil
	}
	e := b.n.probe.edges
	rows, V := shapeOf(logits)
	b.edges.seed = b.input("metric_seed", e.seed, rows, V)
	grads, err := G.Backpropagate(G.Nodes{logits}, G.Nodes{b.edges.seed}, b.edges.delta)
	if err != nil {
		b.err = fmt.Errorf("graph: receiver gradients: %w", err)
		return nil
	}
	for i, gr := range grads {
		if _, dup := b.bound[gr]; dup {
			b.err = fmt.Errorf("graph: receiver gradient %d is bound twice", i)
			return nil
		}
		e.grad = append(e.grad, b.bind(gr, e.delta[i].Len))
	}
	return grads
}

// upload sends the addends and the seed that changed.
func (e *edges) upload(n *Net) error {
	for i, t := range e.delta {
		if !e.dirty[i] {
			continue
		}
		if err := n.dev.Upload(t, n.Seeds, e.hostDelta[i]); err != nil {
			return err
		}
		e.dirty[i] = false
	}
	if e.seedDirty {
		if err := n.dev.Upload(e.seed, n.Seeds, e.hostSeed); err != nil {
			return err
		}
		e.seedDirty = false
	}
	return nil
}

// clear zeroes model s's addends.
func (e *edges) clear(s, size int) {
	for i, d := range e.hostDelta {
		clear(d[s*size : (s+1)*size])
		e.dirty[i] = true
	}
}

// edgeState is an edge Net's edges, nil in other Nets.
func (n *Net) edgeState() *edges {
	if n.probe == nil {
		return nil
	}
	return n.probe.edges
}

// edgesOf returns n's edges, or an error for a Net that is not an edge
// Net.
func (n *Net) edgesOf() (*edges, error) {
	if e := n.edgeState(); e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("graph: only an edge Net (BuildEdges) has receivers")
}

// ReceiverDelta returns model s's staged addend of receiver r,
// [Batch*SeqLen][DModel], for the caller to fill: r reads the residual
// stream plus it in the next Run. It stays staged until changed or
// cleared (ClearInterventions, SetAblation).
func (n *Net) ReceiverDelta(s int, r Receiver) ([]float32, error) {
	e, err := n.edgesOf()
	if err != nil {
		return nil, err
	}
	i, ok := e.index[r]
	if !ok || s < 0 || s >= n.Seeds {
		return nil, fmt.Errorf("graph: no receiver %v of block %d head %d in model %d", r.Kind, r.Layer, r.Head, s)
	}
	size := n.probe.rows * n.probe.d
	e.dirty[i] = true
	return e.hostDelta[i][s*size : (s+1)*size], nil
}

// MetricSeed returns model s's staged dM/dlogits, [Batch*SeqLen][Vocab],
// for the caller to fill: the metric whose gradient ReceiverGrad reads
// after the next Run.
func (n *Net) MetricSeed(s int) ([]float32, error) {
	e, err := n.edgesOf()
	if err != nil {
		return nil, err
	}
	if s < 0 || s >= n.Seeds {
		return nil, fmt.Errorf("graph: model %d of %d", s, n.Seeds)
	}
	size := n.probe.rows * n.Config.Vocab
	e.seedDirty = true
	return e.hostSeed[s*size : (s+1)*size], nil
}

// ReceiverGrad reads the last run's dM/d(input of receiver r),
// [Seeds][Batch*SeqLen][DModel], valid until the next read.
func (n *Net) ReceiverGrad(r Receiver) ([]float32, error) {
	e, err := n.edgesOf()
	if err != nil {
		return nil, err
	}
	i, ok := e.index[r]
	if !ok {
		return nil, fmt.Errorf("graph: no receiver %v of block %d head %d", r.Kind, r.Layer, r.Head)
	}
	return n.read(e.grad[i])
}

// forwardPass is an edge Net's forward pass compiled alone (the loss, the
// logits, the attention and every kept activation; no gradient, no logit
// lens), which path patching runs once per patched set. A run of it may
// start and stop at a cut: a step before which every tensor that a later
// step reads from an earlier one is one the Net keeps (bound), never an
// executor's scratch, so the steps before a cut need not run again while
// what they read is unchanged, and a run may stop there for the caller to
// read activations and stage addends.
type forwardPass struct {
	vm    *executor
	cut   []int                  // cut[i]: the last cut at or before step i (i up to len(steps))
	first map[kernels.Buffer]int // each buffer's first reader among the steps
	fresh int                    // steps [0, fresh) hold the current inputs' values (a cut)
}

// compileForward compiles an edge Net's forward pass of outputs apart
// from the whole Net and finds its cuts.
func (b *builder) compileForward(outputs G.Nodes) error {
	n := b.n
	vm, err := compile(b.g, outputs, n.dev, n.Seeds, b.bound, true)
	if err != nil {
		return err
	}
	f := &forwardPass{vm: vm, first: map[kernels.Buffer]int{}}
	kept := map[kernels.Buffer]bool{}
	for _, t := range b.bound {
		kept[t.Buf] = true
	}
	steps := vm.steps
	// A step i reading scratch last written by step w < i rules out the
	// cuts w+1 .. i.
	ruled := make([]bool, len(steps)+1)
	writer := map[kernels.Buffer]int{}
	for i, s := range steps {
		for _, t := range s.reads {
			if t.Buf == nil { // an operand a fused kernel goes without
				continue
			}
			if _, ok := f.first[t.Buf]; !ok {
				f.first[t.Buf] = i
			}
			if w, ok := writer[t.Buf]; ok && !kept[t.Buf] {
				for k := w + 1; k <= i; k++ {
					ruled[k] = true
				}
			}
		}
		for _, t := range s.writes {
			if t.Buf != nil {
				writer[t.Buf] = i
			}
		}
	}
	f.cut = make([]int, len(steps)+1)
	for i := range f.cut {
		if ruled[i] {
			f.cut[i] = f.cut[i-1] // step 0 is never ruled out
		} else {
			f.cut[i] = i
		}
	}
	n.probe.edges.fwd = f
	return nil
}

// reader is the cut at or before the first step that reads t: where a
// run must start once t changed (the pass's end when none reads it).
func (f *forwardPass) reader(t kernels.Tensor) int {
	if i, ok := f.first[t.Buf]; ok {
		return f.cut[i]
	}
	return len(f.vm.steps)
}

// stale is the first step that inputs staged since the last run reach.
func (n *Net) stale(e *edges) int {
	f := e.fwd
	if n.inDirty {
		return 0
	}
	at := len(f.vm.steps)
	for site := range 2 {
		if n.probe.dirty[site] {
			for l := range n.probe.gate[site] {
				at = min(at, f.reader(n.probe.gate[site][l]), f.reader(n.probe.repl[site][l]))
			}
		}
	}
	for i, t := range e.delta {
		if e.dirty[i] {
			at = min(at, f.reader(t))
		}
	}
	return at
}

// RunForward runs an edge Net's forward pass alone: the loss, the logits,
// the attention and every activation Capture reads are then those of Run,
// bit for bit, while the receivers' gradients, the logit lens, the hits
// and the final LayerNorm's scale keep the last Run's values. It starts
// at the first step that an input staged since the last run reaches (the
// steps before keep their values), so patching a late receiver runs only
// what follows it.
func (n *Net) RunForward() error {
	e, err := n.edgesOf()
	if err != nil {
		return err
	}
	return n.runForward(e, len(e.fwd.vm.steps))
}

// RunUntil runs an edge Net's forward pass as RunForward does but stops
// before the first of rs reads its input: every activation that the
// senders of rs write is then current (Capture), for a caller that stages
// their addends from them and runs on (RunUntil, RunForward). The logits
// are not current until RunForward.
func (n *Net) RunUntil(rs ...Receiver) error {
	e, err := n.edgesOf()
	if err != nil {
		return err
	}
	stop := len(e.fwd.vm.steps)
	for _, r := range rs {
		i, ok := e.index[r]
		if !ok {
			return fmt.Errorf("graph: no receiver %v of block %d head %d", r.Kind, r.Layer, r.Head)
		}
		stop = min(stop, e.fwd.reader(e.delta[i]))
	}
	return n.runForward(e, stop)
}

// runForward runs the forward pass's steps from the first stale one up to
// the cut stop.
func (n *Net) runForward(e *edges, stop int) error {
	f := e.fwd
	start := min(f.fresh, n.stale(e))
	if err := n.upload(); err != nil {
		return err
	}
	f.fresh = start // until the steps after it have run
	for i := start; i < stop; i++ {
		s := &f.vm.steps[i]
		if err := s.run(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	f.fresh = max(start, stop)
	return nil
}
