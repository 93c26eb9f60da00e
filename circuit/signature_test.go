package circuit

import (
	"maps"
	"math"
	"strings"
	"testing"

	"headlab/analysis"
)

func edge(from, to string, effect float64) EdgeResult {
	return EdgeResult{From: from, To: to, Edge: from + " -> " + to, Effect: effect, InCircuit: true}
}

// swapHeads renames head a of layer l as b and b as a in every edge and
// label: the same circuit learned by the other head.
func swapHeads(edges []EdgeResult, labels map[string]string, a, b string) ([]EdgeResult, map[string]string) {
	sw := func(s string) string {
		h := headOf(s)
		name := s
		if h == "" {
			h = s
			name = ""
		}
		switch h {
		case a:
			h = b
		case b:
			h = a
		default:
			return s
		}
		if name == "" {
			return h
		}
		return h + strings.TrimPrefix(s, headOf(s))
	}
	var out []EdgeResult
	for _, e := range edges {
		out = append(out, edge(sw(e.From), sw(e.To), e.Effect))
	}
	ls := map[string]string{}
	for k, v := range labels {
		ls[sw(k)] = v
	}
	return out, ls
}

func mustSign(t *testing.T, edges []EdgeResult, labels map[string]string) Signature {
	t.Helper()
	s, err := NewSignature(edges, labels)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSignatureIgnoresHeadOrder: the induction circuit learned by head 0
// or head 1 of each layer has one signature, and so does a layer with two
// heads of one role whichever of them reads what.
func TestSignatureIgnoresHeadOrder(t *testing.T) {
	labels := map[string]string{"L0H0": analysis.LabelPreviousToken, "L0H1": analysis.LabelAttentionSink,
		"L1H0": analysis.LabelInduction, "L1H1": analysis.LabelInduction}
	edges := []EdgeResult{
		edge("L0H0", "L1H0.k", 0.6), edge("embed", "L1H0.q", 0.3), edge("L1H0", "logits", 0.7),
		edge("embed", "L1H1.v", 0.2), edge("L1H1", "logits", 0.1), edge("pos_embed", "L0H0.q", 0.14), edge("mlp0", "L1H0.k", 0.04),
	}
	want := mustSign(t, edges, labels)
	if strings.Contains(want.String(), "mlp0") || len(want.Edges) != len(edges)-1 {
		t.Fatalf("signature %q: want every edge but the one below SignatureEffect", want)
	}
	if !strings.Contains(want.String(), "L0:previous-token -> L1:induction#") {
		t.Fatalf("signature %q lacks the previous-token head's edge into an induction head", want)
	}
	for _, pair := range [][2]string{{"L0H0", "L0H1"}, {"L1H0", "L1H1"}} {
		e2, l2 := swapHeads(edges, labels, pair[0], pair[1])
		if got := mustSign(t, e2, l2); got.String() != want.String() {
			t.Errorf("heads %s and %s swapped: signature\n%s\nwant\n%s", pair[0], pair[1], got, want)
		}
	}
	// Edges in another order: the same signature.
	rev := make([]EdgeResult, len(edges))
	for i, e := range edges {
		rev[len(edges)-1-i] = e
	}
	if got := mustSign(t, rev, labels); got.String() != want.String() {
		t.Errorf("edges reversed: %s, want %s", got, want)
	}
	// A different edge (the key read through the query instead): a
	// different signature.
	other := append([]EdgeResult{}, edges...)
	other[0] = edge("L0H0", "L1H0.q", 0.6)
	if got := mustSign(t, other, labels); got.String() == want.String() {
		t.Errorf("an edge into the query instead of the key gave the same signature %s", got)
	}
	// A different role: a different signature.
	l3 := map[string]string{"L0H0": analysis.LabelMatching, "L1H0": analysis.LabelInduction, "L1H1": analysis.LabelInduction}
	if got := mustSign(t, edges, l3); got.String() == want.String() {
		t.Errorf("another role gave the same signature %s", got)
	}
	if !want.Has(analysis.LabelPreviousToken, analysis.LabelInduction, "k") || want.Has(analysis.LabelPreviousToken, analysis.LabelInduction, "q") {
		t.Errorf("Has on %s: want the key's composition and not the query's", want)
	}
}

// TestSignatureRoundTrip: the stored form reads back as the same
// signature, and malformed text is refused.
func TestSignatureRoundTrip(t *testing.T) {
	s := mustSign(t, []EdgeResult{edge("L0H1", "L1H0.k", 0.5), edge("L1H0", "logits", 0.8), edge("mlp0", "L1H0.v", 0.1)},
		map[string]string{"L0H1": analysis.LabelPreviousToken, "L1H0": analysis.LabelInduction})
	back, err := ParseSignature(s.String())
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != s.String() || len(back.Edges) != 3 {
		t.Errorf("read back %q, want %q", back, s)
	}
	if e, err := ParseSignature(EmptySignature); err != nil || len(e.Edges) != 0 {
		t.Errorf("empty: %v, %v", e, err)
	}
	if got := mustSign(t, nil, nil).String(); got != EmptySignature {
		t.Errorf("no edges: %q", got)
	}
	for _, bad := range []string{"", "L0:x", "b -> c; a -> b", "a -> b -> c"} {
		if _, err := ParseSignature(bad); err == nil {
			t.Errorf("ParseSignature(%q) accepted", bad)
		}
	}
}

func sig(effects map[string]float64) Signature {
	var es []EdgeResult
	for name, eff := range effects {
		from, to, _ := strings.Cut(name, " -> ")
		es = append(es, edge(from, to, eff))
	}
	s, _ := NewSignature(es, nil)
	return s
}

// TestGroupMechanisms: a signature one weak edge from a more common one
// joins it; one strong edge apart, or two weak edges apart, founds its
// own; mechanisms come most common first.
func TestGroupMechanisms(t *testing.T) {
	base := map[string]float64{"embed -> logits": 0.5, "pos_embed -> logits": 0.4}
	plusWeak := map[string]float64{"embed -> logits": 0.5, "pos_embed -> logits": 0.4, "mlp0 -> logits": 0.12}
	plusStrong := map[string]float64{"embed -> logits": 0.5, "pos_embed -> logits": 0.4, "mlp1 -> logits": 0.3}
	plusTwoWeak := map[string]float64{"embed -> logits": 0.5, "pos_embed -> logits": 0.4, "mlp0 -> logits": 0.12, "L0H0 -> logits": 0.11, "mlp1 -> L0H0.v": 0.03}
	var runs []Signed
	add := func(n int, effects map[string]float64) {
		for range n {
			runs = append(runs, Signed{Run: len(runs), Signature: sig(effects)})
		}
	}
	add(1, plusWeak)
	add(3, base)
	add(2, plusStrong)
	add(1, plusTwoWeak)
	ms := GroupMechanisms(runs)
	if len(ms) != 3 {
		t.Fatalf("%d mechanisms, want 3: %+v", len(ms), ms)
	}
	if got := ms[0].Runs; len(got) != 4 || got[0] != 0 {
		t.Errorf("the first mechanism's runs %v: want the 3 of the base signature and the one a weak edge away", got)
	}
	if ms[0].Signature.String() != sig(base).String() || len(ms[0].Merged) != 1 {
		t.Errorf("first mechanism %s merged %v", ms[0].Signature, ms[0].Merged)
	}
	if len(ms[1].Runs) != 2 || len(ms[2].Runs) != 1 {
		t.Errorf("runs per mechanism %d, %d: want 2 (a strong edge apart) and 1 (two weak edges apart)", len(ms[1].Runs), len(ms[2].Runs))
	}
	// The weak edge is judged by its mean effect over its class's runs.
	var mixed []Signed
	for i, eff := range []float64{0.12, 0.3, 0.3} {
		e := maps.Clone(plusWeak)
		e["mlp0 -> logits"] = eff
		mixed = append(mixed, Signed{Run: i, Signature: sig(e)})
	}
	mixed = append(mixed, Signed{Run: 3, Signature: sig(base)})
	if ms := GroupMechanisms(mixed); len(ms) != 2 || math.Abs(ms[0].Signature.Edges[1].Effect-0.72/3) > 1e-12 {
		t.Errorf("a class whose extra edge is strong on average: %+v, want 2 mechanisms, its mean effect first", ms)
	}
	if !OneWeakEdgeApart(sig(base), sig(plusWeak)) || OneWeakEdgeApart(sig(base), sig(plusStrong)) || OneWeakEdgeApart(sig(base), sig(base)) {
		t.Error("OneWeakEdgeApart: want true for one weak edge, false for a strong one or none")
	}
}
