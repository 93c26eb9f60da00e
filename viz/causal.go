package viz

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The figures of the causal tools (docs/causal.md): activation patching
// as a heatmap of signed values, direct logit attribution as signed bars.

// Diverging is the colour of a signed value v, clipped to [-1, 1]: white
// at 0, ColorBrewer RdBu's red at +1 and its blue at -1, linear between
// (NaN is grey).
func Diverging(v float64) color.RGBA {
	if math.IsNaN(v) {
		return color.RGBA{0xbb, 0xbb, 0xbb, 255}
	}
	v = max(-1, min(1, v))
	end := color.RGBA{0xb2, 0x18, 0x2b, 255}
	if v < 0 {
		end, v = color.RGBA{0x21, 0x66, 0xac, 255}, -v
	}
	mix := func(e uint8) uint8 { return uint8(math.Round(255 + (float64(e)-255)*v)) }
	return color.RGBA{mix(end.R), mix(end.G), mix(end.B), 255}
}

// PatchGrid is a heatmap of signed values in rows and columns: one row
// per patched activation, one column per position, each cell the share
// of the clean run's metric that patching restores (Diverging's colours
// over -Scale..Scale, its value written in).
type PatchGrid struct {
	Title, Note string
	Rows        []string
	Columns     []string
	Values      [][]float64 // [row][column]
	// Scale is the value drawn in the full colour (0: the largest
	// magnitude in Values, at least 0.01).
	// Gaps are the rows before which a gap is left (between the heads
	// and the residual stream).
	Gaps  []int
	Scale float64
}

// Sizes of a PatchGrid, in points.
const (
	patchCellW  vg.Length = 24
	patchCellH  vg.Length = 15
	patchLabelW vg.Length = 62
	patchGap    vg.Length = 6
	patchFont   vg.Length = 6
)

// Figure draws the grid under its header, the column labels above it and
// a colour key from -1 to 1 below.
func (g PatchGrid) Figure() (*Figure, error) {
	if len(g.Rows) == 0 || len(g.Columns) == 0 || len(g.Values) != len(g.Rows) {
		return nil, fmt.Errorf("viz: a patching grid of %d rows and %d columns with %d rows of values", len(g.Rows), len(g.Columns), len(g.Values))
	}
	for _, row := range g.Values {
		if len(row) != len(g.Columns) {
			return nil, fmt.Errorf("viz: a patching row of %d values for %d columns", len(row), len(g.Columns))
		}
	}
	gaps := map[int]bool{}
	for _, r := range g.Gaps {
		gaps[r] = true
	}
	scale := g.Scale
	if scale <= 0 {
		scale = 0.01
		for _, row := range g.Values {
			for _, v := range row {
				if !math.IsNaN(v) {
					scale = max(scale, math.Abs(v))
				}
			}
		}
	}
	gridW := patchLabelW + vg.Length(len(g.Columns))*patchCellW
	w := max(2*margin+gridW, headerW(g.Title, g.Note))
	top := margin + headerH() + lineH(tickSize) + 2
	rowY := make([]vg.Length, len(g.Rows))
	y := top
	for r := range g.Rows {
		if gaps[r] && r > 0 {
			y += patchGap
		}
		rowY[r] = y
		y += patchCellH
	}
	keyY := y + 10
	h := keyY + patchCellH + lineH(tickSize) + margin
	return newFigure("patching", w, h, func(p *pen) {
		p.header(g.Title, g.Note, w)
		x0 := margin + patchLabelW
		ls, vs := style(sans, tickSize, textColor), style(sans, patchFont, textColor)
		for c, name := range g.Columns {
			p.text(ls, x0+(vg.Length(c)+0.5)*patchCellW, top-2, fit(ls, name, patchCellW), text.XCenter, text.YBottom, 0)
		}
		for r, name := range g.Rows {
			y := rowY[r]
			p.text(ls, x0-4, y+patchCellH/2, fit(ls, name, patchLabelW-6), text.XRight, text.YCenter, 0)
			for c, v := range g.Values[r] {
				x := x0 + vg.Length(c)*patchCellW
				p.rect(x, y, x+patchCellW, y+patchCellH, Diverging(v/scale))
				ink := vs
				if math.Abs(v/scale) > 0.6 {
					ink.Color = background
				}
				p.text(ink, x+patchCellW/2, y+patchCellH/2, cellText(v), text.XCenter, text.YCenter, 0)
			}
			p.frame(x0, y, x0+vg.Length(len(g.Columns))*patchCellW, y+patchCellH, color.Gray{Y: 200}, 0.5)
		}
		// The key: -scale .. scale in steps.
		const steps = 21
		kw := vg.Length(len(g.Columns)) * patchCellW / steps
		for k := range steps {
			v := -1 + 2*float64(k)/(steps-1)
			p.rect(x0+vg.Length(k)*kw, keyY, x0+vg.Length(k+1)*kw, keyY+patchCellH/2, Diverging(v))
		}
		for _, v := range []float64{-1, 0, 1} {
			x := x0 + (vg.Length((v+1)/2*(steps-1))+0.5)*kw
			p.text(ls, x, keyY+patchCellH/2+2, fmt.Sprintf("%.2g", v*scale), text.XCenter, text.YTop, 0)
		}
		p.text(ls, x0-4, keyY+patchCellH/4, "key", text.XRight, text.YCenter, 0)
	})
}

