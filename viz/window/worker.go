package window

import (
	"time"

	"headlab/analysis"
	"headlab/inspect"
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

	gen   int
	clock refreshClock
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
	w.clock = refreshClock{step: -1}

	v := w.v
	v.mu.Lock()
	defer v.mu.Unlock()
	v.st.rebuilt(m, w.tr != nil, time.Now())
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
		j := v.st.take()
		v.mu.Unlock()
		if j.quit {
			return
		}

		if j.reset != nil {
			if err := w.build(*j.reset, nil); err != nil {
				w.fail(err)
			}
			continue
		}
		if w.ev == nil || j.failed { // wait for a reset
			w.sleep(j.seen)
			continue
		}
		if j.circuit {
			w.findCircuit()
			continue
		}
		training := j.trains(w.tr != nil, w.step())
		if training {
			loss, err := w.tr.TrainStep()
			if err != nil {
				w.fail(err)
				continue
			}
			w.stepped(loss)
		}
		step := w.step()
		if w.clock.due(j.offVer, step, training, time.Now()) {
			if err := w.refresh(j.off, j.ablation, j.offVer); err != nil {
				w.fail(err)
			}
			continue
		}
		if !training {
			w.sleep(j.seen)
		}
	}
}

// sleep marks the worker idle and waits for a change, unless the UI
// changed something since the worker read the state (seen).
func (w *worker) sleep(seen int) {
	v := w.v
	v.mu.Lock()
	idle := v.st.settle(seen)
	v.mu.Unlock()
	if !idle {
		return
	}
	<-v.wake
	v.mu.Lock()
	v.st.idle = false
	v.mu.Unlock()
}

// fail records err for the UI and pauses training.
func (w *worker) fail(err error) {
	v := w.v
	v.mu.Lock()
	v.st.fail(err)
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
	v.st.stepped(w.tr.Step, loss, now)
}

// refresh runs the held-out examples through the model with the heads in
// off switched off by method: the accuracy over all of them, the
// attention of the first nc (into the next texture on the GPU when the
// kernels are GL), and the heads' scores on those. Mean and resample
// ablation take their replacements from the model as it is now, on the
// same examples.
func (w *worker) refresh(off analysis.Mask, method inspect.Ablation, offVer int) error {
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
	if method == "" || len(analysis.HeadNames(off)) == 0 {
		method = inspect.AblateZero
	}
	held := []*tasks.Batch{w.held}
	ab, err := inspect.NewAblator(w.ev, held, method)
	if err != nil {
		return err
	}
	sn, err := ab.Snapshot(held, o)
	if err != nil {
		return err
	}
	att, acc := sn[0].Attention, sn[0].Accuracy
	scores := analysis.ScoreAll(att)
	w.gen = gen
	step := w.step()
	w.clock = refreshClock{step: step, offVer: offVer, at: time.Now(), cost: time.Since(start)}

	v := w.v
	v.mu.Lock()
	defer v.mu.Unlock()
	v.st.published(&snapshot{gen: gen, step: step, l: L, h: H, t: T, n: nc, causal: c.Causal,
		tokens: att.Tokens, probs: att.Probs, scores: scores, acc: acc, off: off, offVer: offVer,
		onGPU: w.v.gpuFill}, w.clock.cost)
	return nil
}
