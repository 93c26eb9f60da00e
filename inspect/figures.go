package inspect

import (
	"fmt"

	"headlab/viz"
)

// The reports of this package as viz draws them: each figure's data, its
// title given by the caller (the run's).

// Grid is r's heatmap: the heads, then the residual streams, by
// position, each cell the normalised logit difference patching restores.
func (r *PatchReport) Grid(title string) viz.PatchGrid {
	g := viz.PatchGrid{Title: title, Note: fmt.Sprintf("share of the answer's logit difference restored by patching the clean activation into the %s-corrupted run, per position", r.Corruption)}
	for _, p := range r.Positions {
		g.Columns = append(g.Columns, fmt.Sprint(p))
	}
	for _, p := range r.Heads {
		g.Rows, g.Values = append(g.Rows, p.Name), append(g.Values, p.LogitDiff)
	}
	g.Gaps = []int{len(r.Heads)}
	for _, p := range r.Resid {
		g.Rows, g.Values = append(g.Rows, p.Name), append(g.Values, p.LogitDiff)
	}
	return g
}

// Lines is r's orders as curves of accuracy against the fraction of
// heads removed.
func (r *PruneReport) Lines(title string) viz.Lines {
	var curves []viz.Curve
	for _, c := range r.Orders {
		v := viz.Curve{Name: OrderTitle(c.Order, r.RandomOrders)}
		for _, s := range c.Steps {
			v.Steps, v.Values = append(v.Steps, s.Fraction), append(v.Values, s.Accuracy)
		}
		curves = append(curves, v)
	}
	return viz.Lines{Title: title, XLabel: "fraction of heads removed", YLabel: "held-out accuracy", Curves: curves}
}

// Bars is r's parts as bars: each part's mean logit.
func (r *AttributionReport) Bars(title string) viz.Bars {
	b := viz.Bars{Title: title, XLabel: "mean part of the answer's logit",
		Note: fmt.Sprintf("%d answers; the parts sum to the mean answer logit, %.3g", r.Answers, r.Logit)}
	for _, p := range r.Parts {
		b.Labels, b.Values = append(b.Labels, p.Name), append(b.Values, p.Logit)
	}
	return b
}

// Curves is h's figure: its series and label changes, the phase
// change's span shaded.
func (h History) Curves(title string) viz.Curves {
	c := viz.Curves{Title: title, Loss: h.Loss().curve(), Accuracy: h.Accuracy().curve(), TrainAccuracy: h.TrainAccuracy().curve(), ICL: h.ICL().curve()}
	for _, s := range h.HeadScores() {
		c.Heads = append(c.Heads, s.curve())
	}
	for _, ch := range h.LabelChanges() {
		c.Markers = append(c.Markers, viz.Marker{Step: float64(ch.Step), Text: ch.Text()})
	}
	from, to := h.Phase().Span()
	c.PhaseFrom, c.PhaseTo = float64(from), float64(to)
	return c
}

// curve is s as viz draws it.
func (s Series) curve() viz.Curve {
	c := viz.Curve{Name: s.Name, Values: s.Values}
	for _, step := range s.Steps {
		c.Steps = append(c.Steps, float64(step))
	}
	return c
}
