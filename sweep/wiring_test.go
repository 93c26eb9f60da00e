package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/internal/preflight"
	"headlab/train"
)

// TestSpecPlan: a spec resolves into the shard's pairs of the grid and
// seeds, with the sweep's ID of every pair and a line naming the shard;
// bad input is refused, and an invalid base matters only without a grid.
func TestSpecPlan(t *testing.T) {
	base := tiny("majority", 10)
	none := func(string) string { return "" }
	s := Spec{Seeds: "1-3", Grid: "layers=1,2", Shard: "1/2", Base: base, Getenv: none}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	configs, _ := Expand(base, []Axis{{Key: "layers", Values: []string{"1", "2"}}}, false)
	all := Pairs(configs, []uint64{1, 2, 3})
	want := (Shard{1, 2}).Select(all)
	if len(p.Pairs) != len(want) || p.Pairs[0] != want[0] || p.ID != SweepID(all) || p.Note != "sweep: shard 1/2: 3 of 6 pairs" {
		t.Errorf("planned %d pairs, id %d, note %q; want %d pairs, id %d", len(p.Pairs), p.ID, p.Note, len(want), SweepID(all))
	}
	s.Shard = ""
	s.Getenv = func(k string) string {
		return map[string]string{"JOB_COMPLETION_INDEX": "0", "JOB_COMPLETIONS": "3"}[k]
	}
	if p, err = s.Plan(); err != nil || p.Shard != (Shard{0, 3}) || len(p.Pairs) != 2 {
		t.Errorf("shard from the environment: %+v, %v", p.Shard, err)
	}
	s.Getenv = none
	if p, err = s.Plan(); err != nil || p.Shard != All || p.Note != "" || len(p.Pairs) != 6 {
		t.Errorf("whole sweep: %+v, note %q, %v", p.Shard, p.Note, err)
	}
	bad := errors.New("base is bad")
	for _, s := range []Spec{
		{Seeds: "x", Base: base, Getenv: none},
		{Seeds: "1", Grid: "colour=red", Base: base, Getenv: none},
		{Seeds: "1", Shard: "3/2", Base: base, Getenv: none},
	} {
		var r *preflight.Refusal
		if _, err := s.Plan(); !errors.As(err, &r) {
			t.Errorf("%+v: %v, want a refusal", s, err)
		}
	}
	if _, err := (Spec{Seeds: "1", Base: base, BaseErr: bad, Getenv: none}).Plan(); err != bad {
		t.Errorf("invalid base without a grid: %v, want its own error", err)
	}
	if _, err := (Spec{Seeds: "1", Grid: "layers=1", Base: base, BaseErr: bad, Getenv: none}).Plan(); err != nil {
		t.Errorf("invalid base with a grid that mends it: %v", err)
	}
}

