package analysis

// Rise is the stretch of a curve over which it climbs.
type Rise struct {
	// Start and End index the samples the rise runs between.
	Start, End int
	// Amount is values[End] - values[Start].
	Amount float64
}

// MainRise finds where a curve makes most of its climb: from the last
// sample at or below 20% of the way from its first value to its highest,
// before the curve first reaches 80% of the way, to that sample. A curve
// that never rises above its first value has no rise (Start = End = 0).
func MainRise(values []float64) Rise {
	if len(values) < 2 {
		return Rise{}
	}
	top := values[0]
	for _, v := range values {
		top = max(top, v)
	}
	span := top - values[0]
	if !(span > 0) {
		return Rise{}
	}
	low, high := values[0]+0.2*span, values[0]+0.8*span
	end := 0
	for end < len(values)-1 && values[end] < high {
		end++
	}
	start := end
	for start > 0 && values[start] > low {
		start--
	}
	return Rise{Start: start, End: end, Amount: values[end] - values[start]}
}

// Phase is the phase change of an induction run: the steps over which the
// best induction score and the accuracy make most of their rise, and
// whether the two ranges overlap.
type Phase struct {
	InductionFrom int     `json:"induction_from_step"`
	InductionTo   int     `json:"induction_to_step"`
	InductionRise float64 `json:"induction_rise"`
	AccuracyFrom  int     `json:"accuracy_from_step"`
	AccuracyTo    int     `json:"accuracy_to_step"`
	AccuracyRise  float64 `json:"accuracy_rise"`
	Together      bool    `json:"together"`
}

// PhaseChange locates the phase change in a recorded history: steps[k] is
// the step of sample k, induction[k] the best induction score of any head
// then, accuracy[k] the held-out accuracy. Each curve's phase is its
// MainRise; the two rise together when those step ranges overlap.
func PhaseChange(steps []int, induction, accuracy []float64) Phase {
	if len(steps) < 2 {
		return Phase{}
	}
	ind, acc := MainRise(induction), MainRise(accuracy)
	return Phase{
		InductionFrom: steps[ind.Start], InductionTo: steps[ind.End], InductionRise: ind.Amount,
		AccuracyFrom: steps[acc.Start], AccuracyTo: steps[acc.End], AccuracyRise: acc.Amount,
		Together: ind.Start <= acc.End && acc.Start <= ind.End,
	}
}

// Span is the phase change as one stretch of steps: from the earlier of
// the two rises' starts to the later of their ends (the band the curves
// figure shades). A curve that does not rise (a model with no induction
// head to grow: a grokking run) leaves the other's stretch alone, rather
// than stretching the band back to the first sample.
func (p Phase) Span() (from, to int) {
	switch {
	case !(p.InductionRise > 0) && p.AccuracyRise > 0:
		return p.AccuracyFrom, p.AccuracyTo
	case !(p.AccuracyRise > 0) && p.InductionRise > 0:
		return p.InductionFrom, p.InductionTo
	}
	return min(p.InductionFrom, p.AccuracyFrom), max(p.InductionTo, p.AccuracyTo)
}
