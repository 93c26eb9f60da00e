package window

import (
	"time"

	"headlab/analysis"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// capturedN is how many of the examples a refresh runs have their
// attention kept, for the heads' scores and for "next example": enough
// for stable scores, cheap to score. A refresh runs train.QuickHeldOut,
// the examples of train's progress lines: one pass of the evaluator gives
// both the accuracy and the attention.
const capturedN = 64

// maxHistory bounds a curve's samples; older ones are thinned by half.
const maxHistory = 4000

// worker is the training goroutine: it owns the trainer and the evaluator
// (which share the model's weights, so it alone may run them), steps the
// model and refreshes the snapshot the renderer draws.
type worker struct {
	v    *Viewer
	done chan struct{}

	tr    *train.Trainer // nil when viewing a saved model
	model *train.Model
	ev    *train.Evaluator
	held  *tasks.Batch
	nc    int // examples captured

	gen         int
	refStep     int           // step of the last refresh
	refCost     time.Duration // how long the last refresh took
	refOffVer   int
	lastRefresh time.Time
	rateStep    int // steps/s: steps and time at the last measurement
	rateAt      time.Time
}

func newWorker(v *Viewer) *worker { return &worker{v: v, done: make(chan struct{})} }

// build makes a fresh trainer for c (or an evaluator for a saved model m)
// and clears the curves.
func (w *worker) build(c train.Config, m *train.Model) error {
	w.closeNets()
	var ev *train.Evaluator
	var err error
	if m == nil {
		var tr *train.Trainer
		if tr, err = train.NewTrainer(c, w.v.opts.Kernels); err != nil {
			return err
		}
		w.tr, m = tr, tr.Model
		// It reads the trainer's weights on the device: always current.
		ev, err = tr.Evaluator()
	} else {
		ev, err = train.NewEvaluator(m, w.v.opts.Kernels)
	}
	if err != nil {
		w.closeNets()
		return err
	}
	w.model, w.ev = m, ev
	w.held = train.QuickHeldOut(m)
	s := m.Shape
	w.nc = max(1, min(capturedN, w.v.maxSlices()/(s.Layers*s.Heads)))
	w.refStep, w.lastRefresh = -1, time.Time{}
	w.rateStep, w.rateAt = 0, time.Now()

	v := w.v
	v.mu.Lock()
	defer v.mu.Unlock()
	st := &v.st
	st.cfg, st.shape, st.training = m.Train, s, w.tr != nil
	st.step, st.loss, st.lossHist, st.accHist, st.stepsPerSec = 0, 0, nil, nil, 0
	if w.tr == nil {
		st.step = m.Train.Steps
	}
	st.snap, st.err = nil, nil
	// The ablation mask follows the new shape, all heads on.
	st.off = make([][]bool, s.Layers)
	for l := range st.off {
		st.off[l] = make([]bool, s.Heads)
	}
	st.offVer++
	st.dirty = true
	return nil
}

// closeNets releases the trainer and the evaluator.
func (w *worker) closeNets() {
	if w.tr != nil {
		w.tr.Close()
		w.tr = nil
	}
	if w.ev != nil {
		w.ev.Close()
		w.ev = nil
	}
}

// loop trains and refreshes until Close. Between steps it picks up what
// the UI changed: pause, reset, the heads switched off.
func (w *worker) loop() {
	defer close(w.done)
	v := w.v
	for {
		v.mu.Lock()
		st := &v.st
		if st.quit {
			v.mu.Unlock()
			return
		}
		seen := st.changes
		reset := st.resetTo
		st.resetTo = nil
		off := cloneOff(st.off)
		offVer := st.offVer
		running := st.running && st.err == nil
		failed := st.err != nil
		stop := st.stop
		v.mu.Unlock()

		if reset != nil {
			if err := w.build(*reset, nil); err != nil {
				w.fail(err)
			}
			continue
		}
		if w.ev == nil || failed { // wait for a reset
			w.sleep(seen)
			continue
		}
		training := w.tr != nil && running && (stop < 0 || w.tr.Step < stop)
		if training {
			loss, err := w.tr.TrainStep()
			if err != nil {
				w.fail(err)
				continue
			}
			w.stepped(loss)
		}
		step := w.step()
		// While training, refresh every refreshEvery, but spend at most a
		// tenth of the time on it when a refresh is slow.
		every := max(refreshEvery, 9*w.refCost)
		due := offVer != w.refOffVer || step != w.refStep && (!training || time.Since(w.lastRefresh) >= every)
		if due {
			if err := w.refresh(off, offVer); err != nil {
				w.fail(err)
			}
			continue
		}
		if !training {
			w.sleep(seen)
		}
	}
}

// sleep marks the worker idle and waits for a change, unless the UI
// changed something since the worker read the state (seen).
func (w *worker) sleep(seen int) {
	v := w.v
	v.mu.Lock()
	st := &v.st
	if st.changes != seen {
		v.mu.Unlock()
		return
	}
	if st.training && st.running && st.stop >= 0 && st.step >= st.stop {
		st.running = false // reached the stop: show it as paused
		st.dirty = true
	}
	st.idle = true
	v.mu.Unlock()
	<-v.wake
	v.mu.Lock()
	v.st.idle = false
	v.mu.Unlock()
}

// fail records err for the UI and pauses training.
func (w *worker) fail(err error) {
	v := w.v
	v.mu.Lock()
	v.st.err = err
	v.st.running = false
	v.st.dirty = true
	v.mu.Unlock()
}

func (w *worker) step() int {
	if w.tr == nil {
		return w.model.Train.Steps
	}
	return w.tr.Step
}

// stepped publishes one training step's loss.
func (w *worker) stepped(loss float64) {
	v := w.v
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	st := &v.st
	st.step, st.loss = w.tr.Step, loss
	st.stepsTaken++
	st.lossHist = appendThinned(st.lossHist, point{w.tr.Step, loss})
	if dt := now.Sub(w.rateAt); dt >= time.Second {
		st.stepsPerSec = float64(w.tr.Step-w.rateStep) / dt.Seconds()
		w.rateStep, w.rateAt = w.tr.Step, now
	}
	st.dirty = true
}

// appendThinned appends p, halving the samples when there are too many.
func appendThinned(h []point, p point) []point {
	if len(h) >= maxHistory {
		k := 0
		for i := 0; i < len(h); i += 2 {
			h[k] = h[i]
			k++
		}
		h = h[:k]
	}
	return append(h, p)
}

func cloneOff(off [][]bool) [][]bool {
	out := make([][]bool, len(off))
	for l := range off {
		out[l] = append([]bool(nil), off[l]...)
	}
	return out
}

// refresh runs the held-out examples through the model with the heads in
// off switched off: the accuracy over all of them, the attention of the
// first nc (into the next texture on the GPU when the kernels are GL), and
// the heads' scores on those.
func (w *worker) refresh(off [][]bool, offVer int) error {
	start := time.Now()
	c := w.model.Shape
	L, H, T, nc := c.Layers, c.Heads, c.SeqLen, w.nc
	gen := w.gen + 1
	var tex uint32
	sh := texShape{l: L, n: nc, h: H, t: T}
	if w.v.gpuFill {
		if err := w.v.display.Call(func() { tex = w.v.g.ensure(gen%2, sh) }); err != nil {
			return err
		}
	}
	o := train.SnapshotOptions{Off: [][][]bool{off}, Attention: nc}
	if w.v.gpuFill {
		o.OnDevice = func(first, l int, probs kernels.Tensor) error {
			// The attention tensor is [B][H][T][T]: the first nc examples
			// of layer l are one run of slices.
			if first > 0 {
				return nil
			}
			return w.v.texSrc.FillTexture(probs, tex, sh.slice(l, 0, 0), sh.n*sh.h, sh.t, sh.t)
		}
	}
	sn, err := w.ev.Snapshot([]*tasks.Batch{w.held}, o)
	if err != nil {
		return err
	}
	att, acc := sn[0].Attention, sn[0].Accuracy
	scores := analysis.ScoreAll(att)
	w.gen = gen
	step := w.step()
	w.refStep, w.refOffVer, w.lastRefresh, w.refCost = step, offVer, time.Now(), time.Since(start)

	v := w.v
	v.mu.Lock()
	defer v.mu.Unlock()
	st := &v.st
	st.snap = &snapshot{gen: gen, step: step, l: L, h: H, t: T, n: nc, causal: c.Causal,
		tokens: att.Tokens, probs: att.Probs, scores: scores, acc: acc, off: off, offVer: offVer,
		onGPU: w.v.gpuFill}
	if w.tr != nil {
		if k := len(st.accHist); k > 0 && st.accHist[k-1].step == step {
			st.accHist[k-1].v = acc // a click re-evaluated the same step
		} else {
			st.accHist = appendThinned(st.accHist, point{step, acc})
		}
	}
	st.refreshes++
	st.refreshTime += w.refCost
	st.dirty = true
	return nil
}
