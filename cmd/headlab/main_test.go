package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	code, out, _ := headlab(t, "--version")
	if code != 0 || !strings.Contains(out, version) {
		t.Fatalf("--version: exit %d, %q", code, out)
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
