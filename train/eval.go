package train

import (
	"fmt"

	"headlab/analysis"
	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
)

// EvalChunk is the batch of the evaluation graph: an Evaluator runs
// EvalChunk examples of every model per pass, so a batch of at most
// EvalChunk examples is evaluated in one pass.
const EvalChunk = 250

// QuickHeldOut is the first EvalChunk examples of m's held-out set: one
// pass of the evaluation graph, the quick held-out accuracy of progress
// lines and of the viewer.
func QuickHeldOut(m *Model) *tasks.Batch {
	return tasks.NewStream(m.Task, m.Train.Seed, tasks.HeldOut).Next(EvalChunk)
}

// Evaluator runs S models of one shape forward on held-out examples, on
// their device, EvalChunk examples per model at a time, optionally with
// heads switched off: Snapshot is the one way it does. Each model has its
// own examples (a model's held-out set follows its seed).
type Evaluator struct {
	Models []*Model

	block  *graph.Block
	own    bool // the block is the Evaluator's, not a trainer's
	net    *graph.Net
	probed *graph.Net // built on first use (SnapshotOptions.Probe)
	// resumable and its tails (tails[l] from block l; tails[0] unused)
	// are EachOff's, built on first use.
	resumable *graph.Net
	tails     []*graph.Net
	tok       []int // scratch for one chunk of one model
	tgt       []int
}

// NewEvaluator uploads m's weights to dev and compiles its forward graph.
func NewEvaluator(m *Model, dev kernels.Device) (*Evaluator, error) {
	b, err := graph.BlockOf(dev, m.Shape, []*graph.Weights{m.Weights})
	if err != nil {
		return nil, err
	}
	e, err := newEvaluator([]*Model{m}, b)
	if err != nil {
		b.Free()
		return nil, err
	}
	e.own = true
	return e, nil
}

// Evaluator evaluates the group's models as they are being trained: it
// reads the parameters on the device, so it sees every step at once.
func (g *Group) Evaluator() (*Evaluator, error) { return newEvaluator(g.Models, g.block) }

// Evaluator is the trainer's model's Evaluator (Group.Evaluator).
func (tr *Trainer) Evaluator() (*Evaluator, error) { return tr.g.Evaluator() }

func newEvaluator(ms []*Model, b *graph.Block) (*Evaluator, error) {
	net, err := graph.Build(b, EvalChunk, false)
	if err != nil {
		return nil, err
	}
	T := b.Config.SeqLen
	return &Evaluator{Models: ms, block: b, net: net, tok: make([]int, EvalChunk*T), tgt: make([]int, EvalChunk*T)}, nil
}

// Close releases the graph (and the weights, when the Evaluator uploaded
// them).
func (e *Evaluator) Close() error {
	e.net.Close()
	if e.probed != nil {
		e.probed.Close()
	}
	for _, n := range append([]*graph.Net{e.resumable}, e.tails...) {
		if n != nil {
			n.Close()
		}
	}
	if e.own {
		e.block.Free()
	}
	return nil
}

// SnapshotOptions says how a Snapshot runs and what it reads back beside
// accuracy and loss. The zero value: every head on, nothing else read.
type SnapshotOptions struct {
	// Off switches heads off: nil (none), one mask for every model, or
	// one per model; Off[s][l][h] true zeroes head h of layer l of model s
	// before the output projection.
	Off [][][]bool
	// Attention is how many of the first examples have their attention
	// read back to the host (at most the batch; 0: none stays off the
	// device).
	Attention int
	// Logits also reads those examples' logits back.
	Logits bool
	// OnDevice, when set, is called after every pass of the graph, once
	// per layer, before anything of the pass is read back: probs is layer
	// l's attention on the device, [S][EvalChunk][Heads][T][T], of
	// examples first ... first+EvalChunk-1 of every model (those past the
	// batch's end are padding), valid until the next pass. The viewer
	// copies it into textures without it leaving the GPU.
	OnDevice func(first, l int, probs kernels.Tensor) error
	// Probe, when set, runs the passes on the probed graph
	// (graph.BuildProbed: activations kept, head outputs and residual
	// streams open to replacement) instead, built on first use.
	Probe *Probe
}

// Probe is what a Snapshot on the probed graph does around every pass of
// examples first ... first+n-1 (of EvalChunk; those past n are padding):
// Stage, when set, stages the pass's interventions (on top of Off, which
// is applied once before the first pass; what Stage stages stays until it
// changes it); Read, when set, reads what the pass kept. Either may be
// nil.
type Probe struct {
	Stage func(net *graph.Net, first, n int) error
	Read  func(net *graph.Net, first, n int) error
}

