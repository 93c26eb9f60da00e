package sweep

import (
	"fmt"
	"io"
	"slices"

	"headlab/analysis"
	"headlab/inspect"
)

// MeasureSummary is the spread over seeds of a configuration's
// measurements beyond the ablation table (Analysis): per run, the lens
// layer and the in-context learning score; per label, over every head
// that carries it in a measured run, each head's accuracy switched off
// alone by every method, its direct logit attribution and its circuit
// scores. A statistic no run measured has N = 0.
type MeasureSummary struct {
	// Runs counts the finished runs with any of the measurements;
	// Without those with none (stored before schema version 5, or swept
	// with --measure none).
	Runs    int             `json:"runs"`
	Without int             `json:"without"`
	Lens    Stats           `json:"lens_layer"`
	ICL     Stats           `json:"icl_score"`
	ByLabel []LabelMeasures `json:"by_label"`
}

// LabelMeasures is the spread of the measurements over the heads of one
// label.
type LabelMeasures struct {
	Label string `json:"label"`
	Heads int    `json:"heads"`
	// Zero, Mean and Resample are held-out accuracy with the head alone
	// switched off by each method.
	Zero        Stats `json:"zero_ablated_accuracy"`
	Mean        Stats `json:"mean_ablated_accuracy"`
	Resample    Stats `json:"resample_ablated_accuracy"`
	DirectLogit Stats `json:"direct_logit"`
	OVCopying   Stats `json:"ov_copying"`
	Prefix      Stats `json:"prefix_matching"`
}

// labelOrder is the order labels are summarised in: analysis.Patterns',
// then no clear pattern.
var labelOrder = append(slices.Clone(analysis.Patterns), analysis.NoClearPattern)

// summarizeMeasures summarises the measurements of one configuration's
// finished runs.
func summarizeMeasures(recs []Record) MeasureSummary {
	s := MeasureSummary{ByLabel: []LabelMeasures{}}
	var lens, icl []float64
	type series struct{ zero, mean, resample, logit, copying, prefix []float64 }
	byLabel := map[string]*series{}
	for _, r := range recs {
		if !r.Measured() {
			s.Without++
			continue
		}
		s.Runs++
		if r.LensLayer != nil {
			lens = append(lens, float64(*r.LensLayer))
		}
		if r.ICL != nil {
			icl = append(icl, *r.ICL)
		}
		for _, h := range r.Heads {
			x := byLabel[h.Label]
			if x == nil {
				x = &series{}
				byLabel[h.Label] = x
			}
			x.zero = append(x.zero, h.AblatedAccuracy)
			if v, ok := h.AblatedBy[inspect.AblateMean]; ok {
				x.mean = append(x.mean, v)
			}
			if v, ok := h.AblatedBy[inspect.AblateResample]; ok {
				x.resample = append(x.resample, v)
			}
			if h.DirectLogit != nil {
				x.logit = append(x.logit, *h.DirectLogit)
			}
			if h.Circuit != nil {
				x.copying = append(x.copying, h.Circuit.OVCopying)
				x.prefix = append(x.prefix, h.Circuit.PrefixMatching)
			}
		}
	}
	s.Lens, s.ICL = Describe(lens), Describe(icl)
	for _, l := range labelOrder {
		if x := byLabel[l]; x != nil {
			s.ByLabel = append(s.ByLabel, LabelMeasures{Label: l, Heads: len(x.zero), Zero: Describe(x.zero), Mean: Describe(x.mean),
				Resample: Describe(x.resample), DirectLogit: Describe(x.logit), OVCopying: Describe(x.copying), Prefix: Describe(x.prefix)})
		}
	}
	return s
}

// writeMeasures prints a configuration's MeasureSummary: a line saying
// how many runs have none, then the lens layer and ICL score, and per
// label the median, minimum and maximum of every measurement ("-" where
// none was taken).
func writeMeasures(w io.Writer, s MeasureSummary) {
	if s.Without > 0 {
		fmt.Fprintf(w, "measures    none stored for %d run%s (stored before schema version 5, or swept with --measure none)\n", s.Without, plural(s.Without))
	}
	if s.Runs == 0 {
		return
	}
	fmt.Fprintf(w, "measures    %d run%s; median (min to max) over seeds: lens layer %s, ICL score %s\n", s.Runs, plural(s.Runs),
		spread(s.Lens, "%.0f"), spread(s.ICL, "%.2f"))
	fmt.Fprintf(w, "  %-28s %8s %8s %8s %8s %8s %8s\n", "heads by label", "zero off", "mean off", "resample", "logit", "copying", "prefix")
	for _, l := range s.ByLabel {
		name := fmt.Sprintf("%s (%d)", l.Label, l.Heads)
		for i, what := range []string{"median", "min", "max"} {
			pick := func(st Stats, format string) string {
				if st.N == 0 {
					return "-"
				}
				return fmt.Sprintf(format, []float64{st.Median, st.Min, st.Max}[i])
			}
			pc := func(st Stats) string {
				if st.N == 0 {
					return "-"
				}
				return pct([]float64{st.Median, st.Min, st.Max}[i])
			}
			fmt.Fprintf(w, "  %-21s %-6s %8s %8s %8s %8s %8s %8s\n", name, what, pc(l.Zero), pc(l.Mean), pc(l.Resample),
				pick(l.DirectLogit, "%.2f"), pick(l.OVCopying, "%.3f"), pick(l.Prefix, "%.3f"))
			name = ""
		}
	}
}

// spread writes a statistic as "median (min-max)", "-" when empty.
func spread(st Stats, format string) string {
	if st.N == 0 {
		return "-"
	}
	f := func(x float64) string { return fmt.Sprintf(format, x) }
	return fmt.Sprintf("%s (%s to %s)", f(st.Median), f(st.Min), f(st.Max))
}
