package circuit

import (
	"fmt"
	"math"
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

	w       *graph.Weights
	block   *graph.Block
	net     *graph.Net
	batches [2]*tasks.Batch              // clean, corrupted
	sent    [2]map[Sender][]float32      // each sender's output on the clean and the corrupted run
	diff    map[Sender][]float32         // each sender's output on the other run less the base run's
	moved   map[Sender][][2]int          // the spans of rows where diff is not zero (moved)
	staged  map[graph.Receiver][]float32 // the addends Patched staged, each receiver's not zero
	next    []float32                    // an addend being made
	into    map[graph.Receiver][]Edge    // the edges each staged addend patches
	changed int                          // the first stage whose addend this Patched changed (none: MaxInt)
	current map[Sender]bool              // whose bufs hold the staged run's output
	bufs    map[Sender][]float32         // senders' outputs in a patched run
	base    int                          // 0 when noising (the clean run), 1 when denoising
	edges   []Edge
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
		bufs:   map[Sender][]float32{},
		staged: map[graph.Receiver][]float32{}, into: map[graph.Receiver][]Edge{}, current: map[Sender]bool{}, next: make([]float32, len(clean.Tokens)*m.Shape.DModel)}
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
	if err := r.runBoth(); err != nil {
		return nil, err
	}
	if err := r.seed(); err != nil { // the metric's gradient, staged once
		return nil, err
	}
	r.diffSenders()
	return r, nil
}

// runBoth runs the clean and the corrupted batch, the base run last (the
// Net keeps its inputs), and keeps each run's metric and senders.
func (r *Runner) runBoth() error {
	for _, k := range []int{1 - r.base, r.base} {
		if err := r.net.SetInputs(0, r.batches[k].Tokens, r.batches[0].Targets); err != nil {
			return err
		}
		if err := r.net.Run(); err != nil {
			return err
		}
		m, err := r.metric()
		if err != nil {
			return err
		}
		if k == 0 {
			r.Clean = m
		} else {
			r.Corrupted = m
		}
		if r.sent[k], err = r.senders(r.batches[k].Tokens); err != nil {
			return err
		}
	}
	return nil
}

// diffSenders sets each sender's difference, the other run's output minus
// the base run's, and the rows it moves.
func (r *Runner) diffSenders() {
	r.diff, r.moved = map[Sender][]float32{}, map[Sender][][2]int{}
	for s, b := range r.sent[r.base] {
		o := r.sent[1-r.base][s]
		d := make([]float32, len(b))
		for j := range d {
			d[j] = o[j] - b[j]
		}
		r.diff[s] = d
		r.moved[s] = moved(d, r.Shape.DModel)
	}
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
	out := map[Sender][]float32{}
	for _, s := range Senders(r.Shape) {
		v := make([]float32, len(tokens)*r.Shape.DModel)
		if err := r.sender(s, tokens, v); err != nil {
			return nil, err
		}
		out[s] = v
	}
	return out, nil
}

// sender writes s's output in the last run of tokens into v, [rows*D].
func (r *Runner) sender(s Sender, tokens []int, v []float32) error {
	c := r.Shape
	D, T, dh := c.DModel, c.SeqLen, c.HeadDim()
	switch s.Kind {
	case SenderEmbed:
		e := r.w.Get("tok_emb").Data
		for i, t := range tokens {
			copy(v[i*D:(i+1)*D], e[t*D:(t+1)*D])
		}
	case SenderPos:
		p := r.w.Get("pos_emb").Data
		for i := range tokens {
			copy(v[i*D:(i+1)*D], p[(i%T)*D:(i%T+1)*D])
		}
	case SenderHead:
		o, err := r.net.Capture(graph.HeadOut, s.Layer)
		if err != nil {
			return err
		}
		wo := r.w.Get(fmt.Sprintf("blocks.%d.attn.out.weight", s.Layer)).Data
		lo, hi := s.Head*dh, (s.Head+1)*dh
		for i := range tokens {
			project(v[i*D:(i+1)*D], o[i*D+lo:i*D+hi], wo[lo*D:hi*D])
		}
	case SenderMLP:
		m, err := r.net.Capture(graph.MLPOut, s.Layer)
		if err != nil {
			return err
		}
		copy(v, m)
	}
	return nil
}

// project sets dst to a W, W's rows of len(dst) floats, four rows a
// sweep of dst.
func project(dst, a, w []float32) {
	D := len(dst)
	clear(dst)
	k := 0
	for ; k+4 <= len(a); k += 4 {
		a0, a1, a2, a3 := a[k], a[k+1], a[k+2], a[k+3]
		w0, w1, w2, w3 := w[k*D:(k+1)*D], w[(k+1)*D:(k+2)*D], w[(k+2)*D:(k+3)*D], w[(k+3)*D:(k+4)*D]
		for j := range dst {
			dst[j] += a0*w0[j] + a1*w1[j] + a2*w2[j] + a3*w3[j]
		}
	}
	for ; k < len(a); k++ {
		for j, x := range w[k*D : (k+1)*D] {
			dst[j] += a[k] * x
		}
	}
}

