package window

import (
	"errors"
	"image"
	"testing"
	"time"

	"headlab/analysis"
	"headlab/tasks"
	"headlab/train"
)

// newState is the state of a viewer training tiny(steps), its window at
// the preferred size, with no worker, no window and no GL.
func newState(t *testing.T, steps int) *state {
	t.Helper()
	c := tiny(steps)
	task, err := tasks.New(c.Task)
	if err != nil {
		t.Fatal(err)
	}
	st := &state{steps: steps, cfg: c, shape: c.Model(task), training: true, running: true, stop: steps}
	for range st.shape.Layers {
		st.off = append(st.off, make([]bool, st.shape.Heads))
	}
	size := PreferredSize(st.shape.Layers, st.shape.Heads, st.shape.SeqLen, tokenChars(task), image.Point{})
	st.m = metrics{win: size, fb: size, ppu: 1}
	return st
}

// pressLabel clicks the first enabled widget labelled label.
func pressLabel(t *testing.T, st *state, label string) {
	t.Helper()
	for _, w := range st.widgets(st.layout()) {
		if w.label == label && !w.disabled {
			st.click(w.r.Min.Add(image.Pt(1, 1)))
			return
		}
	}
	t.Fatalf("no enabled %q widget", label)
}

func TestStatePolicy(t *testing.T) {
	st := newState(t, 100)
	pokes := 0
	st.poke = func() { pokes++ }

	st.key(keyPause, false)
	if st.running || pokes != 1 {
		t.Fatalf("space: running %v, pokes %d; want paused, 1", st.running, pokes)
	}
	st.key(keyPause, true) // a held space does not toggle again
	if st.running {
		t.Fatal("a repeated space resumed training")
	}
	st.step = 100
	st.key(keyPause, false)
	if !st.running || st.stop != -1 {
		t.Fatalf("resume past the stop: running %v, stop %d; want true, -1", st.running, st.stop)
	}

	st.key(keyPrev, false)
	if st.example != capturedN-1 {
		t.Fatalf("p from example 0: %d, want %d", st.example, capturedN-1)
	}
	st.key(keyNext, true)
	if st.example != 0 {
		t.Fatalf("n wraps to %d, want 0", st.example)
	}

	st.step, st.example = 50, 3
	st.key(keyReset, false)
	if st.resetTo == nil || *st.resetTo != st.cfg || !st.running || st.stop != 100 || st.example != 0 {
		t.Fatalf("reset: resetTo %v, running %v, stop %d, example %d", st.resetTo, st.running, st.stop, st.example)
	}

	lay := st.layout()
	x, y := lay.OffButton(1, 0).Min.X+2, lay.OffButton(1, 0).Min.Y+2
	st.click(image.Pt(x, y))
	if !st.off[1][0] || st.offVer != 1 {
		t.Fatalf("⊘ on L1H0: off %v, offVer %d", st.off, st.offVer)
	}
	st.click(image.Pt(x, y))
	if st.off[1][0] || st.offVer != 2 {
		t.Fatalf("⊘ again: off %v, offVer %d", st.off, st.offVer)
	}

	st.key(keyQuit, false)
	if !st.quit {
		t.Fatal("Esc did not quit")
	}
}

func TestStatePickers(t *testing.T) {
	st := newState(t, 100)
	pressLabel(t, st, ">") // the task picker's next
	if st.resetTo == nil || st.resetTo.Task == st.cfg.Task {
		t.Fatalf("task picker: resetTo %+v", st.resetTo)
	}
	names := tasks.Names()
	for i, n := range names {
		if n == st.cfg.Task && st.resetTo.Task != names[(i+1)%len(names)] {
			t.Fatalf("next task after %s: %s", n, st.resetTo.Task)
		}
	}

	st.resetTo = nil
	c := st.cfg
	c.DModel = 0
	st.reset(c)
	if st.resetTo != nil || st.note == "" {
		t.Fatalf("reset to a bad config: resetTo %v, note %q; want nil and a note", st.resetTo, st.note)
	}
}

func TestStateViewOnly(t *testing.T) {
	st := newState(t, 100)
	st.training, st.running = false, false
	st.togglePause()
	st.reset(st.cfg)
	if st.running || st.resetTo != nil {
		t.Fatal("a checkpoint's model trained or reset")
	}
	for _, w := range st.widgets(st.layout()) {
		// Next example, the heads' ⊘ and how they are switched off
		// change no model.
		if !w.disabled && w.label != "next ex" && !w.off && w.r.Min.Y != yAblation {
			t.Errorf("widget %q enabled without a trainer", w.label)
		}
	}
	if got := headDivisors(12); len(got) != 6 || got[5] != 12 {
		t.Errorf("headDivisors(12) = %v", got)
	}
}

// TestStateAblationControl: the side panel's ablation button cycles
// zero, mean, resample and zero again, each press handing the worker the
// method and a new version of what is switched off.
func TestStateAblationControl(t *testing.T) {
	st := newState(t, 100)
	button := func() widget {
		for _, w := range st.widgets(st.layout()) {
			if w.r.Min.Y == yAblation {
				return w
			}
		}
		t.Fatal("no ablation button")
		return widget{}
	}
	if b := button(); b.label != "zero" || b.on || b.disabled {
		t.Fatalf("ablation button at start: %+v", b)
	}
	for _, want := range []string{"mean", "resample", "zero"} {
		ver := st.offVer
		b := button()
		st.click(b.r.Min.Add(image.Pt(2, 2)))
		j := st.take()
		if string(j.ablation) != want || j.offVer != ver+1 || button().label != want {
			t.Errorf("after a press: job %q version %d (was %d), button %q; want %q", j.ablation, j.offVer, ver, button().label, want)
		}
	}
}

