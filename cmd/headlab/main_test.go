package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"headlab/internal/version"
	"headlab/tasks"
	"headlab/train"
)

// headlab runs the command in-process and returns its exit status, stdout
// and stderr.
func headlab(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadInputExits2WithOneLine(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt")
	os.MkdirAll(corrupt, 0o755)
	os.WriteFile(filepath.Join(corrupt, "config.json"), []byte(`{"format":1`), 0o644)
	cases := map[string][]string{
		"heads do not divide":  {"train", "--heads", "3", "--d-model", "32"},
		"unknown task":         {"train", "--task", "sorting"},
		"zero layers":          {"train", "--layers", "0"},
		"negative d-model":     {"train", "--d-model", "-8"},
		"zero batch":           {"train", "--batch", "0"},
		"negative steps":       {"train", "--steps", "-5"},
		"unknown flag":         {"train", "--bogus"},
		"unknown backend":      {"train", "--backend", "tpu"},
		"not a number":         {"train", "--steps", "many"},
		"unknown command":      {"fly"},
		"undeclared relation":  {"train", "--task", "agreement", "--relation", "verb->object"},
		"task has no relation": {"train", "--relation", "verb->subject"},
		"save over a file":     {"train", "--steps", "1", "--save", filepath.Join(dir, "file", "x")},
	}
	os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644)
	for name, args := range cases {
		code, out, errs := headlab(t, args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", name, code, errs)
		}
		if lines := strings.Count(strings.TrimSpace(errs), "\n"); lines != 0 {
			t.Errorf("%s: %d lines on stderr, want one: %q", name, lines+1, errs)
		}
		if !strings.HasPrefix(errs, "headlab: ") {
			t.Errorf("%s: stderr %q", name, errs)
		}
		if out != "" {
			t.Errorf("%s: wrote %q to stdout", name, out)
		}
	}
}

func TestTrainJSONIsDeterministic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"train", "--task", "majority", "--steps", "40", "--json", "--quiet"}
	code, a, errs := headlab(t, append(args, "--save", dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, b, _ := headlab(t, args...)
	strip := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, s)
		}
		for _, k := range []string{"train_seconds", "ms_per_step"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("JSON lacks %s", k)
			}
			delete(m, k)
		}
		return m
	}
	ja, jb := strip(a), strip(b)
	sa, _ := json.Marshal(ja)
	sb, _ := json.Marshal(jb)
	if string(sa) != string(sb) {
		t.Fatalf("identical runs differ:\n%s\n%s", sa, sb)
	}
	for _, k := range []string{"config", "params", "accuracy", "chance", "loss"} {
		if _, ok := ja[k]; !ok {
			t.Errorf("JSON lacks %s", k)
		}
	}
	cfg := ja["config"].(map[string]any)
	for _, k := range []string{"task", "seed", "steps", "batch", "lr", "layers", "heads", "d_model", "d_ff", "positions", "causal", "backend"} {
		if _, ok := cfg[k]; !ok {
			t.Errorf("config lacks %s", k)
		}
	}
	for _, f := range []string{"config.json", "model.safetensors"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("checkpoint: %v", err)
		}
	}
}

func TestVersion(t *testing.T) {
	want := "headlab " + version.Module() + ", revision " + version.Revision() + "\n"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errs := headlab(t, args...)
		if code != 0 || out != want || errs != "" {
			t.Errorf("%v: exit %d, stdout %q (want %q), stderr %q", args, code, out, want, errs)
		}
	}
}

// TestTrainProgressLines checks that train's progress, stderr not being a
// terminal, is plain lines with percentage, rate and ETA.
func TestTrainProgressLines(t *testing.T) {
	code, _, errs := headlab(t, "train", "--task", "majority", "--steps", "40", "--progress-every", "20", "--d-model", "16", "--d-ff", "16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"train:  50% 20/40 steps, ", "train: 100% 40/40 steps, ", " steps/s, ETA ", "held-out acc "} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.ContainsAny(errs, "\r\033") {
		t.Errorf("terminal codes in a log: %q", errs)
	}
}

