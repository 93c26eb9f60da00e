package viz

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// countColour counts the pixels of img exactly c.
func countColour(img image.Image, c color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B {
				n++
			}
		}
	}
	return n
}

// TestAtlasFigure: each mechanism's strongest edge is drawn in
// Diverging's end colour of its sign (red when it carries the clean
// answer, blue against it), a second configuration adds a row, and an
// atlas with nothing to draw, or an effect that is not a number, is
// refused.
func TestAtlasFigure(t *testing.T) {
	ind := AtlasPanel{Title: "1: 75% of 4 seeds", Edges: []CircuitEdge{
		{From: "L0:previous-token", To: "L1:induction.k", Effect: 0.6, In: true},
		{From: "L1:induction", To: "logits", Effect: 0.7, In: true},
		{From: "embed", To: "L1:induction.q", Effect: 0.2, In: true}}}
	against := AtlasPanel{Title: "2: 25%", Edges: []CircuitEdge{{From: "embed", To: "logits", Effect: -0.5, In: true}}}
	one := Atlas{Title: "atlas", Note: "test", Rows: []AtlasRow{{Title: "induction", Layers: 2, Panels: []AtlasPanel{ind}}}}
	f, err := one.Figure()
	img := render(t, f, err, PNGDPI)
	if countColour(img, Diverging(1)) < 20 || countColour(img, Diverging(-1)) != 0 {
		t.Errorf("one mechanism, all edges positive: %d red pixels, %d blue", countColour(img, Diverging(1)), countColour(img, Diverging(-1)))
	}
	two := one
	two.Rows = append(two.Rows, AtlasRow{Title: "majority", Layers: 2, Panels: []AtlasPanel{against}})
	f2, err := two.Figure()
	img2 := render(t, f2, err, PNGDPI)
	if f2.H <= f.H || countColour(img2, Diverging(-1)) < 20 {
		t.Errorf("a second row: height %v (one row %v), %d blue pixels", f2.H, f.H, countColour(img2, Diverging(-1)))
	}
	for name, a := range map[string]Atlas{
		"no rows":     {},
		"no panels":   {Rows: []AtlasRow{{Title: "x", Layers: 2}}},
		"NaN effect":  {Rows: []AtlasRow{{Title: "x", Layers: 2, Panels: []AtlasPanel{{Edges: []CircuitEdge{{From: "embed", To: "logits", Effect: math.NaN()}}}}}}},
		"zero layers": {Rows: []AtlasRow{{Title: "x", Panels: []AtlasPanel{ind}}}},
	} {
		if _, err := a.Figure(); err == nil {
			t.Errorf("%s: drawn", name)
		}
	}
}
