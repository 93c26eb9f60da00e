package window

import "image"

// Sizes of the layout, in logical pixels (one logical pixel is Scale
// framebuffer pixels; text is the 7x13 bitmap font at that scale).
const (
	glyphW = 7
	lineH  = 13

	sidebarW  = 256 // controls, numbers and curves on the left
	margin    = 12
	headerH   = 36 // two lines above the panels: the example's tokens, the axes
	titleH1   = 20 // panel title band, one line
	titleH2   = 34 // two lines, when the panel is too narrow for one
	keyH      = 17 // key (column) labels under a panel
	gapX      = 18
	gapY      = 10
	legendW   = 78 // colour bar, ticks and caption right of the panels
	offSize   = 15 // the ⊘ button in a title band
	minCell   = 2
	maxCell   = 40
	oneLineW  = 29*glyphW + offSize + 6 // "L0H0 · no clear pattern 0.23" (28 glyphs), one to spare, and its button
	minWidth  = 720
	minHeight = 640
)

// Layout places the panels of a model with L layers of H heads on
// sequences of length T in a window of Size logical pixels. It is a pure
// function of its inputs, so tests can find a panel, a cell or a button in
// a screenshot without reading pixels. Panels shrink and grow with the
// window; row i of a panel is query i, column j is key j.
type Layout struct {
	L, H, T int
	Size    image.Point
	// Cell is the side of one attention cell.
	Cell int
	// TwoLine is set when titles wrap: "L0H1" above "induction 0.81".
	TwoLine bool

	labelW, titleH, slotW, slotH int
	origin                       image.Point
}

// NewLayout computes the layout for a window of size logical pixels and
// token labels at most tokenChars characters wide.
func NewLayout(L, H, T, tokenChars int, size image.Point) Layout {
	g := Layout{L: max(L, 1), H: max(H, 1), T: max(T, 1), Size: size}
	g.labelW = max(tokenChars, 1)*glyphW + 6
	g.origin = image.Pt(sidebarW+margin, margin+headerH)
	availW := size.X - g.origin.X - legendW - margin
	availH := size.Y - g.origin.Y - margin
	fit := func(titleH int) int {
		byW := ((availW-(g.H-1)*gapX)/g.H - g.labelW) / g.T
		byH := ((availH-(g.L-1)*gapY)/g.L - titleH - keyH) / g.T
		return min(max(min(byW, byH), minCell), maxCell)
	}
	g.titleH, g.Cell = titleH1, fit(titleH1)
	if g.labelW+g.T*g.Cell < oneLineW {
		g.TwoLine, g.titleH, g.Cell = true, titleH2, fit(titleH2)
	}
	g.slotW = g.labelW + g.T*g.Cell
	g.slotH = g.titleH + g.T*g.Cell + keyH
	return g
}

// PreferredSize is the window size, in logical pixels, that shows a model
// comfortably (cells about 22 pixels for the default tasks), shrunk to fit
// within when within is not zero.
func PreferredSize(L, H, T, tokenChars int, within image.Point) image.Point {
	L, H, T = max(L, 1), max(H, 1), max(T, 1)
	lw := max(tokenChars, 1)*glyphW + 6
	var size image.Point
	for cell := min(max(352/T, 6), 26); cell >= minCell; cell-- {
		slotW, titleH := lw+T*cell, titleH1
		if slotW < oneLineW {
			titleH = titleH2
		}
		w := sidebarW + margin + H*slotW + (H-1)*gapX + legendW + margin
		h := margin + headerH + L*(titleH+T*cell+keyH) + (L-1)*gapY + margin
		size = image.Pt(max(w, minWidth), max(h, minHeight))
		if within == (image.Point{}) || size.In(image.Rectangle{Max: within.Add(image.Pt(1, 1))}) {
			break
		}
	}
	if within != (image.Point{}) {
		size = image.Pt(min(size.X, within.X), min(size.Y, within.Y))
	}
	return size
}

func (g Layout) inGrid(l, h int) bool { return l >= 0 && l < g.L && h >= 0 && h < g.H }

// slot is the top-left corner of head (l, h)'s title band.
func (g Layout) slot(l, h int) image.Point {
	return g.origin.Add(image.Pt(h*(g.slotW+gapX), l*(g.slotH+gapY)))
}

// Panel is the T x T cells of head (l, h), empty outside the grid.
func (g Layout) Panel(l, h int) image.Rectangle {
	if !g.inGrid(l, h) {
		return image.Rectangle{}
	}
	s := g.slot(l, h)
	x0, y0 := s.X+g.labelW, s.Y+g.titleH
	return image.Rect(x0, y0, x0+g.T*g.Cell, y0+g.T*g.Cell)
}

// Title is the band above Panel(l, h) holding the head's title and its ⊘
// button.
func (g Layout) Title(l, h int) image.Rectangle {
	if !g.inGrid(l, h) {
		return image.Rectangle{}
	}
	s := g.slot(l, h)
	return image.Rect(s.X+g.labelW, s.Y, s.X+g.slotW, s.Y+g.titleH-2)
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
	if !g.inGrid(l, h) || i < 0 || i >= g.T || j < 0 || j >= g.T {
		return image.Rectangle{}
	}
	p := g.Panel(l, h)
	x0, y0 := p.Min.X+j*g.Cell, p.Min.Y+i*g.Cell
	return image.Rect(x0, y0, x0+g.Cell, y0+g.Cell)
}

// CellAt is the inverse of CellRect: the head and cell under p, or ok
// false.
func (g Layout) CellAt(p image.Point) (l, h, i, j int, ok bool) {
	q := p.Sub(g.origin)
	if q.X < 0 || q.Y < 0 {
		return 0, 0, 0, 0, false
	}
	h, l = q.X/(g.slotW+gapX), q.Y/(g.slotH+gapY)
	r := g.Panel(l, h)
	if !p.In(r) {
		return 0, 0, 0, 0, false
	}
	return l, h, (p.Y - r.Min.Y) / g.Cell, (p.X - r.Min.X) / g.Cell, true
}

// Legend is the colour bar: weight 1 at the top row, 0 at the bottom.
func (g Layout) Legend() image.Rectangle {
	x := g.origin.X + g.H*g.slotW + (g.H-1)*gapX + 26
	y := g.origin.Y + g.titleH
	return image.Rect(x, y, x+14, y+max(g.T*g.Cell, 120))
}

// stepLabels is how many rows or columns apart token labels are drawn so
// that neighbours do not overlap.
func (g Layout) stepLabels(extent int) int {
	return max(1, (extent+g.Cell-1)/g.Cell)
}
