package circuit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"headlab/analysis"
)

// A Signature is a circuit reduced to what does not depend on which head
// of a layer learned what (docs/circuits.md, "Atlas"): its load-bearing
// edges (those of the circuit whose effect is at least SignatureEffect in
// magnitude), its load-bearing heads (those on such an edge) named by
// layer and role, "L1:induction", and the edges between such nodes and
// the embeddings, MLPs and logits,
// "L0:previous-token -> L1:induction.k". Two heads of one role in one layer
// are told apart as "#1", "#2" by the numbering whose edge list is the
// least string. Edges are in that least order; each keeps its path-patching
// effect (the mean over runs, in a mechanism), which String leaves out.
type Signature struct {
	Edges []SignatureEdge
}

// SignatureEdge is one edge of a Signature: its role-named sender and
// receiver and its effect (a share of the logit difference).
type SignatureEdge struct {
	From, To string
	Effect   float64
}

func (e SignatureEdge) String() string { return e.From + " -> " + e.To }

// EmptySignature is the String of a signature with no edge (a circuit
// that keeps its threshold with none: the clean and corrupted runs agree).
const EmptySignature = "(empty)"

// signatureSep separates a signature's edges in its String.
const signatureSep = "; "

// maxNumberings bounds the numberings of tied heads NewSignature tries;
// past it, tied heads are numbered by head index (never reached below 8
// heads of one role in one layer).
const maxNumberings = 40320

// String is the signature's compact form, stored in SQLite and read back
// by ParseSignature: its edges in order, "; " between them.
func (s Signature) String() string {
	if len(s.Edges) == 0 {
		return EmptySignature
	}
	names := make([]string, len(s.Edges))
	for i, e := range s.Edges {
		names[i] = e.String()
	}
	return strings.Join(names, signatureSep)
}

// ParseSignature reads a signature's String (the effects are zero).
func ParseSignature(text string) (Signature, error) {
	if text == EmptySignature {
		return Signature{}, nil
	}
	var s Signature
	for _, part := range strings.Split(text, signatureSep) {
		from, to, ok := strings.Cut(part, " -> ")
		if !ok || from == "" || to == "" || strings.Contains(to, " -> ") {
			return Signature{}, fmt.Errorf("signature %q: edge %q is not \"sender -> receiver\"", text, part)
		}
		s.Edges = append(s.Edges, SignatureEdge{From: from, To: to})
	}
	if !slices.IsSortedFunc(s.Edges, func(a, b SignatureEdge) int { return strings.Compare(a.String(), b.String()) }) {
		return Signature{}, fmt.Errorf("signature %q: edges out of order", text)
	}
	return s, nil
}

// headNode is a load-bearing head of a circuit: its name (L1H0), layer
// and label.
type headNode struct {
	name, label string
	layer, head int
}

// SignatureEffect is the signature's line (docs/circuits.md, "Atlas"),
// fixed before any atlas run: an edge of the circuit is load-bearing, and
// in the signature, when its path-patching effect is at least this share
// of the logit difference in magnitude. The circuit's other edges (most
// of its edges, each a few hundredths) stay in the run's record.
const SignatureEffect = 0.1

