package viz

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Curve is one named series against training step.
type Curve struct {
	Name   string
	Steps  []float64
	Values []float64
}

// Marker is a labelled step on the head-score panel, e.g. a label change.
type Marker struct {
	Step float64
	Text string
}

// Curves is the training-dynamics figure: loss (log scale), held-out
// accuracy, the in-context learning score when recorded, and every head's
// winning score against step, one panel each, with numbered markers
// where a head's label changed (listed under the panels) and a shaded
// band over the phase change.
type Curves struct {
	// Title names the run (task, shape, seed, steps).
	Title    string
	Loss     Curve
	Accuracy Curve
	// TrainAccuracy is accuracy on the training data, drawn beside the
	// held-out accuracy (a grokking run shows the delay between them);
	// none when it has no points (a history recorded before it was).
	TrainAccuracy Curve
	// ICL is the in-context learning score (docs/causal.md); no panel
	// when it has no points (a history recorded before it was).
	ICL     Curve
	Heads   []Curve
	Markers []Marker
	// PhaseFrom and PhaseTo bound the shaded band (none when equal).
	PhaseFrom, PhaseTo float64
}

// Lines is a plain line chart on a 0..1 value axis.
type Lines struct {
	Title, XLabel, YLabel string
	Curves                []Curve
}

// Histogram is a bar chart of counts over fixed bins, with an optional
// dashed line (the chance floor) and its legend.
type Histogram struct {
	Title, XLabel, YLabel string
	Bins                  []Bin
	// Line is where the dashed line stands on the x axis; LineLabel names
	// it in the legend. No line when LineLabel is empty.
	Line      float64
	LineLabel string
}

// Bin is one bar of a Histogram: [Lo, Hi) holds Count items.
type Bin struct {
	Lo, Hi float64
	Count  int
}

// Sizes of the plot figures, in points.
const (
	plotW       vg.Length = 480
	panelH      vg.Length = 150
	panelGap    vg.Length = 6
	legendSize  vg.Length = 7.5
	axisSize    vg.Length = 8.5
	tickSize    vg.Length = 7.5
	maxFootRows           = 8 // label changes listed under the curves
)

// legendEntry is one item of a legend row: a sample and its name.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// panel is one plot of a stacked figure, its legend drawn in a row above
// the data rather than on it, and overlay drawn on the data canvas after
// the plot (markers that must not change the plot's layout).
type panel struct {
	p       *plot.Plot
	legend  []legendEntry
	overlay func(p *plot.Plot, data draw.Canvas)
}

// newPlot is a gonum plot in the figures' sizes.
func newPlot(xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = axisSize
		a.Tick.Label.Font.Size = tickSize
		a.Padding = 2
	}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{Y: 225}, color.Gray{Y: 225}
	p.Add(g)
	return p
}

// legendRows lays entries out left to right in rows at most w wide and
// returns each entry's row and x offset, and the number of rows.
func legendRows(entries []legendEntry, w vg.Length) (rows []int, xs []vg.Length, n int) {
	sty := style(sans, legendSize, textColor)
	x, row := vg.Length(0), 0
	for _, e := range entries {
		ew := 16 + sty.Width(e.name)
		if x > 0 && x+ew > w {
			x, row = 0, row+1
		}
		rows, xs = append(rows, row), append(xs, x)
		x += ew + 10
	}
	if len(entries) == 0 {
		return nil, nil, 0
	}
	return rows, xs, row + 1
}

// stack draws panels one above the other, their x axes aligned, under a
// header naming the run, with footer lines at the bottom.
func stack(kind, title, note string, panels []panel, footer []string) (*Figure, error) {
	w := max(plotW, headerW(title, note))
	rows := 0
	for _, pn := range panels {
		_, _, n := legendRows(pn.legend, w-2*margin-40)
		rows = max(rows, n)
	}
	band := vg.Length(rows)*lineH(legendSize) + 2
	footH := vg.Length(len(footer)) * lineH(noteSize)
	if len(footer) > 0 {
		footH += 4
	}
	n := vg.Length(len(panels))
	top := margin + headerH()
	h := top + n*(band+panelH) + (n-1)*panelGap + footH + margin
	return newFigure(kind, w, h, func(pe *pen) {
		pe.header(title, note, w)
		area := draw.Crop(pe.c, margin, -margin, margin+footH, -top)
		tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: band, PadY: band + panelGap}
		plots := make([][]*plot.Plot, len(panels))
		for i, pn := range panels {
			plots[i] = []*plot.Plot{pn.p}
		}
		canvases := plot.Align(plots, tiles, area)
		for i, pn := range panels {
			c := canvases[i][0]
			pn.p.Draw(c)
			data := pn.p.DataCanvas(c)
			if pn.overlay != nil {
				pn.overlay(pn.p, data)
			}
			drawLegend(c, pn.legend, data.Min.X, c.Max.Y+1+band, data.Max.X-data.Min.X)
		}
		fs := style(sans, noteSize, mutedText)
		for k, line := range footer {
			pe.text(fs, margin, h-margin-footH+4+vg.Length(k)*lineH(noteSize), fit(fs, line, w-2*margin), text.XLeft, text.YTop, 0)
		}
	})
}

