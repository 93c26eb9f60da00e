package inspect

import (
	"fmt"
	"io"
	"strings"

	"headlab/analysis"
)

// WriteAblationTable prints the head table as Markdown: one row for the
// model as evaluated, then one per head with that head switched off,
// with its label, its sink score (mean mass on key 0) and where it rests
// when its pattern has nothing to find (mass on key 0 there; - when it
// always has something).
func WriteAblationTable(w io.Writer, r *Report) {
	intact := "none"
	if len(r.Ablated) > 0 {
		intact = "none beyond " + strings.Join(r.Ablated, ",")
	}
	how := ""
	if r.Ablation != "" && r.Ablation != AblateZero {
		how = fmt.Sprintf(" (%s ablation)", r.Ablation)
	}
	fmt.Fprintf(w, "| Head switched off%s | Label | Sink | Rest on 0 | Held-out accuracy |\n", how)
	fmt.Fprintln(w, "|---|---|---|---|---|")
	fmt.Fprintf(w, "| %s | | | | %.1f%% |\n", intact, 100*r.Accuracy)
	for _, h := range r.Heads {
		fmt.Fprintf(w, "| %s | %s | %.2f | %s | %.1f%% |\n", h.Name, h.Title(), h.Sink, RestText(h.RestMass), 100*h.AblatedAccuracy)
	}
}

// RestText is a rest mass to two decimals, or - when there is none.
func RestText(rest *float64) string {
	if rest == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *rest)
}

// WriteCircuitTable prints every head's circuit scores as Markdown, and
// the model's in-context learning score when measured.
func WriteCircuitTable(w io.Writer, r *Report) {
	fmt.Fprintln(w, "| Head | Label | OV copying score | OV top-1 copy accuracy | Prefix matching |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, h := range r.Heads {
		if c := h.Circuit; c != nil {
			fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.3f |\n", h.Name, h.Title(), c.OVCopying, c.OVCopyAccuracy, c.PrefixMatching)
		}
	}
	if r.ICL != nil {
		fmt.Fprintf(w, "\nIn-context learning score (next-token loss late in the sequence minus early, nats): %.3f\n", *r.ICL)
	}
}

// WriteScoreTable prints every head's eight pattern scores as Markdown.
func WriteScoreTable(w io.Writer, heads []analysis.HeadScore) {
	fmt.Fprint(w, "| Head | Label |")
	for _, p := range analysis.Patterns {
		fmt.Fprintf(w, " %s |", p)
	}
	fmt.Fprint(w, "\n|---|---|")
	fmt.Fprintln(w, strings.Repeat("---|", len(analysis.Patterns)))
	for _, h := range heads {
		fmt.Fprintf(w, "| %s | %s |", h.Name, h.Title())
		for _, p := range analysis.Patterns {
			extra := ""
			switch {
			case p == "offset" && h.OffsetD > 0:
				extra = fmt.Sprintf(" (d=%d)", h.OffsetD)
			case p == "position" && h.PositionJ > 0:
				extra = fmt.Sprintf(" (j=%d)", h.PositionJ)
			}
			fmt.Fprintf(w, " %.3f%s |", h.Scores[p], extra)
		}
		fmt.Fprintln(w)
	}
}

// WriteCompositionTable prints every cross-layer pair's Q-, K- and
// V-composition beside the random baseline, as Markdown.
func WriteCompositionTable(w io.Writer, r CompositionReport) {
	fmt.Fprintln(w, "| Earlier head | Later head | Q-composition | K-composition | V-composition |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, c := range r.Pairs {
		fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.3f |\n", c.From, c.To, c.Q, c.K, c.V)
	}
	b := r.Baseline
	fmt.Fprintf(w, "| random | random | %.3f | %.3f | %.3f |\n", b.Q, b.K, b.V)
	// Which earlier head each later head reads most (furthest above the
	// random baseline), and through what.
	type reading struct {
		from, kind  string
		score, base float64
	}
	var order []string
	best := map[string]reading{}
	for _, c := range r.Pairs {
		for _, k := range []reading{{c.From, "Q", c.Q, b.Q}, {c.From, "K", c.K, b.K}, {c.From, "V", c.V, b.V}} {
			cur, seen := best[c.To]
			if !seen {
				order = append(order, c.To)
			}
			if !seen || k.score-k.base > cur.score-cur.base {
				best[c.To] = k
			}
		}
	}
	fmt.Fprintln(w)
	for _, to := range order {
		x := best[to]
		fmt.Fprintf(w, "%s reads most from %s: %s-composition %.3f (random %.3f)\n", to, x.from, x.kind, x.score, x.base)
	}
}

// WriteRelationTable prints every head's score on every declared relation
// beside the relation's baseline, and the head's relation name, as
// Markdown; nothing when no relation is declared.
func WriteRelationTable(w io.Writer, heads []analysis.HeadScore) {
	if len(heads) == 0 || len(heads[0].Relations) == 0 {
		return
	}
	fmt.Fprintln(w, "| Head | Relation | Mass on target | Argmax on target | Baseline (best fixed offset, position or sink) | Named |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, h := range heads {
		for _, r := range h.Relations {
			named := ""
			if r.Beats() {
				named = "beats by " + fmt.Sprintf("%.2f", r.Argmax-r.Baseline)
			}
			fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.3f (%s) | %s |\n", h.Name, r.Relation, r.Mass, r.Argmax, r.Baseline, r.BaselineBy, named)
		}
	}
	fmt.Fprintf(w, "\nA head is named after a relation when its argmax fraction beats the baseline by at least %.1f (docs/head-patterns.md).\n", analysis.RelationMargin)
	for _, h := range heads {
		if h.Syntax != "" {
			fmt.Fprintf(w, "%s: %s\n", h.Name, h.Syntax)
		}
	}
}

// WriteByKind prints accuracy on each kind of example, intact and with
// the relation's head switched off, as Markdown.
func WriteByKind(w io.Writer, b *ByKind) {
	name := b.Syntax
	if name == "" {
		name = "beats no baseline by the margin"
	}
	fmt.Fprintf(w, "Accuracy by kind of example; the head that follows %s best is %s (%s).\n\n", b.Relation, b.Head, name)
	fmt.Fprintf(w, "| Examples | Count | Intact | %s off |\n", b.Head)
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, k := range b.Kinds {
		fmt.Fprintf(w, "| %s | %d | %.1f%% | %.1f%% |\n", k.Kind, k.Examples, 100*k.Accuracy, 100*k.HeadOff)
	}
}
