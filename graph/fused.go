package graph

import (
	"slices"

	G "gorgonia.org/gorgonia"

	"headlab/kernels"
)

// Fused kernels. Where the graph shows nodes that one kernel can compute
// together, and the device fuses (kernels.Fused), the executor runs them
// as one call: a group. Each kernel gives the bits of the ones it replaces
// (kernels/fused.go), reads the inputs they share once, and stores only
// the members some node outside the group reads (or that are bound or
// wanted); the others never reach memory.
//
//   - A linear layer and the GELU or residual add that is its only
//     reader (kernels.Device's Linear: every device).
//   - A gradient's product and the kernel that reads it: the sum with
//     another gradient (Add), GELU's derivative (Mul), a head gate
//     (ColScale) (MatMulThen).
//   - A LayerNorm's input, gain and bias gradients, and the residual's
//     gradient added to the first (LayerNormGrad).
//   - The token and position embeddings and their sum (EmbedAdd).
//   - Attention's probabilities, output and gated output; its four
//     gradient kernels, dP never stored (Attend, AttendGrad, for the
//     shapes the device Attends).
//   - A weight gradient with its bias's, a gain's with its LayerNorm
//     bias's (WeightGrad, ColDotSum).
//
// A group runs at one of its members' places in the order, its anchor:
// the first at which every input from outside the group has been
// computed and no outside reader of a member has run yet.

// fusedGroup is nodes of the order that one kernel call computes.
type fusedGroup struct {
	nodes  G.Nodes
	stored map[*G.Node]bool // the members whose results the kernel stores
	anchor int              // the place in the order where it runs
	// step makes the call, at the anchor, on the plan's tensors (each
	// stored member's made).
	step func(p *plan) (execStep, error)
}

// finder finds the groups of an order for a device.
type finder struct {
	g       *G.ExprGraph
	order   G.Nodes
	opOf    map[*G.Node]*op
	d       kernels.Device
	keep    map[*G.Node]bool
	bound   map[*G.Node]kernels.Tensor
	pos     map[*G.Node]int
	readers map[*G.Node]G.Nodes
	taken   map[*G.Node]bool
	groups  []*fusedGroup
}

// findGroups returns the groups of order that d runs fused, each node in
// one group at most.
func findGroups(g *G.ExprGraph, order G.Nodes, opOf map[*G.Node]*op, d kernels.Device, keep map[*G.Node]bool, bound map[*G.Node]kernels.Tensor) []*fusedGroup {
	f := &finder{g: g, order: order, opOf: opOf, d: d, keep: keep, bound: bound,
		pos: map[*G.Node]int{}, readers: map[*G.Node]G.Nodes{}, taken: map[*G.Node]bool{}}
	for i, n := range order {
		f.pos[n] = i
		for _, c := range children(g, n) {
			if !slices.Contains(f.readers[c], n) {
				f.readers[c] = append(f.readers[c], n)
			}
		}
	}
	if !d.Fuses() { // the device's fused kernels are its others one by one
		f.linears()
		return f.groups
	}
	f.attention()
	f.layerNormGrads()
	f.embedAdds()
	f.linears()
	f.epilogues()
	f.sumPairs()
	return f.groups
}

// kind is n's op kind (kindNone for inputs, constants and other ops).
func (f *finder) kind(n *G.Node) opKind {
	if o, ok := f.opOf[n]; ok {
		return o.fuse.kind
	}
	return kindNone
}

// in is n's inputs.
func (f *finder) in(n *G.Node) G.Nodes { return children(f.g, n) }

// inner says n is read by reader alone and is not an output: a member
// whose result need not be stored.
func (f *finder) inner(n, reader *G.Node) bool {
	_, b := f.bound[n]
	r := f.readers[n]
	return !b && !f.keep[n] && len(r) == 1 && r[0] == reader
}

