package viz

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CircuitGraph is a model's circuit as edges (docs/circuits.md): its
// nodes by layer, the embeddings at the bottom and the logits at the top,
// every edge whose effect is at least 0.01 in magnitude as a line from
// sender to receiver, coloured by its effect (Diverging), wide and dark
// when the circuit keeps it, thin and faint when not; and beside it the
// faithfulness curve, the share of the metric kept against edges kept.
type CircuitGraph struct {
	Title, Note string
	Layers      int
	Edges       []CircuitEdge
	// Curve[k] is the share kept by the first k edges of the ranking;
	// Threshold is drawn across it.
	Curve     []float64
	Threshold float64
	// Kept is the circuit's size, marked on the curve.
	Kept int
}

// CircuitEdge is one edge: its sender's and receiver's names (embed,
// pos_embed, L0H1, mlp0; L1H0.q, L1H0.k, L1H0.v, mlp1, logits), its
// effect, and whether the circuit keeps it.
type CircuitEdge struct {
	From, To string
	Effect   float64
	In       bool
}

// Sizes of a CircuitGraph, in points.
const (
	cgLevelH   vg.Length = 46
	cgGraphW   vg.Length = 330
	cgNodeW    vg.Length = 44
	cgNodeH    vg.Length = 14
	cgCurveW   vg.Length = 200
	cgCurveGap vg.Length = 40
	cgMinDraw            = 0.01
)

// level is the row a node sits in, from the bottom: the embeddings 0,
// block l's heads 2l+1 and its MLP 2l+2, the logits 2L+1.
func cgLevel(name string, layers int) int {
	switch {
	case name == "embed" || name == "pos_embed":
		return 0
	case name == "logits":
		return 2*layers + 1
	case strings.HasPrefix(name, "mlp"):
		var l int
		fmt.Sscanf(name, "mlp%d", &l)
		return 2*l + 2
	}
	var l int
	fmt.Sscanf(name, "L%d", &l)
	return 2*l + 1
}

// graphLevels is the nodes of edges by level (cgLevel), each level in
// order of first appearance: what CircuitGraph and the atlas's panels lay
// out.
func graphLevels(edges []CircuitEdge, layers int) [][]string {
	levels := make([][]string, 2*layers+2)
	seen := map[string]bool{}
	for _, e := range edges {
		for _, n := range []string{e.From, e.To} {
			base := nodeOf(n)
			if !seen[base] {
				seen[base] = true
				l := min(max(cgLevel(base, layers), 0), len(levels)-1)
				levels[l] = append(levels[l], base)
			}
		}
	}
	return levels
}

// nodeOf is the node a sender or receiver name belongs to: a head's
// receiver "L1H0.k" or "L1:induction.k" is node "L1H0" or "L1:induction".
func nodeOf(name string) string {
	for _, in := range []string{".q", ".k", ".v"} {
		if s, ok := strings.CutSuffix(name, in); ok {
			return s
		}
	}
	return name
}

// receiverEnd is where an edge into receiver to ends, on its node's lower
// side (nodes centred at at, of height nodeH): a head's query dx left of
// the centre, its key at the centre, its value dx right.
func receiverEnd(at map[string]vg.Point, to string, dx, nodeH vg.Length) (vg.Length, vg.Length) {
	c := at[nodeOf(to)]
	switch {
	case strings.HasSuffix(to, ".q"):
		return c.X - dx, c.Y + nodeH/2
	case strings.HasSuffix(to, ".v"):
		return c.X + dx, c.Y + nodeH/2
	}
	return c.X, c.Y + nodeH/2
}

// edgeScale is the magnitude edges' colours and widths are drawn against:
// their largest effect, at least cgMinDraw.
func edgeScale(edges []CircuitEdge) float64 {
	scale := cgMinDraw
	for _, e := range edges {
		scale = max(scale, math.Abs(e.Effect))
	}
	return scale
}

