package inspect

import (
	"math"
	"slices"
	"strings"
	"testing"

	"headlab/analysis"
	"headlab/backend/cpu"
	"headlab/tasks"
	"headlab/train"
)

func evaluatorOf(t *testing.T, m *train.Model) *train.Evaluator {
	t.Helper()
	e, err := train.NewEvaluator(m, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestAblatorOnIdenticalExamples: on a batch of one example repeated,
// a head's mean over the batch and its output on another example are its
// own output, so mean and resample ablation change no bit of the loss,
// while zero ablation of the same head does; and the Ablator refuses a
// batch it did not measure, and resampling one example.
func TestAblatorOnIdenticalExamples(t *testing.T) {
	m := trained(t, 100)
	e := evaluatorOf(t, m)
	one := firstExamples(train.HeldOut(m), 1)
	b := &tasks.Batch{N: 300, T: one.T}
	for range b.N {
		b.Tokens, b.Targets = append(b.Tokens, one.Tokens...), append(b.Targets, one.Targets...)
	}
	held := []*tasks.Batch{b}
	intact, err := e.Snapshot(held, train.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	off := [][][]bool{{{false, true}, {true, false}}}
	for _, method := range Ablations {
		a, err := NewAblator(e, held, method)
		if err != nil {
			t.Fatal(err)
		}
		sn, err := a.Snapshot(held, train.SnapshotOptions{Off: off})
		if err != nil {
			t.Fatal(err)
		}
		same := sn[0].Loss == intact[0].Loss
		if same != (method != AblateZero) {
			t.Errorf("%s ablation: loss %v, intact %v", method, sn[0].Loss, intact[0].Loss)
		}
	}
	a, err := NewAblator(e, held, AblateMean)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Snapshot([]*tasks.Batch{train.HeldOut(m)}, train.SnapshotOptions{Off: off}); err == nil {
		t.Error("an ablator ran a batch it did not measure")
	}
	if _, err := NewAblator(e, []*tasks.Batch{one}, AblateResample); err == nil {
		t.Error("resample ablation of a single example")
	}
	if _, err := ParseAblation("median"); err == nil || !strings.Contains(err.Error(), "zero, mean, resample") {
		t.Errorf("ParseAblation(median): %v", err)
	}
}

// TestAblationMethodsDiffer: on held-out examples mean and resample
// ablation are not zero ablation, nor each other, and each head's
// ablated accuracy in a report is the method's.
func TestAblationMethodsDiffer(t *testing.T) {
	m := trained(t, 300)
	acc := map[Ablation][]float64{}
	for _, method := range Ablations {
		r, _, err := Analyze(m, cpu.New(), Options{Ablation: method})
		if err != nil {
			t.Fatal(err)
		}
		if r.Ablation != method {
			t.Errorf("report of %s ablation says %s", method, r.Ablation)
		}
		for _, h := range r.Heads {
			acc[method] = append(acc[method], h.AblatedAccuracy)
		}
	}
	if slices.Equal(acc[AblateZero], acc[AblateMean]) || slices.Equal(acc[AblateMean], acc[AblateResample]) {
		t.Errorf("ablated accuracies: %v", acc)
	}
	// Further methods beside a report's own are each method's own
	// report's, bit for bit; the report's own is its ablated accuracy.
	r, _, err := Analyze(m, cpu.New(), Options{Ablation: AblateMean, Methods: Ablations})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range r.Heads {
		for _, method := range Ablations {
			if h.AblatedBy[method] != acc[method][i] {
				t.Errorf("%s off alone by %s beside mean: %v, its own report %v", h.Name, method, h.AblatedBy[method], acc[method][i])
			}
		}
		if h.AblatedAccuracy != h.AblatedBy[AblateMean] {
			t.Errorf("%s: ablated accuracy %v, by its own method %v", h.Name, h.AblatedAccuracy, h.AblatedBy[AblateMean])
		}
	}
}

// TestLensLayer: the first point of the lens at 90% of the output's
// accuracy or more, inclusive whatever the rounding (0.9*0.8 is
// 0.7200000000000001 in float64, and 0.72 reaches it); the output itself
// when nothing earlier does; the embeddings when the output has nothing.
func TestLensLayer(t *testing.T) {
	lens := func(accs ...float64) *AttributionReport {
		r := &AttributionReport{}
		for _, a := range accs {
			r.Lens = append(r.Lens, LensLayer{Accuracy: a})
		}
		return r
	}
	for _, c := range []struct {
		accs []float64
		want int
	}{
		{[]float64{0.1, 0.5, 0.9, 1}, 2},
		{[]float64{0.1, 0.89, 1}, 2},
		{[]float64{0.95, 0.2, 1}, 0},
		{[]float64{0.1, 0.72, 0.8}, 1},
		{[]float64{0.1, 0.7199, 0.8}, 2},
		{[]float64{0, 0}, 0},
	} {
		if got := lens(c.accs...).LensLayer(); got != c.want {
			t.Errorf("lens %v: layer %d, want %d", c.accs, got, c.want)
		}
	}
}

// TestCorrupt: the first-half corruption replaces every first-half
// token by one the example does not hold (so no second-half token has an
// earlier copy) and keeps the second half and the targets; "other" is the
// next example; tasks without a corruption are refused, naming those
// with it.
func TestCorrupt(t *testing.T) {
	for _, name := range []string{"induction", "induction-unseen"} {
		task, _ := tasks.New(name)
		b := tasks.NewStream(task, 3, tasks.HeldOut).Next(40)
		c, err := Corrupt(task, CorruptFirstHalf, b)
		if err != nil {
			t.Fatal(err)
		}
		T, half := b.T, b.T/2
		for n := range b.N {
			clean, bad := b.Tokens[n*T:(n+1)*T], c.Tokens[n*T:(n+1)*T]
			if !slices.Equal(clean[half:], bad[half:]) {
				t.Fatalf("%s example %d: the second half changed", name, n)
			}
			for _, v := range bad[:half] {
				if slices.Contains(clean, v) || v >= trainedVocab(task) {
					t.Fatalf("%s example %d: first half %v holds %d (clean %v)", name, n, bad[:half], v, clean)
				}
			}
		}
		if !slices.Equal(c.Targets, b.Targets) {
			t.Error("the corruption changed the targets")
		}
	}
	maj, _ := tasks.New("majority")
	b := tasks.NewStream(maj, 1, tasks.HeldOut).Next(5)
	c, err := Corrupt(maj, CorruptOther, b)
	if err != nil {
		t.Fatal(err)
	}
	for n := range b.N {
		j := Derangement(n, b.N)
		if j == n || !slices.Equal(c.Tokens[n*b.T:(n+1)*b.T], b.Tokens[j*b.T:(j+1)*b.T]) {
			t.Fatalf("example %d's corrupted run is not example %d", n, j)
		}
	}
	err = CheckCorruption(maj, CorruptFirstHalf)
	if err == nil || !strings.Contains(err.Error(), "induction, induction-unseen") {
		t.Errorf("majority first-half: %v", err)
	}
	if _, err := Corrupt(maj, CorruptOther, firstExamples(b, 1)); err == nil {
		t.Error("another example of a batch of one")
	}
}

// TestAttributionSumsToLogit: on every shape of model the parts of every
// answer's logit sum to it within 1e-4, the mean parts sum to the mean
// logit, and the logit lens read after the last block is the model's own
// accuracy.
func TestAttributionSumsToLogit(t *testing.T) {
	for _, c := range []train.Config{train.Defaults("induction"), train.Defaults("majority"), train.Defaults("copy"), train.Defaults("reverse")} {
		c.Steps = 60
		switch c.Task {
		case "reverse": // attention-only: no MLP part
			c.NoMLP, c.DFF = true, 0
		case "majority":
			c.Positions, c.TiedEmbeddings, c.Heads = false, true, 4
		case "copy":
			c.Causal = false
		}
		m, _, err := train.Run(c, cpu.New(), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := evaluatorOf(t, m)
		rs, err := Attribute(e, 300, 5)
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		if r.MaxResidual > 1e-4 || r.Answers == 0 {
			t.Errorf("%s: parts sum to the logit within %g over %d answers", c.Task, r.MaxResidual, r.Answers)
		}
		var sum float64
		for _, p := range r.Parts {
			sum += p.Logit
		}
		if math.Abs(sum-r.Logit) > 1e-4 {
			t.Errorf("%s: the mean parts sum to %v, the mean logit is %v", c.Task, sum, r.Logit)
		}
		sn, err := e.Snapshot([]*tasks.Batch{firstExamples(train.HeldOut(m), 300)}, train.SnapshotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if out := r.Lens[len(r.Lens)-1]; out.Name != "out" || out.Accuracy != sn[0].Accuracy || len(r.Lens) != c.Layers+1 {
			t.Errorf("%s: lens %+v, the model's accuracy %v", c.Task, r.Lens, sn[0].Accuracy)
		}
		mlps := 0
		for _, p := range r.Parts {
			if p.Kind == PartMLP {
				mlps++
			}
			if got, ok := r.HeadLogit(p.Layer, p.Head); ok != (p.Kind == PartHead) || ok && got != p.Logit {
				t.Errorf("%s: HeadLogit(%d, %d) = %v, %v; the part %s is %v", c.Task, p.Layer, p.Head, got, ok, p.Name, p.Logit)
			}
		}
		if want := map[bool]int{false: c.Layers, true: 0}[c.NoMLP]; mlps != want {
			t.Errorf("%s: %d MLP parts, want %d", c.Task, mlps, want)
		}
		logit, parts := r.PerExample(4)
		var ex float64
		for _, v := range parts {
			ex += v
		}
		if math.Abs(ex-logit) > 1e-4 {
			t.Errorf("%s: example 4's parts sum to %v, its logit %v", c.Task, ex, logit)
		}
	}
}

// TestPatchLocatesInductionHeads: on a default induction model trained
// past its phase change, the first-half corruption takes the answer away,
// the clean run restores it, and the heads patching locates include
// every head labelled induction; patching the residual stream entering
// block 0 at a second-half position restores nothing (its token is not
// corrupted).
func TestPatchLocatesInductionHeads(t *testing.T) {
	m := trained(t, 400)
	e := evaluatorOf(t, m)
	reps, _, err := AnalyzeAll(e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := Patch(e, PatchOptions{Examples: 60, PerExample: 3})
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	if p.Corruption != CorruptFirstHalf || p.Clean.Accuracy < 0.9 || p.Corrupted.Accuracy > 0.4 {
		t.Fatalf("clean %+v, corrupted %+v under %s", p.Clean, p.Corrupted, p.Corruption)
	}
	labelled := 0
	for _, h := range reps[0].Heads {
		if h.Label == analysis.LabelInduction {
			labelled++
			if !slices.Contains(p.Located, h.Name) {
				t.Errorf("%s is labelled induction; patching locates %v", h.Name, p.Located)
			}
		}
	}
	if labelled == 0 {
		t.Fatal("no head labelled induction after 400 steps")
	}
	if v := p.Resid[0].LogitDiff[12]; v != 0 {
		t.Errorf("patching resid L0 at position 12 restored %v", v)
	}
	heads, resid := p.PerExample(2)
	if len(heads) != 4 || len(resid) != 2 || len(heads[0]) != m.Shape.SeqLen {
		t.Errorf("per example: %d heads, %d residuals", len(heads), len(resid))
	}
	only, err := Patch(e, PatchOptions{Examples: 60, Layers: []int{1}, Positions: []int{9, 12}})
	if err != nil {
		t.Fatal(err)
	}
	if q := only[0]; len(q.Heads) != 2 || len(q.Resid) != 1 || !slices.Equal(q.Positions, []int{9, 12}) || q.Heads[0].LogitDiff[1] != p.Heads[2].LogitDiff[12] {
		t.Errorf("block 1 at 9 and 12: %+v", q)
	}
	if _, err := Patch(e, PatchOptions{Examples: 60, Positions: []int{16}}); err == nil {
		t.Error("patched position 16 of 16")
	}
}

// TestMix: SplitMix64's first outputs from seed 0 (Vigna's reference).
func TestMix(t *testing.T) {
	for k, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := Mix(uint64(k)); got != want {
			t.Errorf("Mix(%d) = %#x, want %#x", k, got, want)
		}
	}
	b := RepeatedTokens(3, 15, 5)
	for n := range 3 {
		for i := range 15 {
			if v := b.Tokens[n*15+i]; v != b.Tokens[n*15+i%7] || v >= 5 || b.Targets[n*15+i] != tasks.NoTarget {
				t.Fatalf("sequence %d: %v", n, b.Tokens[n*15:(n+1)*15])
			}
		}
	}
}
