package train

import (
	"fmt"
	"runtime"

	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
)

// Group trains S models of one shape in lockstep on one device: one
// parameter block, one graph, one set of kernel launches per step for
// all of them. Each model has its own seed's initial weights and data
// stream (the same as the model trained alone) and its own learning
// rate and weight decay. Nothing is read back from the device during a
// step: losses and weights are read when asked for.
type Group struct {
	Models []*Model
	Step   int // steps taken

	dev   kernels.Device
	block *graph.Block
	net   *graph.Net
	opt   *adam

	streams []*tasks.Stream
	// batches hold the next step's batches, and targets their targets
	// under the loss. The Net copies a batch when it is set, so the step
	// after can be sampled into the same memory while the device runs
	// this one; sampled says when it is there.
	batches  []*tasks.Batch
	targets  [][]int
	samplers []chan struct{} // one per sampling goroutine
	sampling bool
	sampled  chan struct{}
}

// SameShape reports whether two configurations can share a Group: they
// may differ in seed, learning rate and weight decay only.
func SameShape(a, b Config) bool {
	a.Seed, a.LR, a.WeightDecay = b.Seed, b.LR, b.WeightDecay
	return a == b
}

// NewGroup initialises one model per configuration on dev. The
// configurations must share a shape (SameShape).
func NewGroup(cs []Config, dev kernels.Device) (_ *Group, err error) {
	if len(cs) == 0 {
		return nil, fmt.Errorf("train: a group of no models")
	}
	lrs, wds := make([]float64, len(cs)), make([]float64, len(cs))
	for i, c := range cs {
		if err := c.Validate(); err != nil {
			return nil, err
		}
		if !SameShape(c, cs[0]) {
			return nil, fmt.Errorf("train: seed %d's configuration differs from seed %d's in more than seed, lr and weight decay", c.Seed, cs[0].Seed)
		}
		lrs[i], wds[i] = c.LR, c.WeightDecay
	}
	t, _ := cs[0].NewTask()
	shape := cs[0].Model(t)
	// A host device (the CPU) runs a group's kernels on a handle of the
	// group's own, seed by seed (backend/cpu/group.go).
	if h, ok := dev.(kernels.Host); ok {
		dev = h.Group()
	}
	g := &Group{dev: dev, sampled: make(chan struct{}, runtime.GOMAXPROCS(0))}
	// A failure frees what was made.
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	var ws []*graph.Weights
	for _, c := range cs {
		tk, _ := c.NewTask()
		m := &Model{Train: c, Shape: shape, Task: tk, Weights: graph.InitWeights(shape, c.Seed)}
		g.Models, ws = append(g.Models, m), append(ws, m.Weights)
		st := tasks.NewStream(tk, c.Seed, tasks.Train)
		if c.TrainExamples > 0 {
			st = tasks.NewTrainingSet(tk, c.Seed, c.TrainExamples)
		}
		g.streams = append(g.streams, st)
		// The first batch drawn is never trained on: a lone model has
		// always drawn it so, and the streams must stay the same.
		b := st.Next(c.Batch)
		g.batches, g.targets = append(g.batches, b), append(g.targets, make([]int, len(b.Targets)))
	}
	if g.block, err = graph.NewBlock(dev, shape, len(cs)); err != nil {
		return nil, err
	}
	if err = g.block.Upload(ws); err != nil {
		return nil, err
	}
	if g.net, err = graph.BuildTrain(g.block, cs[0].Batch, tasks.LossPositions(t, cs[0].Loss)); err != nil {
		return nil, err
	}
	if g.opt, err = newAdam(dev, g.block.P, lrs, wds); err != nil {
		return nil, err
	}
	return g, nil
}

// sample starts drawing every model's next batch into g.batches, with
// its targets under the loss; wait waits for it. Each stream is drawn in
// order, so the batches are those the model draws alone.
func (g *Group) sample() {
	if g.samplers == nil {
		// Samplers live as long as the group: a step starts them with
		// one token each, without allocating.
		loss := g.Models[0].Train.Loss
		workers := min(len(g.batches), runtime.GOMAXPROCS(0))
		g.samplers = make([]chan struct{}, workers)
		for w := range g.samplers {
			g.samplers[w] = make(chan struct{})
			go func(w int, start <-chan struct{}) {
				for range start {
					for s := w; s < len(g.batches); s += workers {
						g.streams[s].Fill(g.batches[s])
						tasks.LossTargets(loss, g.batches[s], g.targets[s])
					}
					g.sampled <- struct{}{}
				}
			}(w, g.samplers[w])
		}
	}
	g.sampling = true
	for _, c := range g.samplers {
		c <- struct{}{}
	}
}

// wait waits for batches being sampled, if any.
func (g *Group) wait() {
	if g.sampling {
		for range g.samplers {
			<-g.sampled
		}
		g.sampling = false
	}
}

// TrainStep takes one step of every model. The batches go to the device
// and, while it runs forward, backward and Adam, the next step's are
// sampled (up to the configured steps; past them a step samples its own).
func (g *Group) TrainStep() error {
	if !g.sampling {
		g.sample()
	}
	g.wait()
	for s, b := range g.batches {
		if err := g.net.SetInputs(s, b.Tokens, g.targets[s]); err != nil {
			return err
		}
		if err := g.net.SetAnswers(s, b.Targets); err != nil {
			return err
		}
	}
	g.Step++
	if g.Step < g.Models[0].Train.Steps {
		g.sample()
	}
	if err := g.net.Run(); err != nil {
		return fmt.Errorf("step %d: %w", g.Step, err)
	}
	if err := g.opt.step(g.block.T, g.net.Grads(), g.net.LossTensor()); err != nil {
		return err
	}
	// A device that queues its kernels (GL) would let the host run ahead
	// without bound, each step's batch held in the queue: wait for it now
	// and then, which also reports its errors within a few steps.
	if g.Step%syncEvery == 0 {
		if err := g.dev.Sync(); err != nil {
			return fmt.Errorf("step %d: %w", g.Step, err)
		}
	}
	return nil
}

// syncEvery is how many steps a Group may queue on its device before it
// waits for them: enough to keep a GPU busy, few enough to bound the
// batches waiting in the queue.
const syncEvery = 16

// Losses reads the last step's batch loss of every model.
func (g *Group) Losses() ([]float64, error) { return widen(g.net.Losses()) }

// AnswerLosses reads, for every model, the last step's batch loss on its
// answer positions alone: under --loss answers, Losses itself.
func (g *Group) AnswerLosses() ([]float64, error) { return widen(g.net.AnswerLosses()) }

// widen is a read of float32s, in float64.
func widen(l []float32, err error) ([]float64, error) {
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(l))
	for i, v := range l {
		out[i] = float64(v)
	}
	return out, nil
}

// Diverged reads, for every model, the step at which its loss stopped
// being finite (from then on it no longer moves), or 0.
func (g *Group) Diverged() ([]int, error) { return g.opt.diverged() }

// Block is the models' parameters on the device.
func (g *Group) Block() *graph.Block { return g.block }

// Sync copies every model's weights from the device into its Weights.
func (g *Group) Sync() error {
	ws := make([]*graph.Weights, len(g.Models))
	for i, m := range g.Models {
		ws[i] = m.Weights
	}
	return g.block.Download(ws)
}

// Close releases the group's tensors on the device.
func (g *Group) Close() error {
	g.wait()
	for _, c := range g.samplers {
		close(c)
	}
	g.samplers = nil
	if g.net != nil {
		g.net.Close()
	}
	if g.opt != nil {
		g.opt.free()
	}
	if g.block != nil {
		g.block.Free()
	}
	return nil
}
