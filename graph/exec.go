package graph

import (
	"fmt"
	"reflect"

	G "gorgonia.org/gorgonia"

	"headlab/kernels"
)

// executor runs a built graph without Gorgonia's TapeMachine. Build still
// makes the graph and Gorgonia still derives the gradients symbolically;
// the executor maps every node to its kernel on a device and runs them in
// one fixed topological order, for S models at once, into tensors that
// live on the device as long as the Net. A run allocates nothing and
// moves nothing between host and device.
//
// Only nodes that some wanted output depends on are run. Inputs and
// wanted outputs are bound to tensors the Net gives (the parameter and
// gradient blocks, the batch, the loss); every other node's tensor is
// reused once its last reader has run, so intermediate nodes' values are
// not meaningful after a run.
type executor struct {
	d     kernels.Device
	S     int
	steps []execStep
	mem   kernels.Arena // every tensor it made, freed by close
	auxes map[*op][]kernels.Tensor
}

type execStep struct {
	o *op // the op to run; nil for lin
	c call
	// lin is a product fused with its reader: c.in holds x, w, bias, res
	// and deriv (the last three may have no buffer).
	lin *fusible
	// sum, when it has a buffer, is where o also writes a column sum of
	// its input (fused.go).
	sum kernels.Tensor
}

// RunAll runs every step once.
func (e *executor) RunAll() error {
	for i := range e.steps {
		s := &e.steps[i]
		if l := s.lin; l != nil {
			in := s.c.in
			if err := e.d.Linear(e.S, l.m, l.n, l.k, in[0], in[1], in[2], in[3], s.c.out, in[4]); err != nil {
				return fmt.Errorf("fused linear: %w", err)
			}
			continue
		}
		run := s.o.run
		if s.sum.Buf != nil {
			run = func(c *call) error { return s.o.runSums(c, s.sum) }
		}
		if err := run(&s.c); err != nil {
			return fmt.Errorf("%s: %w", s.o.name, err)
		}
	}
	return nil
}

// traffic is the bytes one run moves per model, counted as every kernel
// reading each of its inputs and aux tensors and writing its output once
// (caches and fusion can only lower it).
func (e *executor) traffic() int64 {
	var n int64
	for _, s := range e.steps {
		for _, t := range s.c.in {
			n += int64(t.Len)
		}
		for _, t := range s.c.aux {
			n += int64(t.Len)
		}
		if s.lin != nil && s.c.in[4].Buf != nil {
			n += int64(s.c.in[4].Len)
		}
		n += int64(s.c.out.Len)
	}
	return 4 * n
}

// auxOf is the aux tensors of n's op (LayerNorm's normalised rows and
// scale, GELU's derivative): they are never reused, so they hold the last
// run's values.
func (e *executor) auxOf(n *G.Node) []kernels.Tensor {
	o, _ := n.Op().(*op)
	return e.auxes[o]
}

// alloc makes a dense tensor of n floats per model, owned by e.
func (e *executor) alloc(n int) (kernels.Tensor, error) { return e.mem.Dense(n) }

// close frees the executor's tensors.
func (e *executor) close() { e.mem.Free() }