// drawLegend draws entries in rows from (x, top) downwards (vg
// coordinates: top is the band's upper edge), at most w wide.
func drawLegend(c draw.Canvas, entries []legendEntry, x, top, w vg.Length) {
	sty := style(sans, legendSize, textColor)
	rows, xs, _ := legendRows(entries, w)
	for k, e := range entries {
		lh := lineH(legendSize)
		y := top - vg.Length(rows[k]+1)*lh // the row's bottom
		x0 := x + xs[k]
		tc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0, Y: y + lh*0.2}, Max: vg.Point{X: x0 + 13, Y: y + lh*0.8}}}
		e.thumb.Thumbnail(&tc)
		sty.XAlign, sty.YAlign = text.XLeft, text.YCenter
		c.FillText(sty, vg.Point{X: x0 + 16, Y: y + lh/2}, e.name)
	}
}

// addCurves adds each of cs to p as a line in the palette's colour of its
// place, and returns their legend entries.
func addCurves(p *plot.Plot, cs []Curve) ([]legendEntry, error) {
	var legend []legendEntry
	for i, cv := range cs {
		l, err := line(cv, palette[i%len(palette)], false)
		if err != nil {
			return nil, err
		}
		if l != nil {
			p.Add(l)
			legend = append(legend, legendEntry{cv.Name, l})
		}
	}
	return legend, nil
}

