package circuit

import (
	"fmt"

	"headlab/viz"
	"headlab/viz/htmlview"
)

// Graph is rep's drawing for a model of layers blocks: its nodes by
// layer, every edge with an effect, the circuit's drawn strong, and the
// faithfulness curve.
func (rep *Report) Graph(title string, layers int) viz.CircuitGraph {
	g := viz.CircuitGraph{Title: title, Layers: layers, Curve: rep.Curve, Threshold: rep.Threshold, Kept: len(rep.Circuit),
		Note: fmt.Sprintf("%s, %s corruption, %d examples: the circuit keeps %.0f%% of the logit difference with %d of %d edges",
			rep.Direction, rep.Corruption, rep.Examples, 100*rep.Faithfulness, len(rep.Circuit), len(rep.Edges))}
	for _, e := range rep.Edges {
		g.Edges = append(g.Edges, viz.CircuitEdge{From: e.From, To: e.To, Effect: e.Effect, In: e.InCircuit})
	}
	return g
}

// Page is rep as the HTML page shows it (htmlview).
func (rep *Report) Page() *htmlview.Circuit {
	c := &htmlview.Circuit{Corruption: rep.Corruption, Direction: rep.Direction, Examples: rep.Examples,
		Threshold: rep.Threshold, Faithfulness: rep.Faithfulness}
	for _, x := range rep.Edges {
		c.Edges = append(c.Edges, htmlview.CircuitEdge{Name: x.Edge, From: x.From, To: x.To, Effect: x.Effect, Attribution: x.Attribution, In: x.InCircuit})
	}
	return c
}
