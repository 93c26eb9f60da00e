package sweep

import (
	"fmt"
	"os"

	"headlab/viz"
)

// WriteHistograms draws every configuration's accuracy histogram
// (viz.AccuracyHistogram) into dir, as ext, named by HistogramFile.
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
		bins := make([]viz.Bin, len(cr.Histogram))
		for k, b := range cr.Histogram {
			bins[k] = viz.Bin(b)
		}
		title := fmt.Sprintf("%s (%d seeds)", ConfigName(cr.Config), cr.Seeds)
		fig, err := viz.AccuracyHistogram(title, bins, cr.Chance).Figure()
		if err != nil {
			return err
		}
		if err := viz.Write(HistogramFile(dir, ext, cr), fig); err != nil {
			return err
		}
	}
	return nil
}

// atlasPanels is how many mechanisms of a configuration the atlas's
// figure draws: the most common, two lines of four.
const atlasPanels = 8

// AtlasFigure is the atlas's figure (db names the database in its
// title): a row per configuration, a panel per mechanism (the
// atlasPanels most common).
func AtlasFigure(db string, atlas []ConfigAtlas) viz.Atlas {
	a := viz.Atlas{Title: "atlas · " + db,
		Note: "each panel one mechanism: its signature's edges, wide by mean effect (a share of the logit difference); heads named by layer and role"}
	for _, ca := range atlas {
		title := fmt.Sprintf("%s · %d signed seeds", ConfigName(ca.Config), ca.Signed)
		if n := len(ca.Mechanisms); n > atlasPanels {
			rest := 0
			for _, m := range ca.Mechanisms[atlasPanels:] {
				rest += m.Runs
			}
			title += fmt.Sprintf(" · the %d most common of %d mechanisms (the other %d hold %d seeds)", atlasPanels, n, n-atlasPanels, rest)
		}
		row := viz.AtlasRow{Title: title, Layers: ca.Config.Layers}
		for k, m := range ca.Mechanisms[:min(len(ca.Mechanisms), atlasPanels)] {
			p := viz.AtlasPanel{Title: fmt.Sprintf("%d: %.0f%% (%d of %d), seed %d, acc %.0f%%", k+1, 100*m.Share, m.Runs, ca.Signed, m.Representative, 100*m.Accuracy)}
			for _, ed := range m.Edges {
				p.Edges = append(p.Edges, viz.CircuitEdge{From: ed.From, To: ed.To, Effect: ed.Effect, In: true})
			}
			row.Panels = append(row.Panels, p)
		}
		a.Rows = append(a.Rows, row)
	}
	return a
}
