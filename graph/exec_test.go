package graph

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// TestExecutorOps checks how the executor recognises nodes: its own ops
// by their type, Gorgonia's sums (the only Gorgonia op differentiation
// writes into the model) by value as headlab's add op, and every other
// Gorgonia op refused by name.
func TestExecutorOps(t *testing.T) {
	d := cpu.New()
	a, b := []float32{1, 2, 3, 4, 5, 6}, []float32{10, 20, 30, 40, 50, 60}
	run := func(f func(x, y *G.Node) (*G.Node, error)) ([]float32, error) {
		g := G.NewGraph()
		x := G.NewMatrix(g, G.Float32, G.WithShape(2, 3), G.WithName("x"))
		y := G.NewMatrix(g, G.Float32, G.WithShape(2, 3), G.WithName("y"))
		z, err := f(x, y)
		if err != nil {
			t.Fatal(err)
		}
		out := cpu.Wrap(make([]float32, 6))
		bound := map[*G.Node]kernels.Tensor{x: cpu.Wrap(a), y: cpu.Wrap(b), z: out}
		e, err := compile(g, G.Nodes{z}, d, 1, bound, false)
		if err != nil {
			return nil, err
		}
		defer e.close()
		if err := e.RunAll(); err != nil {
			t.Fatal(err)
		}
		host := make([]float32, 6)
		if err := d.Download(host, out, 1); err != nil {
			t.Fatal(err)
		}
		return host, nil
	}
	for name, f := range map[string]func(x, y *G.Node) (*G.Node, error){
		"headlab add":  func(x, y *G.Node) (*G.Node, error) { return add(x, y), nil },
		"gorgonia.Add": G.Add,
	} {
		got, err := run(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range got {
			if got[i] != a[i]+b[i] {
				t.Fatalf("%s: got %v, want the sums of %v and %v", name, got, a, b)
			}
		}
	}
	for name, f := range map[string]func(x, y *G.Node) (*G.Node, error){
		"gorgonia.Sub":          G.Sub,
		"gorgonia.HadamardProd": G.HadamardProd,
	} {
		if _, err := run(f); err == nil || !strings.Contains(err.Error(), "cannot run") {
			t.Errorf("%s: got error %v, want the executor to refuse it", name, err)
		}
	}
}