// line is a plotter line through the points of cv (on a log scale only
// the positive ones), or nil when none are left.
func line(cv Curve, col color.Color, logY bool) (*plotter.Line, error) {
	xys := make(plotter.XYs, 0, len(cv.Steps))
	for k := range cv.Steps {
		if k < len(cv.Values) && (!logY || cv.Values[k] > 0) && !math.IsNaN(cv.Values[k]) {
			xys = append(xys, plotter.XY{X: cv.Steps[k], Y: cv.Values[k]})
		}
	}
	if len(xys) == 0 {
		return nil, nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color = col
	l.Width = 1.2
	return l, nil
}

// phaseBand is the shaded phase change, from 0 to top of p.
func phaseBand(from, to, top float64) (*plotter.Polygon, error) { return band(from, to, 0, top) }

// band is a shaded rectangle over steps from..to and values lo..hi.
func band(from, to, lo, hi float64) (*plotter.Polygon, error) {
	band, err := plotter.NewPolygon(plotter.XYs{{X: from, Y: lo}, {X: to, Y: lo}, {X: to, Y: hi}, {X: from, Y: hi}})
	if err != nil {
		return nil, err
	}
	band.Color = color.NRGBA{R: 255, G: 190, B: 0, A: 70}
	band.LineStyle.Width = 0
	return band, nil
}

// unitTicks puts ticks at 0, 0.2, ..., 1 whatever headroom the axis has.
var unitTicks = plot.TickerFunc(func(_, _ float64) []plot.Tick {
	var ticks []plot.Tick
	for k := 0; k <= 10; k++ {
		t := plot.Tick{Value: float64(k) / 10}
		if k%2 == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
})

// markerStyle is the dashed line of a label change.
var markerStyle = draw.LineStyle{Color: color.Gray{Y: 110}, Width: 0.6, Dashes: []vg.Length{2, 2}}

// Figure draws the three panels of c: loss, accuracy, head scores.
func (c Curves) Figure() (*Figure, error) {
	if len(c.Accuracy.Steps) < 2 {
		return nil, fmt.Errorf("viz: a curve needs at least two recorded steps")
	}
	x0, x1 := c.Accuracy.Steps[0], c.Accuracy.Steps[len(c.Accuracy.Steps)-1]
	phase := c.PhaseTo > c.PhaseFrom
	loss, err := c.lossPanel()
	if err != nil {
		return nil, err
	}
	acc, err := c.accuracyPanel(phase)
	if err != nil {
		return nil, err
	}
	icl, err := c.iclPanel(phase)
	if err != nil {
		return nil, err
	}
	heads, footer, err := c.headsPanel(phase)
	if err != nil {
		return nil, err
	}
	panels := []panel{loss, acc}
	if icl.p != nil {
		panels = append(panels, icl)
	}
	panels = append(panels, heads)
	// After the lines are in: adding one widens the axes to its data.
	for _, p := range panels {
		p.p.X.Min, p.p.X.Max = x0, x1
	}
	return stack("curves", c.Title, "loss on a log scale; shaded: the phase change (20% to 80% of the rise of the induction score and of the accuracy)",
		panels, footer)
}

// lossPanel is the training loss on a log scale.
func (c Curves) lossPanel() (panel, error) {
	loss := newPlot("", "loss")
	var legend []legendEntry
	if l, err := line(c.Loss, palette[0], true); err != nil {
		return panel{}, err
	} else if l != nil {
		loss.Y.Scale, loss.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
		loss.Add(l)
		// gonum/plot widens an empty range by 1 each way, below 0 on a log
		// scale: give one value (or a constant) a range of its own.
		lo, hi := l.XYs[0].Y, l.XYs[0].Y
		for _, p := range l.XYs {
			lo, hi = min(lo, p.Y), max(hi, p.Y)
		}
		if lo == hi {
			loss.Y.Min, loss.Y.Max = lo/2, hi*2
		}
		legend = append(legend, legendEntry{"loss of the last training batch", l})
	}
	return panel{p: loss, legend: legend}, nil
}

// accuracyPanel is the held-out and training accuracy over the phase band.
func (c Curves) accuracyPanel(phase bool) (panel, error) {
	acc := newPlot("", "accuracy")
	acc.Y.Min, acc.Y.Max, acc.Y.Tick.Marker = 0, 1.05, unitTicks
	var legend []legendEntry
	if l, err := line(c.Accuracy, palette[0], false); err != nil {
		return panel{}, err
	} else if l != nil {
		legend = append(legend, legendEntry{"held-out accuracy", l})
		tl, err := line(c.TrainAccuracy, palette[1], false)
		if err != nil {
			return panel{}, err
		}
		if tl != nil {
			legend = append(legend, legendEntry{"training accuracy", tl})
		}
		if phase {
			band, err := phaseBand(c.PhaseFrom, c.PhaseTo, 1.05)
			if err != nil {
				return panel{}, err
			}
			acc.Add(band) // under the lines
			legend = append(legend, legendEntry{"phase change", band})
		}
		if tl != nil {
			acc.Add(tl)
		}
		acc.Add(l)
	}
	return panel{p: acc, legend: legend}, nil
}

// iclPanel is the in-context learning score, in nats, beside the phase
// change; its plot is nil when c has no such score.
func (c Curves) iclPanel(phase bool) (panel, error) {
	l, err := line(c.ICL, palette[1], false)
	if err != nil || l == nil {
		return panel{}, err
	}
	icl := newPlot("", "ICL score (nats)")
	lo, hi := 0.0, 0.0
	for _, p := range l.XYs {
		lo, hi = min(lo, p.Y), max(hi, p.Y)
	}
	pad := 0.05 * max(hi-lo, 1e-3)
	icl.Y.Min, icl.Y.Max = lo-pad, hi+pad
	if phase {
		b, err := band(c.PhaseFrom, c.PhaseTo, lo-pad, hi+pad)
		if err != nil {
			return panel{}, err
		}
		icl.Add(b)
	}
	icl.Add(l)
	return panel{p: icl, legend: []legendEntry{{"in-context learning score: next-token loss late minus early", l}}}, nil
}

// headsPanel is the heads' best pattern scores with the label changes
// marked, and the footer rows that list those changes.
func (c Curves) headsPanel(phase bool) (panel, []string, error) {
	heads := newPlot("step", "head's best pattern score")
	heads.Y.Min, heads.Y.Max, heads.Y.Tick.Marker = 0, 1.22, unitTicks
	if phase {
		band, err := phaseBand(c.PhaseFrom, c.PhaseTo, 1.02)
		if err != nil {
			return panel{}, nil, err
		}
		heads.Add(band)
	}
	legend, err := addCurves(heads, c.Heads)
	if err != nil {
		return panel{}, nil, err
	}
	var footer []string
	if len(c.Markers) > 0 {
		sample, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
		if err != nil {
			return panel{}, nil, err
		}
		sample.LineStyle = markerStyle
		legend = append(legend, legendEntry{"label change (numbered below)", sample})
		for k, m := range c.Markers {
			if k == maxFootRows-1 && len(c.Markers) > maxFootRows {
				footer = append(footer, fmt.Sprintf("… and %d more label changes (headlab curves lists them all)", len(c.Markers)-k))
				break
			}
			footer = append(footer, fmt.Sprintf("%d   step %g: %s", k+1, m.Step, m.Text))
		}
	}
	return panel{p: heads, legend: legend, overlay: c.drawMarkers}, footer, nil
}

// drawMarkers draws the label changes on the head panel p: a dashed line
// each, numbered in the headroom above 1, clear of every score.
func (c Curves) drawMarkers(p *plot.Plot, data draw.Canvas) {
	const tagRow = 1.07
	fx, fy := p.Transforms(&data)
	ts := style(sans, 6.5, textColor)
	ts.XAlign, ts.YAlign = text.XCenter, text.YCenter
	// Numbers of close markers alternate between two heights.
	lastX := [2]vg.Length{vg.Length(math.Inf(-1)), vg.Length(math.Inf(-1))}
	for k, m := range c.Markers {
		x := fx(m.Step)
		data.StrokeLine2(markerStyle, x, fy(0), x, fy(1.02))
		label := strconv.Itoa(k + 1)
		if k >= maxFootRows-1 && len(c.Markers) > maxFootRows {
			label = ""
		}
		lvl := 0
		if x-lastX[0] < ts.Width(label)+3 {
			lvl = 1
		}
		lastX[lvl] = x
		data.FillText(ts, vg.Point{X: x, Y: fy(tagRow + 0.09*float64(lvl))}, label)
	}
}

// Figure draws l: one panel, a legend row above it.
func (l Lines) Figure() (*Figure, error) {
	if len(l.Curves) == 0 || len(l.Curves[0].Steps) < 2 {
		return nil, fmt.Errorf("viz: a line chart needs a curve of at least two points")
	}
	p := newPlot(l.XLabel, l.YLabel)
	p.Y.Min, p.Y.Max, p.Y.Tick.Marker = 0, 1.05, unitTicks
	legend, err := addCurves(p, l.Curves)
	if err != nil {
		return nil, err
	}
	return stack("line", l.Title, "", []panel{{p: p, legend: legend}}, nil)
}

// AccuracyHistogram is the histogram of per-seed held-out accuracies of
// a sweep's configuration: bins as fractions of 1 (0.05 is 5%), drawn in
// percent and counted in seeds, and a dashed line at chance (a fraction;
// none when 0). Bins fixed over 0-1, as sweep.Histogram's are, make
// figures compare at a glance.
func AccuracyHistogram(title string, bins []Bin, chance float64) Histogram {
	h := Histogram{Title: title, XLabel: "held-out accuracy (%)", YLabel: "seeds"}
	for _, b := range bins {
		h.Bins = append(h.Bins, Bin{Lo: 100 * b.Lo, Hi: 100 * b.Hi, Count: b.Count})
	}
	if chance > 0 {
		h.Line, h.LineLabel = 100*chance, fmt.Sprintf("chance %.1f%%", 100*chance)
	}
	return h
}

// Figure draws h: the bars, the dashed line, and its legend above the
// bars, never on them.
func (h Histogram) Figure() (*Figure, error) {
	if len(h.Bins) == 0 {
		return nil, fmt.Errorf("viz: a histogram needs at least one bin")
	}
	p := newPlot(h.XLabel, h.YLabel)
	bars := &plotter.Histogram{FillColor: color.RGBA{R: 59, G: 82, B: 139, A: 255}, LineStyle: plotter.DefaultLineStyle}
	bars.LineStyle.Width = 0.5
	most := 0
	for _, b := range h.Bins {
		bars.Bins = append(bars.Bins, plotter.HistogramBin{Min: b.Lo, Max: b.Hi, Weight: float64(b.Count)})
		most = max(most, b.Count)
	}
	bars.Width = h.Bins[0].Hi - h.Bins[0].Lo
	p.Add(bars)
	p.X.Min, p.X.Max = h.Bins[0].Lo, h.Bins[len(h.Bins)-1].Hi
	p.Y.Min, p.Y.Max = 0, float64(max(most, 1))+0.5
	// Items are counted: whole-number ticks, at most about six of them.
	p.Y.Tick.Marker = plot.TickerFunc(func(_, hi float64) []plot.Tick {
		step := max(1, int(math.Ceil(hi/6)))
		var ticks []plot.Tick
		for v := 0; float64(v) <= hi; v += step {
			ticks = append(ticks, plot.Tick{Value: float64(v), Label: strconv.Itoa(v)})
		}
		return ticks
	})
	var legend []legendEntry
	if h.LineLabel != "" {
		l, err := plotter.NewLine(plotter.XYs{{X: h.Line, Y: 0}, {X: h.Line, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		l.Dashes = []vg.Length{4, 3}
		l.Color = color.RGBA{R: 200, G: 60, B: 60, A: 255}
		p.Add(l)
		legend = append(legend, legendEntry{h.LineLabel, l})
	}
	return stack("histogram", h.Title, "", []panel{{p: p, legend: legend}}, nil)
}
