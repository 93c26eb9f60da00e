package sweep

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"headlab/internal/atomicfile"
)

// WriteHistogramPNG draws a histogram of per-seed accuracies (the bins of
// Histogram, fixed over 0-100% so that pictures compare at a glance) with
// a dashed line at the chance floor, and writes it to path as PNG through
// a temporary file and a rename.
func WriteHistogramPNG(path, title string, accuracies []float64, chance float64) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "held-out accuracy (%)"
	p.Y.Label.Text = "seeds"
	p.X.Min, p.X.Max = 0, 100
	h := &plotter.Histogram{Width: 100.0 / HistBins, FillColor: color.RGBA{R: 59, G: 82, B: 139, A: 255}, LineStyle: plotter.DefaultLineStyle}
	most := 0
	for _, b := range Histogram(accuracies) {
		h.Bins = append(h.Bins, plotter.HistogramBin{Min: 100 * b.Lo, Max: 100 * b.Hi, Weight: float64(b.Count)})
		most = max(most, b.Count)
	}
	p.Add(h)
	p.Y.Min, p.Y.Max = 0, float64(max(most, 1))+0.5
	// Seeds are counted: whole-number ticks, at most about six of them.
	p.Y.Tick.Marker = plot.TickerFunc(func(_, hi float64) []plot.Tick {
		step := max(1, int(math.Ceil(hi/6)))
		var ticks []plot.Tick
		for v := 0; float64(v) <= hi; v += step {
			ticks = append(ticks, plot.Tick{Value: float64(v), Label: strconv.Itoa(v)})
		}
		return ticks
	})
	if chance > 0 {
		line, err := plotter.NewLine(plotter.XYs{{X: 100 * chance, Y: 0}, {X: 100 * chance, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		line.Color = color.RGBA{R: 200, G: 60, B: 60, A: 255}
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("chance %.1f%%", 100*chance), line)
		p.Legend.Top, p.Legend.Left = true, true
	}
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(6*vg.Inch, 3.5*vg.Inch, "png")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	})
}

// HistogramFile is where a configuration's histogram goes in dir.
func HistogramFile(dir string, cr *ConfigReport) string {
	return filepath.Join(dir, "hist-"+Slug(cr.Key)+".png")
}

// WriteHistograms draws every configuration's accuracy histogram.
func WriteHistograms(dir string, reports []ConfigReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range reports {
		cr := &reports[i]
		if cr.Seeds == 0 {
			continue
		}
		var accs []float64
		for _, v := range cr.Values {
			accs = append(accs, v.Value)
		}
		title := fmt.Sprintf("%s (%d seeds)", ConfigName(cr.Config), cr.Seeds)
		if err := WriteHistogramPNG(HistogramFile(dir, cr), title, accs, cr.Chance); err != nil {
			return err
		}
	}
	return nil
}