// cellText is v to two decimals, without a sign on a value that rounds
// to zero.
func cellText(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if math.Abs(v) < 0.005 {
		return "0.00"
	}
	return fmt.Sprintf("%.2f", v)
}

// Bars is a horizontal bar chart of signed values, one labelled bar per
// row, red to the right of zero and blue to the left, its value written
// beside it.
type Bars struct {
	Title, Note, XLabel string
	Labels              []string
	Values              []float64
}

// Sizes of Bars, in points.
const (
	barsH     vg.Length = 12
	barsGap   vg.Length = 3
	barLabelW vg.Length = 70
	barAreaW  vg.Length = 320
)

// Figure draws the bars around a zero line, the scale's ends marked.
func (b Bars) Figure() (*Figure, error) {
	if len(b.Labels) == 0 || len(b.Labels) != len(b.Values) {
		return nil, fmt.Errorf("viz: %d bar labels for %d values", len(b.Labels), len(b.Values))
	}
	lo, hi := 0.0, 0.0
	for _, v := range b.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("viz: a bar of %v", v)
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == lo {
		hi = 1
	}
	// Ticks at 0 and at the extremes far enough from it to be read.
	ticks := []float64{0}
	for _, v := range []float64{lo, hi} {
		if math.Abs(v) > 0.15*(hi-lo) {
			ticks = append(ticks, v)
		}
	}
	// Room for the values' text at both ends.
	pad := 0.18 * (hi - lo)
	if lo < 0 {
		lo -= pad
	}
	if hi > 0 {
		hi += pad
	}
	w := max(2*margin+barLabelW+barAreaW, headerW(b.Title, b.Note))
	top := margin + headerH() + 4
	h := top + vg.Length(len(b.Values))*(barsH+barsGap) + 2*lineH(tickSize) + margin
	return newFigure("bars", w, h, func(p *pen) {
		p.header(b.Title, b.Note, w)
		x0 := margin + barLabelW
		at := func(v float64) vg.Length { return x0 + vg.Length((v-lo)/(hi-lo))*barAreaW }
		ls, vs := style(sans, tickSize, textColor), style(sans, patchFont, mutedText)
		for i, v := range b.Values {
			y := top + vg.Length(i)*(barsH+barsGap)
			p.text(ls, x0-4, y+barsH/2, fit(ls, b.Labels[i], barLabelW-6), text.XRight, text.YCenter, 0)
			col := Diverging(0.8)
			if v < 0 {
				col = Diverging(-0.8)
			}
			a, z := at(min(v, 0)), at(max(v, 0))
			p.rect(a, y, z, y+barsH, col)
			label, anchor, x := fmt.Sprintf("%.3g", v), text.XLeft, z+2
			if v < 0 {
				anchor, x = text.XRight, a-2
			}
			p.text(vs, x, y+barsH/2, label, anchor, text.YCenter, 0)
		}
		bottom := top + vg.Length(len(b.Values))*(barsH+barsGap)
		axis := draw.LineStyle{Color: mutedText, Width: 0.6}
		p.line(at(0), top-2, at(0), bottom, axis)
		p.line(x0, bottom, x0+barAreaW, bottom, axis)
		for _, v := range ticks {
			p.line(at(v), bottom, at(v), bottom+2, axis)
			p.text(ls, at(v), bottom+2, fmt.Sprintf("%.3g", v), text.XCenter, text.YTop, 0)
		}
		p.text(ls, x0+barAreaW/2, bottom+2+lineH(tickSize), b.XLabel, text.XCenter, text.YTop, 0)
	})
}
