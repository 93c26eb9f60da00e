package window

import (
	"image"
	"testing"

	"headlab/tasks"
)

// newModel is a model training tiny(steps), its window at the preferred
// size, with no worker, no window and no GL.
func newModel(t *testing.T, steps int) *model {
	t.Helper()
	c := tiny(steps)
	task, err := tasks.New(c.Task)
	if err != nil {
		t.Fatal(err)
	}
	st := &model{steps: steps, cfg: c, shape: c.Model(task), training: true, running: true, stop: steps}
	for range st.shape.Layers {
		st.off = append(st.off, make([]bool, st.shape.Heads))
	}
	size := PreferredSize(st.shape.Layers, st.shape.Heads, st.shape.SeqLen, tokenChars(task), image.Point{})
	st.m = metrics{win: size, fb: size, ppu: 1}
	return st
}

// pressLabel clicks the first enabled widget labelled label.
func pressLabel(t *testing.T, st *model, label string) {
	t.Helper()
	for _, w := range st.widgets(st.layout()) {
		if w.label == label && !w.disabled {
			st.click(w.r.Min.Add(image.Pt(1, 1)))
			return
		}
	}
	t.Fatalf("no enabled %q widget", label)
}

func TestModelPolicy(t *testing.T) {
	st := newModel(t, 100)
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

func TestModelPickers(t *testing.T) {
	st := newModel(t, 100)
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

func TestModelViewOnly(t *testing.T) {
	st := newModel(t, 100)
	st.training, st.running = false, false
	st.togglePause()
	st.reset(st.cfg)
	if st.running || st.resetTo != nil {
		t.Fatal("a checkpoint's model trained or reset")
	}
	for _, w := range st.widgets(st.layout()) {
		if !w.disabled && w.label != "next ex" && !w.off {
			t.Errorf("widget %q enabled without a trainer", w.label)
		}
	}
	if got := headDivisors(12); len(got) != 6 || got[5] != 12 {
		t.Errorf("headDivisors(12) = %v", got)
	}
}
