package window

import (
	"image"
	"math"
	"time"

	"headlab/analysis"
	"headlab/graph"
	"headlab/inspect"
	"headlab/tasks"
	"headlab/train"
)

// metrics relate the window's coordinate systems: window (screen)
// coordinates, framebuffer pixels, and logical pixels (ppu framebuffer
// pixels each, an integer so the bitmap font stays crisp on HiDPI
// screens).
type metrics struct {
	win, fb image.Point
	ppu     int
}

func (m metrics) fbPerWin() float64 {
	if m.win.X <= 0 {
		return 1
	}
	return float64(m.fb.X) / float64(m.win.X)
}

// size is the window in logical pixels.
func (m metrics) size() image.Point { return m.fb.Div(max(m.ppu, 1)) }

func (m metrics) toLogical(x, y float64) image.Point {
	k := m.fbPerWin() / float64(max(m.ppu, 1))
	return image.Pt(int(math.Floor(x*k)), int(math.Floor(y*k)))
}

func (m metrics) toWindow(x, y float64) (float64, float64) {
	k := float64(max(m.ppu, 1)) / m.fbPerWin()
	return x * k, y * k
}

// point is one sample of a curve.
type point struct {
	step int
	v    float64
}

// snapshot is one refresh: the attention of the captured held-out
// examples and the heads' scores, as the worker hands it to the renderer.
type snapshot struct {
	gen        int // refresh number; textures alternate on its parity
	step       int
	l, h, t, n int // layers, heads, sequence length, examples captured
	causal     bool
	tokens     []int     // [n][t]
	probs      []float32 // [n][l][h][t][t], analysis.Attention's order
	scores     []analysis.HeadScore
	acc        float64
	off        analysis.Mask
	offVer     int
	onGPU      bool // textures were filled on the GPU
}

// state is the viewer's state: everything the worker and the renderer
// share, under Viewer.mu, and the policy that changes it (pause, reset,
// examples, heads switched off, the widgets and what they do). It needs
// no window and no GL: the renderer draws it, the worker trains for it.
type state struct {
	// steps is Options.Steps, where a reset training run pauses.
	steps int
	// circuitAtPause is Options.Circuit.
	circuitAtPause bool
	// made is the task of the configuration it was made for (task).
	made struct {
		key  taskKey
		task tasks.Task
		err  error
	}
	// poke wakes the worker; nil in tests.
	poke func()

	// Set by the UI, read by the worker.
	running bool
	stop    int // where training pauses; -1: nowhere
	off     analysis.Mask
	// ablation is how the heads in off are switched off; offVer counts
	// changes to either.
	ablation inspect.Ablation
	offVer   int
	resetTo  *train.Config
	quit     bool
	// circ is the side panel's circuit: asked for by the UI, found by
	// the worker.
	circ    circuitPanel
	changes int // counts the UI's changes, so the worker never sleeps on one

	// Set by the worker.
	cfg         train.Config
	shape       graph.Config
	training    bool // a trainer exists (not viewing a checkpoint)
	step        int
	stepsTaken  int
	refreshes   int
	refreshTime time.Duration
	loss        float64
	lossHist    []point
	accHist     []point
	stepsPerSec float64
	rateStep    int // steps/s: the step and time of the last measurement
	rateAt      time.Time
	snap        *snapshot
	idle        bool
	err         error
	note        string // a one-line message, e.g. a refused picker choice

	// The UI's own.
	view     View // zoom and scroll of the panels
	example  int
	cursor   image.Point // logical
	cursorIn bool
	m        metrics
	dirty    bool // numbers changed: redraw within dataFrameEvery
	urgent   bool // input changed the picture: redraw at the next frame
	fps      float64
}

// widget is a clickable button. act runs with Viewer.mu held.
type widget struct {
	r        image.Rectangle
	label    string
	on       bool // a toggle that is on, or a head switched off
	disabled bool
	off      bool // a panel's ⊘ button
	act      func()
}

// job is what the worker reads from the state between two steps.
type job struct {
	quit     bool
	seen     int // the state's changes when read
	reset    *train.Config
	off      analysis.Mask // a copy
	ablation inspect.Ablation
	offVer   int
	running  bool // training runs (not paused, no error)
	failed   bool
	stop     int
	circuit  bool // find the model's circuit now
}

// take hands the worker the UI's changes; a reset is handed over once.
func (st *state) take() job {
	j := job{quit: st.quit, seen: st.changes, reset: st.resetTo, off: st.off.Clone(), ablation: st.ablation, offVer: st.offVer,
		running: st.running && st.err == nil, failed: st.err != nil, stop: st.stop, circuit: st.circ.asked}
	st.resetTo, st.circ.asked = nil, false
	return j
}