// Snapshot is one model evaluated on a batch in one pass over it.
type Snapshot struct {
	// Accuracy is the fraction of the batch's answer positions where the
	// argmax of the logits is the target; Loss the mean cross-entropy
	// over them (0 for a batch without answers).
	Accuracy, Loss float64
	// Attention is every head's attention on the first
	// SnapshotOptions.Attention examples, with their tokens and the
	// task's relations on them, ready to score (analysis.ScoreAll); nil
	// when none was asked for.
	Attention *analysis.Attention
	// Logits is those examples' logits, [Attention.N*T][Vocab], when
	// SnapshotOptions.Logits asks.
	Logits []float32
}

// Snapshot runs bs[s] through model s, for every model at once, in one
// pass over the batches (EvalChunk examples per run of the graph), and
// returns each model's Snapshot. The batches must have the same size. A
// model's Snapshot depends only on its weights, its batch and its mask,
// not on the other models evaluated with it.
func (e *Evaluator) Snapshot(bs []*tasks.Batch, o SnapshotOptions) ([]Snapshot, error) {
	c := e.block.Config
	S, T := len(e.Models), c.SeqLen
	if len(bs) != S {
		return nil, fmt.Errorf("evaluate: %d batches for %d models", len(bs), S)
	}
	for _, b := range bs {
		if b.T != T || b.N != bs[0].N {
			return nil, fmt.Errorf("evaluate: batches of %dx%d, the models take %d x length %d", b.N, b.T, bs[0].N, T)
		}
	}
	N := bs[0].N
	if o.Attention < 0 {
		return nil, fmt.Errorf("evaluate: attention of %d examples", o.Attention)
	}
	K := min(o.Attention, N) // examples read back
	net, err := e.snapshotNet(o)
	if err != nil {
		return nil, err
	}
	defer net.SetAblation(-1, nil)

	out := e.newSnapshots(bs, K, o.Logits)
	right, total := make([]float64, S), make([]int, S)
	for first := 0; first < N; first += EvalChunk {
		n := min(EvalChunk, N-first)
		if err := e.runChunk(net, bs, o, first, n); err != nil {
			return nil, err
		}
		if err := tallyChunk(net, bs, first, n, right, total, out); err != nil {
			return nil, err
		}
		if k := min(n, K-first); k > 0 {
			if err := e.readBack(net, out, first, k); err != nil {
				return nil, err
			}
		}
	}
	for s := range out {
		if total[s] > 0 {
			out[s].Accuracy, out[s].Loss = right[s]/float64(total[s]), out[s].Loss/float64(total[s])
		} else {
			out[s].Loss = 0
		}
	}
	return out, nil
}

// snapshotNet is the graph a Snapshot with o runs, the probed one if o
// has a probe, with o's ablations set.
func (e *Evaluator) snapshotNet(o SnapshotOptions) (*graph.Net, error) {
	net := e.net
	if o.Probe != nil {
		p, err := e.probedNet()
		if err != nil {
			return nil, err
		}
		net = p
	}
	switch S := len(e.Models); len(o.Off) {
	case 0:
		net.SetAblation(-1, nil)
	case 1:
		net.SetAblation(-1, o.Off[0])
	case S:
		for s, off := range o.Off {
			net.SetAblation(s, off)
		}
	default:
		return nil, fmt.Errorf("evaluate: ablations for %d models of %d", len(o.Off), S)
	}
	return net, nil
}

// newSnapshots are the models' empty Snapshots, with room for the
// attention (and the logits if logits) of their batches' first K examples.
func (e *Evaluator) newSnapshots(bs []*tasks.Batch, K int, logits bool) []Snapshot {
	c := e.block.Config
	T, L, H := c.SeqLen, c.Layers, c.Heads
	out := make([]Snapshot, len(bs))
	if K <= 0 {
		return out
	}
	for s, b := range bs {
		first := &tasks.Batch{N: K, T: T, Tokens: b.Tokens[:K*T], Targets: b.Targets[:K*T]}
		out[s].Attention = &analysis.Attention{Causal: c.Causal, N: K, L: L, H: H, T: T,
			Tokens:    append([]int(nil), first.Tokens...),
			Probs:     make([]float32, K*L*H*T*T),
			Relations: relations(e.Models[s].Task, first)}
		if logits {
			out[s].Logits = make([]float32, K*T*c.Vocab)
		}
	}
	return out
}

// runChunk runs examples first to first+n of every batch through net,
// with o's probe and OnDevice around the run.
func (e *Evaluator) runChunk(net *graph.Net, bs []*tasks.Batch, o SnapshotOptions, first, n int) error {
	if o.Probe != nil && o.Probe.Stage != nil {
		if err := o.Probe.Stage(net, first, n); err != nil {
			return err
		}
	}
	if err := e.run(net, bs, first, n); err != nil {
		return err
	}
	if o.OnDevice != nil {
		for l := range e.block.Config.Layers {
			if err := o.OnDevice(first, l, net.ProbsTensor(l)); err != nil {
				return err
			}
		}
	}
	if o.Probe != nil && o.Probe.Read != nil {
		if err := o.Probe.Read(net, first, n); err != nil {
			return err
		}
	}
	return nil
}

