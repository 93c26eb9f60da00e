package sweep

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/train"
)

// oldRecord is a run stored before the revised label rule: its labels
// are the first rule's (scores set so that the revised rule names L0H0
// after its cell pattern, cell), and its ablations were measured for them.
func oldRecord(seed uint64, cell string) Record {
	c := train.Defaults("induction")
	c.Seed = seed
	prevOff, indOff := 0.5, 0.2
	r := Record{Key: Key(c), Config: c, Status: StatusOK, Accuracy: 0.99, Chance: 1.0 / 7, Params: 100, Seconds: 1, FinishedAt: "2026-01-01T00:00:00Z"}
	mk := func(l, h int, label string, scores map[string]float64) inspect.Head {
		for _, p := range analysis.Patterns {
			if _, ok := scores[p]; !ok {
				scores[p] = 0
			}
		}
		return inspect.Head{HeadScore: analysis.HeadScore{Name: analysis.HeadName(l, h), Layer: l, Head: h, Label: label, Scores: scores, OffsetD: 2}, AblatedAccuracy: 0.9}
	}
	r.Heads = []inspect.Head{
		mk(0, 0, "uniform", map[string]float64{cell: 0.47, analysis.LabelUniform: 0.55}),
		mk(0, 1, "previous-token", map[string]float64{analysis.LabelPreviousToken: 0.8}),
		mk(1, 0, "induction", map[string]float64{analysis.LabelInduction: 0.9}),
	}
	r.Ablation = Ablation{Intact: 0.99,
		Induction:     Joint{Heads: []string{"L1H0"}, Accuracy: &indOff},
		PreviousToken: Joint{Heads: []string{"L0H1"}, Accuracy: &prevOff}}
	for _, h := range r.Heads {
		r.Ablation.Single = append(r.Ablation.Single, Single{h.Name, h.Label, h.AblatedAccuracy})
	}
	r.Circuit = r.FormsCircuit()
	return r
}

// TestRelabelOnRead: runs of a database written before the revised rule
// read under it, keep their first-rule circuit, and are marked for
// measuring again exactly where a circuit half's heads changed.
func TestRelabelOnRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Seed 1's L0H0 becomes a previous-token head (a circuit half
	// changes); seed 2's becomes offset -2 (neither half changes).
	for _, r := range []Record{oldRecord(1, analysis.LabelPreviousToken), oldRecord(2, analysis.PatternOffset)} {
		if !r.Circuit {
			t.Fatal("the old records should form the circuit")
		}
		if err := st.Put(&r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	ro, err := OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	recs, err := ro.Records()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	r1, r2 := recs[0], recs[1]
	if r1.Heads[0].Label != "previous-token" || r1.Ablation.Single[0].Label != "previous-token" || !r1.Remeasure || r1.Circuit ||
		!slices.Equal(r1.Ablation.PreviousToken.Heads, []string{"L0H0", "L0H1"}) || r1.Ablation.PreviousToken.Accuracy != nil {
		t.Errorf("seed 1 read as %q, remeasure %v, circuit %v, previous-token %+v", r1.Heads[0].Label, r1.Remeasure, r1.Circuit, r1.Ablation.PreviousToken)
	}
	if r2.Heads[0].Label != "offset -2" || r2.Remeasure || !r2.Circuit || *r2.Ablation.PreviousToken.Accuracy != 0.5 {
		t.Errorf("seed 2 read as %q, remeasure %v, circuit %v", r2.Heads[0].Label, r2.Remeasure, r2.Circuit)
	}
	for _, r := range recs {
		heads, first := r.Under(analysis.FirstRule)
		if heads[0].Label != "uniform" || !first.Circuit || *first.PreviousToken.Accuracy != 0.5 || r.Ablation.LabelRule != analysis.CurrentRule {
			t.Errorf("seed %d under the first rule: %q, %+v", r.Config.Seed, heads[0].Label, first)
		}
	}
	if n := ro.Note(); !strings.Contains(n, "2 runs were labelled by the first label rule") || !strings.Contains(n, "1 of them") {
		t.Errorf("note %q", n)
	}
	if ids, err := ro.Stale(); err != nil || len(ids) != 1 || ids[0].Seed != 1 {
		t.Errorf("stale %v, %v", ids, err)
	}
	// Read again, the note counts the same runs, not twice as many.
	if n := ro.Note(); !strings.Contains(n, "2 runs were labelled") {
		t.Errorf("note after a second read %q", n)
	}
	// A merge says so too, and keeps seed 1 marked for measuring again:
	// it writes the row as the database held it, not the relabelled one.
	out := filepath.Join(t.TempDir(), "merged.db")
	res, err := Merge(out, []string{path})
	if err != nil || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "1 of them") {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	mo, err := OpenExisting(out)
	if err != nil {
		t.Fatal(err)
	}
	defer mo.Close()
	if ids, err := mo.Stale(); err != nil || len(ids) != 1 || ids[0].Seed != 1 {
		t.Errorf("after the merge, stale %v, %v", ids, err)
	}
}

// TestRunReplacesStaleRuns: a sweep over a run whose circuit heads
// changed under the revised rule trains it again and replaces its row
// (the same bits, so the same record), leaving the others alone.
func TestRunReplacesStaleRuns(t *testing.T) {
	c := train.Defaults("induction")
	c.Steps = 20
	var pairs []Pair
	for _, s := range []uint64{1, 2} {
		c.Seed = s
		pairs = append(pairs, Pair{Key: Key(c), Config: c})
	}
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Workers: 1, Group: 1, NewPlatform: func() (Platform, error) { return cpuPlatform(), nil }}
	if _, err := Run(context.Background(), st, pairs, opt); err != nil {
		t.Fatal(err)
	}
	want, err := st.Records()
	if err != nil {
		t.Fatal(err)
	}
	// Seed 1 as a database of before the revision would hold it, with a
	// previous-token half the revised labels do not give.
	rawExec(t, st, `UPDATE runs SET ablation_json = json_remove(json_set(ablation_json, '$.previous_token', json('{"heads":["L1H1"],"accuracy":0.1}')), '$.label_rule', '$.first_rule') WHERE seed = 1`)
	if ids, err := st.Stale(); err != nil || len(ids) != 1 {
		t.Fatalf("stale %v, %v", ids, err)
	}
	var notes []string
	opt.Note = func(n string) { notes = append(notes, n) }
	sum, err := Run(context.Background(), st, pairs, opt)
	if err != nil || sum.Done != 1 || sum.Skipped != 1 {
		t.Fatalf("second sweep: %+v, %v", sum, err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "1 runs were labelled") || !strings.Contains(notes[0], "1 of them") {
		t.Errorf("the sweep's notes: %q", notes)
	}
	got, err := st.Records()
	if err != nil || len(got) != 2 {
		t.Fatalf("%d records, %v", len(got), err)
	}
	for i := range got {
		if got[i].Remeasure {
			t.Errorf("seed %d still stale", got[i].Config.Seed)
		}
		if f, a, b := Differ(&want[i], &got[i]); f != "" {
			t.Errorf("seed %d after replacing: %s %s vs %s", got[i].Config.Seed, f, a, b)
		}
	}
}

func rawExec(t *testing.T, st *Store, q string) {
	t.Helper()
	if _, err := st.db.Exec(q); err != nil {
		t.Fatal(err)
	}
}