// trains says whether the worker takes a training step now, at step,
// when it has a trainer: while training runs, up to the stop.
func (j job) trains(hasTrainer bool, step int) bool {
	return hasTrainer && j.running && (j.stop < 0 || step < j.stop)
}

// refreshClock is when the last refresh was: its step, the heads switched
// off then, when it ended and what it cost.
type refreshClock struct {
	step, offVer int
	at           time.Time
	cost         time.Duration
}

// due says whether to refresh now, at step with the heads of offVer off:
// at once for another choice of heads; for a new step, while training
// every refreshEvery (but spending at most a tenth of the time on it when
// a refresh is slow), and at once when training has stopped.
func (c refreshClock) due(offVer, step int, training bool, now time.Time) bool {
	every := max(refreshEvery, 9*c.cost)
	return offVer != c.offVer || step != c.step && (!training || now.Sub(c.at) >= every)
}

// rebuilt starts the state over for the net of m (a trainer's when
// training): step 0 (a checkpoint's own step), no curves, no snapshot,
// every head on.
func (st *state) rebuilt(m *train.Model, training bool, now time.Time) {
	s := m.Shape
	st.cfg, st.shape, st.training = m.Train, s, training
	st.step, st.loss, st.lossHist, st.accHist, st.stepsPerSec = 0, 0, nil, nil, 0
	st.rateStep, st.rateAt = 0, now
	if !training {
		st.step = m.Train.Steps
	}
	st.snap, st.err = nil, nil
	st.circ = circuitPanel{}
	st.view.L0, st.view.H0 = 0, 0
	// The ablation mask follows the new shape, all heads on.
	st.off = analysis.NewMask(s.Layers, s.Heads, nil)
	st.offVer++
	st.dirty = true
}

// stepped records training step step's loss, at now.
func (st *state) stepped(step int, loss float64, now time.Time) {
	st.step, st.loss = step, loss
	st.stepsTaken++
	st.lossHist = appendThinned(st.lossHist, point{step, loss})
	if dt := now.Sub(st.rateAt); dt >= time.Second {
		st.stepsPerSec = float64(step-st.rateStep) / dt.Seconds()
		st.rateStep, st.rateAt = step, now
	}
	st.dirty = true
}

// published shows refresh sn, which took cost.
func (st *state) published(sn *snapshot, cost time.Duration) {
	st.snap = sn
	if st.training {
		if k := len(st.accHist); k > 0 && st.accHist[k-1].step == sn.step {
			st.accHist[k-1].v = sn.acc // a click re-evaluated the same step
		} else {
			st.accHist = appendThinned(st.accHist, point{sn.step, sn.acc})
		}
	}
	st.refreshes++
	st.refreshTime += cost
	st.dirty = true
}

// fail records err for the UI and pauses training.
func (st *state) fail(err error) {
	st.err = err
	st.running = false
	st.dirty = true
}