func TestStateTrainingPolicy(t *testing.T) {
	st := newState(t, 100)
	st.off[0][1] = true
	j := st.take()
	j.off[0][1] = false
	if !st.off[0][1] {
		t.Fatal("take's off is not a copy")
	}
	if !j.trains(true, 99) || j.trains(true, 100) || j.trains(false, 0) {
		t.Error("trains: want a step below the stop only, with a trainer")
	}
	st.reset(st.cfg)
	if j := st.take(); j.reset == nil || st.take().reset != nil {
		t.Error("a reset is not handed over exactly once")
	}

	t0 := time.Unix(1000, 0)
	c := refreshClock{step: 10, offVer: 1, at: t0, cost: 10 * time.Millisecond}
	for _, k := range []struct {
		offVer, step int
		training     bool
		after        time.Duration
		want         bool
	}{
		{1, 10, true, time.Hour, false}, // nothing new
		{2, 10, true, 0, true},          // another head switched off: at once
		{1, 11, true, refreshEvery - 1, false},
		{1, 11, true, refreshEvery, true},
		{1, 11, false, 0, true}, // stopped at a new step: at once
	} {
		if got := c.due(k.offVer, k.step, k.training, t0.Add(k.after)); got != k.want {
			t.Errorf("due(%+v) = %v", k, got)
		}
	}
	slow := refreshClock{step: 10, at: t0, cost: time.Second}
	if slow.due(0, 11, true, t0.Add(8*time.Second)) || !slow.due(0, 11, true, t0.Add(9*time.Second)) {
		t.Error("a slow refresh is not spread to a tenth of the time")
	}

	st = newState(t, 100)
	st.rebuilt(&train.Model{Train: st.cfg, Shape: st.shape}, true, t0)
	if st.offVer != 1 || len(st.off) != st.shape.Layers || st.snap != nil || st.step != 0 {
		t.Fatalf("rebuilt: offVer %d, off %v, step %d", st.offVer, st.off, st.step)
	}
	st.stepped(1, 2.5, t0.Add(time.Second/2))
	st.stepped(50, 1.5, t0.Add(time.Second))
	if st.stepsTaken != 2 || st.loss != 1.5 || len(st.lossHist) != 2 || st.stepsPerSec != 50 {
		t.Errorf("stepped: taken %d, loss %v, hist %d, %v steps/s", st.stepsTaken, st.loss, len(st.lossHist), st.stepsPerSec)
	}
	st.published(&snapshot{step: 50, acc: 0.5}, time.Millisecond)
	st.published(&snapshot{step: 50, acc: 0.25}, time.Millisecond) // a click at the same step
	if len(st.accHist) != 1 || st.accHist[0].v != 0.25 || st.refreshes != 2 {
		t.Errorf("published: accHist %v, refreshes %d", st.accHist, st.refreshes)
	}

	st.running, st.stop, st.step = true, 50, 50
	seen := st.changes
	st.changed()
	if st.settle(seen) {
		t.Error("settled though the UI changed something since")
	}
	if !st.settle(st.changes) || st.running || !st.idle {
		t.Errorf("settle at the stop: running %v, idle %v; want paused and idle", st.running, st.idle)
	}
	st.fail(errTest)
	if st.err != errTest || st.running || !st.take().failed {
		t.Error("fail did not pause with the error")
	}

	var h []point
	for k := range maxHistory + 1 {
		h = appendThinned(h, point{k, 0})
	}
	if len(h) != maxHistory/2+1 || h[1].step != 2 {
		t.Errorf("appendThinned: %d samples, second at step %d", len(h), h[1].step)
	}
}

var errTest = errors.New("test")

// TestComposeWithoutGL builds frames from a state alone: one heatmap
// instance per head, in its panel, and a hover outline over the hovered
// cell.
func TestComposeWithoutGL(t *testing.T) {
	st := newState(t, 100)
	f := compose(st, "")
	if len(f.heat) != 0 || len(f.under.verts) == 0 {
		t.Fatalf("before the first refresh: %d heatmaps, %d vertices", len(f.heat), len(f.under.verts))
	}
	L, H, T := st.shape.Layers, st.shape.Heads, st.shape.SeqLen
	sn := &snapshot{step: 100, l: L, h: H, t: T, n: 2, causal: true,
		tokens: make([]int, 2*T), probs: make([]float32, 2*L*H*T*T), off: st.off}
	for l := range L {
		for h := range H {
			sn.scores = append(sn.scores, analysis.HeadScore{Layer: l, Head: h})
		}
	}
	st.published(sn, 0)
	lay := st.layout()
	st.cursor, st.cursorIn = lay.CellRect(1, 1, 2, 1).Min, true
	f = compose(st, "")
	if len(f.heat) != L*H {
		t.Fatalf("%d heatmap instances, want %d", len(f.heat), L*H)
	}
	p := lay.Panel(1, 0)
	if k := f.heat[H]; k.x0 != float32(p.Min.X) || k.y1 != float32(p.Max.Y) {
		t.Errorf("L1H0's heatmap at %v, panel %v", k, p)
	}
	if len(f.over.verts) == 0 {
		t.Error("no hover outline or tooltip")
	}
}
