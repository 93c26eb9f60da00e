package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"headlab/analysis"
	"headlab/backend/cpu"
	"headlab/inspect"
	"headlab/internal/version"
	"headlab/tasks"
	"headlab/train"
)

func TestSweepParseSeeds(t *testing.T) {
	got, err := ParseSeeds("3, 1-2,10-12")
	if err != nil || !slices.Equal(got, []uint64{3, 1, 2, 10, 11, 12}) {
		t.Fatalf("ParseSeeds = %v, %v", got, err)
	}
	for _, bad := range []string{"", "x", "5-1", "1,1", "1-3,2", "1-", "-3", "1,,2"} {
		if _, err := ParseSeeds(bad); err == nil {
			t.Errorf("ParseSeeds(%q) accepted", bad)
		}
	}
}

func TestSweepGridAndExpand(t *testing.T) {
	grid, err := ParseGrid("task=reverse,majority; positions=on,off;d_model=16")
	if err != nil {
		t.Fatal(err)
	}
	base := train.Defaults("induction")
	cs, err := Expand(base, grid, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 {
		t.Fatalf("%d configurations, want 4", len(cs))
	}
	// First axis slowest; without --steps each task takes its own default.
	if cs[0].Task != "reverse" || !cs[0].Positions || cs[1].Positions || cs[2].Task != "majority" || cs[0].DModel != 16 {
		t.Errorf("order: %+v", cs)
	}
	if cs[0].Steps != train.Defaults("reverse").Steps {
		t.Errorf("steps %d, want reverse's default", cs[0].Steps)
	}
	base.Steps = 7
	if cs, _ = Expand(base, grid, true); cs[0].Steps != 7 {
		t.Errorf("explicit steps lost: %d", cs[0].Steps)
	}
	// Equal configurations collapse.
	g2, _ := ParseGrid("layers=2,2")
	if cs, _ := Expand(base, g2, true); len(cs) != 1 {
		t.Errorf("duplicate configurations kept: %d", len(cs))
	}
	for _, bad := range []string{"positions=maybe", "layers=x", "seed=1,2", "colour=red", "layers", "layers=1;layers=2"} {
		if _, err := ParseGrid(bad); err == nil {
			t.Errorf("ParseGrid(%q) accepted", bad)
		}
	}
	g3, _ := ParseGrid("heads=3")
	if _, err := Expand(base, g3, true); err == nil {
		t.Error("heads=3 with d-model 32 accepted")
	}
	// A run of before the loss was a choice trained on the answers: its
	// key is unchanged; the objective's settings are in every other key.
	c := train.Defaults("induction")
	old := "task=induction layers=2 heads=2 d_model=32 d_ff=64 positions=on causal=on steps=2500 batch=32 lr=0.003"
	for _, k := range []struct {
		set  func(*train.Config)
		want string
	}{
		{func(c *train.Config) { c.Loss = tasks.Answers }, old},
		{func(*train.Config) {}, old + " loss=next-token"},
		{func(c *train.Config) { c.TrainExamples, c.WeightDecay = 2000, 0.1 }, old + " loss=next-token train_examples=2000 weight_decay=0.1"},
	} {
		d := c
		k.set(&d)
		if got := Key(d); got != k.want {
			t.Errorf("Key = %q, want %q (the key format is part of the schema)", got, k.want)
		}
	}
	g4, err := ParseGrid("loss=next-token,answers;train-examples=0,2000;weight_decay=0,0.1")
	if err != nil {
		t.Fatal(err)
	}
	cs, err = Expand(c, g4, false)
	if err != nil || len(cs) != 8 {
		t.Fatalf("the objective's grid gave %d configurations, %v", len(cs), err)
	}
	keys := map[string]bool{}
	for _, c := range cs {
		keys[Key(c)] = true
	}
	if len(keys) != 8 {
		t.Errorf("8 configurations share %d keys", len(keys))
	}
	for _, bad := range []string{"loss=tokens", "train-examples=-1", "train-examples=5", "weight-decay=-1", "weight-decay=x"} {
		g, err := ParseGrid(bad)
		if err == nil {
			_, err = Expand(c, g, false)
		}
		if err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestSweepShards(t *testing.T) {
	cs := []train.Config{train.Defaults("majority"), train.Defaults("reverse")}
	pairs := Pairs(cs, []uint64{1, 2, 3})
	var union []int
	for i := range 3 {
		for _, p := range (Shard{i, 3}).Select(pairs) {
			union = append(union, p.Index)
		}
	}
	slices.Sort(union)
	if !slices.Equal(union, []int{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("shards do not partition the pairs: %v", union)
	}
	if s, err := ParseShard("1/4"); err != nil || s != (Shard{1, 4}) {
		t.Errorf("ParseShard = %v, %v", s, err)
	}
	for _, bad := range []string{"4/4", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		env   func(string) string
		want  Shard
		found bool
		err   bool
	}{
		{env(), All, false, false},
		{env("JOB_COMPLETION_INDEX", "2", "JOB_COMPLETIONS", "4"), Shard{2, 4}, true, false},
		{env("JOB_COMPLETION_INDEX", "2"), Shard{}, true, true},
		{env("JOB_COMPLETION_INDEX", "4", "JOB_COMPLETIONS", "4"), Shard{}, true, true},
		{env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "8"), Shard{3, 8}, true, false},
		{env("SLURM_ARRAY_TASK_ID", "8", "SLURM_ARRAY_TASK_COUNT", "8", "SLURM_ARRAY_TASK_MIN", "1"), Shard{7, 8}, true, false},
		{env("SLURM_ARRAY_TASK_ID", "3"), Shard{}, true, true},
	}
	for i, c := range cases {
		s, found, err := ShardFromEnv(c.env)
		if (err != nil) != c.err || found != c.found || (!c.err && s != c.want) {
			t.Errorf("case %d: %v %v %v", i, s, found, err)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSweepStatistics(t *testing.T) {
	s := Describe([]float64{0.5, 0.1, 0.9, 0.3})
	if s.N != 4 || !near(s.Mean, 0.45) || !near(s.Median, 0.4) || s.Min != 0.1 || s.Max != 0.9 {
		t.Errorf("Describe = %+v", s)
	}
	if s := Describe([]float64{3, 1, 2}); s.Median != 2 {
		t.Errorf("odd median %v", s.Median)
	}
	// Wilson intervals, from the closed form.
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{{10, 32, 0.17952541633609737, 0.48566678300955407}, {0, 10, 0, 0.2775327998628892}, {4, 4, 0.5101091635454027, 1}} {
		lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 1e-12 || math.Abs(hi-c.hi) > 1e-12 {
			t.Errorf("Wilson(%d, %d) = %v, %v; want %v, %v", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	// The published reverse-without-positions values split 3 / 5.
	m := SplitModes([]float64{0.91, 0.42, 0.94, 0.91, 0.93, 0.87, 0.43, 0.45})
	if !m.Split || m.Low.N != 3 || m.High.N != 5 || !near(m.Cut, 0.66) || !near(m.Low.Mean, 1.3/3) {
		t.Errorf("SplitModes = %+v %+v %+v", m, m.Low, m.High)
	}
	if m := SplitModes([]float64{0.97, 0.99, 1, 0.98}); m.Split {
		t.Error("a tight cluster split")
	}
	if m := SplitModes([]float64{0.2, 0.5, 0.8}); m.Split {
		t.Error("evenly spread values split")
	}
	if m := SplitModes([]float64{0.3, 0.99, 1, 0.98}); !m.Split || m.Low.N != 1 {
		t.Errorf("a lone outlier is not its own mode: %+v", m)
	}
	h := Histogram([]float64{0, 0.95, 1, 0.999, 0.5, 0.0499})
	if h[0].Count != 2 || h[19].Count != 3 || h[10].Count != 1 || len(h) != HistBins {
		t.Errorf("Histogram = %v", h)
	}
}

// fakeRecord is a run with heads of the given labels ("L0H0 previous-token"
// ...) and the given joint-ablation accuracies.
func fakeRecord(key string, seed uint64, acc float64, labels []string, indOff, prevOff float64) Record {
	c := train.Defaults("induction")
	c.Seed = seed
	r := Record{Key: key, Config: c, Status: StatusOK, Accuracy: acc, Chance: 1.0 / 7, Params: 100, Seconds: 1, FinishedAt: "2026-01-01T00:00:00Z"}
	r.Ablation.Intact, r.Ablation.LabelRule = acc, analysis.CurrentRule
	r.Ablation.Induction.Heads, r.Ablation.PreviousToken.Heads = []string{}, []string{}
	for i, l := range labels {
		h := inspect.Head{HeadScore: analysis.HeadScore{Name: "L" + string(rune('0'+i/2)) + "H" + string(rune('0'+i%2)),
			Layer: i / 2, Head: i % 2, Label: l, Score: 0.9, Scores: map[string]float64{l: 0.9}}, AblatedAccuracy: acc - 0.01}
		r.Heads = append(r.Heads, h)
		r.Ablation.Single = append(r.Ablation.Single, Single{h.Name, l, h.AblatedAccuracy})
		switch l {
		case analysis.LabelInduction:
			r.Ablation.Induction.Heads = append(r.Ablation.Induction.Heads, h.Name)
			r.Ablation.Induction.Accuracy = &indOff
		case analysis.LabelPreviousToken:
			r.Ablation.PreviousToken.Heads = append(r.Ablation.PreviousToken.Heads, h.Name)
			r.Ablation.PreviousToken.Accuracy = &prevOff
		}
	}
	r.Circuit = r.FormsCircuit()
	return r
}

// measured gives r every measurement of Analysis, made up from its seed
// and each head's place: mean and resample ablation, direct logit
// attribution, circuit scores, the lens layer and the ICL score.
func measured(r Record) Record {
	s := float64(r.Config.Seed)
	for i := range r.Heads {
		h := &r.Heads[i]
		k := float64(i)
		logit := 2*k + s/4
		h.AblatedBy = map[inspect.Ablation]float64{inspect.AblateMean: h.AblatedAccuracy - 0.01*k, inspect.AblateResample: 0.5 - 0.05*k - 0.01*s}
		h.DirectLogit = &logit
		h.Circuit = &inspect.Circuit{OVCopying: 1 - 0.1*k, OVCopyAccuracy: 0.9, PrefixMatching: 0.1 + 0.2*k + 0.01*s}
	}
	lens, icl := int(r.Config.Seed)%2+1, -s
	r.LensLayer, r.ICL = &lens, &icl
	return r
}

// knownRecords: four seeds of one configuration, two forming the circuit
// (seed 3 only by the joint ablations: each single head costs a point), one
// with the halves in the wrong order, one whose induction heads are not
// load-bearing; and one failed run. Seeds 1-3 carry the measurements
// beyond the ablation table (measured), seed 4 none.
func knownRecords() []Record {
	circuit := []string{"previous-token", "uniform", "induction", "induction"}
	recs := []Record{
		measured(fakeRecord("k", 1, 0.99, circuit, 0.20, 0.25)),
		measured(fakeRecord("k", 2, 0.30, []string{"induction", "uniform", "previous-token", "uniform"}, 0.10, 0.10)),
		measured(fakeRecord("k", 3, 0.98, circuit, 0.30, 0.50)),
		fakeRecord("k", 4, 0.97, circuit, 0.90, 0.10),
	}
	failed := Record{Key: "k", Config: train.Defaults("induction"), Status: StatusFailed, Error: "training diverged at step 7: loss is NaN", FinishedAt: "x"}
	failed.Config.Seed = 5
	return append(recs, failed)
}

func TestSweepStoreAndReportOnKnownDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	st, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range knownRecords() {
		if err := st.Put(&r); err != nil {
			t.Fatal(err)
		}
	}
	dup := knownRecords()[0]
	if err := st.Put(&dup); err == nil {
		t.Error("a pair stored twice")
	}
	st.Close()
	st, err = OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range knownRecords() {
		if f, a, b := Differ(&want, &recs[i]); f != "" {
			t.Errorf("seed %d does not round-trip: %s %s vs %s", i+1, f, a, b)
		}
	}
	reps := Summarize(recs)
	if len(reps) != 1 {
		t.Fatalf("%d configurations", len(reps))
	}
	r := reps[0]
	if r.Seeds != 4 || len(r.Failed) != 1 || !strings.Contains(r.Failed[0].Error, "NaN") {
		t.Errorf("seeds %d failed %v", r.Seeds, r.Failed)
	}
	if !near(r.Accuracy.Mean, 0.81) || !near(r.Accuracy.Median, 0.975) || r.Accuracy.Min != 0.30 || r.Accuracy.Max != 0.99 {
		t.Errorf("accuracy %+v", r.Accuracy)
	}
	if !r.Modes.Split || r.Modes.Low.N != 1 || r.Modes.High.N != 3 {
		t.Errorf("modes %+v", r.Modes)
	}
	lo, hi := Wilson(2, 4)
	if r.Circuit.Count != 2 || r.Circuit.Of != 4 || r.Circuit.Low != lo || r.Circuit.High != hi {
		t.Errorf("circuit %+v", r.Circuit)
	}
	want := []bool{true, false, true, false}
	for i, a := range r.Ablations {
		if a.Circuit != want[i] {
			t.Errorf("seed %d: circuit %v", a.Seed, a.Circuit)
		}
	}
	// Single-head ablations hide seed 3's circuit; the joint ones show it.
	if a := r.Ablations[2]; *a.InductionSingle != 0.97 || *a.InductionJoint != 0.30 {
		t.Errorf("seed 3 ablations: single %v joint %v", *a.InductionSingle, *a.InductionJoint)
	}
	var text strings.Builder
	WriteText(&text, reps)
	for _, s := range []string{"median 97.5%", "2 of 4 seeds", "two modes: 1 seed", "NaN", "95-100%"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
}

func TestMergeRefusesConflicts(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, recs ...Record) string {
		p := filepath.Join(dir, name)
		st, err := Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, r := range recs {
			if err := st.Put(&r); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	k := knownRecords()
	a := write("a.db", k[0], k[1])
	again := k[1]
	again.Seconds, again.FinishedAt = 99, "later" // timing may differ
	b := write("b.db", again, k[2])
	res, err := Merge(filepath.Join(dir, "out.db"), []string{a, b})
	if err != nil || res.Added != 3 || res.Duplicates != 1 {
		t.Fatalf("Merge = %+v, %v", res, err)
	}
	bad := k[2]
	bad.Accuracy = 0.5
	c := write("c.db", k[3], bad)
	out := filepath.Join(dir, "out.db")
	sums := map[string]string{}
	for _, p := range []string{a, b, c, out} {
		sums[p] = fileSum(t, p)
	}
	files := dirNames(t, dir)
	_, err = Merge(out, []string{c})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "seed 3") || !strings.Contains(err.Error(), "accuracy") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("conflict not refused in one line: %v", err)
	}
	// A conflict into a new OUT creates nothing.
	if _, err := Merge(filepath.Join(dir, "new.db"), []string{b, c}); !errors.Is(err, ErrRefused) {
		t.Fatalf("conflict into a new database: %v", err)
	}
	for p, s := range sums {
		if fileSum(t, p) != s {
			t.Errorf("a refused merge changed %s", p)
		}
	}
	if !slices.Equal(dirNames(t, dir), files) {
		t.Errorf("a refused merge left %v, was %v", dirNames(t, dir), files)
	}

	// A killed merge's temporary files go; a live one's stay.
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, fmt.Sprintf(".out.db.merge-%d.tmp", exited.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf(".out.db.merge-%d.tmp-journal", os.Getppid()))
	os.WriteFile(dead, []byte("half"), 0o644)
	os.WriteFile(live, []byte("half"), 0o644)
	if _, err := Merge(out, []string{a}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); err == nil {
		t.Error("a killed merge's temporary file is left")
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("a live merge's temporary file was removed")
	}
	os.Remove(live)

	// OUT with its log beside it (a sweep killed, say) is checkpointed
	// into itself before the new file replaces it, so no stale log is
	// replayed into the new file; while another process has it open the
	// merge is refused.
	d := write("d.db", k[3])
	st, err := Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(out, []string{d}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "open in another process") {
		t.Errorf("merge into a database in use: %v", err)
	}
	st.Close()
	if res, err := Merge(out, []string{d}); err != nil || res.Added != 1 || res.Total != 4 {
		t.Fatalf("merge into the closed database: %+v, %v", res, err)
	}
	ro, err := OpenExisting(out)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Check(); err != nil {
		t.Fatal(err)
	}
	if n, _ := ro.Count(); n != 4 {
		t.Errorf("%d rows after the merge, want 4", n)
	}
}

// tiny is a configuration that trains in a fraction of a second.
func tiny(task string, steps int) train.Config {
	c := train.Defaults(task)
	c.Steps, c.DModel, c.DFF, c.Layers = steps, 16, 16, 2
	return c
}

func cpuPlatform() Platform { return Platform{Device: cpu.New(), SIMD: "test"} }

// TestGroupsMatchLoneRuns trains three seeds (two learning rates) as one
// group: every record is, timing aside, the one each pair gives alone,
// measurements and mean-ablation table included.
func TestGroupsMatchLoneRuns(t *testing.T) {
	a, b := tiny("induction", 15), tiny("induction", 15)
	b.LR = 1e-2
	pairs := Pairs([]train.Config{a, b}, []uint64{1, 2})[:3]
	groups := Groups(pairs, 8)
	if len(groups) != 1 || len(groups[0]) != 3 {
		t.Fatalf("groups %v", groups)
	}
	every := Analysis{Ablation: inspect.AblateMean, Measure: AllMeasures()}
	together, err := RunGroup(pairs, cpuPlatform(), every, GroupHooks{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		alone, err := RunOne(p, cpuPlatform(), every, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, o := together[i].Record, alone.Record
		if g.Group != 3 || o.Group != 1 || g.Backend != "cpu" || g.SIMD != "test" {
			t.Errorf("platform fields %+v", g)
		}
		if field, x, y := Differ(&g, &o); field != "" {
			t.Errorf("pair %d: %s is %s in the group, %s alone", i, field, x, y)
		}
	}
	other := tiny("induction", 15)
	other.Layers = 1
	mixed := append(Pairs([]train.Config{other}, []uint64{1}), pairs...)
	if gs := Groups(mixed, 2); len(gs) != 3 || len(gs[0]) != 1 || len(gs[1]) != 2 || len(gs[2]) != 1 {
		t.Errorf("groups of 2 over two shapes: %v", gs)
	}
}

func TestSweepRunOneMatchesTrainRun(t *testing.T) {
	c := tiny("induction", 20)
	c.Seed = 3
	o, err := RunOne(Pair{Key: Key(c), Config: c}, cpuPlatform(), Analysis{}, nil)
	if err != nil || o.Record.Status != StatusOK {
		t.Fatalf("RunOne: %v %+v", err, o.Record)
	}
	_, res, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := o.Record
	if r.Accuracy != res.Accuracy || r.Loss != res.Loss || r.TrainLoss != res.TrainLoss || r.Params != res.Params {
		t.Errorf("sweep run %v/%v/%v differs from train.Run %v/%v/%v", r.Accuracy, r.Loss, r.TrainLoss, res.Accuracy, res.Loss, res.TrainLoss)
	}
	if r.Version != version.Module() || r.Revision != version.Revision() {
		t.Errorf("version %q revision %q, want this build's %q %q", r.Version, r.Revision, version.Module(), version.Revision())
	}
	if len(r.Heads) != 4 || len(r.Ablation.Single) != 4 || r.Ablation.Intact != r.Accuracy {
		t.Errorf("heads %d, singles %d", len(r.Heads), len(r.Ablation.Single))
	}
}

func TestSweepRunStoresFailuresAndResumes(t *testing.T) {
	st, err := Create(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pairs := Pairs([]train.Config{tiny("majority", 5)}, []uint64{1, 2})
	// A run whose training errors (here a shape NewTrainer rejects; a
	// diverged loss takes the same path) is stored as failed.
	broken := pairs[0].Config
	broken.Heads = 3
	pairs = append(pairs, Pair{Index: 2, Key: Key(broken), Config: broken})
	opt := Options{Workers: 2, Group: 1, NewPlatform: func() (Platform, error) { return cpuPlatform(), nil }}
	var calls int
	opt.Progress = func(Progress) { calls++ }
	sum, err := Run(context.Background(), st, pairs, opt)
	if err != nil || sum.Done != 3 || sum.Failed != 1 || sum.Interrupted || calls != 4 {
		t.Fatalf("Run = %+v, %v (%d progress calls)", sum, err, calls)
	}
	sum, err = Run(context.Background(), st, pairs, opt)
	if err != nil || sum.Done != 0 || sum.Skipped != 3 {
		t.Fatalf("rerun = %+v, %v", sum, err)
	}
	opt.RetryFailed = true
	if sum, err = Run(context.Background(), st, pairs, opt); err != nil || sum.Done != 1 || sum.Failed != 1 {
		t.Fatalf("retry = %+v, %v", sum, err)
	}
	if n, _ := st.Count(); n != 3 {
		t.Errorf("%d rows, want 3", n)
	}
	// A cancelled context starts nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	more := Pairs([]train.Config{tiny("majority", 5)}, []uint64{7})
	if sum, _ = Run(ctx, st, more, opt); sum.Done != 0 || !sum.Interrupted {
		t.Errorf("cancelled Run = %+v", sum)
	}
}

// TestRunCooperatesThroughClaims: Run trains the free pair, takes over a
// claim whose lease ended and one whose owner (on this host) is dead, and
// leaves a pair a live process holds: it waits, and when that process
// stores the pair, counts it as stored and ends, its row untouched.
func TestRunCooperatesThroughClaims(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pairs := Pairs([]train.Config{tiny("majority", 5)}, []uint64{1, 2, 3, 4})
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	now := time.Now()
	for seed, claim := range map[int64]struct {
		owner string
		until time.Time
	}{
		1: {"elsewhere:1:aa", now.Add(time.Hour)},
		2: {"elsewhere:2:bb", now.Add(-time.Second)},
		4: {fmt.Sprintf("%s:%d:cc", host, exited.Process.Pid), now.Add(time.Hour)},
	} {
		if _, err := st.db.Exec("INSERT INTO claims VALUES (?, ?, ?, ?)", pairs[0].Key, seed, claim.owner, claim.until.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	waiting := make(chan struct{})
	var once sync.Once
	opt := Options{Workers: 1, Group: 1, Lease: 200 * time.Millisecond, NewPlatform: func() (Platform, error) { return cpuPlatform(), nil },
		Progress: func(p Progress) {
			if p.Done == 3 && p.Elsewhere == 1 {
				once.Do(func() { close(waiting) })
			}
		}}
	type result struct {
		sum Summary
		err error
	}
	ended := make(chan result, 1)
	go func() {
		sum, err := Run(context.Background(), st, pairs, opt)
		ended <- result{sum, err}
	}()
	select {
	case <-waiting:
	case r := <-ended:
		t.Fatalf("Run ended without waiting for the live claim: %+v, %v", r.sum, r.err)
	}
	// The other process lands its run and drops its claim.
	other, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	theirs := Record{Key: pairs[0].Key, Config: pairs[0].Config, Status: StatusFailed, Error: "theirs", FinishedAt: "x"}
	if err := other.Put(&theirs); err != nil {
		t.Fatal(err)
	}
	if _, err := other.db.Exec("DELETE FROM claims WHERE seed = 1"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	r := <-ended
	if r.err != nil || r.sum.Done != 3 || r.sum.Skipped != 1 || r.sum.Interrupted {
		t.Fatalf("Run = %+v, %v", r.sum, r.err)
	}
	recs, err := st.Records()
	if err != nil || len(recs) != 4 || recs[0].Error != "theirs" || recs[1].Status != StatusOK || recs[3].Status != StatusOK {
		t.Fatalf("rows %+v, %v", recs, err)
	}
	var n int
	if err := st.db.QueryRow("SELECT count(*) FROM claims").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d claims left, %v", n, err)
	}
}

// TestTiedEmbeddingsRoundTrip: a setting with no column of its own comes
// back from config_json.
func TestTiedEmbeddingsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tied.db")
	st, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := knownRecords()[0]
	r.Config.TiedEmbeddings = true
	if err := st.Put(&r); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !recs[0].Config.TiedEmbeddings {
		t.Errorf("read back %+v", recs)
	}
}

// TestClaimHoldsForItsLease: a pair one owner claims is busy to another
// until the lease ends, renewing extends it, and releasing frees it at
// once; the claim's expiry is its lease from now. Leases of an hour, and
// of the past, keep it independent of the machine's speed.
func TestClaimHoldsForItsLease(t *testing.T) {
	st, err := Create(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ps := Pairs([]train.Config{tiny("majority", 5)}, []uint64{1})
	const a, b = "elsewhere:1:aa", "elsewhere:2:bb"
	claim := func(owner string, lease time.Duration) (mine, busy int) {
		t.Helper()
		m, bs, _, err := st.claim(ps, owner, lease)
		if err != nil {
			t.Fatal(err)
		}
		return len(m), len(bs)
	}
	before := time.Now()
	if m, _ := claim(a, time.Hour); m != 1 {
		t.Fatal("a free pair was not claimed")
	}
	var until int64
	if err := st.db.QueryRow("SELECT expires_at FROM claims WHERE owner = ?", a).Scan(&until); err != nil {
		t.Fatal(err)
	}
	if lo, hi := before.Add(time.Hour).UnixMilli(), time.Now().Add(time.Hour).UnixMilli(); until < lo || until > hi {
		t.Errorf("claim expires at %d, want its lease from now: %d to %d", until, lo, hi)
	}
	if _, busy := claim(b, time.Hour); busy != 1 {
		t.Fatal("another owner took a live claim")
	}
	if err := st.release(a); err != nil {
		t.Fatal(err)
	}
	if m, _ := claim(b, -time.Second); m != 1 {
		t.Fatal("a released pair was not claimed")
	}
	if err := st.renew(b, time.Hour); err != nil { // b's lapsed claim, renewed
		t.Fatal(err)
	}
	if _, busy := claim(a, time.Hour); busy != 1 {
		t.Fatal("a renewed claim was taken over")
	}
	if err := st.renew(b, -time.Second); err != nil {
		t.Fatal(err)
	}
	if m, _ := claim(a, time.Hour); m != 1 {
		t.Fatal("a lapsed claim was not taken over")
	}
}

// TestParseMeasures: all, none and lists in any order (kept in Measures'
// order); anything else is refused naming what is known.
func TestParseMeasures(t *testing.T) {
	for text, want := range map[string]string{
		"all": "all", "none": "none", "circuit,mean": "mean,circuit", " resample ": "resample",
		"mean,resample,attribution,circuit": "mean,resample,attribution,circuit", "signature,circuit,mean,resample,attribution": "all",
	} {
		got, err := ParseMeasures(text)
		if err != nil || got.String() != want {
			t.Errorf("ParseMeasures(%q) = %v, %v; want %s", text, got, err, want)
		}
	}
	for _, text := range []string{"", "some", "mean,,circuit", "mean,mean", "all,mean", "none,circuit", "Mean"} {
		_, err := ParseMeasures(text)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "mean, resample, attribution, circuit, signature") && !strings.Contains(err.Error(), "twice") {
			t.Errorf("ParseMeasures(%q): %v, want one line naming the measurements", text, err)
		}
	}
}

// TestRunStoresWhatInspectMeasures: a run with every measurement holds,
// bit for bit, what inspect measures on its model: each head off alone
// by mean and resample ablation, its direct logit attribution, its
// circuit scores, the lens layer and the ICL score; its ablation table
// and circuit verdict are by the method asked for, and its heads' zero
// ablation is the one a run without measurements stores. AnalysisOf
// reads the analysis back from the record.
func TestRunStoresWhatInspectMeasures(t *testing.T) {
	c := tiny("induction", 40)
	c.Seed = 2
	p := Pair{Key: Key(c), Config: c}
	a := Analysis{Ablation: inspect.AblateResample, Measure: AllMeasures()}
	o, err := RunOne(p, cpuPlatform(), a, nil)
	if err != nil || o.Record.Status != StatusOK {
		t.Fatalf("RunOne: %v %+v", err, o.Record)
	}
	plain, err := RunOne(p, cpuPlatform(), Analysis{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, z := o.Record, plain.Record
	if got := AnalysisOf(&r); got.Ablation != a.Ablation || got.Measure.String() != "all" {
		t.Errorf("AnalysisOf = %+v", got)
	}
	if got := AnalysisOf(&z); got.Ablation != inspect.AblateZero || len(got.Measure) != 0 || z.Measured() || z.LensLayer != nil || z.ICL != nil {
		t.Errorf("a run without measurements: %+v, lens %v, icl %v", got, z.LensLayer, z.ICL)
	}
	ev, err := train.NewEvaluator(o.Model, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	reps, _, err := inspect.AnalyzeAll(ev, inspect.Options{Methods: []inspect.Ablation{inspect.AblateMean, inspect.AblateResample}})
	if err != nil {
		t.Fatal(err)
	}
	attr, err := inspect.Attribute(ev, train.HeldOutExamples, 0)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := inspect.Circuits(ev)
	if err != nil || ms[0].Err != nil {
		t.Fatal(err, ms[0].Err)
	}
	circ := ms[0].Heads
	if r.LensLayer == nil || *r.LensLayer != attr[0].LensLayer() || r.ICL == nil || ms[0].ICL == nil || *r.ICL != *ms[0].ICL {
		t.Errorf("lens layer %v (want %d), ICL %v (want %v)", r.LensLayer, attr[0].LensLayer(), r.ICL, ms[0].ICL)
	}
	for i, h := range r.Heads {
		want := reps[0].Heads[i]
		logit, _ := attr[0].HeadLogit(h.Layer, h.Head)
		if h.AblatedAccuracy != z.Heads[i].AblatedAccuracy || h.AblatedAccuracy != want.AblatedAccuracy ||
			h.AblatedBy[inspect.AblateMean] != want.AblatedBy[inspect.AblateMean] || h.AblatedBy[inspect.AblateResample] != want.AblatedBy[inspect.AblateResample] ||
			h.DirectLogit == nil || *h.DirectLogit != logit || h.Circuit == nil || *h.Circuit != circ[i] {
			t.Errorf("%s: stored %+v, want %+v, logit %v, circuit %+v", h.Name, h, want, logit, circ[i])
		}
		if single := r.Ablation.Single[i]; single.Accuracy != h.AblatedBy[inspect.AblateResample] {
			t.Errorf("%s: the ablation table holds %v, not its resample ablation %v", h.Name, single.Accuracy, h.AblatedBy[inspect.AblateResample])
		}
	}
	if r.AblationMethod != inspect.AblateResample || z.AblationMethod != inspect.AblateZero || r.Circuit != r.FormsCircuit() {
		t.Errorf("methods %q and %q, circuit %v", r.AblationMethod, z.AblationMethod, r.Circuit)
	}
}

// TestJointOffByMethod: each label's heads go off together by the
// ablator's method, every model in one pass, as switching them off by
// hand gives; a model without the label has no accuracy; and the methods
// differ.
func TestJointOffByMethod(t *testing.T) {
	var ms []*train.Model
	for s := uint64(1); s <= 2; s++ {
		c := tiny("induction", 30)
		c.Seed = s
		m, _, err := train.Run(c, cpu.New(), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	label := func(l, h int, label string) inspect.Head {
		return inspect.Head{HeadScore: analysis.HeadScore{Name: analysis.HeadName(l, h), Layer: l, Head: h, Label: label}}
	}
	u := analysis.Patterns[len(analysis.Patterns)-1]
	heads := [][]inspect.Head{
		{label(0, 0, u), label(0, 1, analysis.LabelPreviousToken), label(1, 0, analysis.LabelInduction), label(1, 1, analysis.LabelInduction)},
		{label(0, 0, u), label(0, 1, u), label(1, 0, u), label(1, 1, analysis.LabelInduction)},
	}
	got := map[inspect.Ablation][]float64{}
	for _, method := range inspect.Ablations {
		for s, m := range ms {
			ev, err := train.NewEvaluator(m, cpu.New())
			if err != nil {
				t.Fatal(err)
			}
			held := ev.HeldOutAll()
			ab, err := inspect.NewAblator(ev, held, method)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				label string
				want  []string
			}{{analysis.LabelInduction, [][]string{{"L1H0", "L1H1"}, {"L1H1"}}[s]}, {analysis.LabelPreviousToken, [][]string{{"L0H1"}, {}}[s]}} {
				js, err := JointOff(ab, held, heads[s:s+1], c.label)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(js[0].Heads, c.want) || (js[0].Accuracy == nil) != (len(c.want) == 0) {
					t.Fatalf("seed %d, %s: %+v, want heads %v", s+1, c.label, js[0], c.want)
				}
				if len(c.want) == 0 {
					continue
				}
				off, err := analysis.ParseHeads(strings.Join(c.want, ","), 2, 2)
				if err != nil {
					t.Fatal(err)
				}
				sn, err := ab.Snapshot(held, train.SnapshotOptions{Off: [][][]bool{off}})
				if err != nil {
					t.Fatal(err)
				}
				if *js[0].Accuracy != sn[0].Accuracy {
					t.Errorf("seed %d, %s by %s: %v, by hand %v", s+1, c.label, method, *js[0].Accuracy, sn[0].Accuracy)
				}
				got[method] = append(got[method], *js[0].Accuracy)
			}
			ev.Close()
		}
	}
	if slices.Equal(got[inspect.AblateZero], got[inspect.AblateMean]) || slices.Equal(got[inspect.AblateZero], got[inspect.AblateResample]) {
		t.Errorf("the methods agree to the bit: %v", got)
	}
}
