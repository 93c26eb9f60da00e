package viz

import (
	"image/color"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// box is a rectangle in a figure's top-down coordinates, in points.
type box struct{ x0, y0, x1, y1 vg.Length }

func (b box) w() vg.Length { return b.x1 - b.x0 }
func (b box) h() vg.Length { return b.y1 - b.y0 }

// Heatmap sizes, in points.
const (
	hmTarget     vg.Length = 200 // aim for T*cell ≈ this ...
	hmMaxCell    vg.Length = 14  // ... with cells no larger than this
	hmMinCell    vg.Length = 2.5 // ... and no smaller than this
	panelTitle   vg.Length = 8.5 // panel titles' font size
	maxLabelSize vg.Length = 7   // token labels' largest font size
	minLabelSize vg.Length = 4.5
	maxLabelW    vg.Length = 40 // token labels are cut beyond this
	labelGap     vg.Length = 2
	hmGapX       vg.Length = 14
	hmGapY       vg.Length = 10
	barW         vg.Length = 8
	barGap       vg.Length = 16
	barMinH      vg.Length = 60
	tickLen      vg.Length = 3
)

// heatLayout is the geometry of the heatmap figure: its panels are a
// PanelGrid in points, as the viewer window's are in pixels.
type heatLayout struct {
	grid   PanelGrid[vg.Length]
	cell   vg.Length // cell side
	labels draw.TextStyle
	tokens []string // cut to maxLabelW
	labelW vg.Length
	step   int // label every step-th token so labels never overlap
	slotW  vg.Length
	bar    box
	w, h   vg.Length
}

func (g Grid) heatLayout() heatLayout {
	var L heatLayout
	L.cell = FitCell(hmTarget, g.T, hmMinCell, hmMaxCell)
	L.labels = style(sans, min(max(L.cell*0.85, minLabelSize), maxLabelSize), mutedText)
	for _, t := range g.Tokens {
		s := fit(L.labels, tokenText(t), maxLabelW)
		L.tokens = append(L.tokens, s)
		L.labelW = max(L.labelW, L.labels.Width(s))
	}
	L.grid = PanelGrid[vg.Length]{Layers: g.Layers, Heads: g.Heads, T: g.T,
		X0: margin, Y0: margin + headerH() + 4, Cell: L.cell, TitleH: lineH(panelTitle) + 2,
		LabelW: L.labelW, KeyH: L.labelW, LabelGap: labelGap, GapX: hmGapX, GapY: hmGapY}
	L.step = L.grid.LabelStep(lineH(L.labels.Font.Size))
	L.slotW = L.grid.SlotW()

	right := L.grid.Right()
	barTop := L.grid.Y0 + L.grid.TitleH + lineH(7)/2
	L.bar = box{right + barGap, barTop, right + barGap + barW, barTop + max(L.grid.Side(), barMinH)}
	tick := style(sans, 7, mutedText)
	barRight := max(L.bar.x1+tickLen+2+tick.Width("0.5"), L.bar.x0+tick.Width("weight"))
	L.w = max(barRight+margin, headerW(g.Title, g.heatmapNote()))
	L.h = max(L.grid.Bottom(), L.bar.y1+lineH(7)/2) + margin
	return L
}

// slot is the top-left corner of panel (l, h)'s slot.
func (L heatLayout) slot(l, h int) (x, y vg.Length) { return L.grid.Slot(l, h) }

// panel is the heatmap of head (l, h): exactly its T x T cells.
func (L heatLayout) panel(l, h int) box {
	x0, y0, x1, y1 := L.grid.Panel(l, h)
	return box{x0, y0, x1, y1}
}

// cellBox is cell (query i, key j) of head (l, h).
func (L heatLayout) cellBox(l, h, i, j int) box {
	x0, y0, x1, y1 := L.grid.CellBox(l, h, i, j)
	return box{x0, y0, x1, y1}
}

// heatmapNote says how to read the heatmaps.
func (g Grid) heatmapNote() string {
	note := "one panel per head; rows: query i, columns: key j; colour: attention weight"
	if g.Causal {
		note += "; black: masked (j > i)"
	}
	return note
}

// Heatmaps draws one heatmap per head in a Layers x Heads grid (rows =
// layers, columns = heads). Cell (i, j) of a panel is query i, key j,
// coloured Viridis(weight); with g.Causal, cells j > i are pure black.
// Each panel has its title above, query labels on the left and key labels
// (rotated) below; one colour bar on the right shows the 0..1 scale; the
// run's name heads the figure.
func Heatmaps(g Grid) (*Figure, error) {
	if err := g.validate(); err != nil {
		return nil, err
	}
	L := g.heatLayout()
	return newFigure("heatmap", L.w, L.h, func(p *pen) {
		p.header(g.Title, g.heatmapNote(), L.w)
		for l := 0; l < g.Layers; l++ {
			for h := 0; h < g.Heads; h++ {
				drawHeatmap(p, g, L, l, h)
			}
		}
		drawColorBar(p, L)
	})
}

func drawHeatmap(p *pen, g Grid, L heatLayout, l, h int) {
	k := l*g.Heads + h
	b := L.panel(l, h)
	sx, sy := L.slot(l, h)
	ts := style(bold, panelTitle, textColor)
	title := fit(ts, g.Panels[k].Title, L.slotW)
	// Centred over the heatmap, shifted to stay inside the slot.
	tx := (b.x0 + b.x1 - ts.Width(title)) / 2
	tx = max(sx, min(tx, sx+L.slotW-ts.Width(title)))
	p.text(ts, tx, sy, title, text.XLeft, text.YTop, 0)

	// Each cell reaches a whole cell under its right and lower neighbours,
	// which are drawn after it: where a cell edge splits a pixel the
	// anti-aliased edge then blends over the neighbour's colour, not over
	// the white page, and leaves no light seam between cells.
	probs := g.Panels[k].Probs
	for i := 0; i < g.T; i++ {
		for j := 0; j < g.T; j++ {
			c := L.cellBox(l, h, i, j)
			ex, ey := L.cell, L.cell
			if j == g.T-1 {
				ex = 0
			}
			if i == g.T-1 {
				ey = 0
			}
			p.rect(c.x0, c.y0, c.x1+ex, c.y1+ey, CellColor(g.Causal && j > i, probs[i*g.T+j]))
		}
	}
	p.frame(b.x0, b.y0, b.x1, b.y1, frameColor, 0.5)

	// Query labels left of their rows, key labels below their columns
	// (reading downwards); with small cells every step-th one.
	for i := 0; i < g.T; i += L.step {
		mid := b.y0 + (vg.Length(i)+0.5)*L.cell
		p.text(L.labels, b.x0-labelGap, mid, L.tokens[i], text.XRight, text.YCenter, 0)
	}
	for j := 0; j < g.T; j += L.step {
		mid := b.x0 + (vg.Length(j)+0.5)*L.cell
		p.text(L.labels, mid, b.y1+labelGap, L.tokens[j], text.XLeft, text.YCenter, -math.Pi/2)
	}
}

// CellColor is the colour of a heatmap cell holding weight w, masked
// (a causal model's key after its query) or not; the viewer's shader
// colours its cells by the same rule.
func CellColor(masked bool, w float32) color.RGBA {
	return CellPalette()[CellIndex(masked, w)]
}

// CellIndex is CellColor as an index into CellPalette, for a page that
// carries the palette once and a small number per cell (viz/htmlview).
func CellIndex(masked bool, w float32) int {
	steps := len(ViridisSteps().Colors)
	switch x := float64(w); {
	case masked:
		return steps
	case math.IsNaN(x) || math.IsInf(x, 0):
		return steps + 1
	}
	return ViridisSteps().Index(w)
}

// CellPalette is every colour a cell can have: the viridis steps, then
// MaskedCell and BadCell. Read it, do not change it.
func CellPalette() []color.RGBA { return cellPalette() }

var cellPalette = sync.OnceValue(func() []color.RGBA {
	return append(slices.Clone(ViridisSteps().Colors), MaskedCell, BadCell)
})

// drawColorBar draws the legend: a vertical viridis gradient (1 at the
// top) with ticks and labels at 0, 0.5 and 1, captioned "weight".
func drawColorBar(p *pen, L heatLayout) {
	b := L.bar
	const n = 128
	step := b.h() / n
	for k := 0; k < n; k++ {
		y := b.y0 + vg.Length(k)*step
		p.rect(b.x0, y, b.x1, min(y+2*step, b.y1), Viridis(1-(float64(k)+0.5)/n)) // overlapping as cells do
	}
	p.frame(b.x0, b.y0, b.x1, b.y1, frameColor, 0.5)
	tick := style(sans, 7, mutedText)
	p.text(style(sans, 7, textColor), b.x0, b.y0-lineH(7)/2-2, "weight", text.XLeft, text.YBottom, 0)
	for _, t := range []struct {
		v    float64
		text string
	}{{1, "1"}, {0.5, "0.5"}, {0, "0"}} {
		y := b.y0 + vg.Length(1-t.v)*b.h()
		p.line(b.x1, y, b.x1+tickLen, y, draw.LineStyle{Color: frameColor, Width: 0.5})
		p.text(tick, b.x1+tickLen+2, y, t.text, text.XLeft, text.YCenter, 0)
	}
}
