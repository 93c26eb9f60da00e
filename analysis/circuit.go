package analysis

// CircuitDrop is how much held-out accuracy (a fraction: 0.20 is 20
// points) switching off all heads of one half of the circuit must cost for
// that half to count as load-bearing.
const CircuitDrop = 0.20

// FormsCircuit is the rule of docs/sweeps.md ("The induction circuit"): a
// model forms the induction circuit when it has a head labelled
// previous-token in an earlier layer than a head labelled induction, and
// both halves are load-bearing: switching off all its induction heads
// together costs at least CircuitDrop of held-out accuracy, and so does
// switching off all its previous-token heads together.
//
// heads are the model's labelled heads (only Layer and Label are read);
// intact is held-out accuracy with every head on; inductionOff and
// previousTokenOff are held-out accuracy with every induction head, or
// every previous-token head, switched off together, nil when it was not
// measured (no head carries the label).
func FormsCircuit(heads []HeadScore, intact float64, inductionOff, previousTokenOff *float64) bool {
	firstPrev, lastInd := -1, -1
	for _, h := range heads {
		switch h.Label {
		case LabelPreviousToken:
			if firstPrev < 0 || h.Layer < firstPrev {
				firstPrev = h.Layer
			}
		case LabelInduction:
			lastInd = max(lastInd, h.Layer)
		}
	}
	if firstPrev < 0 || lastInd <= firstPrev {
		return false
	}
	return loadBearing(intact, inductionOff) && loadBearing(intact, previousTokenOff)
}

// loadBearing reports whether switching heads off (accuracy off, nil when
// not measured) cost at least CircuitDrop of the intact accuracy. The
// comparison is inclusive, whatever the rounding: 1.0-0.8 is
// 0.19999999999999996.
func loadBearing(intact float64, off *float64) bool {
	return off != nil && DropsEnough(intact-*off)
}

// DropsEnough reports whether a fall in held-out accuracy (intact minus
// with heads off) reaches CircuitDrop: the one comparison of the circuit
// rule and of everything that speaks of a load-bearing head, inclusive
// whatever the rounding.
func DropsEnough(drop float64) bool { return drop >= CircuitDrop-Slack }

// Slack absorbs float rounding at a rule's threshold, so that the rules
// are inclusive as stated: accuracies are fractions of 1,000 examples,
// and 1.0-0.8 is 0.19999999999999996. findings' verdicts use it too.
const Slack = 1e-9