// add makes a group of nodes (nil ones left out) if none is in a group
// yet and it has an anchor; always are stored whatever reads them. It
// says whether it made one.
func (f *finder) add(nodes G.Nodes, always G.Nodes, step func(p *plan) (execStep, error)) bool {
	nodes = slices.DeleteFunc(slices.Clone(nodes), func(n *G.Node) bool { return n == nil })
	member := map[*G.Node]bool{}
	for _, n := range nodes {
		if f.taken[n] || member[n] {
			return false
		}
		member[n] = true
	}
	slices.SortFunc(nodes, func(a, b *G.Node) int { return f.pos[a] - f.pos[b] })
	gr := &fusedGroup{nodes: nodes, stored: map[*G.Node]bool{}, step: step}
	inputsAt, readsFrom := -1, len(f.order) // the last outside input, the first outside reader
	for _, n := range nodes {
		_, b := f.bound[n]
		if b || f.keep[n] || slices.Contains(always, n) {
			gr.stored[n] = true
		}
		for _, r := range f.readers[n] {
			if !member[r] {
				gr.stored[n] = true
				readsFrom = min(readsFrom, f.pos[r])
			}
		}
		for _, c := range f.in(n) {
			if !member[c] {
				inputsAt = max(inputsAt, f.pos[c])
			}
		}
	}
	gr.anchor = -1
	for _, n := range nodes {
		if at := f.pos[n]; at > inputsAt && at < readsFrom {
			gr.anchor = at
			break
		}
	}
	if gr.anchor < 0 {
		return false
	}
	for _, n := range nodes {
		f.taken[n] = true
	}
	f.groups = append(f.groups, gr)
	return true
}

// attention groups each probabilities node with its output (Mix) and
// the gated output (ColScale) that reads it, and each probabilities'
// gradient from its output's (MixGradP, never stored) with the four
// gradient kernels around it, where the device's fused attention takes
// the shape.
func (f *finder) attention() {
	for _, n := range f.order {
		switch f.kind(n) {
		case kindMix:
			in := f.in(n)
			pr, v := in[0], in[1]
			s := f.opOf[n].fuse.shape
			if f.kind(pr) != kindProbs || !f.d.Attends(s) {
				continue
			}
			var og *G.Node
			for _, r := range f.readers[n] {
				if f.kind(r) == kindColScale && f.in(r)[0] == n {
					og = r
				}
			}
			f.add(G.Nodes{pr, n, og}, G.Nodes{pr}, func(p *plan) (execStep, error) {
				q, k := f.in(pr)[0], f.in(pr)[1]
				var g, out kernels.Tensor
				if og != nil {
					g, out = p.t(f.in(og)[1]), p.t(og)
				}
				ts := []kernels.Tensor{p.t(q), p.t(k), p.t(v), g, p.t(pr), p.t(n), out}
				return execStep{name: "attention", reads: ts[:4], writes: ts[4:], run: func() error {
					return f.d.Attend(p.S, s, ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6])
				}}, nil
			})
		case kindMixGradP:
			in := f.in(n)
			dO, v := in[0], in[1]
			s := f.opOf[n].fuse.shape
			var dq, dk, dv *G.Node
			for _, r := range f.readers[n] {
				switch {
				case f.kind(r) == kindProbsGradQ && f.in(r)[1] == n:
					dq = r
				case f.kind(r) == kindProbsGradK && f.in(r)[1] == n:
					dk = r
				}
			}
			if dq == nil || dk == nil || len(f.readers[n]) != 2 || !f.d.Attends(s) {
				continue
			}
			pr := f.in(dq)[0]
			for _, r := range f.readers[dO] {
				if f.kind(r) == kindMixGradV && f.in(r)[0] == pr && f.in(r)[1] == dO {
					dv = r
				}
			}
			if dv == nil || f.in(dk)[0] != pr {
				continue
			}
			f.add(G.Nodes{dv, n, dq, dk}, nil, func(p *plan) (execStep, error) {
				k, q := f.in(dq)[2], f.in(dk)[2]
				ts := []kernels.Tensor{p.t(pr), p.t(dO), p.t(q), p.t(k), p.t(v), p.t(dq), p.t(dk), p.t(dv)}
				return execStep{name: "attention gradients", reads: ts[:5], writes: ts[5:], run: func() error {
					return f.d.AttendGrad(p.S, s, ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7])
				}}, nil
			})
		}
	}
}

