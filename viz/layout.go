// Package viz draws attention patterns of small transformers as PNG images,
// without any window or GPU: a grid of heatmaps (one per head, viridis
// colour map) and an arc view (one strip of tokens per head with arcs from
// each query to the keys it attends to).
//
// Every position in the pictures is a pure function of the Grid (see
// PanelRect, CellRect, CellAt, ArcRect, ArcAnchor), so tests and an
// interactive viewer can hit-test without reading pixels.
package viz

import (
	"fmt"
	"image"
	"math"
)

// Head is one attention head's pattern.
type Head struct {
	// Title is drawn above the head's panel, e.g. "L1 H0 · induction 0.81".
	// Printable ASCII renders as is; U+00B7 and U+2026 are drawn by hand;
	// other runes show as '?'. Long titles are cut with an ellipsis.
	Title string
	// Probs holds T*T attention weights, row-major: Probs[i*T+j] is how
	// much query position i attends to key position j. Weights are
	// expected in [0,1]; the colour map clamps, NaN/Inf cells are magenta.
	Probs []float32
}

// Grid is the set of heads to draw, Layers rows by Heads columns.
type Grid struct {
	Layers, Heads, T int
	// Causal marks cells with key j > query i as masked: drawn pure black
	// in heatmaps and never drawn as arcs, whatever Probs holds there.
	Causal bool
	// Tokens labels the T positions on both axes (len(Tokens) must be T).
	Tokens []string
	// Panels holds Layers*Heads heads, layer-major: Panels[l*Heads+h].
	Panels []Head
}

// Spacing shared by both pictures, in pixels.
const (
	margin     = 16
	headerH    = lineH + 12 // one line of explanation at the top
	titleBandH = lineH + 7  // panel title band above each heatmap/strip
	maxTitleW  = 48 * glyphW
	labelGap   = 4 // between a heatmap edge and its labels
)

// Heatmap-specific sizes.
const (
	hmTarget   = 352         // aim for T*cell ≈ this many pixels ...
	hmMaxCell  = 24          // ... with cells no larger than this
	hmMinCell  = 3           // ... and no smaller than this
	hmLabelMax = 10 * glyphW // token labels longer than this are cut
	hmGapX     = 22
	hmGapY     = 14
	barW       = 14
	barGap     = 26 // between the last panel column and the colour bar
	barMinH    = 100
	tickLen    = 4
	barCaption = "weight"
)

// Arc-view sizes.
const (
	arcMinSpacing = 24 // horizontal distance between neighbouring tokens
	arcLabelMax   = 8 * glyphW
	arcMaxRise    = 140 // height of the longest arc
	arcMinRise    = 16
	arcTopPad     = 6 // room for the thickest line at the top of an arc
	arcBottomPad  = 5 // room below the baseline for line ends and key dots
	arcGapX       = 26
	arcGapY       = 20
	arcFrameOut   = 6 // light frame drawn this far outside each strip
	arcNote       = "arcs: query i -> key j above the tokens; dot marks the key; width and opacity grow with weight (w < 0.05 not drawn)"
)

// heatmapNote is the line of explanation at the top of the heatmap image.
func (g Grid) heatmapNote() []rune {
	note := "rows: query i   columns: key j"
	if g.Causal {
		note += "   black: masked (j > i)"
	}
	return displayRunes(note)
}

// maxImageSide bounds each image dimension so a bad T cannot ask for
// gigabytes.
const maxImageSide = 1 << 14

// validate reports the first problem with g's shape as a one-line error.
func (g Grid) validate() error {
	if g.Layers <= 0 || g.Heads <= 0 || g.T <= 0 {
		return fmt.Errorf("viz: Layers, Heads and T must be positive, got %d, %d, %d", g.Layers, g.Heads, g.T)
	}
	if len(g.Tokens) != g.T {
		return fmt.Errorf("viz: got %d tokens for T=%d", len(g.Tokens), g.T)
	}
	if want := g.Layers * g.Heads; len(g.Panels) != want {
		return fmt.Errorf("viz: got %d panels for %d layers x %d heads", len(g.Panels), g.Layers, g.Heads)
	}
	for k, p := range g.Panels {
		if len(p.Probs) != g.T*g.T {
			return fmt.Errorf("viz: panel %d (layer %d, head %d) has %d probs, want T*T=%d",
				k, k/g.Heads, k%g.Heads, len(p.Probs), g.T*g.T)
		}
	}
	return nil
}

// shapeOK says whether the layout can be computed at all; the hit-testing
// methods return empty results otherwise rather than panicking.
func (g Grid) shapeOK() bool { return g.Layers > 0 && g.Heads > 0 && g.T > 0 }

func (g Grid) inGrid(l, h int) bool {
	return g.shapeOK() && l >= 0 && l < g.Layers && h >= 0 && h < g.Heads
}

// maxLabelW is the width of the widest token label after cutting to limit.
func (g Grid) maxLabelW(limit int) int {
	w := 0
	for _, t := range g.Tokens {
		w = max(w, textW(fitRunes(tokenRunes(t), limit)))
	}
	return w
}

