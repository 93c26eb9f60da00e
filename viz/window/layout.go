package window

import (
	"image"

	"headlab/viz"
)

// Sizes of the layout, in logical pixels (one logical pixel is Scale
// framebuffer pixels; text is the 7x13 bitmap font at that scale).
const (
	glyphW = 7
	lineH  = 13

	sidebarW = 256 // controls, numbers and curves on the left
	margin   = 12
	headerH  = 36 // two lines above the panels: the example's tokens, the axes
	titleH1  = 20 // panel title band, one line
	titleH2  = 34 // two lines, when the panel is too narrow for one
	keyH     = 17 // key (column) labels under a panel
	gapX     = 18
	gapY     = 10
	legendW  = 78 // colour bar, ticks and caption right of the panels
	offSize  = 15 // the ⊘ button in a title band
	// Cells are minCell to maxCell (viz.FitCell); a panel's side is
	// about openPanel when the window opens, room allowing.
	minCell   = 2
	maxCell   = 40
	openPanel = 352
	oneLineW  = 29*glyphW + offSize + 6 // "L0H0 · no clear pattern 0.23" (28 glyphs), one to spare, and its button
	minWidth  = 720
	minHeight = 640
)

// Sidebar geometry.
const (
	sbX      = margin
	sbW      = sidebarW - 2*margin
	buttonH  = 20
	curveH   = 44
	pickerW  = 22
	pickerX  = sbX + 92 // where a picker's [<] starts
	rowPitch = 24
)

// sidebar rows, top to bottom.
const (
	yTitle    = margin
	yConfig   = yTitle + 18
	yButtons  = yConfig + 22
	yStep     = yButtons + buttonH + 12
	yLoss     = yStep + 20
	yLossC    = yLoss + 16
	yAcc      = yLossC + curveH + 10
	yAccC     = yAcc + 16
	yOff      = yAccC + curveH + 10
	yAblation = yOff + 20
	yModel    = yAblation + buttonH + 10
	yPickers  = yModel + 20
	yHover    = yPickers + 5*rowPitch + 10
	yKeys     = yHover + 48
	yNote     = yKeys + 56
)

// Layout places the panels of a model with L layers of H heads on
// sequences of length T in a window of Size logical pixels. It is a pure
// function of its inputs, so tests can find a panel, a cell or a button in
// a screenshot without reading pixels. Panels shrink and grow with the
// window; row i of a panel is query i, column j is key j. The panels are a
// viz.PanelGrid, as in the heatmap figure.
type Layout struct {
	L, H, T int
	Size    image.Point
	// Cell is the side of one attention cell.
	Cell int
	// TwoLine is set when titles wrap: "L0H1" above "induction 0.81".
	TwoLine bool
	// The panels shown: layers FirstL to FirstL+ShownL-1, heads FirstH
	// to FirstH+ShownH-1; every head unless cells would be smaller than
	// readCell, or the view is zoomed, and the rest does not fit.
	FirstL, FirstH, ShownL, ShownH int

	grid   viz.PanelGrid[int]
	labelW int // the row labels' column, with its gap to the panel
}

// panelGrid is the grid of panels right of the sidebar, below the header.
func panelGrid(L, H, T, labelW, cell, titleH int) viz.PanelGrid[int] {
	return viz.PanelGrid[int]{Layers: L, Heads: H, T: T, X0: sidebarW + margin, Y0: margin + headerH,
		Cell: cell, TitleH: titleH, LabelW: labelW, KeyH: keyH, GapX: gapX, GapY: gapY}
}

// readCell is the smallest cell the viewer shrinks to: below it a head's
// grid is unreadable, so the layout shows as many whole panels as fit at
// that size, a window onto the heads that View scrolls.
const readCell = 4

// View is where the viewer looks: Zoom, a cell side (0: every panel
// fitted to the window), and the first layer and head shown when not
// every panel fits.
type View struct {
	Zoom   int
	L0, H0 int
}

// NewLayout computes the layout for a window of size logical pixels and
// token labels at most tokenChars characters wide, every panel fitted.
func NewLayout(L, H, T, tokenChars int, size image.Point) Layout {
	return NewLayoutAt(L, H, T, tokenChars, size, View{})
}

