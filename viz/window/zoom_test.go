package window

import (
	"image"
	"testing"
	"time"

	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/backend/cpu"
)

// bigState is newState with issue 38's big shape, 4 layers of 8 heads at
// T=64, in a 1280x800 window.
func bigState(t *testing.T) *state {
	t.Helper()
	st := newState(t, 100)
	st.cfg.Layers, st.cfg.Heads, st.cfg.SeqLen = 4, 8, 64
	st.shape.Layers, st.shape.Heads, st.shape.SeqLen = 4, 8, 64
	size := image.Pt(1280, 800)
	st.m = metrics{win: size, fb: size, ppu: 1}
	return st
}

// checkShown: the panels shown lie inside the window's panel area, each
// cell maps back to its head, no head outside the window has a panel or a
// button, and the token labels drawn every step-th row and column do not
// overlap.
func checkShown(t *testing.T, lay Layout) {
	t.Helper()
	area := image.Rect(sidebarW, 0, lay.Size.X-legendW, lay.Size.Y)
	for l := range lay.L {
		for h := range lay.H {
			p := lay.Panel(l, h)
			if !lay.Shown(l, h) {
				if !p.Empty() || !lay.OffButton(l, h).Empty() || !lay.CellRect(l, h, 0, 0).Empty() {
					t.Errorf("head (%d, %d) is off screen but has panel %v", l, h, p)
				}
				continue
			}
			if !p.In(area) || !lay.Title(l, h).In(area) {
				t.Errorf("head (%d, %d)'s panel %v is outside %v", l, h, p, area)
			}
			c := lay.CellRect(l, h, 63, 17)
			if gl, gh, i, j, ok := lay.CellAt(c.Min.Add(image.Pt(1, 1))); !ok || gl != l || gh != h || i != 63 || j != 17 {
				t.Errorf("cell (63, 17) of head (%d, %d) maps back to (%d, %d) cell (%d, %d) %v", l, h, gl, gh, i, j, ok)
			}
		}
	}
	if rows := lay.stepLabels(lineH); rows*lay.Cell < lineH {
		t.Errorf("row labels every %d rows of %d pixels overlap", rows, lay.Cell)
	}
	if cols := lay.stepLabels(lay.labelW - 4 + colGap); cols*lay.Cell < lay.labelW-4+colGap {
		t.Errorf("column labels every %d columns of %d pixels are closer than %d pixels", cols, lay.Cell, colGap)
	}
}

// TestLayoutPaged: 32 heads of T=64 do not fit a 1280x800 window at
// readable cells, so the layout shows a window of whole panels of cells
// readCell wide; the default model's layout shows every panel, as before.
func TestLayoutPaged(t *testing.T) {
	lay := NewLayout(4, 8, 64, 1, image.Pt(1280, 800))
	if !lay.Paged() || lay.Cell != readCell || lay.ShownL*lay.ShownH >= 32 || lay.ShownL < 1 || lay.ShownH < 2 {
		t.Fatalf("cells %d, %d x %d heads shown of 4 x 8 (paged %v)", lay.Cell, lay.ShownL, lay.ShownH, lay.Paged())
	}
	t.Logf("4 x 8 heads of T=64 in 1280x800: %d x %d shown, cells %d", lay.ShownL, lay.ShownH, lay.Cell)
	checkShown(t, lay)
	small := NewLayout(2, 2, 16, 1, image.Pt(1280, 800))
	if small.Paged() || small.ShownL != 2 || small.ShownH != 2 || small.FirstL != 0 || small.Cell < 20 {
		t.Errorf("the default model: %d x %d shown from (%d, %d), cells %d", small.ShownL, small.ShownH, small.FirstL, small.FirstH, small.Cell)
	}
	if z := NewLayoutAt(2, 2, 16, 1, image.Pt(1280, 800), View{Zoom: 3}); z != small {
		t.Error("a zoom smaller than the fitted cell changes the layout")
	}
}

