package viz

import (
	"fmt"

	"headlab/analysis"
	"headlab/tasks"
)

// HeadGrid is example n of att as a heatmap grid, each panel titled with
// its head's verdict, "L1 H0 · induction 0.81", tokens labelled as tasks
// show them.
func HeadGrid(att *analysis.Attention, heads []analysis.HeadScore, n int) Grid {
	g := Grid{Layers: att.L, Heads: att.H, T: att.T, Causal: att.Causal}
	for _, id := range att.Tokens[n*att.T : (n+1)*att.T] {
		g.Tokens = append(g.Tokens, tasks.TokenLabel(id))
	}
	size := att.T * att.T
	for _, h := range heads {
		off := ((n*att.L+h.Layer)*att.H + h.Head) * size
		g.Panels = append(g.Panels, Head{
			Title: fmt.Sprintf("L%d H%d · %s", h.Layer, h.Head, h.Title()),
			Probs: att.Probs[off : off+size],
		})
	}
	return g
}