// NewLayoutAt is NewLayout at view v: cells of v.Zoom, or fitted but at
// least readCell, showing the panels from (v.L0, v.H0) that fit.
func NewLayoutAt(L, H, T, tokenChars int, size image.Point, v View) Layout {
	g := Layout{L: max(L, 1), H: max(H, 1), T: max(T, 1), Size: size}
	g.labelW = max(tokenChars, 1)*glyphW + 6
	roomW, roomH := size.X-sidebarW-2*margin-legendW, size.Y-2*margin-headerH
	fit := func(titleH int) int { // the room right of the sidebar, left of the legend
		pg := panelGrid(g.L, g.H, g.T, g.labelW, 0, titleH)
		return viz.FitCell(pg.PanelRoom(roomW, roomH), g.T, minCell, maxCell)
	}
	titleFor := func(cell int) (bool, int) {
		if g.labelW+g.T*cell < oneLineW {
			return true, titleH2
		}
		return false, titleH1
	}
	titleH := titleH1
	g.Cell = fit(titleH)
	if g.TwoLine, titleH = titleFor(g.Cell); g.TwoLine {
		g.Cell = fit(titleH)
	}
	g.ShownL, g.ShownH = g.L, g.H
	if v.Zoom > g.Cell || g.Cell < readCell {
		g.Cell = min(max(v.Zoom, readCell), maxCell)
		g.TwoLine, titleH = titleFor(g.Cell)
		one := panelGrid(1, 1, g.T, g.labelW, g.Cell, titleH)
		g.ShownH = min(g.H, max(1, (roomW+gapX)/(one.SlotW()+gapX)))
		g.ShownL = min(g.L, max(1, (roomH+gapY)/(one.SlotH()+gapY)))
		g.FirstL, g.FirstH = min(max(v.L0, 0), g.L-g.ShownL), min(max(v.H0, 0), g.H-g.ShownH)
	}
	g.grid = panelGrid(g.ShownL, g.ShownH, g.T, g.labelW, g.Cell, titleH)
	return g
}

// Paged says whether some panels are off screen, for View to scroll to.
func (g Layout) Paged() bool { return g.ShownL < g.L || g.ShownH < g.H }

// Shown says whether head (l, h) is on screen.
func (g Layout) Shown(l, h int) bool {
	return l >= g.FirstL && l < g.FirstL+g.ShownL && h >= g.FirstH && h < g.FirstH+g.ShownH
}

// PreferredSize is the window size, in logical pixels, that shows a model
// comfortably (cells about 22 pixels for the default tasks), shrunk to fit
// within when within is not zero.
func PreferredSize(L, H, T, tokenChars int, within image.Point) image.Point {
	L, H, T = max(L, 1), max(H, 1), max(T, 1)
	lw := max(tokenChars, 1)*glyphW + 6
	var size image.Point
	for cell := viz.FitCell(openPanel, T, 6, 26); cell >= minCell; cell-- {
		titleH := titleH1
		if lw+T*cell < oneLineW {
			titleH = titleH2
		}
		g := panelGrid(L, H, T, lw, cell, titleH)
		size = image.Pt(max(g.Right()+legendW+margin, minWidth), max(g.Bottom()+margin, minHeight))
		if within == (image.Point{}) || size.In(image.Rectangle{Max: within.Add(image.Pt(1, 1))}) {
			break
		}
	}
	if within != (image.Point{}) {
		size = image.Pt(min(size.X, within.X), min(size.Y, within.Y))
	}
	return size
}

// origin is the top-left corner of the grid of panels.
func (g Layout) origin() image.Point { return image.Pt(g.grid.X0, g.grid.Y0) }

// Panel is the T x T cells of head (l, h), empty outside the grid.
func (g Layout) Panel(l, h int) image.Rectangle {
	if !g.Shown(l, h) {
		return image.Rectangle{}
	}
	return image.Rect(g.grid.Panel(l-g.FirstL, h-g.FirstH))
}

// Title is the band above Panel(l, h) holding the head's title and its ⊘
// button.
func (g Layout) Title(l, h int) image.Rectangle {
	if !g.Shown(l, h) {
		return image.Rectangle{}
	}
	p := g.Panel(l, h)
	return image.Rect(p.Min.X, p.Min.Y-g.grid.TitleH, p.Max.X, p.Min.Y-2)
}

// OffButton is head (l, h)'s ⊘ button, at the right end of its title band.
func (g Layout) OffButton(l, h int) image.Rectangle {
	t := g.Title(l, h)
	if t.Empty() {
		return t
	}
	return image.Rect(t.Max.X-offSize, t.Min.Y+2, t.Max.X, t.Min.Y+2+offSize)
}

// CellRect is cell (query i, key j) of head (l, h); empty when out of
// range.
func (g Layout) CellRect(l, h, i, j int) image.Rectangle {
	if !g.Shown(l, h) || i < 0 || i >= g.T || j < 0 || j >= g.T {
		return image.Rectangle{}
	}
	return image.Rect(g.grid.CellBox(l-g.FirstL, h-g.FirstH, i, j))
}

// CellAt is the inverse of CellRect: the head and cell under p, or ok
// false.
func (g Layout) CellAt(p image.Point) (l, h, i, j int, ok bool) {
	l, h, i, j, ok = g.grid.CellAt(p.X, p.Y)
	return l + g.FirstL, h + g.FirstH, i, j, ok
}

// Legend is the colour bar: weight 1 at the top row, 0 at the bottom.
func (g Layout) Legend() image.Rectangle {
	x := g.grid.Right() + 26
	y := g.grid.Y0 + g.grid.TitleH
	return image.Rect(x, y, x+14, y+max(g.T*g.Cell, 120))
}

// stepLabels is how many rows or columns apart token labels are drawn so
// that neighbours do not overlap.
func (g Layout) stepLabels(extent int) int { return g.grid.LabelStep(extent) }