// Figure draws the graph and the curve under the header, and a key.
func (g CircuitGraph) Figure() (*Figure, error) {
	if g.Layers <= 0 || len(g.Edges) == 0 {
		return nil, fmt.Errorf("viz: a circuit graph of %d layers and %d edges", g.Layers, len(g.Edges))
	}
	for _, e := range g.Edges {
		if math.IsNaN(e.Effect) || math.IsInf(e.Effect, 0) {
			return nil, fmt.Errorf("viz: edge %s -> %s has effect %v", e.From, e.To, e.Effect)
		}
	}
	levels := graphLevels(g.Edges, g.Layers)
	nLevels := len(levels)
	w := max(2*margin+cgGraphW+cgCurveGap+cgCurveW, headerW(g.Title, g.Note))
	top := margin + headerH() + 8
	graphH := vg.Length(nLevels-1)*cgLevelH + cgNodeH
	h := top + graphH + 3*lineH(tickSize) + margin
	return newFigure("circuit graph", w, h, func(p *pen) {
		p.header(g.Title, g.Note, w)
		// Node centres.
		at := map[string]vg.Point{}
		for l, names := range levels {
			y := top + graphH - cgNodeH/2 - vg.Length(l)*cgLevelH
			for i, name := range names {
				x := margin + cgGraphW*vg.Length(i+1)/vg.Length(len(names)+1)
				at[name] = vg.Point{X: x, Y: y}
			}
		}
		// An edge ends on its receiver's lower side: a head's query at
		// the left, key in the middle, value at the right.
		end := func(to string) (x, y vg.Length) {
			return receiverEnd(at, to, cgNodeW/3, cgNodeH)
		}
		scale := edgeScale(g.Edges)
		// Faint edges first, the circuit's on top.
		for _, in := range []bool{false, true} {
			for _, e := range g.Edges {
				if e.In != in || (!in && math.Abs(e.Effect) < cgMinDraw) {
					continue
				}
				c := Diverging(e.Effect / scale)
				col := color.NRGBA{R: c.R, G: c.G, B: c.B, A: 255}
				width := vg.Length(0.5)
				if in {
					width = 1 + 3*vg.Length(math.Abs(e.Effect)/scale)
				} else {
					col.A = 120
				}
				s := at[e.From]
				x1, y1 := end(e.To)
				p.line(s.X, s.Y-cgNodeH/2, x1, y1, draw.LineStyle{Color: col, Width: width})
			}
		}
		ns := style(sans, patchFont+1, textColor)
		// In the order laid out, not the map's: the same bits every run.
		for _, name := range slices.Concat(levels...) {
			c := at[name]
			p.rect(c.X-cgNodeW/2, c.Y-cgNodeH/2, c.X+cgNodeW/2, c.Y+cgNodeH/2, background)
			p.frame(c.X-cgNodeW/2, c.Y-cgNodeH/2, c.X+cgNodeW/2, c.Y+cgNodeH/2, mutedText, 0.6)
			p.text(ns, c.X, c.Y, name, text.XCenter, text.YCenter, 0)
			if strings.HasPrefix(name, "L") {
				ks := style(sans, patchFont-1, mutedText)
				for i, k := range []string{"q", "k", "v"} {
					p.text(ks, c.X+cgNodeW/3*vg.Length(i-1), c.Y+cgNodeH/2+1, k, text.XCenter, text.YTop, 0)
				}
			}
		}
		ls := style(sans, tickSize, textColor)
		p.text(ls, margin, top+graphH+lineH(tickSize), "edges: sender to receiver (q, k, v: a head's inputs); red carries the clean answer, wide: in the circuit",
			text.XLeft, text.YTop, 0)
		g.curve(p, margin+cgGraphW+cgCurveGap, top, cgCurveW, graphH)
	})
}

// curve draws the faithfulness curve in the box at x0, y0 of size w, h.
func (g CircuitGraph) curve(p *pen, x0, y0, w, h vg.Length) {
	if len(g.Curve) < 2 {
		return
	}
	lo, hi := 0.0, 1.0
	for _, f := range g.Curve {
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			lo, hi = min(lo, f), max(hi, f)
		}
	}
	// Rounding below 0 or above 1 is not worth a tick.
	if lo > -0.02 {
		lo = 0
	}
	if hi < 1.02 {
		hi = 1
	}
	n := len(g.Curve) - 1
	px := func(k int) vg.Length { return x0 + w*vg.Length(k)/vg.Length(n) }
	py := func(f float64) vg.Length { return y0 + h - h*vg.Length((f-lo)/(hi-lo)) }
	axis := draw.LineStyle{Color: mutedText, Width: 0.6}
	p.line(x0, y0, x0, y0+h, axis)
	p.line(x0, y0+h, x0+w, y0+h, axis)
	ls := style(sans, tickSize, textColor)
	ticks := []float64{0, 0.5, 1}
	if lo < 0 {
		ticks = append(ticks, lo)
	}
	if hi > 1 {
		ticks = append(ticks, hi)
	}
	for _, f := range ticks {
		p.line(x0-2, py(f), x0, py(f), axis)
		p.text(ls, x0-3, py(f), fmt.Sprintf("%.2g", f), text.XRight, text.YCenter, 0)
	}
	thr := draw.LineStyle{Color: Diverging(0.6), Width: 0.6, Dashes: []vg.Length{2, 2}}
	p.line(x0, py(g.Threshold), x0+w, py(g.Threshold), thr)
	line := draw.LineStyle{Color: textColor, Width: 1}
	for k := 1; k <= n; k++ {
		a, b := g.Curve[k-1], g.Curve[k]
		if math.IsNaN(a) || math.IsNaN(b) {
			continue
		}
		p.line(px(k-1), py(max(lo, min(hi, a))), px(k), py(max(lo, min(hi, b))), line)
	}
	if g.Kept >= 0 && g.Kept <= n {
		p.line(px(g.Kept), y0, px(g.Kept), y0+h, draw.LineStyle{Color: mutedText, Width: 0.5, Dashes: []vg.Length{1, 2}})
	}
	p.text(ls, x0+w/2, y0+h+2, fmt.Sprintf("edges kept, by attribution (0..%d; dotted: the circuit's %d)", n, g.Kept), text.XCenter, text.YTop, 0)
	p.text(ls, x0, y0-2, fmt.Sprintf("share of the metric kept (dashed: %.2g)", g.Threshold), text.XLeft, text.YBottom, 0)
}
