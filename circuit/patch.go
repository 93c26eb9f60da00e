package circuit

import (
	"fmt"
	"slices"

	"headlab/graph"
	"headlab/inspect"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// Directions of patching (docs/circuits.md).
const (
	// Noising runs the clean examples and patches an edge with its
	// sender's output on the corrupted run.
	Noising = "noising"
	// Denoising runs the corrupted examples and patches an edge with its
	// sender's output on the clean run.
	Denoising = "denoising"
)

// CheckDirection says why d is not a direction.
func CheckDirection(d string) error {
	if d != Noising && d != Denoising {
		return fmt.Errorf("unknown direction %q (known: %s, %s)", d, Noising, Denoising)
	}
	return nil
}

// Options say what a Runner measures.
type Options struct {
	// Examples is how many held-out examples (from the first) are the
	// clean runs.
	Examples int
	// Corruption names how each is corrupted (inspect.Corruptions; "":
	// the task's default).
	Corruption string
	// Direction is Noising ("": the default) or Denoising.
	Direction string
	// Linear builds the model without LayerNorms and GELUs
	// (graph.BuildLinearEdges): for checking attribution against path
	// patching, not for measuring a trained model.
	Linear bool
}

// Runner measures one model's edges on its device: its edge Net holds the
// base run (the clean examples when noising, the corrupted ones when
// denoising), and each sender's output on the intact clean and corrupted
// runs.
type Runner struct {
	Options
	Shape graph.Config
	// Clean and Corrupted are the intact runs' metric: the answer's logit
	// difference (inspect.LogitDiff) averaged over every answer of the
	// examples, on the clean answers.
	Clean, Corrupted float64

	w          *graph.Weights
	block      *graph.Block
	net        *graph.Net
	batches    [2]*tasks.Batch         // clean, corrupted
	sent       [2]map[Sender][]float32 // each sender's output on the clean and the corrupted run
	diff       map[Sender][]float32    // each sender's output on the other run less the base run's
	staged     bool                    // some receiver's addend is not zero
	base       int                     // 0 when noising (the clean run), 1 when denoising
	edges      []Edge
	byReceiver map[graph.Receiver][]Sender // every sender of a receiver
}

// NewRunner uploads m's weights to dev, builds its edge Net on the first
// o.Examples held-out examples and their corruption, and runs both.
func NewRunner(m *train.Model, dev kernels.Device, o Options) (_ *Runner, err error) {
	if o.Corruption == "" {
		o.Corruption = inspect.Corruptions(m.Task)[0]
	}
	if o.Direction == "" {
		o.Direction = Noising
	}
	if err := CheckDirection(o.Direction); err != nil {
		return nil, err
	}
	if o.Examples < 1 || o.Examples > train.HeldOutExamples {
		return nil, fmt.Errorf("circuit: %d examples, want 1 to %d", o.Examples, train.HeldOutExamples)
	}
	held := train.HeldOut(m)
	T := held.T
	clean := &tasks.Batch{N: o.Examples, T: T, Tokens: held.Tokens[:o.Examples*T], Targets: held.Targets[:o.Examples*T]}
	corrupt, err := inspect.Corrupt(m.Task, o.Corruption, clean)
	if err != nil {
		return nil, err
	}
	r := &Runner{Options: o, Shape: m.Shape, w: m.Weights, batches: [2]*tasks.Batch{clean, corrupt}, edges: Edges(m.Shape),
		byReceiver: map[graph.Receiver][]Sender{}}
	for _, e := range r.edges {
		r.byReceiver[e.To] = append(r.byReceiver[e.To], e.From)
	}
	if o.Direction == Denoising {
		r.base = 1
	}
	if r.block, err = graph.BlockOf(dev, m.Shape, []*graph.Weights{m.Weights}); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	build := graph.BuildEdges
	if o.Linear {
		build = graph.BuildLinearEdges
	}
	if r.net, err = build(r.block, o.Examples); err != nil {
		return nil, err
	}
	for _, k := range []int{1 - r.base, r.base} { // the base run last: the Net keeps its inputs
		if err := r.net.SetInputs(0, r.batches[k].Tokens, clean.Targets); err != nil {
			return nil, err
		}
		if err := r.net.Run(); err != nil {
			return nil, err
		}
		m, err := r.metric()
		if err != nil {
			return nil, err
		}
		if k == 0 {
			r.Clean = m
		} else {
			r.Corrupted = m
		}
		if r.sent[k], err = r.senders(r.batches[k].Tokens); err != nil {
			return nil, err
		}
	}
	if err := r.seed(); err != nil { // the metric's gradient, staged once
		return nil, err
	}
	r.diff = map[Sender][]float32{}
	for s, b := range r.sent[r.base] {
		o := r.sent[1-r.base][s]
		d := make([]float32, len(b))
		for j := range d {
			d[j] = o[j] - b[j]
		}
		r.diff[s] = d
	}
	return r, nil
}

// Close frees the Net and the weights on the device.
func (r *Runner) Close() {
	if r.net != nil {
		r.net.Close()
	}
	if r.block != nil {
		r.block.Free()
	}
}

// Edges are the model's edges, in Edges' order.
func (r *Runner) Edges() []Edge { return r.edges }

// metric is the last run's logit difference, averaged over the clean
// answers.
func (r *Runner) metric() (float64, error) {
	lg, err := r.net.Logits()
	if err != nil {
		return 0, err
	}
	V := r.Shape.Vocab
	var sum float64
	var n int
	for row, a := range r.batches[0].Targets {
		if a < 0 {
			continue
		}
		sum += inspect.LogitDiff(lg[row*V:(row+1)*V], a)
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("circuit: the examples have no answers")
	}
	return sum / float64(n), nil
}

// seed stages dM/dlogits of the metric: (onehot(answer) - 1/V) / answers
// on every answer row.
func (r *Runner) seed() error {
	s, err := r.net.MetricSeed(0)
	if err != nil {
		return err
	}
	V := r.Shape.Vocab
	clear(s)
	var n int
	for _, a := range r.batches[0].Targets {
		if a >= 0 {
			n++
		}
	}
	for row, a := range r.batches[0].Targets {
		if a < 0 {
			continue
		}
		for v := range V {
			s[row*V+v] = -1 / float32(V) / float32(n)
		}
		s[row*V+a] += 1 / float32(n)
	}
	return nil
}

// senders is every sender's output in the last run of tokens, [rows*D]:
// the embeddings' rows, each head's output through its rows of the
// output projection, each MLP's output.
func (r *Runner) senders(tokens []int) (map[Sender][]float32, error) {
	c := r.Shape
	D, T, dh := c.DModel, c.SeqLen, c.HeadDim()
	rows := len(tokens)
	out := map[Sender][]float32{}
	for _, s := range Senders(c) {
		v := make([]float32, rows*D)
		switch s.Kind {
		case SenderEmbed:
			e := r.w.Get("tok_emb").Data
			for i, t := range tokens {
				copy(v[i*D:(i+1)*D], e[t*D:(t+1)*D])
			}
		case SenderPos:
			p := r.w.Get("pos_emb").Data
			for i := range rows {
				copy(v[i*D:(i+1)*D], p[(i%T)*D:(i%T+1)*D])
			}
		case SenderHead:
			o, err := r.net.Capture(graph.HeadOut, s.Layer)
			if err != nil {
				return nil, err
			}
			wo := r.w.Get(fmt.Sprintf("blocks.%d.attn.out.weight", s.Layer)).Data
			for i := range rows {
				dst := v[i*D : (i+1)*D]
				for k := s.Head * dh; k < (s.Head+1)*dh; k++ {
					a := o[i*D+k]
					for j, w := range wo[k*D : (k+1)*D] {
						dst[j] += a * w
					}
				}
			}
		case SenderMLP:
			m, err := r.net.Capture(graph.MLPOut, s.Layer)
			if err != nil {
				return nil, err
			}
			copy(v, m)
		}
		out[s] = v
	}
	return out, nil
}

// Patched runs the base run with every edge of patched carrying its
// sender's output on the other run (the corrupted one when noising, the
// clean one when denoising) and every other edge its sender's output in
// this run, and returns the metric. Receivers are staged a stage at a
// time, each from the senders' outputs of the pass before, so a patched
// edge's receiver sees its other senders as the patches upstream left
// them: one pass per stage that a patched edge reaches.
func (r *Runner) Patched(patched []Edge) (float64, error) {
	if err := r.net.ClearInterventions(0); err != nil {
		return 0, err
	}
	r.staged = len(patched) > 0
	stages := map[int][]Edge{}
	for _, e := range patched {
		stages[stage(e.To)] = append(stages[stage(e.To)], e)
	}
	if len(stages) == 0 {
		return r.baseMetric(), nil
	}
	order := make([]int, 0, len(stages))
	for s := range stages {
		order = append(order, s)
	}
	slices.Sort(order)
	cur, other := r.sent[r.base], r.sent[1-r.base]
	for i, st := range order {
		for _, e := range stages[st] {
			d, err := r.net.ReceiverDelta(0, e.To)
			if err != nil {
				return 0, err
			}
			o, c := other[e.From], cur[e.From]
			for j := range d {
				d[j] += o[j] - c[j]
			}
		}
		if err := r.net.Run(); err != nil {
			return 0, err
		}
		if i < len(order)-1 {
			var err error
			if cur, err = r.senders(r.batches[r.base].Tokens); err != nil {
				return 0, err
			}
		}
	}
	return r.metric()
}

// baseMetric is the intact base run's metric.
func (r *Runner) baseMetric() float64 {
	if r.base == 0 {
		return r.Clean
	}
	return r.Corrupted
}

// Effect normalises a patched run's metric m by one convention in both
// directions: (m - M_base) / (M_other - M_base), the share of the way from
// the base run to the other that the patch moves the metric, which is
// (M_clean - m) / (M_clean - M_corrupted) when noising and (m -
// M_corrupted) / (M_clean - M_corrupted) when denoising: positive when
// the patched edges carry what the clean run computes (0 when clean and
// corrupted score the same).
func (r *Runner) Effect(m float64) float64 {
	base, other := r.baseMetric(), r.Clean+r.Corrupted-r.baseMetric()
	if other == base {
		return 0
	}
	return (m - base) / (other - base)
}

// PathPatch is every edge's effect (Effect) patched alone, in Edges'
// order: one pass each.
func (r *Runner) PathPatch() ([]float64, error) {
	out := make([]float64, len(r.edges))
	for i, e := range r.edges {
		m, err := r.Patched([]Edge{e})
		if err != nil {
			return nil, err
		}
		out[i] = r.Effect(m)
	}
	return out, nil
}

// Attribute is every edge's attribution patching estimate (Syed et al.
// 2023) of PathPatch's effect, from one forward and one backward pass of
// the base run: the gradient of the metric with respect to the receiver's
// input, dotted with the sender's other-run output less its base-run
// output, normalised as Effect normalises.
func (r *Runner) Attribute() ([]float64, error) {
	if r.staged {
		if err := r.net.ClearInterventions(0); err != nil {
			return nil, err
		}
		r.staged = false
	}
	if err := r.net.Run(); err != nil {
		return nil, err
	}
	out := make([]float64, len(r.edges))
	var grad []float32
	var at graph.Receiver
	for i, e := range r.edges {
		if grad == nil || e.To != at {
			g, err := r.net.ReceiverGrad(e.To)
			if err != nil {
				return nil, err
			}
			grad, at = g, e.To // valid until the next read
		}
		out[i] = r.Effect(r.baseMetric() + dot(grad, r.diff[e.From]))
	}
	return out, nil
}

// dot is the sum of a*b, in float64.
func dot(a, b []float32) float64 {
	var sum float64
	for j := range a {
		sum += float64(a[j]) * float64(b[j])
	}
	return sum
}
