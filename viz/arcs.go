package viz

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// MinArcWeight is the smallest weight Arcs draws; lighter arcs would only
// add clutter.
const MinArcWeight = 0.05

// Arc-view sizes, in points. Strips are at most arcMaxW wide whatever T:
// tokens move closer together (and their labels turn to read downwards)
// instead of the figure growing, so T=64 stays one page wide.
const (
	arcMaxW       vg.Length = 480
	arcMaxSpacing vg.Length = 28
	arcMaxRise    vg.Length = 80
	arcMinRise    vg.Length = 12
	arcPad        vg.Length = 3 // above the highest arc and below the baseline
	arcGapY       vg.Length = 10
	arcGapX       vg.Length = 16  // between columns of strips
	legendW       vg.Length = 172 // the weight legend in the header, with a gap before it
)

// arcNote says how to read the arc view.
const arcNote = "arc from query i to key j above the tokens; dot at the key; width and opacity grow with the weight"

// arcLayout is the geometry of the arc figure: one strip per head, layer
// by layer, in one column, or in as few as keep the figure within
// maxSide when a column of every head would be taller (32 heads at T=64
// take three).
type arcLayout struct {
	spacing   vg.Length // between neighbouring tokens
	rise      vg.Length // height of the longest arc
	labels    draw.TextStyle
	tokens    []string
	rotated   bool      // labels read downwards: they are wider than spacing
	step      int       // label every step-th token so labels never overlap
	labelBand vg.Length // height of the labels under the baseline
	titleBand vg.Length
	stripW    vg.Length
	stripH    vg.Length
	top       vg.Length
	cols      int // strips side by side, filled row by row
	w, h      vg.Length
}

func (g Grid) arcLayout() arcLayout {
	var A arcLayout
	A.spacing = min(arcMaxSpacing, arcMaxW/vg.Length(g.T))
	A.stripW = vg.Length(g.T) * A.spacing
	A.labels = style(sans, min(max(A.spacing*0.8, minLabelSize), maxLabelSize), mutedText)
	widest := vg.Length(0)
	for _, t := range g.Tokens {
		s := fit(A.labels, tokenText(t), maxLabelW)
		A.tokens = append(A.tokens, s)
		widest = max(widest, A.labels.Width(s))
	}
	A.rotated = widest > A.spacing-1
	A.step = 1
	A.labelBand = lineH(A.labels.Font.Size)
	if A.rotated {
		A.labelBand = widest + 2
		A.step = max(1, int(math.Ceil(float64(A.labels.Font.Size/A.spacing))))
	}
	A.rise = min(max(vg.Length(g.T-1)*A.spacing/2, arcMinRise), arcMaxRise)
	A.titleBand = lineH(panelTitle) + 2
	A.stripH = A.titleBand + arcPad + A.rise + arcPad + A.labelBand
	A.top = margin + headerH() + 6
	n := g.Layers * g.Heads
	for A.cols = 1; ; A.cols++ {
		rows := (n + A.cols - 1) / A.cols
		A.w = max(2*margin+vg.Length(A.cols)*A.stripW+vg.Length(A.cols-1)*arcGapX, headerW(g.Title, arcNote)+legendW)
		A.h = A.top + vg.Length(rows)*A.stripH + vg.Length(rows-1)*arcGapY + margin
		if A.h <= maxSide || A.cols == n {
			return A
		}
	}
}

// strip is the box of head (l, h)'s strip: title, arcs and labels.
func (A arcLayout) strip(g Grid, l, h int) box {
	k := l*g.Heads + h
	y := A.top + vg.Length(k/A.cols)*(A.stripH+arcGapY)
	row := vg.Length(A.cols)*A.stripW + vg.Length(A.cols-1)*arcGapX
	x := (A.w-row)/2 + vg.Length(k%A.cols)*(A.stripW+arcGapX)
	return box{x, y, x + A.stripW, y + A.stripH}
}

// arcBox is where head (l, h)'s arcs are drawn, title and labels apart.
func (A arcLayout) arcBox(g Grid, l, h int) box {
	s := A.strip(g, l, h)
	return box{s.x0, s.y0 + A.titleBand, s.x1, A.baseline(s) + arcPad}
}

// baseline is the y of the token row arcs start from, in strip s.
func (A arcLayout) baseline(s box) vg.Length { return s.y0 + A.titleBand + arcPad + A.rise }

// anchor is the x of token i in strip s.
func (A arcLayout) anchor(s box, i int) vg.Length { return s.x0 + (vg.Length(i)+0.5)*A.spacing }

// riseFor is the height of the arc between tokens d apart (d >= 1). A
// power below 1 keeps short arcs, the common case (previous-token heads),
// tall enough to see while long ones stay within the strip.
func (A arcLayout) riseFor(d, T int) vg.Length {
	if T < 2 {
		return 0
	}
	return A.rise * vg.Length(math.Pow(float64(d)/float64(T-1), 0.7))
}