// TestUnknownCommandSuggests checks cobra's multi-line suggestion became
// one clean line.
func TestUnknownCommandSuggests(t *testing.T) {
	code, out, errs := headlab(t, "trian")
	if want := "headlab: unknown command \"trian\" for \"headlab\" (did you mean train?)\n"; code != 2 || errs != want || out != "" {
		t.Errorf("exit %d, stderr %q, want %q", code, errs, want)
	}
	if code, _, errs := headlab(t, "zzzzzz"); code != 2 || strings.Contains(errs, "mean") || strings.Count(errs, "\n") != 1 {
		t.Errorf("no near command: exit %d, stderr %q", code, errs)
	}
}

// TestHelpListsEveryTask checks --task's help comes from the registry, in
// every command that takes --task.
func TestHelpListsEveryTask(t *testing.T) {
	var with []string
	for _, c := range rootCmd(&env{io.Discard, io.Discard}).Commands() {
		if c.Flags().Lookup("task") != nil {
			with = append(with, c.Name())
		}
	}
	if !slices.Contains(with, "train") || !slices.Contains(with, "sweep") || !slices.Contains(with, "view") {
		t.Fatalf("commands with --task: %v", with)
	}
	for _, cmd := range with {
		_, out, _ := headlab(t, cmd, "--help")
		for _, name := range tasks.Names() {
			if !strings.Contains(out, name) {
				t.Errorf("%s --help does not list task %s", cmd, name)
			}
		}
	}
}

