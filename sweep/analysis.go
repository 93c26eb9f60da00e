package sweep

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"headlab/inspect"
)

// Measure names a measurement a sweep takes on every trained model beyond
// its record's core (labels, pattern scores, every head switched off
// alone and each label's heads together by zero ablation); sweep's
// --measure chooses them (docs/sweeps.md, docs/causal.md).
type Measure string

const (
	// MeasureMean is every head's held-out accuracy with it alone
	// switched off by mean ablation.
	MeasureMean Measure = "mean"
	// MeasureResample is the same by resample ablation.
	MeasureResample Measure = "resample"
	// MeasureAttribution is every head's direct logit attribution to the
	// answer and the run's logit-lens layer (one pass of the probed
	// graph).
	MeasureAttribution Measure = "attribution"
	// MeasureCircuit is every head's OV copying score, top-1 copy
	// accuracy and prefix-matching score, and the run's in-context
	// learning score.
	MeasureCircuit Measure = "circuit"
	// MeasureSignature is the run's circuit as edges by path patching
	// and its signature (EdgeCircuit, docs/circuits.md "Atlas"), what
	// headlab atlas groups.
	MeasureSignature Measure = "signature"
)

// Measures lists every measurement, in the order --measure names them.
var Measures = []Measure{MeasureMean, MeasureResample, MeasureAttribution, MeasureCircuit, MeasureSignature}

// MeasureSet is a set of measurements, in Measures' order.
type MeasureSet []Measure

// AllMeasures is every measurement: a sweep's default.
func AllMeasures() MeasureSet { return slices.Clone(Measures) }

// Has reports whether m is in the set.
func (s MeasureSet) Has(m Measure) bool { return slices.Contains(s, m) }

// String is the set as --measure writes it: all, none or a list.
func (s MeasureSet) String() string {
	switch len(s) {
	case 0:
		return "none"
	case len(Measures):
		return "all"
	}
	names := make([]string, len(s))
	for i, m := range s {
		names[i] = string(m)
	}
	return strings.Join(names, ",")
}

// ParseMeasures reads --measure: all, none, or a comma-separated list of
// measurements, each once.
func ParseMeasures(text string) (MeasureSet, error) {
	switch text {
	case "all":
		return AllMeasures(), nil
	case "none":
		return MeasureSet{}, nil
	}
	known := func() string {
		names := make([]string, len(Measures))
		for i, m := range Measures {
			names[i] = string(m)
		}
		return strings.Join(names, ", ")
	}
	seen := map[Measure]bool{}
	for _, f := range strings.Split(text, ",") {
		m := Measure(strings.TrimSpace(f))
		switch {
		case m == "":
			return nil, fmt.Errorf("--measure %q: an empty name (want all, none, or a list of %s)", text, known())
		case !slices.Contains(Measures, m):
			return nil, fmt.Errorf("--measure %q: unknown measurement %q (want all, none, or a list of %s)", text, m, known())
		case seen[m]:
			return nil, fmt.Errorf("--measure %q: %s named twice", text, m)
		}
		seen[m] = true
	}
	var out MeasureSet
	for _, m := range Measures {
		if seen[m] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Analysis is what a sweep measures on each trained model after
// training. The zero value is the record's core alone, by zero ablation
// (what `train --seeds` reports).
type Analysis struct {
	// Ablation is how the record's ablation table (each head alone, each
	// label's heads together) and so the circuit verdict switch heads
	// off ("": zero).
	Ablation inspect.Ablation
	// Measure are the measurements taken beside it.
	Measure MeasureSet
	// Signed, when not nil, takes MeasureSignature on the configurations
	// of these keys only (reproduce signs its atlas's runs alone).
	Signed map[string]bool
}

// Signs reports whether a takes the signature of the runs of the
// configuration key.
func (a Analysis) Signs(key string) bool {
	return a.Measure.Has(MeasureSignature) && (a.Signed == nil || a.Signed[key])
}

// method is a's ablation method, zero when unset.
func (a Analysis) method() inspect.Ablation { return cmp.Or(a.Ablation, inspect.AblateZero) }

// methods are the methods every head is switched off by alone beside
// zero: those measured, and the ablation table's own.
func (a Analysis) methods() []inspect.Ablation {
	var out []inspect.Ablation
	for _, m := range []struct {
		method  inspect.Ablation
		measure Measure
	}{{inspect.AblateMean, MeasureMean}, {inspect.AblateResample, MeasureResample}} {
		if a.Measure.Has(m.measure) || a.method() == m.method {
			out = append(out, m.method)
		}
	}
	return out
}

// Probed reports whether the analysis runs the probed evaluation graph
// (mean or resample ablation, direct logit attribution), which a group's
// memory must hold beside the plain one (train.Footprint).
func (a Analysis) Probed() bool {
	return len(a.methods()) > 0 || a.Measure.Has(MeasureAttribution)
}

// AnalysisOf is the analysis that made r, read from what r holds: run it
// again with this and its record comes out the same.
func AnalysisOf(r *Record) Analysis {
	a := Analysis{Ablation: r.method(), Measure: MeasureSet{}}
	has := func(m inspect.Ablation) bool {
		return slices.ContainsFunc(r.Heads, func(h inspect.Head) bool { _, ok := h.AblatedBy[m]; return ok })
	}
	if has(inspect.AblateMean) {
		a.Measure = append(a.Measure, MeasureMean)
	}
	if has(inspect.AblateResample) {
		a.Measure = append(a.Measure, MeasureResample)
	}
	if r.LensLayer != nil {
		a.Measure = append(a.Measure, MeasureAttribution)
	}
	if slices.ContainsFunc(r.Heads, func(h inspect.Head) bool { return h.Circuit != nil }) {
		a.Measure = append(a.Measure, MeasureCircuit)
	}
	if r.EdgeCircuit != nil {
		a.Measure = append(a.Measure, MeasureSignature)
	}
	return a
}

// method is how r's ablation table switched heads off: zero for a run
// stored before the method was a choice.
func (r *Record) method() inspect.Ablation { return cmp.Or(r.AblationMethod, inspect.AblateZero) }

// OffAlone is held-out accuracy with head h of r switched off alone by
// the method of r's ablation table.
func (r *Record) OffAlone(h *inspect.Head) float64 {
	if m := r.method(); m != inspect.AblateZero {
		if v, ok := h.AblatedBy[m]; ok {
			return v
		}
	}
	return h.AblatedAccuracy
}

// Measured reports whether r holds any measurement beyond its core.
func (r *Record) Measured() bool { return len(AnalysisOf(r).Measure) > 0 }