// layerNormGrads groups each LayerNorm's input gradient with its gain's
// and bias's gradients, which read the same dy, and with the add of the
// residual's gradient that is the input gradient's only reader.
func (f *finder) layerNormGrads() {
	for _, gx := range f.order {
		if f.kind(gx) != kindLayerNormGradX {
			continue
		}
		o := f.opOf[gx]
		gamma, dy := f.in(gx)[1], f.in(gx)[2]
		var gg, gb, sum *G.Node
		for _, r := range f.readers[dy] {
			switch {
			case f.kind(r) == kindColDot && f.opOf[r].auxOf == o.auxOf && f.in(r)[0] == dy:
				gg = r
			case f.kind(r) == kindColSum:
				gb = r
			}
		}
		if gg == nil || gb == nil {
			continue
		}
		if r := f.readers[gx]; len(r) == 1 && f.kind(r[0]) == kindAdd && f.inner(gx, r[0]) {
			sum = r[0]
		}
		f.add(G.Nodes{gx, gg, gb, sum}, nil, func(p *plan) (execStep, error) {
			aux, err := p.aux(o.auxOf)
			if err != nil {
				return execStep{}, err
			}
			var res kernels.Tensor
			dx := p.t(gx)
			if sum != nil {
				res, dx = p.t(other(f.in(sum), gx)), p.t(sum)
			}
			rows, n := o.fuse.k, o.fuse.n
			ts := []kernels.Tensor{p.t(gamma), p.t(dy), aux[0], aux[1], res, dx, p.t(gg), p.t(gb)}
			return execStep{name: "layernorm gradients", reads: ts[:5], writes: ts[5:], run: func() error {
				return f.d.LayerNormGrad(p.S, rows, n, ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], ts[7])
			}}, nil
		})
	}
}

// other is the input of a two-input node that is not n.
func other(in G.Nodes, n *G.Node) *G.Node {
	if in[0] == n {
		return in[1]
	}
	return in[0]
}

// embedAdds groups each sum of two embeddings that only it reads.
func (f *finder) embedAdds() {
	for _, n := range f.order {
		if f.kind(n) != kindAdd {
			continue
		}
		in := f.in(n)
		a, b := in[0], in[1]
		if f.kind(a) != kindEmbed || f.kind(b) != kindEmbed || !f.inner(a, n) || !f.inner(b, n) {
			continue
		}
		f.add(G.Nodes{a, b, n}, nil, func(p *plan) (execStep, error) {
			fa := f.opOf[a].fuse
			ts := []kernels.Tensor{p.t(f.in(a)[0]), p.t(f.in(a)[1]), p.t(f.in(b)[0]), p.t(f.in(b)[1]), p.t(n)}
			return execStep{name: "embeddings", reads: ts[:4], writes: ts[4:], run: func() error {
				return f.d.EmbedAdd(p.S, fa.k, fa.n, ts[0], ts[1], ts[2], ts[3], ts[4])
			}}, nil
		})
	}
}

// linears groups each linear layer with the GELU or the residual add
// that is its only reader: Linear with its epilogue, on every device.
func (f *finder) linears() {
	for _, n := range f.order {
		k := f.kind(n)
		if k != kindGELU && k != kindAdd {
			continue
		}
		for _, x := range f.in(n) {
			if f.kind(x) != kindLinear || !f.inner(x, n) || k == kindGELU && f.in(n)[0] != x {
				continue
			}
			if f.add(G.Nodes{x, n}, nil, func(p *plan) (execStep, error) { return f.linear(p, x, n) }) {
				break
			}
		}
	}
}

// linear is the Linear call of product x and its reader n.
func (f *finder) linear(p *plan, x, n *G.Node) (execStep, error) {
	fx := f.opOf[x].fuse
	in := f.in(x) // x, w and perhaps the bias
	ts := make([]kernels.Tensor, 6)
	for i, c := range in {
		ts[i] = p.t(c)
	}
	if o := f.opOf[n]; o.fuse.kind == kindGELU { // its derivative is its aux
		aux, err := p.aux(o)
		if err != nil {
			return execStep{}, err
		}
		ts[4] = aux[0]
	} else {
		ts[3] = p.t(other(f.in(n), x))
	}
	ts[5] = p.t(n)
	return execStep{name: "fused linear", reads: ts[:5], writes: []kernels.Tensor{ts[5], ts[4]}, run: func() error {
		return p.d.Linear(p.S, fx.m, fx.n, fx.k, ts[0], ts[1], ts[2], ts[3], ts[5], ts[4])
	}}, nil
}