// TestStateZoomScroll: the arrows and the wheel scroll the panels shown a
// layer or a head at a time, within the model; + zooms in (bigger cells,
// fewer panels), - back out to the fitted layout.
func TestStateZoomScroll(t *testing.T) {
	st := bigState(t)
	lay := st.layout()
	st.key(keyDown, false)
	st.key(keyRight, true)
	if l := st.layout(); l.FirstL != 1 || l.FirstH != 1 {
		t.Errorf("down, right: first head (%d, %d), want (1, 1)", l.FirstL, l.FirstH)
	}
	for range 20 {
		st.key(keyDown, true)
		st.wheel(-1, 0, false) // right
	}
	end := st.layout()
	if end.FirstL != 4-lay.ShownL || end.FirstH != 8-lay.ShownH || !end.Shown(3, 7) {
		t.Errorf("scrolled to the end: first head (%d, %d), want (%d, %d)", end.FirstL, end.FirstH, 4-lay.ShownL, 8-lay.ShownH)
	}
	checkShown(t, end)
	st.wheel(0, 2, false) // two notches up
	st.wheel(0, 1, true)  // shift: a notch left
	if l := st.layout(); l.FirstL != max(end.FirstL-2, 0) || l.FirstH != end.FirstH-1 {
		t.Errorf("wheel up 2, shift-wheel 1: first head (%d, %d)", l.FirstL, l.FirstH)
	}

	st.key(keyZoomIn, false)
	in := st.layout()
	if in.Cell <= lay.Cell || in.ShownL*in.ShownH >= lay.ShownL*lay.ShownH {
		t.Errorf("zoom in: cells %d (were %d), %d panels shown (were %d)", in.Cell, lay.Cell, in.ShownL*in.ShownH, lay.ShownL*lay.ShownH)
	}
	checkShown(t, in)
	for range 10 {
		st.key(keyZoomIn, true)
	}
	if l := st.layout(); l.Cell != maxCell || l.ShownL != 1 || l.ShownH != 1 {
		t.Errorf("zoomed all the way in: cells %d, %d x %d panels", l.Cell, l.ShownL, l.ShownH)
	}
	for range 20 {
		st.key(keyZoomOut, true)
	}
	if l := st.layout(); st.view.Zoom != 0 || l.Cell != lay.Cell || l.ShownH != lay.ShownH {
		t.Errorf("zoomed all the way out: zoom %d, cells %d, %d heads across; want 0, %d, %d", st.view.Zoom, l.Cell, l.ShownH, lay.Cell, lay.ShownH)
	}

	// The default model zooms in beyond its fitted cells, then scrolls.
	small := newState(t, 100)
	fitted := small.layout()
	small.key(keyZoomIn, false)
	small.key(keyZoomIn, false)
	z := small.layout()
	if z.Cell <= fitted.Cell {
		t.Errorf("the default model zoomed in: cells %d, were %d", z.Cell, fitted.Cell)
	}
	if z.Paged() {
		small.key(keyDown, false)
		if !small.layout().Shown(1, 0) {
			t.Error("down does not show layer 1")
		}
	}
	small.key(keyZoomOut, false)
	small.key(keyZoomOut, false)
	small.key(keyZoomOut, false)
	if small.layout() != fitted {
		t.Error("zooming out does not return the default model to its fitted layout")
	}
}

// TestBigShapeScreenshot: a model of 4 layers of 8 heads at T=64 in a
// 1280x800 window shows whole panels of readable cells, each exactly its
// weights' colours with its labels; the arrows scroll to other heads,
// drawn as exactly, and + zooms in.
func TestBigShapeScreenshot(t *testing.T) {
	c := tiny(0)
	c.Layers, c.Heads, c.DModel, c.DFF, c.SeqLen, c.Vocab = 4, 8, 32, 64, 64, 64
	v := open(t, Options{Config: c, Steps: 0, Kernels: cpu.New()})
	if err := display.Call(func() { v.win.SetSize(1280, 800) }); err != nil {
		t.Fatal(err)
	}
	shot := func() (*image.RGBA, Layout, int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := v.Frame(); err != nil {
				t.Fatal(err)
			}
			if lay, ppu := v.Layout(); lay.Size.Mul(ppu) == image.Pt(1280, 800) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		img, err := v.Screenshot()
		if err != nil {
			t.Fatal(err)
		}
		lay, ppu := v.Layout()
		return img, lay, ppu
	}
	img, lay, ppu := shot()
	if !lay.Paged() || lay.Cell < readCell || lay.ShownL*lay.ShownH < 2 {
		t.Fatalf("4 x 8 heads at T=64: %d x %d shown, cells %d", lay.ShownL, lay.ShownH, lay.Cell)
	}
	checkPanels(t, img, lay, ppu, v.Status().Probs, true)
	press := func(k glfw.Key) {
		v.mu.Lock()
		v.keyLocked(k, 0, false)
		v.mu.Unlock()
	}
	press(glfw.KeyDown)
	press(glfw.KeyRight)
	img, moved, ppu := shot()
	if moved.FirstL != 1 || moved.FirstH != 1 {
		t.Errorf("down, right: first head (%d, %d)", moved.FirstL, moved.FirstH)
	}
	checkPanels(t, img, moved, ppu, v.Status().Probs, true)
	press(glfw.KeyEqual)
	img, in, ppu := shot()
	if in.Cell <= lay.Cell {
		t.Errorf("+: cells %d, were %d", in.Cell, lay.Cell)
	}
	checkPanels(t, img, in, ppu, v.Status().Probs, true)
}
