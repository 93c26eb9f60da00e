package viz

import (
	"image"
	"image/color"
	"math"
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestDiverging: white at 0, RdBu's ends at +-1, clipped beyond, grey for
// NaN, and symmetric in lightness.
func TestDiverging(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want color.RGBA
	}{{0, color.RGBA{255, 255, 255, 255}}, {1, color.RGBA{0xb2, 0x18, 0x2b, 255}}, {-1, color.RGBA{0x21, 0x66, 0xac, 255}},
		{7, color.RGBA{0xb2, 0x18, 0x2b, 255}}, {math.NaN(), color.RGBA{0xbb, 0xbb, 0xbb, 255}}} {
		if got := Diverging(c.v); got != c.want {
			t.Errorf("Diverging(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	if a, b := Diverging(0.5), Diverging(-0.5); a.R != 217 || b.B != 214 {
		t.Errorf("half way: %v and %v", a, b)
	}
}

// TestPatchGridCells: each cell of the patching heatmap is drawn in
// Diverging's colour of its value over the grid's scale (the largest
// magnitude), found where the layout puts it; refused when rows and
// values disagree.
func TestPatchGridCells(t *testing.T) {
	g := PatchGrid{Title: "patching", Note: "test", Rows: []string{"L0H0", "L0H1", "resid L0"}, Columns: []string{"0", "1", "2", "3"},
		Values: [][]float64{{0, 0.5, -0.25, 0}, {0, 0, 0, 0.1}, {0.02, 0, 0, 0}}, Gaps: []int{2}}
	f, err := g.Figure()
	img := render(t, f, err, PNGDPI)
	top := margin + headerH() + lineH(tickSize) + 2
	for _, c := range []struct {
		r, col int
		want   color.RGBA
	}{{0, 1, Diverging(1)}, {0, 2, Diverging(-0.5)}, {1, 3, Diverging(0.2)}, {2, 0, Diverging(0.04)}} {
		y := top + vg.Length(c.r)*patchCellH + vg.Length(c.r/2)*patchGap // the gap before row 2
		x := margin + patchLabelW + vg.Length(c.col)*patchCellW
		// A corner of the cell, clear of its number.
		p := image.Pt(px(x)+3, px(y)+3)
		if got := img.RGBAAt(p.X, p.Y); !near(got, c.want, 3) {
			t.Errorf("row %d column %d at %v: %v, want %v", c.r, c.col, p, got, c.want)
		}
	}
	g.Values = g.Values[:2]
	if _, err := g.Figure(); err == nil {
		t.Error("3 rows of 2 values drawn")
	}
}

// TestBars: a positive bar is red right of zero, a negative one blue left
// of it; a bar of NaN is refused.
func TestBars(t *testing.T) {
	b := Bars{Title: "attribution", XLabel: "logit", Labels: []string{"up", "down"}, Values: []float64{2, -1}}
	f, err := b.Figure()
	img := render(t, f, err, PNGDPI)
	top := margin + headerH() + 4
	lo, hi := -1-0.18*3, 2+0.18*3 // padded by 18% of the range for the values' text
	at := func(v float64) int { return px(margin + barLabelW + vg.Length((v-lo)/(hi-lo))*barAreaW) }
	for i, c := range []struct {
		v    float64
		want color.RGBA
	}{{1, Diverging(0.8)}, {-0.5, Diverging(-0.8)}} {
		y := px(top + vg.Length(i)*(barsH+barsGap) + barsH/2)
		if got := img.RGBAAt(at(c.v), y); !near(got, c.want, 3) {
			t.Errorf("bar %d at %v: %v, want %v", i, c.v, got, c.want)
		}
	}
	if _, err := (Bars{Labels: []string{"x"}, Values: []float64{math.NaN()}}).Figure(); err == nil {
		t.Error("a bar of NaN drawn")
	}
}

// TestCurvesICLPanel: a history with the in-context learning score gets
// a panel more, one without keeps three.
func TestCurvesICLPanel(t *testing.T) {
	c := demoCurves()
	without, err := c.Figure()
	if err != nil {
		t.Fatal(err)
	}
	c.ICL = Curve{Name: "icl", Steps: c.Accuracy.Steps, Values: make([]float64, len(c.Accuracy.Steps))}
	for k := range c.ICL.Values {
		c.ICL.Values[k] = -float64(k)
	}
	with, err := c.Figure()
	if err != nil || with.H-without.H < panelH {
		t.Errorf("heights %v with the ICL score and %v without", with.H, without.H)
	}
}
