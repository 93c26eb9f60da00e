package viz

import (
	"fmt"
	"strings"

	"headlab/analysis"
	"headlab/tasks"
)

// Head is one attention head's pattern.
type Head struct {
	// Title is drawn above the head's panel, e.g. "L1H0 · induction 0.81";
	// long titles are cut with an ellipsis.
	Title string
	// Probs holds T*T attention weights, row-major: Probs[i*T+j] is how
	// much query position i attends to key position j. Weights are
	// expected in [0,1]; the colour map clamps, NaN/Inf cells are magenta.
	Probs []float32
}

// Grid is the set of heads to draw, Layers rows by Heads columns.
type Grid struct {
	// Title names the run the attention comes from (task, shape, seed,
	// steps); it heads the figure.
	Title            string
	Layers, Heads, T int
	// Causal marks cells with key j > query i as masked: drawn pure black
	// in heatmaps and never drawn as arcs, whatever Probs holds there.
	Causal bool
	// Tokens labels the T positions on both axes (len(Tokens) must be T).
	Tokens []string
	// Panels holds Layers*Heads heads, layer-major: Panels[l*Heads+h].
	Panels []Head
}

// HeadGrid is example n of att as a grid titled title, each panel titled
// with its head's verdict, "L1H0 · induction 0.81", tokens named as task
// names them (tasks.TokenName; nil: tasks.TokenLabel).
func HeadGrid(title string, att *analysis.Attention, heads []analysis.HeadScore, n int, task tasks.Task) Grid {
	g := Grid{Title: title, Layers: att.L, Heads: att.H, T: att.T, Causal: att.Causal}
	for _, id := range att.Tokens[n*att.T : (n+1)*att.T] {
		g.Tokens = append(g.Tokens, tasks.TokenName(task, id))
	}
	size := att.T * att.T
	for _, h := range heads {
		off := ((n*att.L+h.Layer)*att.H + h.Head) * size
		g.Panels = append(g.Panels, Head{
			Title: HeadTitle(h.Name, h.Title()),
			Probs: att.Probs[off : off+size],
		})
	}
	return g
}

// validate reports the first problem with g's shape as a one-line error.
func (g Grid) validate() error {
	if g.Layers <= 0 || g.Heads <= 0 || g.T <= 0 {
		return fmt.Errorf("viz: Layers, Heads and T must be positive, got %d, %d, %d", g.Layers, g.Heads, g.T)
	}
	if len(g.Tokens) != g.T {
		return fmt.Errorf("viz: got %d tokens for T=%d", len(g.Tokens), g.T)
	}
	if want := g.Layers * g.Heads; len(g.Panels) != want {
		return fmt.Errorf("viz: got %d panels for %d layers x %d heads", len(g.Panels), g.Layers, g.Heads)
	}
	for k, p := range g.Panels {
		if len(p.Probs) != g.T*g.T {
			return fmt.Errorf("viz: panel %d (layer %d, head %d) has %d probs, want T*T=%d",
				k, k/g.Heads, k%g.Heads, len(p.Probs), g.T*g.T)
		}
	}
	return nil
}

// TokenLabel is how the figures and the viewer window label token id of
// headlab's tasks: as tasks.TokenLabel spells it, through tokenText.
func TokenLabel(id int) string { return tokenText(tasks.TokenLabel(id)) }

// tokenText is how a token is labelled: control characters as escapes,
// and a token of spaces as underscores so that it shows.
func tokenText(s string) string {
	s = strings.NewReplacer("\n", `\n`, "\t", `\t`, "\r", `\r`, "\u2581", "_", "\u0120", "_").Replace(s)
	if s != "" && strings.TrimSpace(s) == "" {
		return strings.Repeat("_", len([]rune(s)))
	}
	return s
}
