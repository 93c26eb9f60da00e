package viz

import (
	"bytes"
	"testing"
)

// TestGraphFiguresSameBits: a circuit graph and an atlas drawn again are
// the same bytes (their nodes were once drawn in a map's order, which Go
// varies from run to run).
func TestGraphFiguresSameBits(t *testing.T) {
	edges := []CircuitEdge{
		{From: "embed", To: "L0H0.q", Effect: 0.2, In: true}, {From: "pos", To: "L0H1.k", Effect: 0.1},
		{From: "L0H0", To: "L1H0.k", Effect: 0.6, In: true}, {From: "L0H1", To: "L1H1.v", Effect: -0.3, In: true},
		{From: "mlp0", To: "L1H0.q", Effect: 0.05}, {From: "L1H0", To: "logits", Effect: 0.7, In: true},
		{From: "L1H1", To: "mlp1", Effect: 0.4, In: true}, {From: "mlp1", To: "logits", Effect: 0.2}}
	graph := CircuitGraph{Title: "circuit", Note: "test", Layers: 2, Edges: edges, Curve: []float64{0, 0.5, 0.9}, Threshold: 0.9, Kept: 2}
	atlas := Atlas{Title: "atlas", Note: "test", Rows: []AtlasRow{{Title: "induction", Layers: 2,
		Panels: []AtlasPanel{{Title: "1: all seeds", Edges: edges}}}}}
	for name, draw := range map[string]func() (*Figure, error){"circuit": graph.Figure, "atlas": atlas.Figure} {
		var first []byte
		for range 8 {
			f, err := draw()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var b bytes.Buffer
			if err := f.Encode(&b, ".svg"); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if first == nil {
				first = b.Bytes()
			} else if !bytes.Equal(b.Bytes(), first) {
				t.Fatalf("%s: two drawings differ", name)
			}
		}
	}
}
