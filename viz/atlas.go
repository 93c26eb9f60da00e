package viz

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Atlas is a sweep's atlas of circuits (docs/circuits.md, "Atlas"): a row
// per configuration, and in it a small graph per mechanism, its nodes by
// layer as in CircuitGraph (the embeddings at the bottom, the logits at
// the top, a head named by its layer and role), every edge of its
// signature drawn from sender to receiver, wide by its mean effect.
type Atlas struct {
	Title, Note string
	Rows        []AtlasRow
}

// AtlasRow is one configuration: its title, layers and mechanisms.
type AtlasRow struct {
	Title  string
	Layers int
	Panels []AtlasPanel
}

// AtlasPanel is one mechanism: its caption (share, seeds) and its
// signature's edges (From "L0:previous-token", To "L1:induction.k").
type AtlasPanel struct {
	Title string
	Edges []CircuitEdge
}

// Sizes of an Atlas, in points.
const (
	atPanelW  vg.Length = 200
	atLevelH  vg.Length = 30
	atNodeH   vg.Length = 11
	atGap     vg.Length = 12
	atNodeTxt vg.Length = 5.5
	atPad     vg.Length = 4
	atMaxCols           = 4
)

// Figure draws the rows of panels under the header, at most atMaxCols
// panels to a line.
func (a Atlas) Figure() (*Figure, error) {
	if len(a.Rows) == 0 {
		return nil, fmt.Errorf("viz: an atlas with no configuration")
	}
	cols := 1
	for _, r := range a.Rows {
		if r.Layers <= 0 || len(r.Panels) == 0 {
			return nil, fmt.Errorf("viz: an atlas row %q of %d layers and %d mechanisms", r.Title, r.Layers, len(r.Panels))
		}
		for _, p := range r.Panels {
			for _, e := range p.Edges {
				if math.IsNaN(e.Effect) || math.IsInf(e.Effect, 0) {
					return nil, fmt.Errorf("viz: edge %s -> %s has effect %v", e.From, e.To, e.Effect)
				}
			}
		}
		cols = max(cols, min(len(r.Panels), atMaxCols))
	}
	panelH := func(layers int) vg.Length {
		return lineH(tickSize) + 2*atPad + vg.Length(2*layers+1)*atLevelH + atNodeH
	}
	rowTitle := lineH(titleSize-1) + 2
	h := margin + headerH() + 4
	for _, r := range a.Rows {
		lines := (len(r.Panels) + atMaxCols - 1) / atMaxCols
		h += rowTitle + vg.Length(lines)*(panelH(r.Layers)+atGap)
	}
	h += margin
	w := max(2*margin+vg.Length(cols)*atPanelW+vg.Length(cols-1)*atGap, headerW(a.Title, a.Note))
	return newFigure("atlas", w, h, func(p *pen) {
		p.header(a.Title, a.Note, w)
		y := margin + headerH() + 4
		rs := style(bold, titleSize-1, textColor)
		for _, r := range a.Rows {
			p.text(rs, margin, y, fit(rs, r.Title, w-2*margin), text.XLeft, text.YTop, 0)
			y += rowTitle
			ph := panelH(r.Layers)
			for i, pn := range r.Panels {
				x := margin + vg.Length(i%atMaxCols)*(atPanelW+atGap)
				py := y + vg.Length(i/atMaxCols)*(ph+atGap)
				drawMechanism(p, pn, r.Layers, x, py, ph)
			}
			y += vg.Length((len(r.Panels)+atMaxCols-1)/atMaxCols) * (ph + atGap)
		}
	})
}

// drawMechanism draws one panel in the box at x, y of width atPanelW and
// height h.
func drawMechanism(p *pen, pn AtlasPanel, layers int, x, y, h vg.Length) {
	ts := style(sans, tickSize, textColor)
	p.text(ts, x, y, fit(ts, pn.Title, atPanelW), text.XLeft, text.YTop, 0)
	p.frame(x, y+lineH(tickSize), x+atPanelW, y+h, mutedText, 0.3)
	levels := graphLevels(pn.Edges, layers)
	bottom := y + h - atNodeH/2 - atPad
	at := map[string]vg.Point{}
	nodeW := map[string]vg.Length{}
	for l, names := range levels {
		for i, name := range names {
			at[name] = vg.Point{X: x + atPanelW*vg.Length(i+1)/vg.Length(len(names)+1), Y: bottom - vg.Length(l)*atLevelH}
			nodeW[name] = atPanelW/vg.Length(len(names)+1) - 4
		}
	}
	scale := edgeScale(pn.Edges)
	for _, e := range pn.Edges {
		c := Diverging(e.Effect / scale)
		s := at[nodeOf(e.From)]
		x1, y1 := receiverEnd(at, e.To, nodeW[nodeOf(e.To)]/3, atNodeH)
		p.line(s.X, s.Y-atNodeH/2, x1, y1, draw.LineStyle{Color: color.NRGBA{R: c.R, G: c.G, B: c.B, A: 255}, Width: 0.6 + 2.4*vg.Length(math.Abs(e.Effect)/scale)})
	}
	ns := style(sans, atNodeTxt, textColor)
	// In the order laid out, not the map's: the same bits every run.
	for _, name := range slices.Concat(levels...) {
		c, hw := at[name], nodeW[name]/2
		p.rect(c.X-hw, c.Y-atNodeH/2, c.X+hw, c.Y+atNodeH/2, background)
		p.frame(c.X-hw, c.Y-atNodeH/2, c.X+hw, c.Y+atNodeH/2, mutedText, 0.5)
		p.text(ns, c.X, c.Y, fit(ns, name, 2*hw-2), text.XCenter, text.YCenter, 0)
	}
}
