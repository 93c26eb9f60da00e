package window

import (
	"testing"

	"headlab/viz"
)

// The window's text metrics are viz.ScreenFace's, and its atlas holds that
// face's glyphs where glyphX says; none of this needs GL.
func TestAtlasFromScreenFace(t *testing.T) {
	f := viz.ScreenFace
	if f.Advance != glyphW || f.Height != lineH || f.Ascent != ascent {
		t.Fatalf("ScreenFace advance %d, height %d, ascent %d; the window's %d, %d, %d",
			f.Advance, f.Height, f.Ascent, glyphW, lineH, ascent)
	}
	if w := textW("L0H0 · x…"); w != 9*glyphW {
		t.Errorf("textW = %d, want %d", w, 9*glyphW)
	}
	if got := fit("L1H0 · induction 0.81", 10*glyphW); got != "L1H0 · in…" {
		t.Errorf("fit = %q", got)
	}
	m := buildAtlas()
	ink := func(x0 int) int {
		n := 0
		for y := range atlasH {
			for x := x0; x < x0+glyphW; x++ {
				if m.AlphaAt(x, y).A > 0 {
					n++
				}
			}
		}
		return n
	}
	if n := ink(glyphX(' ')); n != 0 {
		t.Errorf("space has %d pixels of ink", n)
	}
	if ink(glyphX('A')) == 0 || ink(glyphX(viz.Ellipsis)) != 3 || ink(glyphX(viz.MidDot)) != 4 {
		t.Errorf("ink of A, …, ·: %d, %d, %d; want some, 3, 4", ink(glyphX('A')), ink(glyphX(viz.Ellipsis)), ink(glyphX(viz.MidDot)))
	}
	if glyphX('\u2603') != glyphX('?') {
		t.Error("a rune the face lacks is not drawn as '?'")
	}
}