// children returns n's inputs in order.
func children(g *G.ExprGraph, n *G.Node) G.Nodes {
	var out G.Nodes
	it := g.From(n.ID())
	for it.Next() {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}

// gradSum returns the op that runs n when n is one of the sums Gorgonia's
// differentiation writes (gorgonia.Grad adds up the gradient terms of a
// node that several nodes read, with gorgonia.Add), or nil when it is
// not. Gorgonia's op types are unexported, so a sum is recognised by
// value: its op equals the op gorgonia.Add makes for two operands of n's
// type, and both operands have n's shape. It runs as headlab's add op.
func gradSum(n *G.Node, in G.Nodes) *op {
	if len(in) != 2 || !in[0].Shape().Eq(n.Shape()) || !in[1].Shape().Eq(n.Shape()) {
		return nil
	}
	if !reflect.DeepEqual(n.Op(), gorgoniaAdd(n)) {
		return nil
	}
	return addOp(n.Shape())
}

// gorgoniaAdd is the op of gorgonia.Add for two operands of n's type, made
// on a scratch graph.
func gorgoniaAdd(n *G.Node) G.Op {
	g := G.NewGraph()
	operand := func() *G.Node {
		if n.IsScalar() {
			return G.NewScalar(g, n.Dtype())
		}
		return G.NewTensor(g, n.Dtype(), n.Dims(), G.WithShape(n.Shape()...))
	}
	sum, err := G.Add(operand(), operand())
	if err != nil {
		return nil
	}
	return sum.Op()
}

// ops gives every node of order that computes something its headlab op:
// its own, or for a Gorgonia sum, the add op that runs it. Inputs and
// constants have none.
func ops(g *G.ExprGraph, order G.Nodes) (map[*G.Node]*op, error) {
	m := make(map[*G.Node]*op, len(order))
	for _, n := range order {
		switch o := n.Op().(type) {
		case nil: // an input
		case *op:
			m[n] = o
		default:
			in := children(g, n)
			if len(in) == 0 && n.Value() != nil { // a constant
				continue
			}
			s := gradSum(n, in)
			if s == nil {
				return nil, fmt.Errorf("graph: the executor cannot run %v (op %T %v)", n, o, o)
			}
			m[n] = s
		}
	}
	return m, nil
}

// compile orders the nodes outputs depend on and gives each a tensor on d
// for S models: bound ones (inputs, and outputs that must land in a given
// place) are the Net's; the rest are planned.
func compile(g *G.ExprGraph, outputs G.Nodes, d kernels.Device, S int, bound map[*G.Node]kernels.Tensor) (_ *executor, err error) {
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
	opOf, err := ops(g, order)
	if err != nil {
		return nil, err
	}
	e := &executor{d: d, S: S, mem: kernels.Arena{Dev: d, S: S}}
	// A failure frees what was made.
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	// Memory plan: a node's tensor returns to a free list (by length)
	// after its last reader has run, and later nodes reuse it. Bound
	// tensors, constants, aux tensors and the wanted outputs are never
	// reused.
	keep := map[*G.Node]bool{}
	for _, n := range outputs {
		keep[n] = true
	}
	fusedFrom := fusion(g, order, opOf, keep, bound)
	summedBy := sumPairs(g, order, opOf, d, keep, bound)
	sums := map[*G.Node]*G.Node{} // the op that runs a column sum -> the sum
	for c, p := range summedBy {
		sums[p] = c
	}
	fused := map[*G.Node]bool{}
	lastUse := map[*G.Node]int{}
	for i, n := range order {
		for _, c := range children(g, n) {
			lastUse[c] = i
		}
		// A fused product reads its inputs at its reader's place.
		if p, ok := fusedFrom[n]; ok {
			fused[p] = true
			for _, c := range children(g, p) {
				lastUse[c] = i
			}
		}
	}
	free := map[int][]kernels.Tensor{}
	planned := map[*G.Node]bool{}
	out := func(n *G.Node) (kernels.Tensor, error) {
		if t, ok := bound[n]; ok {
			return t, nil
		}
		size := max(n.Shape().TotalSize(), 1)
		if keep[n] {
			return e.alloc(size)
		}
		planned[n] = true
		if l := free[size]; len(l) > 0 {
			free[size] = l[:len(l)-1]
			return l[len(l)-1], nil
		}
		return e.alloc(size)
	}
	auxes := map[*op][]kernels.Tensor{}
	ts := make(map[*G.Node]kernels.Tensor, len(order))
	// release returns the planned tensors whose last reader is step i.
	release := func(in G.Nodes, i int) {
		released := map[*G.Node]bool{}
		for _, c := range in {
			if planned[c] && lastUse[c] == i && !released[c] {
				released[c] = true
				t := ts[c]
				free[t.Len] = append(free[t.Len], t)
			}
		}
	}
	for i, n := range order {
		if fused[n] {
			continue // its reader runs it
		}
		in := children(g, n)
		if _, ok := summedBy[n]; ok {
			release(in, i) // an earlier op wrote it
			continue
		}
		ins := make([]kernels.Tensor, len(in))
		for j, c := range in {
			ins[j] = ts[c]
		}
		if p, ok := fusedFrom[n]; ok {
			if ts[n], err = out(n); err != nil {
				return nil, err
			}
			// x, w, bias, res, deriv
			lin := make([]kernels.Tensor, 5)
			for j, c := range children(g, p) {
				lin[j] = ts[c]
			}
			if o := opOf[n]; o.fuse.gelu { // its derivative is its aux
				t, err := e.alloc(o.aux[0])
				if err != nil {
					return nil, err
				}
				auxes[o] = []kernels.Tensor{t}
				lin[4] = t
			} else { // a residual add: the other input
				lin[3] = ins[0]
				if in[0] == p {
					lin[3] = ins[1]
				}
			}
			f := opOf[p].fuse
			e.steps = append(e.steps, execStep{lin: &f, c: call{in: lin, out: ts[n]}})
			release(in, i)
			release(children(g, p), i)
			continue
		}
		o, isOp := opOf[n]
		switch {
		case isOp:
			if ts[n], err = out(n); err != nil {
				return nil, err
			}
			own := o.auxOwner()
			if _, ok := auxes[own]; !ok {
				for _, size := range own.aux {
					t, err := e.alloc(size)
					if err != nil {
						return nil, err
					}
					auxes[own] = append(auxes[own], t)
				}
			}
			step := execStep{o: o, c: call{d: d, S: S, in: ins, out: ts[n], aux: auxes[own]}}
			if c, ok := sums[n]; ok {
				if ts[c], err = out(c); err != nil {
					return nil, err
				}
				step.sum = ts[c]
			}
			e.steps = append(e.steps, step)
		case n.Op() == nil: // an input: the Net binds it
			t, ok := bound[n]
			if !ok {
				return nil, fmt.Errorf("graph: input %v is not bound", n)
			}
			ts[n] = t
		default: // a constant (ops says so), shared by every model
			f, err := floats(n.Value())
			if err != nil {
				return nil, err
			}
			if ts[n], err = e.mem.Shared(f); err != nil {
				return nil, err
			}
		}
		release(in, i)
	}
	e.auxes = auxes
	return e, nil
}

// fusion finds, in order, each product (Linear) whose only reader is a
// GELU or a residual add and that no one else needs (not an output, not
// bound), and returns, for each such reader, its product: the executor
// runs the two as one Linear kernel with an epilogue, so the product's
// result never goes to memory.
func fusion(g *G.ExprGraph, order G.Nodes, opOf map[*G.Node]*op, keep map[*G.Node]bool, bound map[*G.Node]kernels.Tensor) map[*G.Node]*G.Node {
	readers := map[*G.Node]int{}
	for _, n := range order {
		for _, c := range children(g, n) {
			readers[c]++
		}
	}
	product := func(c *G.Node) bool {
		o, ok := opOf[c]
		_, b := bound[c]
		return ok && o.fuse.linear && readers[c] == 1 && !keep[c] && !b
	}
	from := map[*G.Node]*G.Node{}
	for _, n := range order {
		o, ok := opOf[n]
		if !ok {
			continue
		}
		in := children(g, n)
		switch {
		case o.fuse.gelu:
			if product(in[0]) {
				from[n] = in[0]
			}
		case o.fuse.add:
			for _, c := range in {
				if product(c) {
					from[n] = c
					break
				}
			}
		}
	}
	return from
}
