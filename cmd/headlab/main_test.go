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
		"save over a file":     {"train", "--steps", "1", "--save", filepath.Join(dir, "file", "x")},
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
	code, out, _ := headlab(t, "--version")
	if code != 0 || !strings.Contains(out, version) {
		t.Fatalf("--version: exit %d, %q", code, out)
	}
}