// TestCompletion asks cobra's completion entry point, as a shell does,
// for values of --task, --backend and --ablate.
func TestCompletion(t *testing.T) {
	complete := func(args ...string) []string {
		t.Helper()
		code, out, errs := headlab(t, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", args, code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[:len(lines)-1] // the last line is cobra's directive
	}
	if got := complete("train", "--task", ""); strings.Join(got, ",") != strings.Join(tasks.Names(), ",") {
		t.Errorf("--task completes to %v", got)
	}
	if got := complete("heads", "--backend", ""); strings.Join(got, ",") != "cpu,gl,auto" {
		t.Errorf("--backend completes to %v", got)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if code, _, errs := headlab(t, "train", "--task", "majority", "--steps", "1", "--layers", "2", "--heads", "2", "--quiet", "--save", dir); code != 0 {
		t.Fatal(errs)
	}
	for _, cmd := range []string{"heads", "dump"} {
		if got := complete(cmd, "--run", dir, "--ablate", "L0H1,L"); strings.Join(got, ",") != "L0H1,L0H0,L0H1,L1H0,L0H1,L1H1" {
			t.Errorf("%s --ablate completes to %v", cmd, got)
		}
	}
	if got := complete("heads", "--run", filepath.Join(dir, "missing"), "--ablate", ""); len(got) != 0 {
		t.Errorf("--ablate without a checkpoint completes to %v", got)
	}
}

func TestHeadsDumpScoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if code, _, errs := headlab(t, "train", "--steps", "150", "--quiet", "--save", run, "--json"); code != 0 {
		t.Fatalf("train: %s", errs)
	}
	dump := filepath.Join(dir, "att.json")
	png := filepath.Join(dir, "heads.png")
	code, out, errs := headlab(t, "heads", "--run", run, "--json", "--dump-attention", dump, "--png", png)
	if code != 0 {
		t.Fatalf("heads: %s", errs)
	}
	var heads struct {
		Accuracy float64 `json:"accuracy"`
		Heads    []struct {
			Name, Label     string
			Score           float64
			Scores          map[string]float64
			AblatedAccuracy *float64 `json:"ablated_accuracy"`
			OffsetD         *int     `json:"offset_d"`
			PositionJ       *int     `json:"position_j"`
			MirrorC         *int     `json:"mirror_c"`
		}
	}
	if err := json.Unmarshal([]byte(out), &heads); err != nil {
		t.Fatal(err)
	}
	code, out, errs = headlab(t, "score", "--attention", dump, "--json")
	if code != 0 {
		t.Fatalf("score: %s", errs)
	}
	var scored struct {
		Heads []struct {
			Name, Label string
			Scores      map[string]float64
		}
	}
	if err := json.Unmarshal([]byte(out), &scored); err != nil {
		t.Fatal(err)
	}
	if len(heads.Heads) != 4 || len(scored.Heads) != 4 {
		t.Fatalf("%d and %d heads", len(heads.Heads), len(scored.Heads))
	}
	for i, h := range heads.Heads {
		s := scored.Heads[i]
		if h.Name != s.Name || h.Label != s.Label || len(h.Scores) != 8 {
			t.Fatalf("head %d: %s %q vs %s %q", i, h.Name, h.Label, s.Name, s.Label)
		}
		if h.AblatedAccuracy == nil || h.OffsetD == nil || h.PositionJ == nil || h.MirrorC == nil {
			t.Fatalf("head %s lacks ablated_accuracy, offset_d, position_j or mirror_c", h.Name)
		}
		for k, v := range h.Scores {
			if v != s.Scores[k] {
				t.Fatalf("%s %s: heads %v, score %v", h.Name, k, v, s.Scores[k])
			}
		}
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() == 0 {
		t.Fatalf("no PNG: %v", err)
	}
	// Bad ablation lists and attention files exit 2.
	if code, _, _ := headlab(t, "heads", "--run", run, "--ablate", "L9H9"); code != 2 {
		t.Errorf("--ablate L9H9: exit %d", code)
	}
	os.WriteFile(dump, []byte(`{"causal": true, "tokens": [[1,2]], "attention": [[[[[1,0],[0.5,0.6]]]]]}`), 0o644)
	if code, _, errs := headlab(t, "score", "--attention", dump); code != 2 || strings.Count(errs, "\n") != 1 {
		t.Errorf("bad attention file: exit %d, %q", code, errs)
	}
}

// A reverse model predicts the next token of the reversal, so its heads
// read T-2-i: the contract's shifted mirror, reported with mirror_c = T-2.
func TestReverseGrowsShiftedMirror(t *testing.T) {
	code, out, errs := headlab(t, "train", "--task", "reverse", "--steps", "600", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("train: %s", errs)
	}
	var r struct {
		Accuracy float64
		Heads    []struct {
			Name, Label string
			MirrorC     int `json:"mirror_c"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	shifted := 0
	for _, h := range r.Heads {
		if h.Label == "mirror shifted" {
			shifted++
			if h.MirrorC != 14 {
				t.Errorf("%s: mirror shifted with mirror_c %d, want 14", h.Name, h.MirrorC)
			}
		}
	}
	if r.Accuracy < 0.9 || shifted == 0 {
		t.Errorf("reverse after 600 steps: accuracy %.3f, %d heads labelled mirror shifted: %+v", r.Accuracy, shifted, r.Heads)
	}
}

// train --task agreement --json reports accuracy with and without an
// attractor and each head's relation scores beside their baseline; heads
// --run gives the same relations, and refuses an undeclared relation.
func TestAgreementJSON(t *testing.T) {
	run := filepath.Join(t.TempDir(), "agr")
	code, out, errs := headlab(t, "train", "--task", "agreement", "--steps", "200", "--quiet", "--json", "--save", run)
	if code != 0 {
		t.Fatalf("train: %s", errs)
	}
	type report struct {
		Accuracy float64
		ByKind   *struct {
			Relation, Head string
			Kinds          []struct {
				Kind     string
				Examples int
				Accuracy *float64
				HeadOff  *float64 `json:"head_off_accuracy"`
			}
		} `json:"by_kind"`
		Heads []struct {
			Name      string
			Relations []struct {
				Relation     string
				Mass, Argmax *float64
				Baseline     *float64
				BaselineBy   string `json:"baseline_by"`
			}
		}
	}
	var tr report
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.ByKind == nil || len(tr.ByKind.Kinds) != 2 || tr.ByKind.Kinds[0].Kind != "attractor" || tr.ByKind.Kinds[1].Kind != "no attractor" {
		t.Fatalf("by_kind: %+v", tr.ByKind)
	}
	for _, k := range tr.ByKind.Kinds {
		if k.Examples == 0 || k.Accuracy == nil || k.HeadOff == nil {
			t.Fatalf("kind %+v", k)
		}
	}
	check := func(who string, r report) {
		if len(r.Heads) != 4 {
			t.Fatalf("%s: %d heads", who, len(r.Heads))
		}
		for _, h := range r.Heads {
			if len(h.Relations) != 2 || h.Relations[0].Relation != "verb->subject" || h.Relations[1].Relation != "adjective->noun" {
				t.Fatalf("%s %s: relations %+v", who, h.Name, h.Relations)
			}
			for _, x := range h.Relations {
				if x.Mass == nil || x.Argmax == nil || x.Baseline == nil || x.BaselineBy == "" {
					t.Fatalf("%s %s: relation %+v lacks a field", who, h.Name, x)
				}
			}
		}
	}
	check("train", tr)
	code, out, errs = headlab(t, "heads", "--run", run, "--json", "--relation", "adjective->noun")
	if code != 0 {
		t.Fatalf("heads: %s", errs)
	}
	var hr report
	if err := json.Unmarshal([]byte(out), &hr); err != nil {
		t.Fatal(err)
	}
	check("heads", hr)
	if hr.ByKind == nil || hr.ByKind.Relation != "adjective->noun" {
		t.Fatalf("heads --relation adjective->noun: by_kind %+v", hr.ByKind)
	}
	if code, out, errs := headlab(t, "heads", "--run", run, "--relation", "object->verb"); code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
		t.Errorf("undeclared relation: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Text output shows the relation table and the accuracy by kind.
	code, out, _ = headlab(t, "heads", "--run", run)
	if code != 0 || !strings.Contains(out, "| Head | Relation |") || !strings.Contains(out, "| attractor |") {
		t.Errorf("heads text output lacks relations or kinds:\n%s", out)
	}
}

// A checkpoint saved with tied embeddings records it in config.json and
// holds no unembedding matrix; heads and prune load it as such, and a
// config.json that claims tied embeddings over untied weights is refused.
func TestTiedEmbeddingsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	tied, untied := filepath.Join(dir, "tied"), filepath.Join(dir, "untied")
	for _, c := range []struct {
		dir  string
		args []string
	}{{tied, []string{"--tied-embeddings"}}, {untied, nil}} {
		argv := append([]string{"train", "--steps", "30", "--quiet", "--save", c.dir, "--json"}, c.args...)
		if code, _, errs := headlab(t, argv...); code != 0 {
			t.Fatalf("train %v: %s", c.args, errs)
		}
	}
	m, _, err := train.Load(tied)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Train.TiedEmbeddings || !m.Shape.TiedEmbeddings || m.Weights.Get("unembed.weight") != nil {
		t.Fatalf("loaded tied checkpoint: train %v, shape %v, unembed.weight %v", m.Train.TiedEmbeddings, m.Shape.TiedEmbeddings, m.Weights.Get("unembed.weight") != nil)
	}
	cfg, _ := os.ReadFile(filepath.Join(tied, "config.json"))
	if strings.Count(string(cfg), `"tied_embeddings": true`) != 2 {
		t.Fatalf("config.json does not record tied embeddings:\n%s", cfg)
	}
	code, out, errs := headlab(t, "heads", "--run", tied, "--json")
	var rep struct{ Accuracy float64 }
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("heads on a tied checkpoint: exit %d: %s", code, errs)
	}
	if code, _, errs := headlab(t, "prune", "--run", tied, "--examples", "8", "--random-orders", "2", "--json"); code != 0 {
		t.Fatalf("prune on a tied checkpoint: exit %d: %s", code, errs)
	}
	// Tied config.json over untied weights: a corrupt checkpoint.
	ucfg, _ := os.ReadFile(filepath.Join(untied, "config.json"))
	bad := strings.ReplaceAll(string(ucfg), `"causal": true`, `"causal": true, "tied_embeddings": true`)
	os.WriteFile(filepath.Join(untied, "config.json"), []byte(bad), 0o644)
	if code, _, errs := headlab(t, "heads", "--run", untied); code != 2 || strings.Count(errs, "\n") != 1 {
		t.Errorf("tied config over untied weights: exit %d, %q", code, errs)
	}
}
