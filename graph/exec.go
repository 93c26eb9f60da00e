package graph

import (
	"fmt"
	"reflect"
	"slices"

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

// execStep is one kernel call of a run.
type execStep struct {
	name string
	run  func() error
	// reads and writes are the tensors it reads (aux tensors included)
	// and writes, for traffic.
	reads, writes []kernels.Tensor
}

// RunAll runs every step once.
func (e *executor) RunAll() error {
	for i := range e.steps {
		if err := e.steps[i].run(); err != nil {
			return fmt.Errorf("%s: %w", e.steps[i].name, err)
		}
	}
	return nil
}

// traffic is the bytes one run moves per model, counted as every kernel
// reading each of its inputs and aux tensors and writing its outputs
// once (caches can only lower it).
func (e *executor) traffic() int64 {
	var n int64
	for _, s := range e.steps {
		for _, t := range s.reads {
			n += int64(t.Len)
		}
		for _, t := range s.writes {
			n += int64(t.Len)
		}
	}
	return 4 * n
}

// auxOf is the aux tensors of n's op (LayerNorm's normalised rows and
// scale, GELU's derivative): they are never reused, so they hold the last
// run's values (every model's, when compile was told auxRead).
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

// plan is what compile gives a group's step at its anchor: the tensors
// made so far, for S models on d.
type plan struct {
	d     kernels.Device
	S     int
	ts    map[*G.Node]kernels.Tensor
	auxes map[*op][]kernels.Tensor
	alloc func(n int) (kernels.Tensor, error) // an aux tensor's
}

// t is n's tensor: an input's, a computed node's, or none for a member of
// a group that is not stored.
func (p *plan) t(n *G.Node) kernels.Tensor { return p.ts[n] }

// aux is the aux tensors of o, made on first use; they are never reused,
// so they hold the last run's values.
func (p *plan) aux(o *op) ([]kernels.Tensor, error) {
	if a, ok := p.auxes[o]; ok {
		return a, nil
	}
	var a []kernels.Tensor
	for _, size := range o.aux {
		t, err := p.alloc(size)
		if err != nil {
			return nil, err
		}
		a = append(a, t)
	}
	p.auxes[o] = a
	return a, nil
}

// compile orders the nodes outputs depend on and gives each a tensor on d
// for S models: bound ones (inputs, and outputs that must land in a given
// place) are the Net's; the rest are planned. Groups of nodes run as one
// fused kernel (fused.go). The planned tensors, and the aux tensors unless
// auxRead says the Net reads them after a run, are scratch
// (kernels.Arena.Scratch): on a device that runs seeds one after another,
// every seed's run uses the same memory.
func compile(g *G.ExprGraph, outputs G.Nodes, d kernels.Device, S int, bound map[*G.Node]kernels.Tensor, auxRead bool) (_ *executor, err error) {
	order, err := topoOrder(g, outputs)
	if err != nil {
		return nil, err
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
	// reused. A member of a group reads its inputs at the group's anchor.
	keep := map[*G.Node]bool{}
	for _, n := range outputs {
		keep[n] = true
	}
	groups := findGroups(g, order, opOf, d, keep, bound)
	groupOf := map[*G.Node]*fusedGroup{}
	for _, gr := range groups {
		for _, n := range gr.nodes {
			groupOf[n] = gr
		}
	}
	cp := &compiler{g: g, e: e, opOf: opOf, bound: bound, keep: keep, lastUse: lastUses(g, order, groupOf),
		free: map[int][]kernels.Tensor{}, planned: map[*G.Node]bool{}, released: map[*G.Node]bool{}}
	cp.p = &plan{d: d, S: S, ts: make(map[*G.Node]kernels.Tensor, len(order)), auxes: map[*op][]kernels.Tensor{}, alloc: e.mem.Scratch}
	if auxRead {
		cp.p.alloc = e.alloc
	}
	for i, n := range order {
		in := children(g, n)
		if gr := groupOf[n]; gr != nil {
			if i == gr.anchor {
				if err := cp.addGroup(gr, i); err != nil {
					return nil, err
				}
			}
			cp.release(in, i)
			continue
		}
		if err := cp.addNode(n, in); err != nil {
			return nil, err
		}
		cp.release(in, i)
	}
	e.auxes = cp.p.auxes
	return e, nil
}

// topoOrder is every node outputs depend on, each after its children,
// refused when the graph has a cycle.
func topoOrder(g *G.ExprGraph, outputs G.Nodes) (G.Nodes, error) {
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
	return order, nil
}

// lastUses is the step of order at which each node is last read: a
// group member's reads count at its group's anchor.
func lastUses(g *G.ExprGraph, order G.Nodes, groupOf map[*G.Node]*fusedGroup) map[*G.Node]int {
	lastUse := map[*G.Node]int{}
	for i, n := range order {
		at := i
		if gr := groupOf[n]; gr != nil {
			at = max(i, gr.anchor)
		}
		for _, c := range children(g, n) {
			lastUse[c] = max(lastUse[c], at)
		}
	}
	return lastUse
}

// compiler is what compile's steps share while they walk the order: the
// executor being built, its plan, and the memory plan's free lists.
type compiler struct {
	g       *G.ExprGraph
	e       *executor
	p       *plan
	opOf    map[*G.Node]*op
	bound   map[*G.Node]kernels.Tensor
	keep    map[*G.Node]bool // wanted outputs: never reused
	lastUse map[*G.Node]int
	free    map[int][]kernels.Tensor // by length
	// planned tensors may be reused once released.
	planned, released map[*G.Node]bool
}

// out is node n's tensor: its bound one, a dense one for a wanted
// output, else a reused or new scratch tensor.
func (cp *compiler) out(n *G.Node) (kernels.Tensor, error) {
	if t, ok := cp.bound[n]; ok {
		return t, nil
	}
	size := max(n.Shape().TotalSize(), 1)
	if cp.keep[n] {
		return cp.e.alloc(size)
	}
	cp.planned[n] = true
	if l := cp.free[size]; len(l) > 0 {
		cp.free[size] = l[:len(l)-1]
		return l[len(l)-1], nil
	}
	return cp.e.mem.Scratch(size)
}

// release returns the planned tensors whose last reader is step i.
func (cp *compiler) release(in G.Nodes, i int) {
	for _, c := range in {
		if cp.planned[c] && cp.lastUse[c] == i && !cp.released[c] {
			cp.released[c] = true
			t := cp.p.ts[c]
			cp.free[t.Len] = append(cp.free[t.Len], t)
		}
	}
}

// addGroup adds fused group gr as one step at its anchor, step i.
func (cp *compiler) addGroup(gr *fusedGroup, i int) error {
	var err error
	for _, m := range gr.nodes {
		if gr.stored[m] {
			if cp.p.ts[m], err = cp.out(m); err != nil {
				return err
			}
		}
	}
	step, err := gr.step(cp.p)
	if err != nil {
		return err
	}
	cp.e.steps = append(cp.e.steps, step)
	for _, m := range gr.nodes {
		cp.release(children(cp.g, m), i)
	}
	return nil
}

// addNode gives node n (not in a group, reading in) its tensor: an op's
// output and step, an input's bound tensor, or a constant's shared one.
func (cp *compiler) addNode(n *G.Node, in G.Nodes) error {
	d, S, ts := cp.e.d, cp.e.S, cp.p.ts
	var err error
	o, isOp := cp.opOf[n]
	switch {
	case isOp:
		if ts[n], err = cp.out(n); err != nil {
			return err
		}
		aux, err := cp.p.aux(o.auxOwner())
		if err != nil {
			return err
		}
		c := &call{d: d, S: S, in: make([]kernels.Tensor, len(in)), out: ts[n], aux: aux}
		for j, x := range in {
			c.in[j] = ts[x]
		}
		cp.e.steps = append(cp.e.steps, execStep{name: o.name, run: func() error { return o.run(c) },
			reads: append(slices.Clone(c.in), aux...), writes: []kernels.Tensor{c.out}})
	case n.Op() == nil: // an input: the Net binds it
		t, ok := cp.bound[n]
		if !ok {
			return fmt.Errorf("graph: input %v is not bound", n)
		}
		ts[n] = t
	default: // a constant (ops says so), shared by every model
		f, err := floats(n.Value())
		if err != nil {
			return err
		}
		if ts[n], err = cp.e.mem.Shared(f); err != nil {
			return err
		}
	}
	return nil
}