// TestTrainSeeds: every seed trained in a group gives the record it
// gives alone (a seed's result never depends on its group), in seed
// order, and WriteSeeds prints a line per seed.
func TestTrainSeeds(t *testing.T) {
	c := tiny("majority", 12)
	var stderr strings.Builder
	res, err := TrainSeeds(Seeds{Config: c, Seeds: []uint64{3, 1, 2}, Group: 2, Every: 4, Stderr: &stderr}, cpuPlatform())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 3 || res.Group != 2 {
		t.Fatalf("%d records in groups of %d, want 3 in groups of 2", len(res.Records), res.Group)
	}
	for i, r := range res.Records {
		seed := []uint64{3, 1, 2}[i]
		alone, err := RunOne(Pair{Key: Key(c), Config: withSeed(c, seed), Index: i}, cpuPlatform(), Analysis{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		a := alone.Record
		if r.Config.Seed != seed || r.Status != StatusOK || r.Accuracy != a.Accuracy || r.Loss != a.Loss || r.TrainLoss != a.TrainLoss {
			t.Errorf("seed %d: %v/%v/%v in a group, %v/%v/%v alone", seed, r.Accuracy, r.Loss, r.TrainLoss, a.Accuracy, a.Loss, a.TrainLoss)
		}
	}
	var out strings.Builder
	WriteSeeds(&out, res.Records)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "seed 3  accuracy ") || !strings.Contains(lines[2], "  heads: ") {
		t.Errorf("WriteSeeds:\n%s", out.String())
	}
	failed := []Record{{Config: withSeed(c, 7), Status: StatusFailed, Error: "diverged"}}
	out.Reset()
	if WriteSeeds(&out, failed); out.String() != "seed 7  FAILED: diverged\n" {
		t.Errorf("a failed seed: %q", out.String())
	}
}

func withSeed(c train.Config, seed uint64) train.Config {
	c.Seed = seed
	return c
}

// TestProgressNote: the progress line's note says the failures and runs
// in flight, those skipped before the first run lands, and in a log the
// run that landed.
func TestProgressNote(t *testing.T) {
	p := Progress{Failed: 1, Running: 2, Skipped: 3}
	if got := p.note(true); got != "1 failed, 2 running, 3 already in the database" {
		t.Errorf("before a run lands: %q", got)
	}
	r := &Record{Key: "k", Config: train.Config{Seed: 4}, Status: StatusOK, Accuracy: 0.5, Seconds: 1.25}
	p.Last, p.Elsewhere = r, 5
	if got := p.note(true); got != "1 failed, 2 running, 5 in another process" {
		t.Errorf("on a terminal: %q", got)
	}
	if got := p.note(false); got != "1 failed, 2 running, 5 in another process · seed 4 k: accuracy 50.0% in 1.2 s" {
		t.Errorf("in a log: %q", got)
	}
	r.Status, r.Error = StatusFailed, "boom"
	if got := p.note(false); !strings.HasSuffix(got, "seed 4 k: FAILED: boom in 1.2 s") {
		t.Errorf("a failure in a log: %q", got)
	}
	var w strings.Builder
	Summary{Total: 4, Skipped: 1, Done: 3, Failed: 1}.Write(&w, Shard{1, 2}, "s.db")
	if w.String() != "sweep: 4 pairs in shard 1/2: 1 already in s.db, 3 run now (1 failed)\n" {
		t.Errorf("summary line %q", w.String())
	}
}

// TestReportDBAndAtlasDB: a database's report, its comparison with
// another, and the refusals of the atlas and of a missing database.
func TestReportDBAndAtlasDB(t *testing.T) {
	dir := t.TempDir()
	recs := knownRecords()
	a := writeDB(t, dir, "a.db", All, 0, recs...)
	var stderr strings.Builder
	rep, err := ReportDB(&stderr, a, a, filepath.Join(dir, "csv"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != len(recs) || len(rep.Configs) != len(Summarize(recs)) || len(rep.Agreement) == 0 || rep.Disagreement() != nil {
		t.Errorf("report of %d runs, %d configurations, agreement %+v, %v", rep.Runs, len(rep.Configs), rep.Agreement, rep.Disagreement())
	}
	if _, err := os.Stat(filepath.Join(dir, "csv", CSVFiles[0])); err != nil {
		t.Errorf("no CSV: %v", err)
	}
	var text strings.Builder
	rep.Write(&text)
	if !strings.HasPrefix(text.String(), a+": ") || !strings.Contains(text.String(), "\n\n") {
		t.Errorf("text report:\n%s", text.String())
	}
	rep.Agreement[0].Agree = false
	if err := rep.Disagreement(); err == nil || !strings.Contains(err.Error(), "differ on "+rep.Agreement[0].Key) {
		t.Errorf("a configuration that differs: %v", err)
	}
	rep.Agreement = nil
	if err := rep.Disagreement(); err == nil || !strings.Contains(err.Error(), "share no finished pair") {
		t.Errorf("no pair shared: %v", err)
	}
	var r *preflight.Refusal
	if _, err := ReportDB(&stderr, filepath.Join(dir, "missing.db"), "", ""); !errors.As(err, &r) {
		t.Errorf("missing database: %v, want a refusal", err)
	}
	if _, err := AtlasDB(a, "no such key"); !errors.As(err, &r) || !strings.Contains(err.Error(), "no run of") {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := AtlasDB(a, ""); !errors.As(err, &r) || !strings.Contains(err.Error(), "holds no circuit signature") {
		t.Errorf("no signature: %v", err)
	}
	signed := writeDB(t, dir, "signed.db", All, 0, signedRecord(1, 0.9, ind, indEdges))
	if atlas, err := AtlasDB(signed, ""); err != nil || len(atlas) != 1 {
		t.Errorf("signed database: %d configurations, %v", len(atlas), err)
	}
}
