package main

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"headlab/findings"
	"headlab/inspect"
	"headlab/sweep"
	"headlab/tasks"
)

// tinySweep is a sweep whose runs take well under a second each.
var tinySweep = []string{"sweep", "--task", "majority", "--steps", "20", "--d-model", "16", "--d-ff", "16", "--quiet"}

func args(extra ...string) []string { return append(append([]string(nil), tinySweep...), extra...) }

// TestSweepHelperProcess is headlab itself when the test binary is re-run
// with HEADLAB_HELPER=1, so a test can kill a real sweep process.
func TestSweepHelperProcess(t *testing.T) {
	if os.Getenv("HEADLAB_HELPER") != "1" {
		return
	}
	var argv []string
	for i, a := range os.Args {
		if a == "--" {
			argv = os.Args[i+1:]
		}
	}
	exitOnSignal(os.Stderr)
	os.Exit(run(argv, os.Stdout, os.Stderr))
}

func readRecords(t *testing.T, path string) []sweep.Record {
	t.Helper()
	st, err := sweep.OpenExisting(path)
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
	return recs
}

// landedRuns counts the runs stored in db, 0 while it cannot be read. It
// opens the file read-only and sets no pragma, so that watching a sweep
// that is still creating its database cannot make the sweep's own set-up
// (its switch to WAL) find the file busy.
func landedRuns(db string) int {
	c, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		return 0
	}
	defer c.Close()
	var n int
	if c.QueryRow("SELECT count(*) FROM runs").Scan(&n) != nil {
		return 0
	}
	return n
}

func TestSweepKilledAndResumed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	// Runs long enough (a few hundred ms each) that the kill lands mid-sweep.
	sweepArgs := args("--seeds", "1-6", "--workers", "1", "--db", db, "--steps", "400")
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSweepHelperProcess$", "--"}, sweepArgs...)...)
	cmd.Env = append(os.Environ(), "HEADLAB_HELPER=1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill -9 as soon as the first run is committed.
	landed := 0
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && landed == 0; time.Sleep(20 * time.Millisecond) {
		landed = landedRuns(db)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if landed == 0 {
		t.Fatalf("no run landed before the deadline; the sweep said: %q", out.String())
	}
	before := len(readRecords(t, db)) // also runs the integrity check
	if before < 1 || before >= 6 {
		t.Fatalf("%d runs had landed when the sweep was killed, want 1..5 for a mid-run kill", before)
	}
	code, _, errs := headlab(t, sweepArgs...)
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	recs := readRecords(t, db)
	seen := map[uint64]int{}
	for _, r := range recs {
		seen[r.Config.Seed]++
		if r.Status != sweep.StatusOK {
			t.Errorf("seed %d: %s %s", r.Config.Seed, r.Status, r.Error)
		}
	}
	if len(recs) != 6 || len(seen) != 6 {
		t.Fatalf("%d rows for %d seeds after resuming, want 6 once each: %v", len(recs), len(seen), seen)
	}
	// And a third time changes nothing.
	headlab(t, sweepArgs...)
	if n := len(readRecords(t, db)); n != 6 {
		t.Fatalf("%d rows after a second rerun", n)
	}
}

// sameRows fails unless a and b hold the same pairs with the same results.
func sameRows(t *testing.T, a, b []sweep.Record) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d rows against %d", len(a), len(b))
	}
	for i := range a {
		if a[i].ID() != b[i].ID() {
			t.Fatalf("row %d: %v against %v", i, a[i].ID(), b[i].ID())
		}
		if f, x, y := sweep.Differ(&a[i], &b[i]); f != "" {
			t.Errorf("seed %d of %s: %s %s against %s", a[i].Config.Seed, a[i].Key, f, x, y)
		}
	}
}