// maxTitleWidth is the width of the widest panel title, capped.
func (g Grid) maxTitleWidth() int {
	w := 0
	for _, p := range g.Panels {
		w = max(w, textW(displayRunes(p.Title)))
	}
	return min(w, maxTitleW)
}

// heatLayout is the computed geometry of the heatmap picture.
type heatLayout struct {
	cell     int // cell side
	hm       int // heatmap side, T*cell
	labelW   int // space left of a heatmap for query labels (incl. gap)
	labelH   int // space below a heatmap for key labels (incl. gap)
	step     int // label every step-th token so labels do not overlap
	slotW    int // width of one panel slot (labels + heatmap, or title)
	slotH    int // height of one panel slot (title + heatmap + labels)
	origin   image.Point
	bar      image.Rectangle // colour bar gradient
	size     image.Point
	tickText int // width reserved for tick labels
}

func (g Grid) heatLayout() heatLayout {
	var L heatLayout
	L.cell = min(max(hmTarget/g.T, hmMinCell), hmMaxCell)
	L.hm = g.T * L.cell
	lw := g.maxLabelW(hmLabelMax)
	L.labelW = lw + labelGap + 2
	L.labelH = lw + labelGap + 2
	// Labels are lineH tall (wide, when rotated); skip some when cells are
	// smaller so neighbours never overlap.
	L.step = max(1, (lineH-1+L.cell-1)/L.cell)
	L.slotW = max(L.labelW+L.hm, g.maxTitleWidth()+4)
	L.slotH = titleBandH + L.hm + L.labelH
	L.origin = image.Pt(margin, margin+headerH)

	right := L.origin.X + g.Heads*L.slotW + (g.Heads-1)*hmGapX
	barX := right + barGap
	barTop := L.origin.Y + titleBandH
	L.bar = image.Rect(barX, barTop, barX+barW, barTop+max(L.hm, barMinH))
	L.tickText = textW([]rune("0.5"))
	barRight := max(L.bar.Max.X+tickLen+3+L.tickText, barX+textW([]rune(barCaption)))
	panelsBottom := L.origin.Y + g.Layers*L.slotH + (g.Layers-1)*hmGapY
	L.size = image.Pt(
		max(barRight, margin+textW(g.heatmapNote()))+margin,
		max(panelsBottom, L.bar.Max.Y+lineH/2+1)+margin,
	)
	return L
}

// slot is the top-left corner of panel (l, h)'s slot.
func (L heatLayout) slot(l, h int) image.Point {
	return image.Pt(L.origin.X+h*(L.slotW+hmGapX), L.origin.Y+l*(L.slotH+hmGapY))
}

func (L heatLayout) panel(l, h int) image.Rectangle {
	s := L.slot(l, h)
	x0, y0 := s.X+L.labelW, s.Y+titleBandH
	return image.Rect(x0, y0, x0+L.hm, y0+L.hm)
}

// HeatmapsSize is the size of the image DrawHeatmaps returns (zero for a
// grid without positive Layers, Heads and T).
func (g Grid) HeatmapsSize() image.Point {
	if !g.shapeOK() {
		return image.Point{}
	}
	return g.heatLayout().size
}

// PanelRect is the heatmap area of head (l, h) in the DrawHeatmaps image:
// exactly the T x T cells, excluding title and labels. It is empty when
// (l, h) is outside the grid.
func (g Grid) PanelRect(l, h int) image.Rectangle {
	if !g.inGrid(l, h) {
		return image.Rectangle{}
	}
	return g.heatLayout().panel(l, h)
}

// TitleRect is the band above PanelRect(l, h) where the title is drawn,
// ending above the panel's 1-pixel frame. Empty when (l, h) is outside the
// grid.
func (g Grid) TitleRect(l, h int) image.Rectangle {
	if !g.inGrid(l, h) {
		return image.Rectangle{}
	}
	L := g.heatLayout()
	s := L.slot(l, h)
	return image.Rect(s.X, s.Y, s.X+L.slotW, s.Y+titleBandH-1)
}

// CellRect is the square of cell (query i, key j) of head (l, h) in the
// DrawHeatmaps image. Empty when any index is out of range.
func (g Grid) CellRect(l, h, i, j int) image.Rectangle {
	if !g.inGrid(l, h) || i < 0 || i >= g.T || j < 0 || j >= g.T {
		return image.Rectangle{}
	}
	L := g.heatLayout()
	p := L.panel(l, h)
	x0, y0 := p.Min.X+j*L.cell, p.Min.Y+i*L.cell
	return image.Rect(x0, y0, x0+L.cell, y0+L.cell)
}

// CellAt is the inverse of CellRect: the head (l, h) and cell (query i,
// key j) under point p of the DrawHeatmaps image, or ok=false when p is not
// on any cell.
func (g Grid) CellAt(p image.Point) (l, h, i, j int, ok bool) {
	if !g.shapeOK() {
		return 0, 0, 0, 0, false
	}
	L := g.heatLayout()
	q := p.Sub(L.origin)
	if q.X < 0 || q.Y < 0 {
		return 0, 0, 0, 0, false
	}
	h, l = q.X/(L.slotW+hmGapX), q.Y/(L.slotH+hmGapY)
	if l >= g.Layers || h >= g.Heads {
		return 0, 0, 0, 0, false
	}
	r := L.panel(l, h)
	if !p.In(r) {
		return 0, 0, 0, 0, false
	}
	return l, h, (p.Y - r.Min.Y) / L.cell, (p.X - r.Min.X) / L.cell, true
}