// NewSignature is the signature of the circuit made of edges (those a
// Report's circuit keeps), its heads' roles read from labels (head name
// to label under analysis.CurrentRule; a head with none is
// analysis.NoClearPattern).
func NewSignature(circuitEdges []EdgeResult, labels map[string]string) (Signature, error) {
	var edges []EdgeResult
	for _, e := range circuitEdges {
		if math.Abs(e.Effect) >= SignatureEffect {
			edges = append(edges, e)
		}
	}
	var nodes []headNode
	seen := map[string]bool{}
	for _, e := range edges {
		for _, n := range []string{e.From, headOf(e.To)} {
			l, h, err := analysis.ParseHead(n)
			if err != nil || seen[n] {
				continue
			}
			seen[n] = true
			nodes = append(nodes, headNode{name: n, label: cmp.Or(labels[n], analysis.NoClearPattern), layer: l, head: h})
		}
	}
	slices.SortFunc(nodes, func(a, b headNode) int {
		return cmp.Or(cmp.Compare(a.layer, b.layer), strings.Compare(a.label, b.label), cmp.Compare(a.head, b.head))
	})
	// Runs of tied heads (one layer, one label), each numbered by every
	// permutation in turn.
	var ties [][]int
	for i := 0; i < len(nodes); {
		j := i + 1
		for j < len(nodes) && nodes[j].layer == nodes[i].layer && nodes[j].label == nodes[i].label {
			j++
		}
		ties = append(ties, seq(i, j))
		i = j
	}
	count := 1
	for _, t := range ties {
		for k := 2; k <= len(t); k++ {
			count *= k
		}
		count = min(count, maxNumberings+1)
	}
	var best []SignatureEdge
	bestText := ""
	try := func(order []int) {
		role := map[string]string{}
		for _, t := range ties {
			for k, i := range t {
				n := nodes[order[i]]
				role[n.name] = fmt.Sprintf("L%d:%s", n.layer, n.label)
				if len(t) > 1 {
					role[n.name] += fmt.Sprintf("#%d", k+1)
				}
			}
		}
		es := renamed(edges, role)
		if text := (Signature{Edges: es}).String(); best == nil || text < bestText {
			best, bestText = es, text
		}
	}
	order := seq(0, len(nodes))
	if count > maxNumberings {
		try(order)
	} else {
		permuteTies(order, ties, 0, try)
	}
	if len(edges) == 0 {
		best = nil
	}
	return Signature{Edges: best}, nil
}

// renamed is edges with heads named by role, in order of their names.
func renamed(edges []EdgeResult, role map[string]string) []SignatureEdge {
	es := make([]SignatureEdge, 0, len(edges))
	for _, e := range edges {
		from := cmp.Or(role[e.From], e.From)
		to := e.To
		if h := headOf(e.To); role[h] != "" {
			to = role[h] + strings.TrimPrefix(e.To, h)
		}
		es = append(es, SignatureEdge{From: from, To: to, Effect: e.Effect})
	}
	slices.SortFunc(es, func(a, b SignatureEdge) int { return strings.Compare(a.String(), b.String()) })
	return es
}

// permuteTies calls try with every order that permutes the positions of
// each tie among themselves, from tie t on.
func permuteTies(order []int, ties [][]int, t int, try func([]int)) {
	if t == len(ties) {
		try(order)
		return
	}
	tie := ties[t]
	var permute func(k int)
	permute = func(k int) {
		if k == len(tie) {
			permuteTies(order, ties, t+1, try)
			return
		}
		for i := k; i < len(tie); i++ {
			order[tie[k]], order[tie[i]] = order[tie[i]], order[tie[k]]
			permute(k + 1)
			order[tie[k]], order[tie[i]] = order[tie[i]], order[tie[k]]
		}
	}
	permute(0)
}

