package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDynamicsCompositionPrune(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	code, out, errs := headlab(t, "train", "--steps", "100", "--record-every", "50", "--quiet", "--json", "--save", run)
	if code != 0 {
		t.Fatalf("train: %s", errs)
	}
	var tr struct {
		History []struct{ Step int }
		Phase   map[string]any `json:"phase_change"`
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.History) != 3 || tr.History[2].Step != 100 || tr.Phase == nil {
		t.Fatalf("history %+v, phase %v", tr.History, tr.Phase)
	}
	// The extension chooses the format; --figure is --png's alias.
	for ext, magic := range map[string]string{".png": "\x89PNG", ".svg": "<?xml", ".pdf": "%PDF-"} {
		for _, flag := range []string{"--png", "--figure"} {
			path := filepath.Join(dir, "curves"+flag+ext)
			if code, _, errs := headlab(t, "curves", "--run", run, flag, path); code != 0 {
				t.Fatalf("curves %s %s: %s", flag, path, errs)
			}
			if data, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(data), magic) {
				t.Fatalf("curves %s: %v, %.8q", path, err, data)
			}
		}
	}
	// The SVG (the same drawing as the PNG's golden image, viz) holds the
	// four panels: each one's axis label and its own step axis.
	svg, _ := os.ReadFile(filepath.Join(dir, "curves--png.svg"))
	for _, label := range []string{">loss<", ">accuracy<", ">ICL score (nats)<", ">head&#39;s best pattern score<", ">step<"} {
		if !strings.Contains(string(svg), label) {
			t.Errorf("curves SVG lacks %s", label)
		}
	}
	if n := strings.Count(string(svg), ">100</text>"); n != 4 {
		t.Errorf("curves SVG has %d step axes ending at 100, want 4 (one per panel)", n)
	}
	// An extension no writer knows is refused before any work, one line.
	for _, args := range [][]string{
		{"curves", "--run", run, "--png", filepath.Join(dir, "c.jpg")},
		{"heads", "--run", run, "--arcs", filepath.Join(dir, "a.gif")},
		{"prune", "--run", run, "--figure", filepath.Join(dir, "p")},
		{"train", "--steps", "1", "--png", filepath.Join(dir, "h.bmp")},
	} {
		code, out, errs := headlab(t, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "unknown figure format") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args[:1], code, out, errs)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "[chap].*")); len(entries) != 0 {
		t.Errorf("refused figures left %v", entries)
	}
	// heads draws both figures in any format, named after the run.
	heat, arcs := filepath.Join(dir, "heads.svg"), filepath.Join(dir, "arcs.pdf")
	if code, _, errs := headlab(t, "heads", "--run", run, "--figure", heat, "--arcs", arcs); code != 0 {
		t.Fatalf("heads: %s", errs)
	}
	if data, err := os.ReadFile(heat); err != nil || !strings.Contains(string(data), "induction · 2 layers × 2 heads, d-model 32 · seed 1 · 100 steps") {
		t.Errorf("heads SVG lacks the run's title: %v", err)
	}
	if data, err := os.ReadFile(arcs); err != nil || !strings.HasPrefix(string(data), "%PDF-") {
		t.Errorf("arcs PDF: %v", err)
	}

	code, out, errs = headlab(t, "heads", "--run", run, "--composition", "--json")
	if code != 0 {
		t.Fatalf("heads --composition: %s", errs)
	}
	var comp struct {
		Composition struct {
			Pairs    []struct{ From, To string }
			Baseline struct{ Q, K, V float64 }
		}
	}
	if err := json.Unmarshal([]byte(out), &comp); err != nil {
		t.Fatal(err)
	}
	if len(comp.Composition.Pairs) != 4 || comp.Composition.Baseline.K <= 0 {
		t.Fatalf("composition %+v", comp.Composition)
	}

	code, out, errs = headlab(t, "prune", "--run", run, "--json", "--examples", "8", "--random-orders", "2", "--png", filepath.Join(dir, "prune.png"))
	if code != 0 {
		t.Fatalf("prune: %s", errs)
	}
	type pruneJSON struct {
		Orders []struct {
			Order     string
			Steps     []struct{ Removed int }
			Removable *int `json:"removable"`
		}
		Best []string `json:"best_orders"`
	}
	var pr pruneJSON
	if err := json.Unmarshal([]byte(out), &pr); err != nil || len(pr.Orders) != 4 || len(pr.Best) == 0 {
		t.Fatalf("prune: %v %s", err, out)
	}
	for _, o := range pr.Orders {
		if len(o.Steps) != 5 || o.Removable == nil {
			t.Fatalf("prune order %s: %+v", o.Order, o)
		}
	}
	// One order alone, as asked.
	code, out, errs = headlab(t, "prune", "--run", run, "--json", "--examples", "8", "--order", "iterative")
	pr = pruneJSON{}
	if err := json.Unmarshal([]byte(out), &pr); code != 0 || err != nil || len(pr.Orders) != 1 || pr.Orders[0].Order != "iterative" {
		t.Fatalf("prune --order iterative: exit %d, %v: %s %s", code, err, out, errs)
	}

	// A checkpoint without a history, and bad prune flags, exit 2.
	plain := filepath.Join(dir, "plain")
	if code, _, _ := headlab(t, "train", "--steps", "1", "--quiet", "--save", plain); code != 0 {
		t.Fatal("train")
	}
	if code, _, _ := headlab(t, "curves", "--run", plain); code != 2 {
		t.Errorf("curves without history: exit %d", code)
	}
	if code, _, _ := headlab(t, "prune", "--run", plain, "--examples", "0"); code != 2 {
		t.Errorf("prune --examples 0: exit %d", code)
	}
	if code, out, errs := headlab(t, "prune", "--run", plain, "--order", "backwards"); code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
		t.Errorf("prune --order backwards: exit %d, %q %q", code, out, errs)
	}
}
