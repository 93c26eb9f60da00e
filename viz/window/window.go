// Package window is headlab's native viewer: a GLFW window that trains a
// model (or shows a saved one) and redraws every head's attention on one
// held-out example as training proceeds, with each head's label and score,
// loss and accuracy curves, and a ⊘ button per head that switches the head
// off for evaluation.
//
// All GL work runs on a glctx Thread (through Call), in the context of its
// GLFW window, which the viewer shows and resizes; under glctx.Main that is
// the process's main thread, as GLFW requires. The drawing needs OpenGL 4.1
// core (go-gl's v4.1-core package). With kernels that are a TextureSource
// on the same thread (the GL device), the attention of every captured
// example goes from the evaluator's tensors into the heatmap textures
// inside the GPU; with CPU kernels it is uploaded once per refresh.
// Training runs on a goroutine of its own and hands results to the
// renderer under a mutex; the renderer's frames and the kernels interleave
// on the GL thread, so frames keep coming while the model trains.
//
// The files split the viewer's state from its drawing. state.go holds
// what the worker and the renderer share, the training policy (when to
// step, refresh, pause) and the controls (keys, buttons and what they do),
// with no window and no GL. worker.go runs the trainer and the evaluator
// for it; layout.go places the sidebar and the panels (a viz.PanelGrid, as
// in the heatmap figure); draw.go composes a frame of the state as quads,
// in viz.ScreenFace's glyphs (atlas.go, batch.go); render.go and window.go
// hold the GLFW window and the GL that draws those frames.
//
// See docs/viewer.md.
package window

import (
	"errors"
	"fmt"
	"image"
	"sync"
	"time"

	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/analysis"
	"headlab/glctx"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
	"headlab/viz"
)

// Options says what to show and where.
type Options struct {
	// Config is the model to train; ignored when Model is set.
	Config train.Config
	// Model is a saved model to show without training (see train.Load).
	Model *train.Model
	// Source names where Model came from, e.g. the checkpoint directory.
	Source string
	// Steps is where training pauses (space trains on); 0 shows the
	// untrained model, a negative Steps trains without pausing.
	Steps int
	// Kernels runs training and evaluation; Open refuses nil. When it is
	// a TextureSource on Display's thread (the GL device made on it), the
	// heatmap textures are filled on the GPU.
	Kernels kernels.Device
	// Display owns the GL thread, the context (OpenGL 4.1 core or later)
	// and the window. The Viewer borrows it: Close hides the window but
	// leaves the thread open.
	Display *glctx.Thread
	// Size is the initial window size in logical pixels; zero picks
	// PreferredSize, within the screen.
	Size image.Point
	// Circuit finds the model's circuit for the side panel whenever
	// training pauses (at Steps, or by space) at a step whose circuit the
	// panel does not show, and for a saved model; else only when asked
	// (c).
	Circuit bool
}

// Viewer is an open viewer window with its training goroutine.
type Viewer struct {
	opts    Options
	display *glctx.Thread
	texSrc  TextureSource // Kernels, when it fills textures on display's thread
	gpuFill bool          // the heatmap textures are filled from the attention tensors
	slices  int           // GL_MAX_ARRAY_TEXTURE_LAYERS

	// GL thread only.
	win *glfw.Window
	g   *gpu

	mu   sync.Mutex
	st   state
	wake chan struct{} // a change for the worker; capacity 1

	w         *worker
	closeOnce sync.Once

	// Frame statistics, for Stats.
	start     time.Time
	frames    int
	frameTime time.Duration
}

// ErrClosed is returned by Run and WaitIdle when the user closed the
// window (or pressed Esc).
var ErrClosed = errors.New("window closed")

// refreshEvery is how often, while training, the held-out example is
// recaptured and the heads rescored: often enough to watch stripes form,
// rarely enough to cost a few percent of the training steps.
const refreshEvery = 250 * time.Millisecond

// frameEvery paces the render loop (about 60 frames a second at most; a
// frame is only drawn when something on screen changed).
const frameEvery = time.Second / 60

// dataFrameEvery paces frames that only show new training numbers.
const dataFrameEvery = 30 * time.Millisecond