// tallyChunk adds the chunk just run (examples first to first+n) to each
// model's right answers, answers and summed loss (out[s].Loss).
func tallyChunk(net *graph.Net, bs []*tasks.Batch, first, n int, right []float64, total []int, out []Snapshot) error {
	hits, err := net.Correct()
	if err != nil {
		return err
	}
	for s := range right {
		right[s] += float64(hits[s])
	}
	ls, err := net.Losses()
	if err != nil {
		return err
	}
	T := bs[0].T
	for s, b := range bs {
		t := (&tasks.Batch{N: n, T: T, Targets: b.Targets[first*T : (first+n)*T]}).Answers()
		total[s] += t
		// The graph's loss is the mean over this chunk's t answers.
		out[s].Loss += float64(ls[s]) * float64(t)
	}
	return nil
}

// probedNet is the probed graph, built on first use.
func (e *Evaluator) probedNet() (*graph.Net, error) {
	if e.probed == nil {
		p, err := graph.BuildProbed(e.block, EvalChunk)
		if err != nil {
			return nil, err
		}
		e.probed = p
	}
	return e.probed, nil
}

// run stages examples first ... first+n-1 of every model's batch and runs
// net once.
func (e *Evaluator) run(net *graph.Net, bs []*tasks.Batch, first, n int) error {
	if err := e.stage(net, bs, first, n); err != nil {
		return err
	}
	return net.Run()
}

// stage stages examples first ... first+n-1 of every model's batch in
// net; a partial chunk is padded with repeats of its last example,
// without answers.
func (e *Evaluator) stage(net *graph.Net, bs []*tasks.Batch, first, n int) error {
	T := e.block.Config.SeqLen
	for s, b := range bs {
		copy(e.tok, b.Tokens[first*T:(first+n)*T])
		copy(e.tgt, b.Targets[first*T:(first+n)*T])
		for i := n; i < EvalChunk; i++ {
			copy(e.tok[i*T:(i+1)*T], b.Tokens[(first+n-1)*T:(first+n)*T])
			for j := range T {
				e.tgt[i*T+j] = tasks.NoTarget
			}
		}
		if err := net.SetInputs(s, e.tok, e.tgt); err != nil {
			return err
		}
	}
	return nil
}

// readBack copies the attention (and the logits, when out holds room for
// them) of examples first ... first+k-1, the first k of the last pass,
// into every model's Snapshot.
func (e *Evaluator) readBack(net *graph.Net, out []Snapshot, first, k int) error {
	c := e.block.Config
	L, H, T := c.Layers, c.Heads, c.SeqLen
	if out[0].Logits != nil {
		lg, err := net.Logits() // [S][EvalChunk*T][V]
		if err != nil {
			return err
		}
		row := T * c.Vocab // one sequence's logits
		for s := range out {
			copy(out[s].Logits[first*row:(first+k)*row], lg[s*EvalChunk*row:])
		}
	}
	head := T * T // one head's matrix
	for l := range L {
		p, err := net.Probs(l, k) // [S][k][H][T][T]
		if err != nil {
			return err
		}
		for s := range out {
			ps, dst := p[s*k*H*head:], out[s].Attention.Probs
			for i := range k {
				for h := range H {
					at := (((first+i)*L+l)*H + h) * head
					copy(dst[at:at+head], ps[(i*H+h)*head:(i*H+h+1)*head])
				}
			}
		}
	}
	return nil
}

// relations is the relations t declares, on the examples of b (nil for a
// task without relations).
func relations(t tasks.Task, b *tasks.Batch) []analysis.Relation {
	rt, ok := t.(tasks.RelationTask)
	if !ok {
		return nil
	}
	var out []analysis.Relation
	for r, name := range rt.Relations() {
		keys := make([]int, b.N*b.T)
		for n := 0; n < b.N; n++ {
			rt.Relate(r, b.Tokens[n*b.T:(n+1)*b.T], keys[n*b.T:(n+1)*b.T])
		}
		out = append(out, analysis.Relation{Name: name, Keys: keys})
	}
	return out
}

// Accuracy is the Snapshot of an Evaluator of one model on b with the
// heads in off switched off, its accuracy and loss alone.
func (e *Evaluator) Accuracy(b *tasks.Batch, off [][]bool) (acc, loss float64, err error) {
	s, err := e.Snapshot([]*tasks.Batch{b}, SnapshotOptions{Off: [][][]bool{off}})
	if err != nil {
		return 0, 0, err
	}
	return s[0].Accuracy, s[0].Loss, nil
}

// HeldOutAll is every model's held-out set.
func (e *Evaluator) HeldOutAll() []*tasks.Batch {
	bs := make([]*tasks.Batch, len(e.Models))
	for s, m := range e.Models {
		bs[s] = HeldOut(m)
	}
	return bs
}