// Arcs draws the arc view: for each head a strip with the tokens in a row
// and, for every query i and key j != i with weight w >= MinArcWeight, an
// arc above the row from token i to token j, its width and opacity
// growing with w, and a dot at the key end. With g.Causal, keys j > i are
// never drawn. Each head has its own colour; a legend in the header shows
// the weights.
func Arcs(g Grid) (*Figure, error) {
	if err := g.validate(); err != nil {
		return nil, err
	}
	A := g.arcLayout()
	return newFigure("arc", A.w, A.h, func(p *pen) {
		p.header(g.Title, arcNote, A.w-legendW)
		drawArcLegend(p, A.w-margin-legendW+12, margin)
		for l := 0; l < g.Layers; l++ {
			for h := 0; h < g.Heads; h++ {
				drawStrip(p, g, A, l, h)
			}
		}
	})
}

type arc struct {
	i, j int
	w    float64
}

func drawStrip(p *pen, g Grid, A arcLayout, l, h int) {
	k := l*g.Heads + h
	s := A.strip(g, l, h)
	p.frame(s.x0-3, s.y0-2, s.x1+3, s.y1+2, stripFrame, 0.5)
	ts := style(bold, panelTitle, textColor)
	p.text(ts, s.x0, s.y0, fit(ts, g.Panels[k].Title, s.w()), text.XLeft, text.YTop, 0)

	y0 := A.baseline(s)
	for i, t := range A.tokens {
		if i%A.step != 0 {
			continue
		}
		if A.rotated {
			p.text(A.labels, A.anchor(s, i), y0+arcPad, t, text.XLeft, text.YCenter, -math.Pi/2)
		} else {
			p.text(A.labels, A.anchor(s, i), y0+arcPad, t, text.XCenter, text.YTop, 0)
		}
	}

	var arcs []arc
	probs := g.Panels[k].Probs
	for i := 0; i < g.T; i++ {
		for j := 0; j < g.T; j++ {
			w := float64(probs[i*g.T+j])
			if i == j || (g.Causal && j > i) || !(w >= MinArcWeight) { // !(>=) also drops NaN
				continue
			}
			arcs = append(arcs, arc{i, j, min(w, 1)})
		}
	}
	// Heavy arcs last so they stay on top of the faint ones.
	sort.SliceStable(arcs, func(a, b int) bool { return arcs[a].w < arcs[b].w })
	col := palette[k%len(palette)]
	for _, a := range arcs {
		d := a.i - a.j
		if d < 0 {
			d = -d
		}
		drawArc(p, A.anchor(s, a.i), A.anchor(s, a.j), y0, A.riseFor(d, g.T), a.w, col)
	}
}

// arcWidth and arcAlpha map a weight to the arc's line.
func arcWidth(w float64) vg.Length { return vg.Length(0.4 + 1.8*w) }
func arcAlpha(w float64) float64   { return 0.25 + 0.75*w }

// drawArc strokes half an ellipse from (xi, y0) to (xj, y0) rising rise,
// with width and opacity growing with w, and a dot at the key end xj.
func drawArc(p *pen, xi, xj, y0, rise vg.Length, w float64, col color.RGBA) {
	c := color.NRGBA{R: col.R, G: col.G, B: col.B, A: uint8(math.Round(255 * arcAlpha(w)))}
	// Two cubic Béziers, one per quarter of the ellipse.
	const kappa = 0.5523 // 4/3 (sqrt 2 - 1)
	xc, rx := (xi+xj)/2, (xj-xi)/2
	var path vg.Path
	path.Move(p.pt(xi, y0))
	path.CubeTo(p.pt(xi, y0-kappa*rise), p.pt(xc-kappa*rx, y0-rise), p.pt(xc, y0-rise))
	path.CubeTo(p.pt(xc+kappa*rx, y0-rise), p.pt(xj, y0-kappa*rise), p.pt(xj, y0))
	p.c.SetLineStyle(draw.LineStyle{Color: c, Width: arcWidth(w)})
	p.c.Stroke(path)
	r := vg.Length(0.8 + 1.2*w)
	var dot vg.Path
	dot.Move(p.pt(xj+r, y0))
	dot.Arc(p.pt(xj, y0), r, 0, 2*math.Pi)
	dot.Close()
	p.c.SetColor(c)
	p.c.Fill(dot)
}

// drawArcLegend shows what three weights look like, at (x, y) top-left.
func drawArcLegend(p *pen, x, y vg.Length) {
	ls := style(sans, 7, mutedText)
	p.text(ls, x, y, fmt.Sprintf("weight (below %.2f not drawn)", MinArcWeight), text.XLeft, text.YTop, 0)
	base := y + lineH(7) + 14
	for k, w := range []float64{0.1, 0.5, 1} {
		x0 := x + vg.Length(k)*48
		drawArc(p, x0+4, x0+24, base, 10, w, palette[0])
		p.text(ls, x0+27, base, fmt.Sprintf("%.1f", w), text.XLeft, text.YBottom, 0)
	}
}
