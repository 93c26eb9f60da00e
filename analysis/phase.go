package analysis

// Rise is the stretch of a curve over which it climbs the most.
type Rise struct {
	// Start and End index the samples the window runs between.
	Start, End int
	// Amount is values[End] - values[Start].
	Amount float64
}

// FastestRise finds the window of width consecutive intervals over which
// values climb the most (ties to the earliest). With fewer than width+1
// samples the whole curve is the window.
func FastestRise(values []float64, width int) Rise {
	if len(values) == 0 {
		return Rise{}
	}
	width = max(1, min(width, len(values)-1))
	best := Rise{End: min(width, len(values)-1)}
	best.Amount = values[best.End] - values[0]
	for s := 1; s+width < len(values); s++ {
		if a := values[s+width] - values[s]; a > best.Amount {
			best = Rise{Start: s, End: s + width, Amount: a}
		}
	}
	return best
}

// Phase is the phase change of an induction run: the steps over which the
// best induction score and the accuracy rise fastest, and whether the two
// windows overlap.
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
// then, accuracy[k] the held-out accuracy. The window is a tenth of the
// history (at least one interval).
func PhaseChange(steps []int, induction, accuracy []float64) Phase {
	if len(steps) < 2 {
		return Phase{}
	}
	w := max(1, (len(steps)-1)/10)
	ind, acc := FastestRise(induction, w), FastestRise(accuracy, w)
	return Phase{
		InductionFrom: steps[ind.Start], InductionTo: steps[ind.End], InductionRise: ind.Amount,
		AccuracyFrom: steps[acc.Start], AccuracyTo: steps[acc.End], AccuracyRise: acc.Amount,
		Together: ind.Start <= acc.End && acc.Start <= ind.End,
	}
}
