package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"headlab/backend/cpu"
	"headlab/inspect"
	"headlab/train"
)

// TestCommandsAtABigShape: heads, patch and attribute work on a
// checkpoint of 4 blocks of 8 heads at --seq-len 64 (narrow, so that it
// stays cheap): 32 heads reported in order with their ablations, the
// heatmap grid and the arcs drawn (the arcs in columns, within the
// figure limit), patching's rows and attribution's parts well-formed.
func TestCommandsAtABigShape(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "big")
	// Saved through train (train --save would analyze the model too).
	c := train.Defaults("induction")
	c.Layers, c.Heads, c.DModel, c.DFF, c.SeqLen, c.Vocab, c.Steps = 4, 8, 32, 64, 64, 64, 5
	m, res, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := train.Save(run, m, &res); err != nil {
		t.Fatal(err)
	}
	grid, arcs := filepath.Join(dir, "grid.png"), filepath.Join(dir, "arcs.png")
	code, out, errs := headlab(t, "heads", "--run", run, "--json", "--png", grid, "--arcs", arcs)
	if code != 0 {
		t.Fatalf("heads: exit %d: %s", code, errs)
	}
	var heads struct {
		Heads []inspect.Head `json:"heads"`
	}
	if err := json.Unmarshal([]byte(out), &heads); err != nil {
		t.Fatal(err)
	}
	if len(heads.Heads) != 32 {
		t.Fatalf("%d heads", len(heads.Heads))
	}
	for k, h := range heads.Heads {
		if h.Layer != k/8 || h.Head != k%8 || h.AblatedAccuracy < 0 || h.AblatedAccuracy > 1 {
			t.Errorf("head %d: %s (L%d H%d), ablated accuracy %v", k, h.Name, h.Layer, h.Head, h.AblatedAccuracy)
		}
	}
	for _, f := range []string{grid, arcs} {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(r)
		r.Close()
		if err != nil || cfg.Width < 1000 || cfg.Height < 500 {
			t.Errorf("%s: %+v, %v", f, cfg, err)
		}
	}

	code, out, errs = headlab(t, "patch", "--run", run, "--json", "--examples", "4", "--layer", "3", "--position", "63", "--png", filepath.Join(dir, "patch.png"))
	if code != 0 {
		t.Fatalf("patch: exit %d: %s", code, errs)
	}
	var patch inspect.PatchReport
	if err := json.Unmarshal([]byte(out), &patch); err != nil {
		t.Fatal(err)
	}
	if len(patch.Heads) != 8 || len(patch.Resid) != 1 || len(patch.Heads[7].LogitDiff) != 1 || patch.Heads[7].Name != "L3H7" {
		t.Errorf("patch: %d heads, %d residual rows: %+v", len(patch.Heads), len(patch.Resid), patch.Heads)
	}

	code, out, errs = headlab(t, "attribute", "--run", run, "--json", "--examples", "50", "--png", filepath.Join(dir, "attr.png"))
	if code != 0 {
		t.Fatalf("attribute: exit %d: %s", code, errs)
	}
	var attr inspect.AttributionReport
	if err := json.Unmarshal([]byte(out), &attr); err != nil {
		t.Fatal(err)
	}
	// Every head has its part, beside the embeddings, MLPs and biases.
	if attr.Examples != 50 || len(attr.Parts) < 32 || len(attr.Lens) != 4 && len(attr.Lens) != 5 || attr.MaxResidual > 1e-3 {
		t.Errorf("attribute: %d examples, %d parts, %d lens layers, residual %v", attr.Examples, len(attr.Parts), len(attr.Lens), attr.MaxResidual)
	}
}