// ColorBarRect is the colour-bar gradient of the DrawHeatmaps image: weight
// 1 at the top row, 0 at the bottom row. Empty for an invalid shape.
func (g Grid) ColorBarRect() image.Rectangle {
	if !g.shapeOK() {
		return image.Rectangle{}
	}
	return g.heatLayout().bar
}

// arcLayout is the computed geometry of the arc picture.
type arcLayout struct {
	spacing int // between neighbouring token anchors
	rise    int // height of the longest arc
	stripW  int
	stripH  int
	origin  image.Point
	size    image.Point
	labelW  int // token labels are cut to this width
}

func (g Grid) arcLayout() arcLayout {
	var A arcLayout
	lw := g.maxLabelW(arcLabelMax)
	A.labelW = max(lw, arcMinSpacing-6)
	A.spacing = max(arcMinSpacing, lw+6)
	// Semicircles would make the longest arc (T-1)*spacing/2 tall; cap it so
	// strips of long sequences stay short.
	A.rise = min(max((g.T-1)*A.spacing/2, arcMinRise), arcMaxRise)
	A.stripW = max(g.T*A.spacing, g.maxTitleWidth()+4)
	A.stripH = titleBandH + arcTopPad + A.rise + arcBottomPad + 2 + lineH
	A.origin = image.Pt(margin+arcFrameOut, margin+headerH+arcFrameOut)
	w := A.origin.X + g.Heads*A.stripW + (g.Heads-1)*arcGapX + arcFrameOut
	h := A.origin.Y + g.Layers*A.stripH + (g.Layers-1)*arcGapY + arcFrameOut
	A.size = image.Pt(max(w, margin+textW([]rune(arcNote)))+margin, h+margin)
	return A
}

func (A arcLayout) strip(l, h int) image.Rectangle {
	x := A.origin.X + h*(A.stripW+arcGapX)
	y := A.origin.Y + l*(A.stripH+arcGapY)
	return image.Rect(x, y, x+A.stripW, y+A.stripH)
}

// baseline is the y of the token row arcs start from, in strip s.
func (A arcLayout) baseline(s image.Rectangle) int {
	return s.Min.Y + titleBandH + arcTopPad + A.rise
}

func (A arcLayout) anchorX(s image.Rectangle, T, i int) int {
	return s.Min.X + (A.stripW-T*A.spacing)/2 + i*A.spacing + A.spacing/2
}

// riseFor is the height of the arc between tokens d apart (d >= 1). A power
// below 1 keeps short arcs, the common case (previous-token heads), tall
// enough to see while long ones stay within the strip.
func (A arcLayout) riseFor(d, T int) float64 {
	if T < 2 {
		return 0
	}
	return float64(A.rise) * math.Pow(float64(d)/float64(T-1), 0.7)
}

// ArcsSize is the size of the image DrawArcs returns (zero for a grid
// without positive Layers, Heads and T).
func (g Grid) ArcsSize() image.Point {
	if !g.shapeOK() {
		return image.Point{}
	}
	return g.arcLayout().size
}

// ArcStripRect is the whole strip of head (l, h) in the DrawArcs image:
// title band, arc area and token labels. Empty outside the grid.
func (g Grid) ArcStripRect(l, h int) image.Rectangle {
	if !g.inGrid(l, h) {
		return image.Rectangle{}
	}
	return g.arcLayout().strip(l, h)
}

// ArcRect is the part of head (l, h)'s strip where arcs are drawn, from
// below the title to just under the token baseline; nothing else is drawn
// there. Empty outside the grid.
func (g Grid) ArcRect(l, h int) image.Rectangle {
	if !g.inGrid(l, h) {
		return image.Rectangle{}
	}
	A := g.arcLayout()
	s := A.strip(l, h)
	return image.Rect(s.Min.X, s.Min.Y+titleBandH, s.Max.X, A.baseline(s)+arcBottomPad)
}

// ArcAnchor is the point on the token baseline of head (l, h)'s strip where
// arcs to and from token i end; token i's label is centred below it.
// Returns the zero point for indices out of range.
func (g Grid) ArcAnchor(l, h, i int) image.Point {
	if !g.inGrid(l, h) || i < 0 || i >= g.T {
		return image.Point{}
	}
	A := g.arcLayout()
	s := A.strip(l, h)
	return image.Pt(A.anchorX(s, g.T, i), A.baseline(s))
}

// checkSize rejects images too large to allocate sensibly.
func checkSize(kind string, sz image.Point) error {
	if sz.X > maxImageSide || sz.Y > maxImageSide {
		return fmt.Errorf("viz: %s image would be %dx%d px, more than %d per side", kind, sz.X, sz.Y, maxImageSide)
	}
	return nil
}
