package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// executor runs a built graph without Gorgonia's TapeMachine. Build still
// makes the graph and Gorgonia still derives the gradients symbolically;
// the executor only replaces the interpreter, which allocates every value
// and its bookkeeping again on every run (about 8 allocations per node).
// Here every needed node is computed in one fixed topological order into
// a buffer that lives as long as the Net, so a run allocates nothing.
//
// Only nodes that some wanted output depends on are run: the gradients
// Gorgonia builds for the one-hot inputs, for instance, are skipped. The
// wanted outputs (loss, logits, attention probabilities, gradients) keep
// buffers of their own, bound to their nodes (G.UnsafeLet), so Value() and
// Grad() read the last run's results; every other node's buffer is reused
// once its last reader has run, so intermediate nodes' values are not
// meaningful after a run.
type executor struct {
	steps []execStep
}

type execStep struct {
	o    *op // nil: elementwise sum of in[0] and in[1] (Gorgonia's Add)
	in   [][]float32
	out  []float32
	name string
}

// RunAll runs every step once.
func (e *executor) RunAll() error {
	for i := range e.steps {
		s := &e.steps[i]
		if s.o == nil {
			a, b, out := s.in[0], s.in[1], s.out
			addVec(out, a, b)
			continue
		}
		if err := s.o.run(s.in); err != nil {
			return err
		}
	}
	return nil
}

// Close releases nothing: the buffers go with the executor.
func (e *executor) Close() error { return nil }

// children returns n's inputs in order.
func children(g *G.ExprGraph, n *G.Node) G.Nodes {
	var out G.Nodes
	it := g.From(n.ID())
	for it.Next() {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}

// isAdd says whether n is Gorgonia's elementwise a + b of equal shapes
// (the residual connections, and the sums of gradient terms).
func isAdd(n *G.Node, in G.Nodes) bool {
	if fmt.Sprintf("%T", n.Op()) != "gorgonia.elemBinOp" || n.Op().String() != "+ false" || len(in) != 2 {
		return false
	}
	return in[0].Shape().Eq(n.Shape()) && in[1].Shape().Eq(n.Shape())
}

// compile orders the nodes outputs depend on and gives each a buffer.
func compile(g *G.ExprGraph, outputs G.Nodes) (*executor, error) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[*G.Node]int{}
	var order G.Nodes
	var visit func(n *G.Node) error
	visit = func(n *G.Node) error {
		switch state[n] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("graph: cycle at %v", n)
		}
		state[n] = visiting
		for _, c := range children(g, n) {
			if err := visit(c); err != nil {
				return err
			}
		}
		state[n] = done
		order = append(order, n)
		return nil
	}
	for _, n := range outputs {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	// Memory plan: a node's buffer returns to a free list (by length)
	// after its last reader has run, and later nodes reuse it. Inputs,
	// constants and the wanted outputs keep buffers of their own.
	lastUse := map[*G.Node]int{}
	for i, n := range order {
		for _, c := range children(g, n) {
			lastUse[c] = i
		}
	}
	keep := map[*G.Node]bool{}
	for _, n := range outputs {
		keep[n] = true
	}
	free := map[int][][]float32{}
	alloc := func(size int) []float32 {
		if l := free[size]; len(l) > 0 {
			b := l[len(l)-1]
			free[size] = l[:len(l)-1]
			return b
		}
		return make([]float32, size)
	}
	planned := map[*G.Node]bool{} // nodes whose buffer came from the plan
	bufs := make(map[*G.Node][]float32, len(order))
	e := &executor{}
	for i, n := range order {
		in := children(g, n)
		ins := make([][]float32, len(in))
		for j, c := range in {
			ins[j] = bufs[c]
		}
		size := max(n.Shape().TotalSize(), 1)
		switch o := n.Op().(type) {
		case nil: // an input: its bound value is the buffer
			if n.Value() == nil {
				return nil, fmt.Errorf("graph: input %v has no value", n)
			}
			f, err := floats(n.Value())
			if err != nil {
				return nil, err
			}
			bufs[n] = f
		case *op:
			if o.buf == nil {
				if keep[n] {
					o.setBuffer(make([]float32, size))
				} else {
					o.setBuffer(alloc(size))
					planned[n] = true
				}
			}
			v, buf := o.output()
			if err := G.UnsafeLet(n, v); err != nil {
				return nil, fmt.Errorf("graph: binding %s: %w", o.name, err)
			}
			bufs[n] = buf
			e.steps = append(e.steps, execStep{o: o, in: ins, out: buf, name: o.name})
		default:
			switch {
			case len(in) == 0 && n.Value() != nil: // a constant
				f, err := floats(n.Value())
				if err != nil {
					return nil, err
				}
				bufs[n] = append([]float32(nil), f...)
			case isAdd(n, in):
				var buf []float32
				if keep[n] {
					buf = make([]float32, size)
				} else {
					buf = alloc(size)
					planned[n] = true
				}
				t := tensor.New(tensor.WithShape(n.Shape().Clone()...), tensor.WithBacking(buf))
				if err := G.UnsafeLet(n, t); err != nil {
					return nil, fmt.Errorf("graph: binding %v: %w", n, err)
				}
				bufs[n] = buf
				e.steps = append(e.steps, execStep{in: ins, out: buf, name: "add"})
			default:
				return nil, fmt.Errorf("graph: the executor cannot run %v (op %T %v)", n, o, o)
			}
		}
		released := map[*G.Node]bool{}
		for _, c := range in {
			if planned[c] && lastUse[c] == i && !released[c] {
				released[c] = true
				free[len(bufs[c])] = append(free[len(bufs[c])], bufs[c])
			}
		}
	}
	return e, nil
}

// addVec sets out = a + b.
func addVec(out, a, b []float32) {
	a, b = a[:len(out)], b[:len(out)]
	for j := range out {
		out[j] = a[j] + b[j]
	}
}

// Grads returns, after a training Run, the gradient of the loss for each
// of Params, in the same order. The slices are the executor's buffers:
// every Run overwrites them, and an optimiser may read them in place.
func (n *Net) Grads() ([][]float32, error) {
	out := make([][]float32, len(n.params))
	for i, p := range n.params {
		d := p.Deriv()
		if d == nil || d.Value() == nil {
			return nil, fmt.Errorf("graph: %s has no gradient (built without train?)", p.Name())
		}
		f, err := floats(d.Value())
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}