// headOf is the head a receiver's name belongs to ("L1H0" of "L1H0.k"),
// "" for an MLP or the logits.
func headOf(receiver string) string {
	h, _, ok := strings.Cut(receiver, ".")
	if !ok {
		return ""
	}
	return h
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// WeakEffect is the grouping rule's line (docs/circuits.md, "Atlas"),
// fixed before any atlas run: an edge of a signature is weak when its
// path-patching effect, averaged over the runs of that signature, is
// below this share of the logit difference in magnitude (every edge of a
// signature has at least SignatureEffect in each run).
const WeakEffect = 0.2

// Weak reports whether e is a weak edge.
func (e SignatureEdge) Weak() bool { return math.Abs(e.Effect) < WeakEffect }

// Signed is one run's signature: which run (an index the caller keeps)
// and its circuit.
type Signed struct {
	Run       int
	Signature Signature
}

// Mechanism is a group of runs whose signatures are the same or one weak
// edge apart: its founding signature (its most common, effects averaged
// over its runs), the signatures merged into it, and its runs (the
// callers' indices, in the order given).
type Mechanism struct {
	Signature Signature
	Merged    []string
	Runs      []int
}

// GroupMechanisms groups runs into mechanisms by the atlas's rule
// (docs/circuits.md, "Atlas"): runs of one signature String form a
// class, each edge's effect the mean over the class's runs; classes are
// taken most common first (ties: the lesser String first); each joins the
// first mechanism, in order of founding, whose founding class differs
// from it by exactly one edge that is weak where it is present, or else
// founds a new one. Mechanisms come in order of founding.
func GroupMechanisms(runs []Signed) []Mechanism {
	type class struct {
		sig  Signature
		text string
		runs []int
	}
	byText := map[string]*class{}
	var classes []*class
	for i, r := range runs {
		text := r.Signature.String()
		c := byText[text]
		if c == nil {
			c = &class{sig: Signature{Edges: slices.Clone(r.Signature.Edges)}, text: text}
			for k := range c.sig.Edges {
				c.sig.Edges[k].Effect = 0
			}
			byText[text] = c
			classes = append(classes, c)
		}
		c.runs = append(c.runs, i)
		for k, e := range r.Signature.Edges {
			c.sig.Edges[k].Effect += e.Effect
		}
	}
	for _, c := range classes {
		for k := range c.sig.Edges {
			c.sig.Edges[k].Effect /= float64(len(c.runs))
		}
	}
	sort.SliceStable(classes, func(a, b int) bool {
		if len(classes[a].runs) != len(classes[b].runs) {
			return len(classes[a].runs) > len(classes[b].runs)
		}
		return classes[a].text < classes[b].text
	})
	var ms []Mechanism
	var founders []Signature
	for _, c := range classes {
		at := slices.IndexFunc(founders, func(f Signature) bool { return OneWeakEdgeApart(f, c.sig) })
		if at < 0 {
			ms = append(ms, Mechanism{Signature: c.sig})
			founders = append(founders, c.sig)
			at = len(ms) - 1
		} else {
			ms[at].Merged = append(ms[at].Merged, c.text)
		}
		for _, i := range c.runs {
			ms[at].Runs = append(ms[at].Runs, runs[i].Run)
		}
	}
	for i := range ms {
		slices.Sort(ms[i].Runs)
	}
	return ms
}

// OneWeakEdgeApart reports whether a and b differ by exactly one edge
// (by name) and that edge is weak in the signature that has it.
func OneWeakEdgeApart(a, b Signature) bool {
	only := func(x, y Signature) []SignatureEdge {
		var out []SignatureEdge
		for _, e := range x.Edges {
			if !slices.ContainsFunc(y.Edges, func(f SignatureEdge) bool { return f.String() == e.String() }) {
				out = append(out, e)
			}
		}
		return out
	}
	diff := append(only(a, b), only(b, a)...)
	return len(diff) == 1 && diff[0].Weak()
}

// Has reports whether s holds an edge from a head of role from (in any
// layer) into the given input of a head of role to: Has(LabelPreviousToken,
// LabelInduction, "k") is the induction circuit's composition.
func (s Signature) Has(from, to, input string) bool {
	return slices.ContainsFunc(s.Edges, func(e SignatureEdge) bool {
		return roleOf(e.From) == from && roleOf(strings.TrimSuffix(e.To, "."+input)) == to && strings.HasSuffix(e.To, "."+input)
	})
}

// roleOf is the role of a role-named head node ("induction" of
// "L1:induction#2"), "" for another node.
func roleOf(node string) string {
	_, role, ok := strings.Cut(node, ":")
	if !ok {
		return ""
	}
	role, _, _ = strings.Cut(role, "#")
	return role
}
