package sweep

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"headlab/analysis"
	"headlab/circuit"
	"headlab/inspect"
	"headlab/train"
)

// signedRecord is fakeRecord with a circuit of the given edges (head
// names; every effect 0.5 unless weak, 0.15) and one edge below the
// signature's line.
func signedRecord(seed uint64, acc float64, labels []string, edges [][2]string, weak ...[2]string) Record {
	r := fakeRecord("k", seed, acc, labels, 0.2, 0.2)
	ec := &EdgeCircuit{Corruption: "other", Examples: 250, Threshold: 0.9, Faithfulness: 0.93, Edges: []circuit.EdgeResult{}}
	for _, e := range edges {
		eff := 0.5
		if slices.Contains(weak, e) {
			eff = 0.15
		}
		ec.Edges = append(ec.Edges, circuit.EdgeResult{Edge: e[0] + " -> " + e[1], From: e[0], To: e[1], Effect: eff, InCircuit: true})
	}
	ec.Edges = append(ec.Edges, circuit.EdgeResult{Edge: "mlp1 -> logits", From: "mlp1", To: "logits", Effect: -0.03, InCircuit: true})
	s, err := circuit.NewSignature(ec.Edges, labelsOf(r.Heads))
	if err != nil {
		panic(err)
	}
	ec.Signature = s.String()
	r.EdgeCircuit = ec
	return r
}

var (
	ind      = []string{analysis.LabelPreviousToken, analysis.LabelAttentionSink, analysis.LabelInduction, analysis.LabelUniform}
	swapped  = []string{analysis.LabelAttentionSink, analysis.LabelPreviousToken, analysis.LabelUniform, analysis.LabelInduction}
	indEdges = [][2]string{{"L0H0", "L1H0.k"}, {"embed", "L1H0.q"}, {"L1H0", "logits"}}
	// indSwapped is indEdges learned by the other head of each layer.
	indSwapped = [][2]string{{"L0H1", "L1H1.k"}, {"embed", "L1H1.q"}, {"L1H1", "logits"}}
	direct     = [][2]string{{"embed", "logits"}, {"mlp0", "logits"}}
	weakExtra  = [2]string{"pos_embed", "logits"}
)