func TestSweepShardsMergeToTheUnshardedSweep(t *testing.T) {
	dir := t.TempDir()
	db := func(n string) string { return filepath.Join(dir, n) }
	base := args("--seeds", "1-2", "--grid", "positions=on,off")
	if code, _, errs := headlab(t, append(base, "--db", db("all.db"), "--workers", "2")...); code != 0 {
		t.Fatalf("unsharded: exit %d: %s", code, errs)
	}
	if code, _, errs := headlab(t, append(base, "--db", db("s0.db"), "--shard", "0/2")...); code != 0 {
		t.Fatalf("shard 0: exit %d: %s", code, errs)
	}
	// Shard 1 takes its slice from a Slurm array's environment.
	t.Setenv("SLURM_ARRAY_TASK_ID", "2")
	t.Setenv("SLURM_ARRAY_TASK_MIN", "1")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "2")
	code, _, errs := headlab(t, append(base, "--db", db("s1.db"))...)
	if code != 0 || !strings.Contains(errs, "shard 1/2: 2 of 4 pairs") {
		t.Fatalf("shard 1: exit %d: %s", code, errs)
	}
	if n := len(readRecords(t, db("s1.db"))); n != 2 {
		t.Fatalf("shard 1 ran %d pairs, want 2", n)
	}
	code, out, errs := headlab(t, "merge", "--db", db("merged.db"), db("s0.db"), db("s1.db"))
	if code != 0 || !strings.Contains(out, "4 runs added") {
		t.Fatalf("merge: exit %d: %s %s", code, out, errs)
	}
	sameRows(t, readRecords(t, db("all.db")), readRecords(t, db("merged.db")))
}

