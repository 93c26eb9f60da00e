package sweep

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"headlab/inspect"
)

// The tolerances of two sweeps of the same pairs on different backends
// (docs/model.md, "GL against the CPU"): training is chaotic, so whole runs
// compare as distributions over seeds, not seed by seed bit for bit.
const (
	// AgreeAccuracy is how far a seed's held-out accuracy may move (1
	// point), for at least AgreeShare of the seeds.
	AgreeAccuracy = 0.01
	AgreeShare    = 0.9
	// AgreeLead is the lead of a head's winning pattern score over its
	// second above which its label must be the same on both sides.
	AgreeLead = 0.05
)

// Agreement compares one configuration's seeds on two sides (a and b).
type Agreement struct {
	Key   string `json:"config_key"`
	Seeds int    `json:"seeds"` // finished on both sides
	// AccuracyWithin counts the seeds whose accuracies differ by at most
	// AgreeAccuracy; LabelsAgree those whose every layer has the same
	// multiset of confident labels (heads within a layer are
	// interchangeable, so they are not matched one by one).
	AccuracyWithin int `json:"accuracy_within"`
	LabelsAgree    int `json:"labels_agree"`
	// Circuit fractions on each side; CircuitOverlap is true when each
	// fraction lies inside the other's Wilson interval.
	CircuitA       Proportion `json:"circuit_a"`
	CircuitB       Proportion `json:"circuit_b"`
	CircuitOverlap bool       `json:"circuit_overlap"`
	// Differences says, one line per seed, what differed.
	Differences []string `json:"differences"`
	// Agree is the verdict: accuracy within for AgreeShare of the seeds,
	// labels for every seed, and the circuit fractions overlapping.
	Agree bool `json:"agree"`
}

// Lead is how far a head's winning pattern score is ahead of its second.
func Lead(h inspect.Head) float64 {
	var s []float64
	for _, v := range h.Scores {
		s = append(s, v)
	}
	slices.Sort(s)
	if len(s) < 2 {
		return math.Inf(1)
	}
	return s[len(s)-1] - s[len(s)-2]
}

// ConfidentLabels lists, per layer, the sorted labels of the heads whose
// lead is above AgreeLead.
func ConfidentLabels(heads []inspect.Head) map[int][]string {
	out := map[int][]string{}
	for _, h := range heads {
		if Lead(h) > AgreeLead {
			out[h.Layer] = append(out[h.Layer], h.Label)
		}
	}
	for _, l := range out {
		slices.Sort(l)
	}
	return out
}

// Agree compares the runs of a and b pair by pair, per configuration, in
// a's order; pairs that did not finish on both sides are left out.
func Agree(a, b []Record) []Agreement {
	other := map[RunID]*Record{}
	for i := range b {
		if b[i].Status == StatusOK {
			other[b[i].ID()] = &b[i]
		}
	}
	var out []Agreement
	at := map[string]int{}
	circuits := map[string][2]int{}
	for i := range a {
		ra := &a[i]
		rb, ok := other[ra.ID()]
		if ra.Status != StatusOK || !ok {
			continue
		}
		k, seen := at[ra.Key]
		if !seen {
			k = len(out)
			at[ra.Key] = k
			out = append(out, Agreement{Key: ra.Key, Differences: []string{}})
		}
		g := &out[k]
		g.Seeds++
		if math.Abs(ra.Accuracy-rb.Accuracy) <= AgreeAccuracy {
			g.AccuracyWithin++
		} else {
			g.Differences = append(g.Differences, fmt.Sprintf("seed %d: accuracy %.4f against %.4f", ra.Config.Seed, ra.Accuracy, rb.Accuracy))
		}
		la, lb := ConfidentLabels(ra.Heads), ConfidentLabels(rb.Heads)
		same := true
		for l := range max(len(la), len(lb)) {
			if !slices.Equal(la[l], lb[l]) {
				same = false
				g.Differences = append(g.Differences, fmt.Sprintf("seed %d layer %d: confident labels [%s] against [%s]",
					ra.Config.Seed, l, strings.Join(la[l], " "), strings.Join(lb[l], " ")))
			}
		}
		if same {
			g.LabelsAgree++
		}
		c := circuits[ra.Key]
		if ra.Circuit {
			c[0]++
		}
		if rb.Circuit {
			c[1]++
		}
		circuits[ra.Key] = c
	}
	for i := range out {
		g := &out[i]
		c := circuits[g.Key]
		g.CircuitA, g.CircuitB = NewProportion(c[0], g.Seeds), NewProportion(c[1], g.Seeds)
		within := func(p, q Proportion) bool { return p.Fraction >= q.Low && p.Fraction <= q.High }
		g.CircuitOverlap = within(g.CircuitA, g.CircuitB) && within(g.CircuitB, g.CircuitA)
		g.Agree = float64(g.AccuracyWithin) >= AgreeShare*float64(g.Seeds) && g.LabelsAgree == g.Seeds && g.CircuitOverlap
	}
	return out
}

// WriteAgreement prints agreements as text, naming the two sides.
func WriteAgreement(w io.Writer, nameA, nameB string, gs []Agreement) {
	for _, g := range gs {
		verdict := "agree"
		if !g.Agree {
			verdict = "DIFFER"
		}
		fmt.Fprintf(w, "%s\n  %s against %s over %d seeds: %s\n", g.Key, nameA, nameB, g.Seeds, verdict)
		fmt.Fprintf(w, "  accuracy within %.0f point: %d of %d seeds (want %.0f%%)\n", 100*AgreeAccuracy, g.AccuracyWithin, g.Seeds, 100*AgreeShare)
		fmt.Fprintf(w, "  confident labels (lead > %.2f) the same in every layer: %d of %d seeds\n", AgreeLead, g.LabelsAgree, g.Seeds)
		fmt.Fprintf(w, "  circuit %s against %s (95%% Wilson %s-%s against %s-%s): %s\n", pct(g.CircuitA.Fraction), pct(g.CircuitB.Fraction),
			pct(g.CircuitA.Low), pct(g.CircuitA.High), pct(g.CircuitB.Low), pct(g.CircuitB.High), map[bool]string{true: "each inside the other's interval", false: "outside"}[g.CircuitOverlap])
		for _, d := range g.Differences {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
}