// TestAtlas: runs of one mechanism learned by different heads, one a
// weak edge from it, and another mechanism group as the rule says, with
// shares, Wilson intervals, mean accuracy and the lowest seed of the
// founding signature as representative; runs without a signature are
// counted apart.
func TestAtlas(t *testing.T) {
	recs := []Record{
		signedRecord(4, 0.9, ind, indEdges),
		signedRecord(2, 0.8, swapped, indSwapped),
		signedRecord(1, 0.7, ind, append(slices.Clone(indEdges), weakExtra), weakExtra),
		signedRecord(3, 0.6, ind, direct),
		fakeRecord("k", 5, 0.5, ind, 0.2, 0.2),
	}
	atlas, err := Atlas(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(atlas) != 1 || atlas[0].Signed != 4 || atlas[0].Unsigned != 1 || len(atlas[0].Mechanisms) != 2 {
		t.Fatalf("atlas %+v", atlas)
	}
	m := atlas[0].Mechanisms[0]
	lo, hi := Wilson(3, 4)
	if m.Runs != 3 || m.Share != 0.75 || m.ShareLow != lo || m.ShareHigh != hi || math.Abs(m.Accuracy-0.8) > 1e-12 ||
		m.Representative != 2 || !slices.Equal(m.Seeds, []uint64{1, 2, 4}) || len(m.Merged) != 1 {
		t.Errorf("first mechanism %+v", m)
	}
	sig, err := circuit.ParseSignature(m.Signature)
	if err != nil || !sig.Has(analysis.LabelPreviousToken, analysis.LabelInduction, "k") {
		t.Errorf("first mechanism's signature %q (%v) lacks the induction circuit", m.Signature, err)
	}
	if o := atlas[0].Mechanisms[1]; o.Runs != 1 || o.Representative != 3 || o.Accuracy != 0.6 {
		t.Errorf("second mechanism %+v", o)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// TestSignatureStoredAndOlderRead: a signed run's circuit reads back as
// stored; a database of schema version 6 reads with no signatures, and
// migrates to hold them.
func TestSignatureStoredAndOlderRead(t *testing.T) {
	dir := t.TempDir()
	st, err := Create(filepath.Join(dir, "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	r := signedRecord(1, 0.9, ind, indEdges)
	if err := st.Put(&r); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records()
	st.Close()
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if a, b := jsonOf(t, r.EdgeCircuit), jsonOf(t, recs[0].EdgeCircuit); a != b {
		t.Errorf("read back %s, stored %s", b, a)
	}
	if !slices.Contains(AnalysisOf(&recs[0]).Measure, MeasureSignature) {
		t.Errorf("AnalysisOf a signed run: %v", AnalysisOf(&recs[0]).Measure)
	}

	old := filepath.Join(dir, "v6.db")
	rawDB(t, old, schemaWithout(version7), "PRAGMA user_version = 6")
	st, err = Create(old)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plain := fakeRecord("k", 2, 0.9, ind, 0.2, 0.2)
	if err := st.Put(&plain); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(&r); err != nil {
		t.Fatal(err)
	}
	recs, err = st.Records()
	if err != nil || len(recs) != 2 || recs[0].EdgeCircuit == nil || recs[1].EdgeCircuit != nil {
		t.Fatalf("migrated: %d records, %v", len(recs), err)
	}
	a, err := Atlas(recs)
	if err != nil || len(a) != 1 || a[0].Signed != 1 || a[0].Unsigned != 1 {
		t.Errorf("atlas of the migrated file %+v, %v", a, err)
	}
}

// TestUnsignedRunsTrainedAgain: runs swept without signatures are, when a
// sweep of the same analysis asks for them, trained again with the same
// bits and replaced, never deleted first; a sweep of another ablation
// method, or signing other configurations, leaves them as they are.
func TestUnsignedRunsTrainedAgain(t *testing.T) {
	st, err := Create(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pairs := Pairs([]train.Config{tiny("induction", 15)}, []uint64{1, 2})
	opt := Options{Workers: 1, Group: 2, NewPlatform: func() (Platform, error) { return cpuPlatform(), nil },
		Analysis: Analysis{Measure: MeasureSet{}}}
	if sum, err := Run(context.Background(), st, pairs, opt); err != nil || sum.Done != 2 {
		t.Fatalf("Run = %+v, %v", sum, err)
	}
	before, _ := st.Records()
	opt.Analysis = Analysis{Ablation: inspect.AblateMean, Measure: MeasureSet{MeasureSignature}}
	if sum, err := Run(context.Background(), st, pairs, opt); err != nil || sum.Skipped != 2 {
		t.Fatalf("a signing sweep by another ablation method: %+v, %v", sum, err)
	}
	opt.Analysis = Analysis{Measure: MeasureSet{MeasureSignature}}
	opt.Analysis.Signed = map[string]bool{"another": true}
	if sum, err := Run(context.Background(), st, pairs, opt); err != nil || sum.Skipped != 2 {
		t.Fatalf("a sweep signing another configuration: %+v, %v", sum, err)
	}
	opt.Analysis.Signed = nil
	sum, err := Run(context.Background(), st, pairs, opt)
	if err != nil || sum.Done != 2 || sum.Skipped != 0 {
		t.Fatalf("signing rerun = %+v, %v", sum, err)
	}
	after, _ := st.Records()
	if len(after) != 2 {
		t.Fatalf("%d rows", len(after))
	}
	for i := range after {
		if after[i].EdgeCircuit == nil || after[i].Accuracy != before[i].Accuracy || after[i].Loss != before[i].Loss {
			t.Errorf("seed %d: signature %v, accuracy %v (was %v)", after[i].Config.Seed, after[i].EdgeCircuit, after[i].Accuracy, before[i].Accuracy)
			continue
		}
		ec := after[i].EdgeCircuit
		if len(ec.Edges) == 0 || ec.Faithfulness < ec.Threshold {
			t.Errorf("seed %d: a circuit of %d edges keeping %v", after[i].Config.Seed, len(ec.Edges), ec.Faithfulness)
		}
		if s, err := after[i].Sign(); err != nil || s.String() != ec.Signature {
			t.Errorf("seed %d: signed again %q, stored %q (%v)", after[i].Config.Seed, s, ec.Signature, err)
		}
	}
	if sum, err := Run(context.Background(), st, pairs, opt); err != nil || sum.Skipped != 2 {
		t.Errorf("a third sweep: %+v, %v", sum, err)
	}
}
