package train

import (
	"math"
	"slices"
	"testing"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/internal/faultdev"
	"headlab/kernels"
	"headlab/tasks"
)

// trained is a group of the given induction seeds after a few steps, on dev.
func trained(t *testing.T, dev kernels.Device, steps int, seeds ...uint64) *Group {
	t.Helper()
	var cs []Config
	for _, s := range seeds {
		c := Defaults("induction")
		c.Seed, c.Steps = s, steps
		cs = append(cs, c)
	}
	g, err := NewGroup(cs, dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	for range steps {
		if err := g.TrainStep(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	return g
}

func evaluator(t *testing.T, g *Group) *Evaluator {
	t.Helper()
	e, err := g.Evaluator()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// firstOf is a view of the first n examples of b.
func firstOf(b *tasks.Batch, n int) *tasks.Batch {
	return &tasks.Batch{N: n, T: b.T, Tokens: b.Tokens[:n*b.T], Targets: b.Targets[:n*b.T]}
}

func sameSnapshot(t *testing.T, what string, got, want Snapshot) {
	t.Helper()
	if got.Accuracy != want.Accuracy || got.Loss != want.Loss {
		t.Errorf("%s: accuracy %v loss %v, want %v and %v", what, got.Accuracy, got.Loss, want.Accuracy, want.Loss)
	}
	if (got.Attention == nil) != (want.Attention == nil) {
		t.Fatalf("%s: attention %v, want %v", what, got.Attention != nil, want.Attention != nil)
	}
	if got.Attention != nil {
		if !slices.Equal(got.Attention.Probs, want.Attention.Probs) || !slices.Equal(got.Attention.Tokens, want.Attention.Tokens) {
			t.Errorf("%s: attention differs", what)
		}
	}
	if !slices.Equal(got.Logits, want.Logits) {
		t.Errorf("%s: logits differ", what)
	}
}

// TestSnapshotAgreesWithTwoPasses: one pass over the held-out set gives
// the accuracy and loss of a pass without attention and, bit for bit, the
// attention and logits of a pass over the captured examples alone (the
// previous path ran both; the captured examples were a batch of their
// own, padded). Accuracy and loss are also those the logits imply.
func TestSnapshotAgreesWithTwoPasses(t *testing.T) {
	g := trained(t, cpu.New(), 40, 1)
	e := evaluator(t, g)
	held := firstOf(HeldOut(g.Models[0]), 2*EvalChunk+17) // a partial last pass
	const K = EvalChunk + 6                               // the attention spans two passes
	one, err := e.Snapshot([]*tasks.Batch{held}, SnapshotOptions{Attention: K, Logits: true})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := e.Snapshot([]*tasks.Batch{held}, SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if acc[0].Attention != nil || acc[0].Logits != nil {
		t.Fatal("a snapshot that asked for no attention read some back")
	}
	capt, err := e.Snapshot([]*tasks.Batch{firstOf(held, K)}, SnapshotOptions{Attention: K, Logits: true})
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "single pass vs accuracy pass", Snapshot{Accuracy: one[0].Accuracy, Loss: one[0].Loss}, acc[0])
	sameSnapshot(t, "single pass vs capture pass", Snapshot{Attention: one[0].Attention, Logits: one[0].Logits},
		Snapshot{Attention: capt[0].Attention, Logits: capt[0].Logits})

	a := one[0].Attention
	c := g.Models[0].Shape
	if a.N != K || a.L != c.Layers || a.H != c.Heads || a.T != c.SeqLen || a.Causal != c.Causal {
		t.Fatalf("attention of %d x %d x %d x %d (causal %v)", a.N, a.L, a.H, a.T, a.Causal)
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Tokens, held.Tokens[:K*held.T]) {
		t.Fatal("the attention's tokens are not the examples'")
	}

	// The captured examples' accuracy and loss from their logits, on the host.
	V, T := c.Vocab, c.SeqLen
	right, total, loss := 0, 0, 0.0
	for r := range K * T {
		tg := held.Targets[r]
		if tg < 0 {
			continue
		}
		row := one[0].Logits[r*V : (r+1)*V]
		best, mx := 0, row[0]
		for j, x := range row {
			if x > row[best] {
				best = j
			}
			mx = max(mx, x)
		}
		z := 0.0
		for _, x := range row {
			z += math.Exp(float64(x - mx))
		}
		loss += math.Log(z) - float64(row[tg]-mx)
		total++
		if best == tg {
			right++
		}
	}
	if acc := float64(right) / float64(total); acc != capt[0].Accuracy {
		t.Errorf("accuracy %v, the logits say %v", capt[0].Accuracy, acc)
	}
	if l := loss / float64(total); math.Abs(l-capt[0].Loss) > 1e-5*max(1, l) {
		t.Errorf("loss %v, the logits say %v", capt[0].Loss, l)
	}
}

// TestSnapshotOnePass: a snapshot that reads everything back runs the
// graph once per EvalChunk examples, and calls OnDevice once per layer of
// every pass, before it returns.
func TestSnapshotOnePass(t *testing.T) {
	dev := &faultdev.Passes{Device: cpu.New()}
	g := trained(t, dev, 2, 1, 2)
	e := evaluator(t, g)
	held := e.HeldOutAll()
	L := g.Models[0].Shape.Layers
	var firsts []int
	calls := 0
	dev.N = 0
	_, err := e.Snapshot(held, SnapshotOptions{Attention: 300, Logits: true, Off: [][][]bool{{{true}}},
		OnDevice: func(first, l int, probs kernels.Tensor) error {
			if probs.Len == 0 {
				t.Error("OnDevice: an empty tensor")
			}
			calls++
			if l == 0 {
				firsts = append(firsts, first)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	want := (HeldOutExamples + EvalChunk - 1) / EvalChunk
	if dev.N != want {
		t.Errorf("%d passes over %d examples, want %d", dev.N, HeldOutExamples, want)
	}
	if !slices.Equal(firsts, []int{0, 250, 500, 750}) || calls != want*L {
		t.Errorf("OnDevice: %d calls, passes at %v; want %d layers of 4 passes", calls, firsts, L)
	}
	dev.N = 0
	if _, err := e.Snapshot([]*tasks.Batch{QuickHeldOut(g.Models[0]), QuickHeldOut(g.Models[1])}, SnapshotOptions{Attention: 64}); err != nil {
		t.Fatal(err)
	}
	if dev.N != 1 {
		t.Errorf("QuickHeldOut took %d passes, want 1", dev.N)
	}
}

// TestSnapshotIndependentOfGroup: a seed's snapshot is the same, bit for
// bit, whichever seeds share its group, and each model's own mask applies
// to it alone.
func TestSnapshotIndependentOfGroup(t *testing.T) {
	alone := trained(t, cpu.New(), 5, 2)
	many := trained(t, cpu.New(), 5, 3, 2, 1)
	ea, em := evaluator(t, alone), evaluator(t, many)
	off := [][]bool{{false, true}, {false, false}}
	o := SnapshotOptions{Attention: 20, Logits: true}
	o.Off = [][][]bool{off}
	sa, err := ea.Snapshot(ea.HeldOutAll(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.Off = [][][]bool{{{true, true}}, off, nil}
	sm, err := em.Snapshot(em.HeldOutAll(), o)
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "seed 2 in a group of 3", sm[1], sa[0])
	if sm[0].Accuracy == sm[1].Accuracy && sm[0].Loss == sm[1].Loss {
		t.Error("seeds 3 and 2 give the same snapshot")
	}
	// Seed 1 was evaluated with every head on.
	e1 := evaluator(t, trained(t, cpu.New(), 5, 1))
	s1, err := e1.Snapshot(e1.HeldOutAll(), SnapshotOptions{Attention: 20, Logits: true})
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "seed 1 in a group of 3", sm[2], s1[0])
}

// TestSnapshotGates: switching a head off is zeroing its rows of the
// output projection, and the mask lasts one snapshot only.
func TestSnapshotGates(t *testing.T) {
	g := trained(t, cpu.New(), 30, 1)
	m := g.Models[0]
	e, err := NewEvaluator(m, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	held := []*tasks.Batch{HeldOut(m)}
	intact, err := e.Snapshot(held, SnapshotOptions{Attention: 8, Logits: true})
	if err != nil {
		t.Fatal(err)
	}
	off := [][]bool{{false, false}, {true, false}}
	gated, err := e.Snapshot(held, SnapshotOptions{Off: [][][]bool{off}, Attention: 8, Logits: true})
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Snapshot(held, SnapshotOptions{Attention: 8, Logits: true})
	if err != nil {
		t.Fatal(err)
	}
	sameSnapshot(t, "after a masked snapshot", again[0], intact[0])
	if slices.Equal(gated[0].Logits, intact[0].Logits) {
		t.Fatal("switching L1H0 off changed nothing")
	}

	// The same model with L1H0's output rows of the projection zeroed.
	c := m.Shape
	zeroed := &Model{Train: m.Train, Shape: c, Task: m.Task, Weights: graph.NewWeights(c)}
	for i, p := range zeroed.Weights.Params {
		copy(p.Data, m.Weights.Params[i].Data)
	}
	w := zeroed.Weights.Get("blocks.1.attn.out.weight") // [in, out]
	dh := c.HeadDim()
	clear(w.Data[0*dh*c.DModel : 1*dh*c.DModel])
	ez, err := NewEvaluator(zeroed, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer ez.Close()
	ref, err := ez.Snapshot(held, SnapshotOptions{Attention: 8, Logits: true})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(gated[0].Accuracy-ref[0].Accuracy) > 1e-9 || math.Abs(gated[0].Loss-ref[0].Loss) > 1e-6 {
		t.Errorf("gated: accuracy %v loss %v; zeroed projection: %v and %v", gated[0].Accuracy, gated[0].Loss, ref[0].Accuracy, ref[0].Loss)
	}
	for i, x := range gated[0].Logits {
		if d := math.Abs(float64(x - ref[0].Logits[i])); d > 1e-5 {
			t.Fatalf("logit %d: %v gated, %v with the projection zeroed", i, x, ref[0].Logits[i])
		}
	}
}

// TestSnapshotRefuses: batches that do not fit the models.
func TestSnapshotRefuses(t *testing.T) {
	g := trained(t, cpu.New(), 0, 1, 2)
	e := evaluator(t, g)
	held := e.HeldOutAll()
	for name, call := range map[string]func() error{
		"one batch for two models": func() error {
			_, err := e.Snapshot(held[:1], SnapshotOptions{})
			return err
		},
		"batches of different sizes": func() error {
			_, err := e.Snapshot([]*tasks.Batch{held[0], firstOf(held[1], 10)}, SnapshotOptions{})
			return err
		},
		"three masks for two models": func() error {
			_, err := e.Snapshot(held, SnapshotOptions{Off: make([][][]bool, 3)})
			return err
		},
		"negative attention": func() error {
			_, err := e.Snapshot(held, SnapshotOptions{Attention: -1})
			return err
		},
	} {
		if call() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSnapshotProbe: a Snapshot on the probed graph, with nothing staged
// or with heads off, is the plain one bit for bit; its hooks run once per
// pass, in order, with the pass's examples; and what Stage stages changes
// the result.
func TestSnapshotProbe(t *testing.T) {
	g := trained(t, cpu.New(), 30, 1, 2)
	e := evaluator(t, g)
	held := e.HeldOutAll()
	for _, off := range [][][]bool{nil, {{false, true}, {false, false}}} {
		o := SnapshotOptions{Off: [][][]bool{off}, Attention: 3, Logits: true}
		want, err := e.Snapshot(held, o)
		if err != nil {
			t.Fatal(err)
		}
		var calls []int
		o.Probe = &Probe{
			Stage: func(_ *graph.Net, first, n int) error { calls = append(calls, first, n); return nil },
			Read:  func(_ *graph.Net, first, n int) error { calls = append(calls, -first, -n); return nil },
		}
		got, err := e.Snapshot(held, o)
		if err != nil {
			t.Fatal(err)
		}
		for s := range got {
			sameSnapshot(t, "probed", got[s], want[s])
		}
		if !slices.Equal(calls, []int{0, 250, 0, -250, 250, 250, -250, -250, 500, 250, -500, -250, 750, 250, -750, -250}) {
			t.Errorf("hooks called with %v", calls)
		}
	}
	zeroed, err := e.Snapshot(held, SnapshotOptions{Probe: &Probe{Stage: func(net *graph.Net, _, _ int) error {
		for s := range 2 {
			g, _, err := net.Intervention(s, graph.ResidPre, 1)
			if err != nil {
				return err
			}
			clear(g)
		}
		return nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := e.Snapshot(held, SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if zeroed[0].Loss == plain[0].Loss {
		t.Error("zeroing the residual stream before block 1 changed nothing")
	}
}