// epilogues groups each gradient's product with the kernel that reads
// it: a sum with another gradient, GELU's derivative, a head gate.
func (f *finder) epilogues() {
	for _, n := range f.order {
		in := f.in(n)
		switch f.kind(n) {
		case kindAdd: // the later product, whose other operand comes first
			a, b := in[0], in[1]
			if f.pos[a] > f.pos[b] {
				a, b = b, a
			}
			if a == b {
				continue
			}
			for _, x := range []*G.Node{b, a} {
				if f.kind(x) == kindMatMul && f.inner(x, n) && f.epilogue(x, n, kernels.EpilogueAdd, other(in, x)) {
					break
				}
			}
		case kindGELUGrad: // dy times the derivative
			if x := in[1]; f.kind(x) == kindMatMul && f.inner(x, n) {
				f.epilogue(x, n, kernels.EpilogueMul, nil)
			}
		case kindColScale: // the product may have other readers, and is then stored too
			if x := in[0]; f.kind(x) == kindMatMul {
				f.epilogue(x, n, kernels.EpilogueColScale, in[1])
			}
		}
	}
}

// epilogue groups product x with its reader n, whose other operand is y
// (nil: the aux of n's GELU).
func (f *finder) epilogue(x, n *G.Node, ep kernels.Epilogue, y *G.Node) bool {
	return f.add(G.Nodes{x, n}, nil, func(p *plan) (execStep, error) {
		fx := f.opOf[x].fuse
		var other kernels.Tensor
		if y != nil {
			other = p.t(y)
		} else {
			aux, err := p.aux(f.opOf[n].auxOf)
			if err != nil {
				return execStep{}, err
			}
			other = aux[0]
		}
		in := f.in(x)
		ts := []kernels.Tensor{p.t(in[0]), p.t(in[1]), other, p.t(x), p.t(n)}
		return execStep{name: "product and epilogue", reads: ts[:3], writes: ts[3:], run: func() error {
			return f.d.MatMulThen(p.S, fx.tA, fx.tB, fx.m, fx.n, fx.k, ts[0], ts[1], kernels.Tensor{}, ts[3], ep, ts[2], ts[4])
		}}, nil
	})
}

// sumPairs groups each column sum that is a wanted result with an op
// that reads its input and can sum it on the way: a weight gradient x^T
// dy (dy's sums: WeightGrad) or a column dot product (ColDotSum).
func (f *finder) sumPairs() {
	for _, n := range f.order {
		_, b := f.bound[n]
		if f.kind(n) != kindColSum || !b && !f.keep[n] {
			continue
		}
		y := f.in(n)[0]
		for _, r := range f.readers[y] {
			fr := f.opOf[r].fuse
			in := f.in(r)
			var step func(p *plan) (execStep, error)
			switch {
			case fr.kind == kindMatMul && fr.tA && !fr.tB && in[1] == y:
				step = func(p *plan) (execStep, error) {
					ts := []kernels.Tensor{p.t(in[0]), p.t(y), p.t(r), p.t(n)}
					return execStep{name: "weight gradient", reads: ts[:2], writes: ts[2:], run: func() error {
						return f.d.WeightGrad(p.S, fr.m, fr.n, fr.k, ts[0], ts[1], ts[2], ts[3])
					}}, nil
				}
			case fr.kind == kindColDot && in[0] == y:
				o := f.opOf[r]
				step = func(p *plan) (execStep, error) {
					b := p.t(in[1])
					if o.auxOf != nil { // the gain gradient reads its forward's normalised rows
						aux, err := p.aux(o.auxOf)
						if err != nil {
							return execStep{}, err
						}
						b = aux[0]
					}
					ts := []kernels.Tensor{p.t(y), b, p.t(r), p.t(n)}
					return execStep{name: "column sums", reads: ts[:2], writes: ts[2:], run: func() error {
						return f.d.ColDotSum(p.S, fr.k, fr.n, ts[0], ts[1], ts[2], ts[3])
					}}, nil
				}
			default:
				continue
			}
			if f.add(G.Nodes{r, n}, nil, step) {
				break
			}
		}
	}
}