// Patched runs the base run with every edge of patched carrying its
// sender's output on the other run (the corrupted one when noising, the
// clean one when denoising) and every other edge its sender's output in
// this run, and returns the metric. Receivers are staged a stage at a
// time, each from the senders' outputs of the pass so far, so a patched
// edge's receiver sees its other senders as the patches upstream left
// them. It is one forward pass (graph's RunForward), which stops before
// each later stage that a patched edge reaches (RunUntil) to read the
// senders that stage's edges come from. Only receivers whose addend
// differs from the last call's are staged again, and the pass starts at
// the first of them: stages before it are the last call's.
func (r *Runner) Patched(patched []Edge) (float64, error) {
	into := map[graph.Receiver][]Edge{}
	stages := map[int][]graph.Receiver{}
	for _, e := range patched {
		if _, ok := into[e.To]; !ok {
			stages[stage(e.To)] = append(stages[stage(e.To)], e.To)
		}
		into[e.To] = append(into[e.To], e)
	}
	r.changed = math.MaxInt
	for rc := range r.staged {
		if _, ok := into[rc]; !ok {
			if err := r.restage(rc, nil, nil); err != nil {
				return 0, err
			}
		}
	}
	if len(patched) == 0 {
		return r.baseMetric(), nil
	}
	order := make([]int, 0, len(stages))
	for s := range stages {
		order = append(order, s)
	}
	slices.Sort(order)
	tokens := r.batches[r.base].Tokens
	// Senders of a stage before the first patched one carry their base
	// output; later ones are read from this pass when an edge needs them
	// (current: unless no addend upstream changed since they were read).
	for i, st := range order {
		if i > 0 {
			if err := r.net.RunUntil(stages[st]...); err != nil {
				return 0, err
			}
		}
		for _, rc := range stages[st] {
			if _, ok := r.staged[rc]; ok && r.changed >= st && slices.Equal(into[rc], r.into[rc]) {
				continue // the same edges from the same senders' outputs: the same addend
			}
			d := r.next
			clear(d)
			for _, e := range into[rc] {
				if senderStage(e.From) < order[0] {
					diff := r.diff[e.From]
					for _, span := range r.moved[e.From] {
						for j := span[0]; j < span[1]; j++ {
							d[j] += diff[j]
						}
					}
					continue
				}
				c := r.buf(e.From)
				if !r.current[e.From] {
					if err := r.sender(e.From, tokens, c); err != nil {
						return 0, err
					}
					r.current[e.From] = true
				}
				o := r.sent[1-r.base][e.From]
				for j := range d {
					d[j] += o[j] - c[j]
				}
			}
			if err := r.restage(rc, d, into[rc]); err != nil {
				return 0, err
			}
		}
	}
	if err := r.net.RunForward(); err != nil {
		return 0, err
	}
	return r.metric()
}

// restage stages d (nil: zeros), made from edges, as receiver rc's
// addend unless it holds those bits already. staged keeps a copy of
// every addend not zero and into its edges; a change marks every sender
// at or after rc's stage stale and lowers changed to rc's stage.
func (r *Runner) restage(rc graph.Receiver, d []float32, edges []Edge) error {
	old, ok := r.staged[rc]
	if d == nil {
		if !ok {
			return nil
		}
		delete(r.staged, rc)
		delete(r.into, rc)
	} else if r.into[rc] = edges; ok && sameBits(old, d) {
		return nil
	}
	st := stage(rc)
	r.changed = min(r.changed, st)
	for s := range r.current {
		if senderStage(s) >= st {
			delete(r.current, s)
		}
	}
	dst, err := r.net.ReceiverDelta(0, rc)
	if err != nil {
		return err
	}
	if d == nil {
		clear(dst)
		return nil
	}
	copy(dst, d)
	r.staged[rc] = append(old[:0], d...)
	return nil
}

// unstage zeroes every addend Patched staged.
func (r *Runner) unstage() error {
	for rc := range r.staged {
		if err := r.restage(rc, nil, nil); err != nil {
			return err
		}
	}
	return nil
}

// sameBits says whether a and b hold the same bits.
func sameBits(a, b []float32) bool {
	for j := range a {
		if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
			return false
		}
	}
	return true
}

// buf is a buffer for s's output in a patched run, kept between runs.
func (r *Runner) buf(s Sender) []float32 {
	b, ok := r.bufs[s]
	if !ok {
		b = make([]float32, len(r.batches[0].Tokens)*r.Shape.DModel)
		r.bufs[s] = b
	}
	return b
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
	if err := r.unstage(); err != nil {
		return nil, err
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
		var sum float64
		for _, span := range r.moved[e.From] {
			sum += dot(grad[span[0]:span[1]], r.diff[e.From][span[0]:span[1]])
		}
		out[i] = r.Effect(r.baseMetric() + sum)
	}
	return out, nil
}

// moved is where d is not zero: the spans [from, to) of its rows of
// width D that hold a value other than 0, which alone reach a dot
// product (the position embedding never moves, and a corruption leaves
// the earlier rows of most senders as they were).
func moved(d []float32, D int) [][2]int {
	var spans [][2]int
	for row := 0; row*D < len(d); row++ {
		if !slices.ContainsFunc(d[row*D:(row+1)*D], func(v float32) bool { return v != 0 }) {
			continue
		}
		if n := len(spans); n > 0 && spans[n-1][1] == row*D {
			spans[n-1][1] += D
		} else {
			spans = append(spans, [2]int{row * D, (row + 1) * D})
		}
	}
	return spans
}

// dot is the sum of a*b in float64, in four running sums (a chain of
// dependent adds would wait on each).
func dot(a, b []float32) float64 {
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += float64(a[j]) * float64(b[j])
		s1 += float64(a[j+1]) * float64(b[j+1])
		s2 += float64(a[j+2]) * float64(b[j+2])
		s3 += float64(a[j+3]) * float64(b[j+3])
	}
	for ; j < len(a); j++ {
		s0 += float64(a[j]) * float64(b[j])
	}
	return (s0 + s1) + (s2 + s3)
}
