package circuit

import (
	"fmt"
	"io"
	"strings"

	"headlab/inspect"
)

// WriteReport is circuit's text: the circuit's edges, the other edges
// with an effect, the rank correlation and the faithfulness curve.
func WriteReport(w io.Writer, r *Report) {
	fmt.Fprintf(w, "Corruption %s, %s, on %d held-out examples. Clean logit difference %.3f; corrupted %.3f.\n",
		r.Corruption, r.Direction, r.Examples, r.Clean, r.Corrupted)
	fmt.Fprintf(w, "Circuit: %d of %d edges keep %.1f%% of the logit difference (threshold %.0f%%) with every other edge patched.\n\n",
		len(r.Circuit), len(r.Edges), 100*r.Faithfulness, 100*r.Threshold)
	fmt.Fprintln(w, "| Edge | Path patching | Attribution | In circuit |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, name := range r.Circuit {
		for _, e := range r.Edges {
			if e.Edge == name {
				fmt.Fprintf(w, "| %s | %s | %s | yes |\n", e.Edge, inspect.TwoDecimals(e.Effect), inspect.TwoDecimals(e.Attribution))
			}
		}
	}
	var rest []string
	for _, e := range r.Edges {
		if !e.InCircuit && (e.Effect >= 0.005 || e.Effect <= -0.005) {
			rest = append(rest, fmt.Sprintf("| %s | %s | %s | no |", e.Edge, inspect.TwoDecimals(e.Effect), inspect.TwoDecimals(e.Attribution)))
		}
	}
	if len(rest) > 0 {
		fmt.Fprintln(w, strings.Join(rest, "\n"))
	}
	fmt.Fprintf(w, "\nEffects are shares of the logit difference, (M_clean - M) / (M_clean - M_corrupted) noising, (M - M_corrupted) / (M_clean - M_corrupted) denoising; other edges' effects round to 0.00.\n")
	fmt.Fprintf(w, "Attribution patching against path patching: rank correlation %.3f over every edge.\n", r.RankCorrelation)
	fmt.Fprint(w, "Faithfulness curve (share kept by the first k edges of the attribution ranking):")
	for k, f := range r.Curve {
		if k%10 == 0 {
			fmt.Fprintf(w, "\n  k=%d:", k)
		}
		fmt.Fprintf(w, " %.2f", f)
	}
	fmt.Fprintln(w)
}

// Planted is what headlab plant reports: the model it wrote and the
// edges patching under its corruption can find.
type Planted struct {
	Corruption string   `json:"corruption"`
	Kind       string   `json:"kind"`
	Edges      []string `json:"planted_edges"`
}

// PlantedOf is the report of a planted model of kind whose findable edges
// under corruption are edges.
func PlantedOf(kind, corruption string, edges []Edge) Planted {
	p := Planted{Corruption: corruption, Kind: kind, Edges: []string{}}
	for _, e := range edges {
		p.Edges = append(p.Edges, e.String())
	}
	return p
}

// Write is p's text, the model saved in dir.
func (p Planted) Write(w io.Writer, dir string) {
	fmt.Fprintf(w, "Planted %s model in %s. Edges patching under %s can find:\n  %s\n", p.Kind, dir, p.Corruption, strings.Join(p.Edges, "\n  "))
}