func TestMergeRefusesConflictingRows(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	if code, _, errs := headlab(t, args("--seeds", "1-2", "--db", a)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	// Identical duplicates merge; the copy's timing differs, its results not.
	b := filepath.Join(dir, "b.db")
	if code, _, errs := headlab(t, args("--seeds", "2-3", "--db", b)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	out := filepath.Join(dir, "out.db")
	code, stdout, errs := headlab(t, "merge", "--db", out, a, b)
	if code != 0 || !strings.Contains(stdout, "3 runs added, 1 duplicates skipped, 3 runs in all") {
		t.Fatalf("merge: exit %d: %q %q", code, stdout, errs)
	}
	raw, err := sql.Open("sqlite", b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("UPDATE runs SET accuracy = accuracy / 2 WHERE seed = 2"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	code, _, errs = headlab(t, "merge", "--db", out, b)
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "merge refused: seed 2") {
		t.Fatalf("conflict: exit %d, stderr %q", code, errs)
	}
	if code, _, _ := headlab(t, "merge", "--db", out, filepath.Join(dir, "missing.db")); code != 2 {
		t.Errorf("missing input: exit %d, want 2", code)
	}
}

func TestSweepBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	for name, a := range map[string][]string{
		"seed":           args("--seed", "3", "--db", db),
		"seeds":          args("--seeds", "4-1", "--db", db),
		"grid key":       args("--grid", "colour=red", "--db", db),
		"grid value":     args("--grid", "heads=3", "--db", db),
		"shard":          args("--shard", "2/2", "--db", db),
		"no db":          args(),
		"workers":        args("--workers", "0", "--db", db),
		"measure":        args("--measure", "mean,bogus", "--db", db),
		"measure, twice": args("--measure", "circuit,circuit", "--db", db),
		"ablation":       args("--ablation", "median", "--db", db),
		"report db":      {"report", "--db", filepath.Join(filepath.Dir(db), "none.db")},
		"reproduce":      {"reproduce", "--seeds", "0"},
	} {
		code, out, errs := headlab(t, a...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errs)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("bad input created the database")
	}
}

func TestReportOnAKnownDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	if code, _, errs := headlab(t, args("--seeds", "1-3", "--db", db)...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	recs := readRecords(t, db)
	code, out, errs := headlab(t, "report", "--db", db, "--json", "--png", filepath.Join(dir, "png"))
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	var rep struct {
		Runs    int `json:"runs"`
		Configs []struct {
			Seeds    int         `json:"seeds"`
			Accuracy sweep.Stats `json:"accuracy"`
			Values   []struct {
				Seed  uint64  `json:"seed"`
				Value float64 `json:"value"`
			} `json:"values"`
			Histogram []sweep.Bin          `json:"histogram"`
			Modes     sweep.Modes          `json:"modes"`
			Circuit   sweep.Proportion     `json:"circuit"`
			Ablations []json.RawMessage    `json:"ablations"`
			Measures  sweep.MeasureSummary `json:"measures"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Runs != 3 || len(rep.Configs) != 1 {
		t.Fatalf("runs %d, configurations %d", rep.Runs, len(rep.Configs))
	}
	c := rep.Configs[0]
	var accs []float64
	for i, r := range recs {
		accs = append(accs, r.Accuracy)
		if c.Values[i].Seed != r.Config.Seed || c.Values[i].Value != r.Accuracy {
			t.Errorf("value %d: %+v, stored %v", i, c.Values[i], r.Accuracy)
		}
	}
	if want := sweep.Describe(accs); c.Seeds != 3 || c.Accuracy != want {
		t.Errorf("accuracy %+v, want %+v", c.Accuracy, want)
	}
	if lo, hi := sweep.Wilson(c.Circuit.Count, 3); c.Circuit.Of != 3 || c.Circuit.Low != lo || c.Circuit.High != hi {
		t.Errorf("circuit %+v", c.Circuit)
	}
	if len(c.Histogram) != sweep.HistBins || len(c.Ablations) != 3 {
		t.Errorf("histogram %d bins, %d ablation rows", len(c.Histogram), len(c.Ablations))
	}
	// Every run of a default sweep is measured: each head has its four
	// accuracies off alone, attribution and circuit scores.
	m := c.Measures
	if m.Runs != 3 || m.Without != 0 || m.Lens.N != 3 || m.ICL.N != 3 || len(m.ByLabel) == 0 {
		t.Errorf("measures %+v", m)
	}
	heads := 0
	for _, l := range m.ByLabel {
		heads += l.Heads
		for _, st := range []sweep.Stats{l.Zero, l.Mean, l.Resample, l.DirectLogit, l.OVCopying, l.Prefix} {
			if st.N != l.Heads {
				t.Errorf("%s: %d of %d heads measured: %+v", l.Label, st.N, l.Heads, l)
			}
		}
	}
	if heads != 3*len(recs[0].Heads) {
		t.Errorf("%d heads summarised, want %d", heads, 3*len(recs[0].Heads))
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "png", "hist-majority_*.png"))
	if len(pngs) != 1 {
		t.Errorf("histogram PNGs: %v", pngs)
	}
	code, out, _ = headlab(t, "report", "--db", db)
	for _, s := range []string{"accuracy    mean", "histogram", "modes", "circuit     0 of 3 seeds", "ablations   held-out accuracy by zero ablation",
		"measures    3 runs; median (min to max) over seeds: lens layer "} {
		if code != 0 || !strings.Contains(out, s) {
			t.Errorf("text report lacks %q:\n%s", s, out)
		}
	}
}

// TestSweepMeasuresAndAblation: --measure none stores no measurement,
// --ablation mean makes the ablation table mean ablation's (and the
// records say so); resuming such a database with the defaults says in a
// line that the methods now differ, stores measured runs beside, and
// report shows both methods and how many runs have no measurements. A
// database of schema version 4 is read with a line saying it has none.
func TestSweepMeasuresAndAblation(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	if code, _, errs := headlab(t, args("--seeds", "1-2", "--db", db, "--measure", "none", "--ablation", "mean")...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	for _, r := range readRecords(t, db) {
		a := sweep.AnalysisOf(&r)
		if r.AblationMethod != inspect.AblateMean || r.LensLayer != nil || r.ICL != nil || r.Heads[0].Circuit != nil || r.Heads[0].DirectLogit != nil ||
			a.Measure.String() != "mean" || r.Ablation.Single[0].Accuracy != r.Heads[0].AblatedBy[inspect.AblateMean] {
			t.Errorf("seed %d: method %q, analysis %+v, lens %v, heads %+v", r.Config.Seed, r.AblationMethod, a, r.LensLayer, r.Heads[0])
		}
	}
	code, _, errs := headlab(t, args("--seeds", "1-3", "--db", db)...)
	if code != 0 || !strings.Contains(errs, "holds runs whose ablation table and circuit verdict are by mean ablation; these run by zero") || strings.Count(errs, "\n") != 2 {
		t.Fatalf("resumed with the defaults: exit %d: %q", code, errs)
	}
	recs := readRecords(t, db)
	if r := recs[2]; len(recs) != 3 || r.AblationMethod != inspect.AblateZero || r.LensLayer == nil || sweep.AnalysisOf(&r).Measure.String() != "all" {
		t.Fatalf("the third seed: %+v", r)
	}
	code, out, _ := headlab(t, "report", "--db", db, "--csv", filepath.Join(dir, "csv"))
	for _, s := range []string{"by mean and zero ablation", "measures    3 runs;"} {
		if code != 0 || !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
	f, err := os.Open(filepath.Join(dir, "csv", "heads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "prefix_matching")
	if col < 0 || rows[1][col] != "" || rows[len(rows)-1][col] == "" {
		t.Errorf("heads.csv's prefix_matching: column %d, first %q, last %q", col, rows[1][col], rows[len(rows)-1][col])
	}
	// Without measures, report says so; a file of version 4 too.
	old := filepath.Join(dir, "v4.db")
	if code, _, errs := headlab(t, args("--seeds", "1", "--db", old, "--measure", "none")...); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	if code, out, _ := headlab(t, "report", "--db", old); code != 0 || !strings.Contains(out, "measures    none stored for 1 run (") {
		t.Errorf("report of a sweep without measures: exit %d\n%s", code, out)
	}
	conn, err := sql.Open("sqlite", old)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"ALTER TABLE runs DROP COLUMN ablation_method", "ALTER TABLE runs DROP COLUMN lens_layer", "ALTER TABLE runs DROP COLUMN icl_score",
		"ALTER TABLE runs DROP COLUMN seq_len", "ALTER TABLE runs DROP COLUMN vocab",
		"ALTER TABLE runs DROP COLUMN signature", "ALTER TABLE runs DROP COLUMN circuit_json", "PRAGMA user_version = 4"} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close()
	code, out, errs = headlab(t, "report", "--db", old)
	if code != 0 || !strings.Contains(errs, "is of schema version 4, before version 5's measurements") || strings.Count(errs, "\n") != 1 || !strings.Contains(out, "by zero ablation") {
		t.Errorf("report of version 4: exit %d, stderr %q\n%s", code, errs, out)
	}
}

// reproduce --quick runs every section and claim of the report in a
// reduced setting: the machinery, not the claims.
func TestReproduceQuick(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := headlab(t, "reproduce", "--out", dir, "--quick", "--quiet")
	if code != 0 {
		t.Fatalf("reproduce: exit %d: %s", code, errs)
	}
	md, err := os.ReadFile(filepath.Join(dir, "findings.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"# Findings, reproduced", "Reduced setting", "## Where we differ", "## Summary",
		"## 1. The default induction model's heads", "| none |", "findings/heads-induction-seed1.png",
		"## 2. Positional embeddings: reverse and majority", "| reverse | off |", "| majority | on |",
		"## 3. How often the induction circuit forms", "Wilson interval",
		"## 4. One layer against two on induction", "## 5. Reverse without positions and without the causal mask",
		"## 6. The circuit by other measures", "| zero (section 3) | ", "| labelled induction | ",
		"## Claim 1. Different data grows different heads", "## Claim 2. Redundancy on majority",
		"## Claim 3. A pinned uniform head", "## Claim 4. Attention sinks", "## Claim 5. Toy tasks leak",
		"## Claim 6. Interpretability", "## Claim 7. Induction heads form in a burst", "## Claim 8. Many heads can be pruned",
		"## Claim 9. Syntax-flavoured heads", "## Claim 10. Induction works on tokens never seen",
		"| claim 10: ", "## Which setting gives the published numbers", "Not run by this invocation",
		"| 2 | ", // per-seed rows of the claims
		"## The atlas of circuits", "**The circuit as mechanisms.**", "| Mechanism | Seeds | Share (95% interval) |",
		"## How this was measured",
	} {
		if !strings.Contains(string(md), s) {
			t.Errorf("findings.md lacks %q", s)
		}
	}
	// Every picture the report links to exists.
	for _, line := range strings.Split(string(md), "\n") {
		if i := strings.Index(line, "](findings/"); i >= 0 {
			name := strings.TrimSuffix(line[i+2:], ")")
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("missing picture: %v", err)
			}
		}
	}
	// 4 induction seeds, 2 each of the wide model, copy, agreement, the
	// two unseen variants, four position runs, no mask and one layer.
	recs := readRecords(t, filepath.Join(dir, "findings", "findings.db"))
	if len(recs) != 26 {
		t.Errorf("%d runs in the reproduce database, want 26", len(recs))
	}
	// The atlas's configurations alone are signed: 4 induction seeds, 2
	// each of majority and reverse (with positions).
	signed := map[string]int{}
	for _, r := range recs {
		if r.EdgeCircuit != nil {
			signed[r.Config.Task]++
			if !r.Config.Positions || r.Config.Layers != 2 || r.Config.Heads != 2 {
				t.Errorf("%s signed: only the atlas's configurations should be", r.Key)
			}
		}
	}
	if signed["induction"] != 4 || signed["majority"] != 2 || signed["reverse"] != 2 || len(signed) != 3 {
		t.Errorf("signed runs by task %v, want induction 4, majority 2, reverse 2", signed)
	}
	// Sweeps store every head's relation scores and mirror_c.
	rel := 0
	for _, r := range recs {
		task, _ := tasks.New(r.Config.Task)
		for _, h := range r.Heads {
			if r.Config.Task == "agreement" && len(h.Relations) == 2 {
				rel++
			}
			if T := task.SeqLen(); h.MirrorC != T-1 && h.MirrorC != T-2 {
				t.Errorf("%s seed %d %s: stored mirror_c %d, T = %d", r.Config.Task, r.Config.Seed, h.Name, h.MirrorC, T)
			}
		}
	}
	if rel != 2*4 {
		t.Errorf("%d stored agreement heads with relations, want 8", rel)
	}
	if strings.Contains(string(md), "Seeds without these measurements") {
		t.Error("section 6 lacks seeds the sweep measured")
	}
	// Its runs carry every measurement, the signature on the atlas's
	// configurations alone.
	for _, r := range recs {
		want := "mean,resample,attribution,circuit"
		if r.EdgeCircuit != nil {
			want = "all"
		}
		if r.Status == sweep.StatusOK && sweep.AnalysisOf(&r).Measure.String() != want {
			t.Errorf("%s seed %d measured %v", r.Key, r.Config.Seed, sweep.AnalysisOf(&r).Measure)
		}
	}
	// The claims' and section 6's measurements are kept beside the
	// database: 4 circuit seeds and 2 each of four claims' runs.
	claims := filepath.Join(dir, "findings", findings.ClaimsFile)
	var m findings.Measured
	data, err := os.ReadFile(claims)
	if err != nil || json.Unmarshal(data, &m) != nil || len(m.Extras) != 4+4*2 || len(m.Dynamics) != 2 {
		t.Fatalf("claims.json: %v, %d extras (want 12), %d dynamics seeds (want 2)", err, len(m.Extras), len(m.Dynamics))
	}
	checkGrokking(t, dir, string(md), m.Grokking)
	// A claims.json of before section 6 (no extras of the default
	// model): --resume trains those seeds again, and only those, and
	// measures them.
	var before []findings.KeyedExtra
	for _, x := range m.Extras {
		if x.Extra.Circuit == nil {
			before = append(before, x)
		}
	}
	m.Extras = before
	data, _ = json.Marshal(m)
	os.WriteFile(claims, data, 0o644)
	code, _, errs = headlab(t, "reproduce", "--out", dir, "--quick", "--resume")
	if code != 0 || !strings.Contains(errs, "reproduce: 4 runs carried over lack their extra measurements; training them again") {
		t.Fatalf("resumed: exit %d: %s", code, errs)
	}
	data, err = os.ReadFile(claims)
	if err != nil || json.Unmarshal(data, &m) != nil || len(m.Extras) != 12 {
		t.Errorf("claims.json after --resume: %v, %d extras (want 12)", err, len(m.Extras))
	}
	// The stored grokking run is reused, not trained again.
	if strings.Contains(errs, "the grokking run") || m.Grokking == nil || len(m.Grokking.History) != 31 {
		t.Errorf("--resume trained the grokking run again, or lost it: %s", errs)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "findings.md")); err != nil || strings.Contains(string(md), "Seeds without these measurements") ||
		!strings.Contains(string(md), "## 6. The circuit by other measures") {
		t.Errorf("findings.md after --resume: %v", err)
	}
	// --quick sets what it sets, and a corrupt claims.json is refused
	// before anything trains.
	if code, _, _ := headlab(t, "reproduce", "--out", dir, "--quick", "--seeds", "3"); code != 2 {
		t.Errorf("--quick --seeds: exit %d", code)
	}
	os.WriteFile(filepath.Join(dir, "findings", findings.ClaimsFile), []byte(`{"extras": [`), 0o644)
	if code, _, errs := headlab(t, "reproduce", "--out", dir, "--quick", "--resume", "--quiet"); code != 2 || strings.Count(errs, "\n") != 1 {
		t.Errorf("corrupt claims.json: exit %d, %q", code, errs)
	}
}

// checkGrokking checks reproduce --quick's grokking run (issue 38): kept
// in claims.json at the scaled setting (60 steps, a record every 2), its
// section in findings.md says it is scaled, and the section's command
// line trains the same history.
func checkGrokking(t *testing.T, dir, md string, g *findings.Grokking) {
	t.Helper()
	if g == nil || g.Config.Task != "modular-addition" || g.Config.Steps != 60 || g.Every != 2 || len(g.History) != 31 {
		t.Fatalf("claims.json's grokking run: %+v", g)
	}
	_, section, _ := strings.Cut(md, "## Grokking on modular addition\n")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, s := range []string{"> **Scaled:**", "findings/" + findings.GrokkingFile, "No verdict", "| 60 | "} {
		if !strings.Contains(section, s) {
			t.Errorf("grokking section lacks %q:\n%s", s, section)
		}
	}
	_, line, _ := strings.Cut(section, "```\nheadlab ")
	line, _, _ = strings.Cut(line, "\n")
	args := strings.Fields(line)
	if len(args) < 2 || args[0] != "train" || args[len(args)-2] != "--save" {
		t.Fatalf("grokking command %q", line)
	}
	run := filepath.Join(dir, "grok")
	args[len(args)-1] = run
	if code, _, errs := headlab(t, append(args, "--quiet")...); code != 0 {
		t.Fatalf("%s: %s", line, errs)
	}
	h, err := inspect.LoadHistory(run)
	if err != nil || len(h) != len(g.History) {
		t.Fatalf("the section's command recorded %d records (%v), reproduce %d", len(h), err, len(g.History))
	}
	for i, s := range h {
		r := g.History[i]
		if s.Step != r.Step || s.Accuracy != r.Accuracy || *s.TrainAccuracy != *r.TrainAccuracy {
			t.Errorf("step %d: the section's command gives held-out %g, training %g; reproduce %g, %g", s.Step, s.Accuracy, *s.TrainAccuracy, r.Accuracy, *r.TrainAccuracy)
		}
	}
}