// Open shows the window, builds the model (or the evaluator of opts.Model)
// and starts training. Close releases it.
func Open(opts Options) (*Viewer, error) {
	if opts.Display == nil {
		return nil, errors.New("window: Options.Display is nil")
	}
	if opts.Kernels == nil {
		// The caller chose the backend; the viewer makes no device of its own.
		return nil, errors.New("window: Options.Kernels is nil")
	}
	cfg := opts.Config
	if opts.Model != nil {
		cfg = opts.Model.Train
	} else if err := cfg.Validate(); err != nil {
		return nil, err
	}
	v := &Viewer{opts: opts, display: opts.Display, wake: make(chan struct{}, 1)}
	v.st.steps, v.st.poke, v.st.circuitAtPause = opts.Steps, v.poke, opts.Circuit
	if ts, ok := opts.Kernels.(TextureSource); ok && ts.Thread() == opts.Display {
		v.texSrc, v.gpuFill = ts, true
	}
	t, err := cfg.NewTask()
	if err != nil {
		return nil, err
	}
	shape := cfg.Model(t)
	if opts.Model != nil {
		shape = opts.Model.Shape
	}
	var glErr error
	if err := v.display.Call(func() { glErr = v.initGL(shape, tokenChars(t)) }); err != nil {
		if glErr == nil { // set up, but GL reported an error on the way
			v.freeGL()
		}
		return nil, err
	}
	if glErr != nil {
		return nil, glErr
	}
	v.w = newWorker(v)
	if err := v.w.build(cfg, opts.Model); err != nil {
		v.freeGL()
		return nil, err
	}
	v.st.running = opts.Model == nil
	v.st.stop = max(opts.Steps, -1)
	v.st.example = 0
	v.st.dirty = true
	v.start = time.Now()
	go v.w.loop()
	return v, nil
}

// tokenChars is the width, in characters, of task t's longest token label.
func tokenChars(t tasks.Task) int {
	n := 1
	for id := 0; id < t.Vocab(); id++ {
		n = max(n, textW(tokenLabel(t, id))/glyphW)
	}
	return n
}

// Close stops training, frees the viewer's GL objects and hides the
// window. It does not close Options.Display or Options.Kernels.
func (v *Viewer) Close() error {
	v.closeOnce.Do(func() {
		v.mu.Lock()
		v.st.quit = true
		v.mu.Unlock()
		v.poke()
		<-v.w.done
		v.w.closeNets()
		v.freeGL()
	})
	return nil
}

// Quit asks the viewer to stop as if Esc had been pressed: Run returns
// nil at its next frame. It is safe from any goroutine (a signal handler).
func (v *Viewer) Quit() {
	v.mu.Lock()
	v.st.quit = true
	v.st.changes++
	v.mu.Unlock()
	v.poke()
}

