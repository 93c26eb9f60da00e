package sweep

import (
	"fmt"
	"os"
	"path/filepath"

	"headlab/viz"
)

// HistogramFigure draws a histogram of per-seed accuracies (the bins of
// Histogram, fixed over 0-100% so that figures compare at a glance) with
// a dashed line at the chance floor, its legend above the bars.
func HistogramFigure(title string, accuracies []float64, chance float64) (*viz.Figure, error) {
	h := viz.Histogram{Title: title, XLabel: "held-out accuracy (%)", YLabel: "seeds"}
	for _, b := range Histogram(accuracies) {
		h.Bins = append(h.Bins, viz.Bin{Lo: 100 * b.Lo, Hi: 100 * b.Hi, Count: b.Count})
	}
	if chance > 0 {
		h.Line, h.LineLabel = 100*chance, fmt.Sprintf("chance %.1f%%", 100*chance)
	}
	return h.Figure()
}

// HistogramFile is where a configuration's histogram goes in dir, as ext
// (".png", ".svg" or ".pdf").
func HistogramFile(dir, ext string, cr *ConfigReport) string {
	return filepath.Join(dir, "hist-"+Slug(cr.Key)+ext)
}

// WriteHistograms draws every configuration's accuracy histogram into
// dir, as ext.
func WriteHistograms(dir, ext string, reports []ConfigReport) error {
	if err := viz.CheckPath("hist" + ext); err != nil {
		return err
	}
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
		fig, err := HistogramFigure(title, accs, cr.Chance)
		if err != nil {
			return err
		}
		if err := viz.Write(HistogramFile(dir, ext, cr), fig); err != nil {
			return err
		}
	}
	return nil
}
