package inspect

import (
	"fmt"
	"io"
	"math"
	"strings"

	"headlab/analysis"
)

// WriteReport is heads' text: the ablation table, the scores, the
// relations, accuracy by kind and the circuit scores, each when r has them.
func WriteReport(w io.Writer, r *Report) {
	WriteAblationTable(w, r)
	fmt.Fprintln(w)
	WriteScoreTable(w, r.Scores())
	if len(r.Heads) > 0 && len(r.Heads[0].Relations) > 0 {
		fmt.Fprintln(w)
		WriteRelationTable(w, r.Scores())
	}
	if r.ByKind != nil {
		fmt.Fprintln(w)
		WriteByKind(w, r.ByKind)
	}
	if len(r.Heads) > 0 && r.Heads[0].Circuit != nil {
		fmt.Fprintln(w)
		WriteCircuitTable(w, r)
	}
	if r.Composition != nil {
		fmt.Fprintln(w)
		WriteCompositionTable(w, *r.Composition)
	}
}

// WriteScores is score's text: heads' scores, and their relation scores
// when the attention had relations.
func WriteScores(w io.Writer, heads []analysis.HeadScore, relations bool) {
	WriteScoreTable(w, heads)
	if relations {
		fmt.Fprintln(w)
		WriteRelationTable(w, heads)
	}
}

// TwoDecimals is v to two decimals, without a sign on a value that rounds
// to zero.
func TwoDecimals(v float64) string {
	if math.Abs(v) < 0.005 {
		return "0.00"
	}
	return fmt.Sprintf("%.2f", v)
}

// WritePatch is patch's text: r's table of restored shares by position
// and the heads it locates.
func WritePatch(w io.Writer, r *PatchReport) {
	fmt.Fprintf(w, "Corruption %s on %d held-out examples. Clean: logit difference %.3f, accuracy %.1f%%; corrupted: %.3f, %.1f%%.\n\n",
		r.Corruption, r.Examples, r.Clean.LogitDiff, 100*r.Clean.Accuracy, r.Corrupted.LogitDiff, 100*r.Corrupted.Accuracy)
	fmt.Fprintln(w, "Share of the logit difference restored, (M - M_corrupted) / (M_clean - M_corrupted), by position patched:")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| Patched |")
	for _, p := range r.Positions {
		fmt.Fprintf(w, " %d |", p)
	}
	fmt.Fprintln(w, " sum |")
	fmt.Fprintln(w, "|---|"+strings.Repeat("---|", len(r.Positions)+1))
	for _, p := range append(append([]Patched(nil), r.Heads...), r.Resid...) {
		fmt.Fprintf(w, "| %s |", p.Name)
		for _, v := range p.LogitDiff {
			fmt.Fprintf(w, " %s |", TwoDecimals(v))
		}
		fmt.Fprintf(w, " %s |\n", TwoDecimals(p.Total))
	}
	located := "none"
	if len(r.Located) > 0 {
		located = strings.Join(r.Located, ", ")
	}
	fmt.Fprintf(w, "\nHeads located by patching (sum at least %.1f): %s.\n", PatchLocated, located)
}

// OrderTitle names an order in a legend.
func OrderTitle(order string, randomOrders int) string {
	switch order {
	case OrderOneShot:
		return "one-shot importance (Michel et al.)"
	case OrderIterative:
		return "importance, recomputed after each removal"
	case OrderGreedy:
		return "greedy ablation"
	}
	return fmt.Sprintf("random order (mean of %d)", randomOrders)
}

// WritePrune is prune's text: accuracy by heads removed in each order,
// what each order can remove, and why one-shot loses when it does.
func WritePrune(w io.Writer, r *PruneReport) {
	fmt.Fprint(w, "| Heads removed | Fraction |")
	sep := "|---|---|"
	for _, c := range r.Orders {
		if c.Order == OrderRandom {
			fmt.Fprint(w, " random |")
			sep += "---|"
			continue
		}
		fmt.Fprintf(w, " %s: removed | %s: accuracy |", c.Order, c.Order)
		sep += "---|---|"
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, sep)
	for k := 0; k <= r.Heads; k++ {
		fmt.Fprintf(w, "| %d | %.2f |", k, float64(k)/float64(r.Heads))
		for _, c := range r.Orders {
			s := c.Steps[k]
			if c.Order != OrderRandom {
				fmt.Fprintf(w, " %s |", s.Head)
			}
			fmt.Fprintf(w, " %.1f%% |", 100*s.Accuracy)
		}
		fmt.Fprintln(w)
	}
	if r.Ablation != AblateZero {
		fmt.Fprintf(w, "\nHeads switched off by %s ablation.", r.Ablation)
	}
	fmt.Fprintf(w, "\nIntact: %.1f%%. Largest fraction of heads removable at a cost of at most 1 point:\n", 100*r.Intact)
	for _, c := range r.Orders {
		fmt.Fprintf(w, "- %s: %d of %d heads (%.0f%%)\n", c.Order, c.Removable, r.Heads, 100*c.RemovableFraction)
	}
	fmt.Fprintf(w, "Most removed by: %s.\n", strings.Join(r.Best, ", "))
	if r.Why != "" {
		fmt.Fprintf(w, "\nWhy one-shot does worse than random: %s\n", r.Why)
	}
}

// WriteAttribution is attribute's text: each part's logit by position,
// then the logit lens.
func WriteAttribution(w io.Writer, r *AttributionReport) {
	fmt.Fprintf(w, "Direct logit attribution on %d held-out examples (%d answers): mean answer logit %.3f, logit difference %.3f; "+
		"every answer's parts sum to its logit within %.1e.\n\n", r.Examples, r.Answers, r.Logit, r.LogitDiff, r.MaxResidual)
	fmt.Fprint(w, "| Part | Logit | Logit difference |")
	for _, t := range r.Positions {
		fmt.Fprintf(w, " at %d |", t)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "|---|---|---|"+strings.Repeat("---|", len(r.Positions)))
	for _, p := range r.Parts {
		fmt.Fprintf(w, "| %s | %.3f | %.3f |", p.Name, p.Logit, p.LogitDiff)
		for _, v := range p.ByPosition {
			fmt.Fprintf(w, " %.2f |", v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nLogit lens: the residual stream entering each block, and the output, through the final LayerNorm and the unembedding.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Read at | Accuracy | Answer probability |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, l := range r.Lens {
		fmt.Fprintf(w, "| %s | %.1f%% | %.3f |\n", l.Name, 100*l.Accuracy, l.Probability)
	}
}

// WritePhase writes the line that says when the phase change came.
func WritePhase(w io.Writer, p analysis.Phase) {
	together := "together"
	if !p.Together {
		together = "apart"
	}
	fmt.Fprintf(w, "phase change: induction score rises (20%% to 80%% of the way) over steps %d-%d (+%.2f), accuracy over steps %d-%d (+%.2f): %s\n",
		p.InductionFrom, p.InductionTo, p.InductionRise, p.AccuracyFrom, p.AccuracyTo, p.AccuracyRise, together)
}
