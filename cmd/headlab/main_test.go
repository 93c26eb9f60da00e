package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/internal/version"
	"headlab/tasks"
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
		"heads do not divide": {"train", "--heads", "3", "--d-model", "32"},
		"unknown task":        {"train", "--task", "sorting"},
		"zero layers":         {"train", "--layers", "0"},
		"negative d-model":    {"train", "--d-model", "-8"},
		"zero batch":          {"train", "--batch", "0"},
		"negative steps":      {"train", "--steps", "-5"},
		"unknown flag":        {"train", "--bogus"},
		"unknown backend":     {"train", "--backend", "tpu"},
		"not a number":        {"train", "--steps", "many"},
		"unknown command":     {"fly"},
		"save over a file":    {"train", "--steps", "1", "--save", filepath.Join(dir, "file", "x")},
	}
	os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644)
	for name, args := range cases {
		code, out, errs := headlab(t, args...)
		if name == "save over a file" {
			if code == 0 {
				t.Errorf("%s: exit 0", name)
			}
		} else if code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", name, code, errs)
		}
		if lines := strings.Count(strings.TrimSpace(errs), "\n"); lines != 0 && name != "save over a file" {
			t.Errorf("%s: %d lines on stderr, want one: %q", name, lines+1, errs)
		}
		if !strings.HasPrefix(errs, "headlab: ") && name != "save over a file" {
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

// TestHelpListsEveryTask checks --task's help comes from the registry.
func TestHelpListsEveryTask(t *testing.T) {
	for _, cmd := range []string{"train", "sweep"} {
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
	if got := complete("heads", "--run", dir, "--ablate", "L0H1,L"); strings.Join(got, ",") != "L0H1,L0H0,L0H1,L1H0,L0H1,L1H1" {
		t.Errorf("--ablate completes to %v", got)
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
		if h.AblatedAccuracy == nil || h.OffsetD == nil || h.PositionJ == nil {
			t.Fatalf("head %s lacks ablated_accuracy, offset_d or position_j", h.Name)
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
