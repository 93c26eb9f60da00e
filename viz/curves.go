package viz

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"headlab/internal/atomicfile"
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

// Curves is the training-dynamics picture: loss (log scale), held-out
// accuracy and every head's winning score against step, with markers
// where a head's label changed and a shaded band over the phase change.
type Curves struct {
	Title    string
	Loss     Curve
	Accuracy Curve
	Heads    []Curve
	Markers  []Marker
	// PhaseFrom and PhaseTo bound the shaded band (none when equal).
	PhaseFrom, PhaseTo float64
}

// Lines is a plain line chart on a 0..1 value axis.
type Lines struct {
	Title, XLabel, YLabel string
	Curves                []Curve
}

// WriteLinesPNG draws l and writes it to path as PNG, atomically.
func WriteLinesPNG(path string, l Lines) error {
	if len(l.Curves) == 0 || len(l.Curves[0].Steps) < 2 {
		return fmt.Errorf("viz: a line chart needs a curve of at least two points")
	}
	p, err := curvePlot(l.Title, l.YLabel, l.Curves, Curves{Accuracy: l.Curves[0]}, false)
	if err != nil {
		return err
	}
	p.X.Label.Text = l.XLabel
	return writePlots(path, 9*vg.Inch, 5*vg.Inch, p)
}

// WriteCurvesPNG draws c and writes it to path as PNG, atomically.
func WriteCurvesPNG(path string, c Curves) error {
	if len(c.Accuracy.Steps) < 2 {
		return fmt.Errorf("viz: a curve needs at least two recorded steps")
	}
	loss, err := curvePlot(c.Title, "loss (last training batch)", []Curve{c.Loss}, c, true)
	if err != nil {
		return err
	}
	acc, err := curvePlot("", "held-out accuracy", []Curve{c.Accuracy}, c, false)
	if err != nil {
		return err
	}
	heads, err := curvePlot("", "each head's winning score", c.Heads, c, false)
	if err != nil {
		return err
	}
	for _, m := range c.Markers {
		ls, err := plotter.NewLine(plotter.XYs{{X: m.Step, Y: 0}, {X: m.Step, Y: 1.05}})
		if err != nil {
			return err
		}
		ls.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		ls.Color = color.Gray{Y: 140}
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: m.Step, Y: 1.0}}, Labels: []string{m.Text}})
		if err != nil {
			return err
		}
		lab.TextStyle[0].Rotation = -1.5708 // read top to bottom beside the line
		heads.Add(ls, lab)
	}
	return writePlots(path, 9*vg.Inch, 10*vg.Inch, loss, acc, heads)
}

// writePlots stacks plots in one column, aligned, and writes the PNG.
func writePlots(path string, w, h vg.Length, ps ...*plot.Plot) error {
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadX: vg.Points(6), PadY: vg.Points(10)}
	plots := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		plots[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("viz: %v", err)
	}
	return nil
}

func curvePlot(title, ylabel string, curves []Curve, c Curves, logY bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.X.Label.Text = "step"
	p.Legend.Top = logY // the loss falls away from the top; scores rise to it
	p.X.Min, p.X.Max = c.Accuracy.Steps[0], c.Accuracy.Steps[len(c.Accuracy.Steps)-1]
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{}
	} else {
		p.Y.Min, p.Y.Max = 0, 1.05
	}
	if c.PhaseTo > c.PhaseFrom && !logY {
		band, err := plotter.NewPolygon(plotter.XYs{{X: c.PhaseFrom, Y: 0}, {X: c.PhaseTo, Y: 0}, {X: c.PhaseTo, Y: 1.05}, {X: c.PhaseFrom, Y: 1.05}})
		if err != nil {
			return nil, err
		}
		band.Color = color.NRGBA{R: 255, G: 190, B: 0, A: 70}
		band.LineStyle.Width = 0
		p.Add(band)
		p.Legend.Add("phase change", band)
	}
	lo, hi := math.Inf(1), math.Inf(-1) // the positive values drawn on a log scale
	for i, cv := range curves {
		xys := make(plotter.XYs, 0, len(cv.Steps))
		for k := range cv.Steps {
			if logY && !(cv.Values[k] > 0) {
				continue // log scale: skip zero and missing losses
			}
			lo, hi = math.Min(lo, cv.Values[k]), math.Max(hi, cv.Values[k])
			xys = append(xys, plotter.XY{X: cv.Steps[k], Y: cv.Values[k]})
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		if cv.Name != "" {
			p.Legend.Add(cv.Name, l)
		}
	}
	// A loss of 0 is legal but has no place on a log scale: the axis
	// spans the positive values (a decade either side of a single one;
	// 0.1..1 when there are none), never reaching 0.
	if logY {
		switch {
		case lo > hi:
			p.Y.Min, p.Y.Max = 0.1, 1
		case lo == hi:
			p.Y.Min, p.Y.Max = lo/10, hi*10
		default:
			p.Y.Min, p.Y.Max = lo, hi
		}
	}
	return p, nil
}