// settle is the state's side of the worker going idle: false when the UI
// changed something since the worker read it (seen), else training that
// reached its stop shows as paused and the worker as idle.
func (st *state) settle(seen int) bool {
	if st.changes != seen {
		return false
	}
	if st.training && st.running && st.stop >= 0 && st.step >= st.stop {
		st.running = false // reached the stop: show it as paused
		st.dirty = true
	}
	if st.circuitAtPause && !st.running && st.circ.err == nil && (!st.circ.found || st.circ.step != st.step) {
		if st.askCircuit(); st.circ.asked {
			return false
		}
	}
	st.idle = true
	return true
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

// taskKey is what a configuration's task is made from.
type taskKey struct {
	name, data    string
	seqLen, vocab int
}

// task is the current configuration's task, made once per configuration
// rather than once per frame: a task read from a folder reads and checks
// every line of its data.
func (st *state) task() (tasks.Task, error) {
	key := taskKey{st.cfg.Task, st.cfg.Data, st.cfg.SeqLen, st.cfg.Vocab}
	if st.made.key != key || st.made.task == nil && st.made.err == nil {
		st.made.key = key
		st.made.task, st.made.err = st.cfg.NewTask()
	}
	return st.made.task, st.made.err
}

// layout is the layout of the current model in the current window.
func (st *state) layout() Layout {
	chars := 1
	if t, err := st.task(); err == nil {
		chars = tokenChars(t)
	}
	return NewLayoutAt(st.shape.Layers, st.shape.Heads, st.shape.SeqLen, chars, st.m.size(), st.view)
}

// zoom makes cells larger (in > 0) or smaller, a third at a time, back
// to every panel fitted to the window when smaller would not be larger
// than that.
func (st *state) zoom(in int) {
	lay := st.layout()
	c := lay.Cell
	if in > 0 {
		c = min(maxCell, c+max(1, c/2))
	} else {
		c -= max(1, c/3)
	}
	fitted := st.view
	fitted.Zoom = 0
	st.view.Zoom = c
	if in < 0 && c <= NewLayoutAt(lay.L, lay.H, lay.T, 1, lay.Size, fitted).Cell {
		st.view.Zoom = 0
	}
	st.scroll(0, 0) // keep the view on panels that exist
	st.dirty, st.urgent = true, true
}

// scroll moves the panels shown by dl layers and dh heads, within the
// model.
func (st *state) scroll(dl, dh int) {
	lay := st.layout()
	st.view.L0 = min(max(lay.FirstL+dl, 0), lay.L-lay.ShownL)
	st.view.H0 = min(max(lay.FirstH+dh, 0), lay.H-lay.ShownH)
	st.dirty, st.urgent = true, true
}

// wheel scrolls by a mouse wheel's (or touchpad's) offsets: up a layer
// per notch up, left a head per notch left (or up with shift).
func (st *state) wheel(dx, dy float64, shift bool) {
	if shift {
		dx, dy = dy, 0
	}
	st.scroll(-notches(dy), -notches(dx))
}

// notches is a wheel offset as whole steps: at least one for any move.
func notches(d float64) int {
	switch {
	case d > 0:
		return max(1, int(d))
	case d < 0:
		return min(-1, int(d))
	}
	return 0
}

// changed tells the worker (and WaitIdle) that there is work.
func (st *state) changed() {
	st.changes++
	st.idle = false
	st.dirty = true
	if st.poke != nil {
		st.poke()
	}
}

func (st *state) togglePause() {
	if !st.training || st.err != nil {
		return
	}
	st.running = !st.running
	if st.running && st.stop >= 0 && st.step >= st.stop {
		st.stop = -1 // past the stop: train on until paused
	}
	st.changed()
}

// reset restarts training from scratch with configuration c.
func (st *state) reset(c train.Config) {
	if !st.training {
		return
	}
	st.dirty = true
	if err := c.Validate(); err != nil {
		st.note = err.Error()
		return
	}
	st.note = ""
	st.resetTo = &c
	st.running, st.stop, st.example = true, max(st.steps, -1), 0
	st.changed()
}

func (st *state) nextExample(d int) {
	n := capturedN
	if st.snap != nil {
		n = st.snap.n
	}
	st.example = ((st.example+d)%n + n) % n
	st.dirty = true
}

// nextAblation switches heads off by the next method: zero, mean,
// resample, zero again.
func (st *state) nextAblation() {
	k := 0
	for i, a := range inspect.Ablations {
		if a == st.ablation {
			k = i
		}
	}
	st.ablation = inspect.Ablations[(k+1)%len(inspect.Ablations)]
	st.offVer++
	st.changed()
}

func (st *state) toggleHead(l, h int) {
	if l >= len(st.off) || h >= len(st.off[l]) {
		return
	}
	st.off[l][h] = !st.off[l][h]
	st.offVer++
	st.changed()
}

// key is a key the viewer reacts to, whatever window system reports it.
type key int

const (
	keyNone    key = iota
	keyQuit        // Esc
	keyPause       // space
	keyReset       // r
	keyNext        // n
	keyPrev        // p
	keyZoomIn      // + or =
	keyZoomOut     // -
	keyUp          // arrows: scroll the panels a layer or a head
	keyDown
	keyLeft
	keyRight
	keyCircuit // c
)

// key handles a key press: space pauses, r resets, n and p step through
// the examples, + and - zoom, the arrows scroll, c finds the circuit, Esc
// quits. Held keys repeat all but space, r and c.
func (st *state) key(k key, repeat bool) {
	st.urgent = true
	switch {
	case k == keyQuit:
		st.quit = true
		st.changed()
	case k == keyPause && !repeat:
		st.togglePause()
	case k == keyReset && !repeat:
		st.reset(st.cfg)
	case k == keyNext:
		st.nextExample(1)
	case k == keyPrev:
		st.nextExample(-1)
	case k == keyZoomIn:
		st.zoom(1)
	case k == keyZoomOut:
		st.zoom(-1)
	case k == keyUp:
		st.scroll(-1, 0)
	case k == keyDown:
		st.scroll(1, 0)
	case k == keyLeft:
		st.scroll(0, -1)
	case k == keyRight:
		st.scroll(0, 1)
	case k == keyCircuit && !repeat:
		st.askCircuit()
	}
}

// click presses the widget under p (logical pixels), if any.
func (st *state) click(p image.Point) {
	st.urgent = true
	for _, w := range st.widgets(st.layout()) {
		if p.In(w.r) && !w.disabled {
			w.act()
			return
		}
	}
}

// headDivisors are the head counts a picker offers: divisors of d-model.
func headDivisors(d int) []int {
	var out []int
	for h := 1; h <= min(d, 16); h++ {
		if d%h == 0 {
			out = append(out, h)
		}
	}
	return out
}

// widgets lists every button for the current state and layout; the
// same list is drawn and hit-tested, so a click always lands on what is
// on screen.
func (st *state) widgets(lay Layout) []widget {
	fixed := !st.training
	bw := (sbW - 12) / 3
	pause := "pause"
	if !st.running {
		pause = "run"
	}
	ws := []widget{
		{r: image.Rect(sbX, yButtons, sbX+bw, yButtons+buttonH), label: pause, disabled: fixed || st.err != nil,
			on: st.running, act: st.togglePause},
		{r: image.Rect(sbX+bw+6, yButtons, sbX+2*bw+6, yButtons+buttonH), label: "reset", disabled: fixed,
			act: func() { st.reset(st.cfg) }},
		{r: image.Rect(sbX+2*bw+12, yButtons, sbX+3*bw+12, yButtons+buttonH), label: "next ex",
			act: func() { st.nextExample(1) }},
	}
	ws = append(ws, st.modelWidgets()...)
	method := st.ablation
	if method == "" {
		method = inspect.AblateZero
	}
	ws = append(ws, widget{r: image.Rect(pickerX, yAblation, sbX+sbW, yAblation+buttonH), label: string(method),
		on: method != inspect.AblateZero, act: st.nextAblation})

	for l := lay.FirstL; l < lay.FirstL+lay.ShownL; l++ {
		for h := lay.FirstH; h < lay.FirstH+lay.ShownH; h++ {
			on := st.off.Off(l, h)
			ws = append(ws, widget{r: lay.OffButton(l, h), off: true, on: on,
				act: func() { st.toggleHead(l, h) }})
		}
	}
	return ws
}

// modelWidgets are the model pickers: a stepper (< and >) for the task,
// the layers and the heads, a toggle for positions and the causal mask.
// Each change restarts training; a checkpoint's model is fixed.
func (st *state) modelWidgets() []widget {
	fixed := !st.training
	c := st.cfg
	row := func(k int) int { return yPickers + k*rowPitch }
	var ws []widget
	stepper := func(k int, prev, next func(*train.Config)) {
		y := row(k)
		for i, f := range []func(*train.Config){prev, next} {
			x := pickerX
			label := "<"
			if i == 1 {
				x, label = sbX+sbW-pickerW, ">"
			}
			ws = append(ws, widget{r: image.Rect(x, y, x+pickerW, y+buttonH), label: label, disabled: fixed,
				act: func() { n := st.cfg; f(&n); st.reset(n) }})
		}
	}
	names := tasks.Names()
	ti := 0
	for i, n := range names {
		if n == c.Task {
			ti = i
		}
	}
	// Another task takes its own default sizes.
	stepper(0, func(n *train.Config) { n.Task, n.SeqLen, n.Vocab = names[(ti+len(names)-1)%len(names)], 0, 0 },
		func(n *train.Config) { n.Task, n.SeqLen, n.Vocab = names[(ti+1)%len(names)], 0, 0 })
	stepper(1, func(n *train.Config) { n.Layers = max(1, n.Layers-1) }, func(n *train.Config) { n.Layers = min(6, n.Layers+1) })
	divs := headDivisors(c.DModel)
	hi := 0
	for i, d := range divs {
		if d == c.Heads {
			hi = i
		}
	}
	stepper(2, func(n *train.Config) { n.Heads = divs[max(0, hi-1)] }, func(n *train.Config) { n.Heads = divs[min(len(divs)-1, hi+1)] })
	toggle := func(k int, on bool, f func(*train.Config)) {
		y := row(k)
		label := "off"
		if on {
			label = "on"
		}
		ws = append(ws, widget{r: image.Rect(pickerX, y, sbX+sbW, y+buttonH), label: label, on: on, disabled: fixed,
			act: func() { n := st.cfg; f(&n); st.reset(n) }})
	}
	toggle(3, c.Positions, func(n *train.Config) { n.Positions = !n.Positions })
	toggle(4, c.Causal, func(n *train.Config) { n.Causal = !n.Causal })
	return ws
}
