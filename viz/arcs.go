package viz

import (
	"image"
	"image/color"
	"math"
	"sort"
)

// MinArcWeight is the smallest weight DrawArcs draws; lighter arcs would
// only add clutter.
const MinArcWeight = 0.05

// DrawArcs draws the arc view: for each head a strip (laid out Layers x
// Heads like the heatmaps) with the tokens in a row and, for every query i
// and key j != i with weight w >= MinArcWeight, an arc above the row from
// token i to token j, its width and opacity growing with w and a dot at
// the key end. With g.Causal, keys j > i are never drawn. Each head gets
// its own colour and its title at the top of its strip. The geometry is
// given by ArcsSize, ArcStripRect, ArcRect and ArcAnchor.
func DrawArcs(g Grid) (*image.RGBA, error) {
	if err := g.validate(); err != nil {
		return nil, err
	}
	A := g.arcLayout()
	if err := checkSize("arc", A.size); err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rectangle{Max: A.size})
	fillRect(img, img.Rect, background)
	drawText(img, margin, margin, displayRunes(arcNote), mutedText, false)

	labels := make([][]rune, g.T)
	for i, t := range g.Tokens {
		labels[i] = fitRunes(tokenRunes(t), A.labelW)
	}
	for l := 0; l < g.Layers; l++ {
		for h := 0; h < g.Heads; h++ {
			drawStrip(img, g, A, l, h, labels)
		}
	}
	return img, nil
}

type arc struct {
	i, j int
	w    float64
}

func drawStrip(img *image.RGBA, g Grid, A arcLayout, l, h int, labels [][]rune) {
	k := l*g.Heads + h
	s := A.strip(l, h)
	strokeRect(img, s.Inset(-arcFrameOut), stripFrame)

	title := fitRunes(displayRunes(g.Panels[k].Title), A.stripW-2)
	drawText(img, s.Min.X+(A.stripW-textW(title))/2, s.Min.Y+(titleBandH-lineH)/2-1, title, textColor, true)

	y0 := A.baseline(s)
	for i, rs := range labels {
		x := A.anchorX(s, g.T, i)
		drawText(img, x-textW(rs)/2, y0+arcBottomPad+2, rs, mutedText, false)
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
		xi := float64(A.anchorX(s, g.T, a.i))
		xj := float64(A.anchorX(s, g.T, a.j))
		d := a.i - a.j
		if d < 0 {
			d = -d
		}
		drawArc(img, xi, xj, float64(y0), A.riseFor(d, g.T), a.w, col)
	}
}

// drawArc strokes a half ellipse from (xi, y0) to (xj, y0) rising rise
// pixels, anti-aliased, with width and opacity growing with w, plus a dot
// at the key end xj. Coverage is collected per pixel with max() in a
// buffer first so overlapping segments do not darken the joins.
func drawArc(img *image.RGBA, xi, xj, y0, rise, w float64, col color.RGBA) {
	halfW := (0.8 + 3.2*w) / 2
	alpha := 0.25 + 0.75*w
	dotR := 1.5 + 2*w

	pad := math.Max(halfW, dotR) + 2
	box := image.Rect(
		int(math.Floor(math.Min(xi, xj)-pad)), int(math.Floor(y0-rise-pad)),
		int(math.Ceil(math.Max(xi, xj)+pad)), int(math.Ceil(y0+pad)),
	).Intersect(img.Rect)
	if box.Empty() {
		return
	}
	cov := make([]float64, box.Dx()*box.Dy())
	// plot max-combines coverage for every pixel whose centre lies within
	// r (+0.5 for anti-aliasing) of the segment p-q (a point when p == q).
	plot := func(px, py, qx, qy, r float64) {
		x0 := max(box.Min.X, int(math.Floor(math.Min(px, qx)-r-1)))
		x1 := min(box.Max.X, int(math.Ceil(math.Max(px, qx)+r+1)))
		y1 := min(box.Max.Y, int(math.Ceil(math.Max(py, qy)+r+1)))
		for y := max(box.Min.Y, int(math.Floor(math.Min(py, qy)-r-1))); y < y1; y++ {
			for x := x0; x < x1; x++ {
				c := r + 0.5 - segDist(float64(x)+0.5, float64(y)+0.5, px, py, qx, qy)
				if c <= 0 {
					continue
				}
				idx := (y-box.Min.Y)*box.Dx() + (x - box.Min.X)
				cov[idx] = max(cov[idx], min(c, 1))
			}
		}
	}

	xc, rx := (xi+xj)/2, math.Abs(xj-xi)/2
	// Half an ellipse is about pi*(rx+rise)/2 long; one segment per ~2 px.
	n := min(max(int((rx+rise)*math.Pi/4), 12), 400)
	px, py := xc+rx, y0
	for k := 1; k <= n; k++ {
		t := math.Pi * float64(k) / float64(n)
		qx, qy := xc+rx*math.Cos(t), y0-rise*math.Sin(t)
		plot(px, py, qx, qy, halfW)
		px, py = qx, qy
	}
	plot(xj, y0, xj, y0, dotR)

	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			if c := cov[(y-box.Min.Y)*box.Dx()+(x-box.Min.X)]; c > 0 {
				blend(img, x, y, col, c*alpha)
			}
		}
	}
}

// segDist is the distance from (x, y) to the segment (px, py)-(qx, qy).
func segDist(x, y, px, py, qx, qy float64) float64 {
	dx, dy := qx-px, qy-py
	t := 0.0
	if l2 := dx*dx + dy*dy; l2 > 0 {
		t = math.Max(0, math.Min(1, ((x-px)*dx+(y-py)*dy)/l2))
	}
	return math.Hypot(x-(px+t*dx), y-(py+t*dy))
}