// poke wakes the worker after a change to the state it reads.
func (v *Viewer) poke() {
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// Run draws frames and handles input until the window is closed or Esc is
// pressed; it returns nil then, or the first GL error.
func (v *Viewer) Run() error {
	tick := time.NewTicker(frameEvery)
	defer tick.Stop()
	for {
		closed, err := v.Frame()
		if err != nil {
			return err
		}
		if closed {
			return nil
		}
		<-tick.C
	}
}

// Frame handles pending input and draws one frame if anything on screen
// changed. closed reports that the user asked to quit. Run calls it in a
// loop; it is exported for callers with a loop of their own.
func (v *Viewer) Frame() (closed bool, err error) {
	err = v.display.Call(func() { closed = v.frame(true, nil) })
	return closed, err
}

// WaitIdle keeps the window responsive until training has reached its
// stop (Options.Steps) and the heads shown match the current settings (the
// last click has been evaluated). It returns ErrClosed if the user closed
// the window, the training error if training failed, and an error after
// timeout (0: no limit).
func (v *Viewer) WaitIdle(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var closed bool
		if err := v.display.Call(func() { closed = v.frame(false, nil) }); err != nil {
			return err
		}
		v.mu.Lock()
		idle := v.st.idle && v.st.snap != nil && v.st.snap.offVer == v.st.offVer
		err := v.st.err
		v.mu.Unlock()
		switch {
		case err != nil:
			return err
		case closed:
			return ErrClosed
		case idle:
			return nil
		case timeout > 0 && time.Now().After(deadline):
			return fmt.Errorf("window: not idle after %v", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Screenshot draws one frame and returns it as the framebuffer holds it
// (framebuffer pixels, top row first).
func (v *Viewer) Screenshot() (*image.RGBA, error) {
	var img *image.RGBA
	err := v.display.Call(func() {
		img = image.NewRGBA(image.Rectangle{})
		v.frame(true, img)
	})
	if err != nil {
		return nil, err
	}
	return img, nil
}

// Status is what the viewer currently shows, for tests and reports.
type Status struct {
	Step int
	// Loss is the last training batch's loss.
	Loss float64
	// Accuracy is the held-out accuracy of the last refresh, with the
	// heads in Off switched off.
	Accuracy float64
	// Off lists the heads switched off in the last refresh, as "L0H1".
	Off []string
	// Titles are the panel titles, layer-major: "L1H0 · induction 0.81".
	Titles []string
	// Example is the index of the held-out example shown.
	Example int
	// Tokens are that example's tokens; Probs its attention, [L][H][T][T].
	Tokens []int
	Probs  []float32
	// Running says training is running (not paused or done).
	Running bool
	Err     error
	// Circuit is the side panel's circuit, its edges largest effect first
	// ("L1H1 -> logits"), found at CircuitStep; nil when none is shown.
	Circuit     []string
	CircuitStep int
}

// Status reports what the viewer shows now.
func (v *Viewer) Status() Status {
	v.mu.Lock()
	defer v.mu.Unlock()
	st := &v.st
	s := Status{Step: st.step, Loss: st.loss, Running: st.running, Err: st.err, Example: st.example}
	if c := st.circ; c.found {
		s.CircuitStep = c.step
		for _, e := range c.in {
			s.Circuit = append(s.Circuit, e.name)
		}
	}
	if sn := st.snap; sn != nil {
		s.Accuracy = sn.acc
		s.Off = analysis.HeadNames(sn.off)
		s.Titles = make([]string, len(sn.scores))
		for k, h := range sn.scores {
			s.Titles[k] = panelTitle(h)
		}
		n := st.example % sn.n
		s.Tokens = append([]int(nil), sn.tokens[n*sn.t:(n+1)*sn.t]...)
		per := sn.l * sn.h * sn.t * sn.t
		s.Probs = append([]float32(nil), sn.probs[n*per:(n+1)*per]...)
	}
	return s
}

// Stats counts what the viewer did since Open.
type Stats struct {
	Frames    int     // frames drawn
	Steps     int     // training steps taken
	Refreshes int     // held-out evaluations (attention, scores, accuracy)
	Seconds   float64 // since Open
	// RefreshSeconds is the time spent in refreshes, on the training
	// goroutine.
	RefreshSeconds float64
	// FrameSeconds is the time spent composing and drawing frames, on the
	// GL thread.
	FrameSeconds float64
}

// Stats reports the frames drawn, steps taken and refreshes made since
// Open, for frame and step rates.
func (v *Viewer) Stats() Stats {
	v.mu.Lock()
	defer v.mu.Unlock()
	return Stats{Frames: v.frames, Steps: v.st.stepsTaken, Refreshes: v.st.refreshes,
		Seconds: time.Since(v.start).Seconds(), RefreshSeconds: v.st.refreshTime.Seconds(),
		FrameSeconds: v.frameTime.Seconds()}
}

// Click simulates a left click at window coordinates (x, y), as GLFW
// reports cursor positions; tests use it to press buttons.
func (v *Viewer) Click(x, y float64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clickLocked(v.st.m.toLogical(x, y))
}

// OffButton is the centre of head (l, h)'s ⊘ button in window
// coordinates, for Click.
func (v *Viewer) OffButton(l, h int) (x, y float64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.layoutLocked().OffButton(l, h)
	return v.st.m.toWindow(float64(r.Min.X+r.Max.X)/2, float64(r.Min.Y+r.Max.Y)/2)
}

// Layout is the current layout in logical pixels, and Scale the number of
// framebuffer pixels per logical pixel, so that tests can find panels in
// a Screenshot.
func (v *Viewer) Layout() (Layout, int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.layoutLocked(), v.st.m.ppu
}

// panelTitle is a head's title: "L1H0 · induction 0.81".
func panelTitle(s analysis.HeadScore) string {
	return viz.HeadTitle(analysis.HeadName(s.Layer, s.Head), s.Title())
}

// The Viewer's side of the state, with Viewer.mu held: GLFW's input in
// the state's terms.

func (v *Viewer) layoutLocked() Layout { return v.st.layout() }

// keyLocked handles a key press (see state.key).
func (v *Viewer) keyLocked(key glfw.Key, _ glfw.ModifierKey, repeat bool) {
	v.st.key(keyOf(key), repeat)
}

// keyOf is the state's key for a GLFW key; keyNone for keys it ignores.
func keyOf(k glfw.Key) key {
	switch k {
	case glfw.KeyEscape:
		return keyQuit
	case glfw.KeySpace:
		return keyPause
	case glfw.KeyR:
		return keyReset
	case glfw.KeyN:
		return keyNext
	case glfw.KeyP:
		return keyPrev
	case glfw.KeyEqual, glfw.KeyKPAdd:
		return keyZoomIn
	case glfw.KeyMinus, glfw.KeyKPSubtract:
		return keyZoomOut
	case glfw.KeyUp:
		return keyUp
	case glfw.KeyDown:
		return keyDown
	case glfw.KeyLeft:
		return keyLeft
	case glfw.KeyRight:
		return keyRight
	case glfw.KeyC:
		return keyCircuit
	}
	return keyNone
}

func (v *Viewer) clickLocked(p image.Point)         { v.st.click(p) }
func (v *Viewer) togglePauseLocked()                { v.st.togglePause() }
func (v *Viewer) widgetsLocked(lay Layout) []widget { return v.st.widgets(lay) }
