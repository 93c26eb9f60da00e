package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"headlab/internal/atomicfile"
	"headlab/interop"
	"headlab/train"
)

// export then import gives the checkpoint back, byte for byte, in both
// layouts, for the default model and for an attention-only one with tied
// embeddings and no positions (what the layouts cannot say comes from
// headlab's metadata).
func TestImportRoundTrip(t *testing.T) {
	for _, c := range []struct {
		task  string
		flags []string
	}{{"induction", nil}, {"copy", []string{"--no-mlp", "--tied-embeddings", "--no-positions", "--heads", "4"}}} {
		run := trained(t, c.task, c.flags...)
		for _, format := range []string{"transformerlens", "hf"} {
			t.Run(c.task+"/"+format, func(t *testing.T) {
				dir := t.TempDir()
				file, back := filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "back")
				if code, _, errs := headlab(t, "export", "--run", run, "--format", format, "--out", file); code != 0 {
					t.Fatalf("export: exit %d: %s", code, errs)
				}
				if code, _, errs := headlab(t, "import", "--format", format, "--in", file, "--out", back); code != 0 {
					t.Fatalf("import: exit %d: %s", code, errs)
				}
				for _, name := range []string{train.ConfigFile, train.WeightsFile} {
					a, _ := os.ReadFile(filepath.Join(run, name))
					b, err := os.ReadFile(filepath.Join(back, name))
					if err != nil || !bytes.Equal(a, b) {
						t.Errorf("%s differs after export and import (%v):\n%s\n%s", name, err, a, b)
					}
				}
			})
		}
	}
}

// An attention-only model exports as TransformerLens's attn_only: no ln2
// or MLP tensors, attn_only in its config and no d_mlp, and numpy,
// computing in TransformerLens's and PyTorch's conventions without the
// MLP, reproduces its attention and logits.
func TestExportAttentionOnly(t *testing.T) {
	run := trained(t, "induction", "--no-mlp")
	dir := t.TempDir()
	tl, hf, dump := filepath.Join(dir, "tl.safetensors"), filepath.Join(dir, "hf.safetensors"), filepath.Join(dir, "d.safetensors")
	for _, args := range [][]string{
		{"export", "--run", run, "--out", tl},
		{"export", "--run", run, "--format", "hf", "--out", hf},
		{"dump", "--run", run, "--examples", "24", "--out", dump},
	} {
		if code, _, errs := headlab(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	for _, path := range []string{tl, hf} {
		for _, name := range readTensors(t, path).Names() {
			if strings.Contains(name, "mlp") || strings.Contains(name, "ln2") {
				t.Errorf("%s: an attention-only model exports %s", filepath.Base(path), name)
			}
		}
	}
	var cfg map[string]any
	side, _ := os.ReadFile(filepath.Join(dir, "tl.json"))
	if err := json.Unmarshal(side, &cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg["d_mlp"]; cfg["attn_only"] != true || ok {
		t.Errorf("tl.json: attn_only %v, d_mlp present %v", cfg["attn_only"], ok)
	}
	for _, k := range []struct{ weights, layout string }{{tl, "transformerlens"}, {hf, "hf"}} {
		if code, out := numpyCheck(t, k.weights, k.layout, dump); code != 0 {
			t.Errorf("numpy check of %s: exit %d: %s", k.layout, code, out)
		}
	}
}

// Every file import cannot take is one line on stderr, exit 2, and no
// checkpoint.
func TestImportRefuses(t *testing.T) {
	run := trained(t, "induction")
	m, _, err := train.Load(run)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// write exports m in layout, edits its tensors and metadata, and
	// returns the file.
	write := func(name string, layout interop.ExportFormat, edit func(b *interop.Bundle)) string {
		b, err := interop.Export(m, layout, provenance())
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range b.Tensors { // the export shares m's weights
			b.Tensors[i].F32 = append([]float32(nil), x.F32...)
		}
		edit(b)
		path := filepath.Join(dir, name+".safetensors")
		if err := atomicfile.Write(path, func(w io.Writer) error { return interop.WriteSafetensors(w, b) }); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// tl exports m with its HookedTransformerConfig changed by set, and
	// no headlab metadata: a model from elsewhere.
	tl := func(name string, set func(cfg map[string]any)) string {
		return write(name, interop.TransformerLens, func(b *interop.Bundle) {
			var cfg map[string]any
			json.Unmarshal([]byte(b.Meta["hooked_transformer_config"]), &cfg)
			set(cfg)
			data, _ := json.Marshal(cfg)
			b.Meta = map[string]string{"hooked_transformer_config": string(data)}
		})
	}
	drop := func(name string) func(b *interop.Bundle) {
		return func(b *interop.Bundle) {
			for i, x := range b.Tensors {
				if x.Name == name {
					b.Tensors = append(b.Tensors[:i], b.Tensors[i+1:]...)
					return
				}
			}
		}
	}
	garbage := filepath.Join(dir, "garbage.safetensors")
	os.WriteFile(garbage, []byte("not a safetensors file at all"), 0o644)
	foreign := tl("foreign", func(map[string]any) {})
	truncated := filepath.Join(dir, "truncated.safetensors")
	if data, err := os.ReadFile(foreign); err != nil || os.WriteFile(truncated, data[:len(data)-4], 0o644) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		args       []string
	}{
		{"rotary", `positional_embedding_type "rotary"`, []string{"--in", tl("rotary", func(c map[string]any) { c["positional_embedding_type"] = "rotary" }), "--task", "induction"}},
		{"no layernorm", "normalization_type null", []string{"--in", tl("nonorm", func(c map[string]any) { c["normalization_type"] = nil }), "--task", "induction"}},
		{"rms norm", "normalization_type RMS", []string{"--in", tl("rms", func(c map[string]any) { c["normalization_type"] = "RMS" }), "--task", "induction"}},
		{"relu", "act_fn relu", []string{"--in", tl("relu", func(c map[string]any) { c["act_fn"] = "relu" }), "--task", "induction"}},
		{"gelu_new", "act_fn gelu_new", []string{"--in", tl("gelunew", func(c map[string]any) { c["act_fn"] = "gelu_new" }), "--task", "induction"}},
		{"parallel attention", "parallel_attn_mlp", []string{"--in", tl("parallel", func(c map[string]any) { c["parallel_attn_mlp"] = true }), "--task", "induction"}},
		{"other eps", "eps 1e-06", []string{"--in", tl("eps", func(c map[string]any) { c["eps"] = 1e-6 }), "--task", "induction"}},
		{"grouped keys", "n_key_value_heads 1", []string{"--in", tl("gqa", func(c map[string]any) { c["n_key_value_heads"] = 1 }), "--task", "induction"}},
		{"unknown field", "field mystery_mode", []string{"--in", tl("unknown", func(c map[string]any) { c["mystery_mode"] = "on" }), "--task", "induction"}},
		{"no task", "--task names the task", []string{"--in", foreign}},
		{"wrong task", "--vocab", []string{"--in", foreign, "--task", "agreement"}},
		{"unknown task", "unknown task", []string{"--in", foreign, "--task", "sorting-hat"}},
		{"missing tensor", "tensor blocks.1.attn.W_K is missing", []string{"--in", write("missing", interop.TransformerLens, drop("blocks.1.attn.W_K"))}},
		{"extra tensor", "tensor blocks.0.mlp.W_gate", []string{"--in", write("extra", interop.TransformerLens, func(b *interop.Bundle) {
			b.Tensors = append(b.Tensors, interop.Tensor{Name: "blocks.0.mlp.W_gate", Shape: []int{2}, F32: []float32{1, 2}})
		})}},
		{"wrong shape", "has shape", []string{"--in", write("shape", interop.TransformerLens, func(b *interop.Bundle) { b.Tensors[0].Shape = []int{32, 16} })}},
		{"nan", "holds NaN", []string{"--in", write("nan", interop.TransformerLens, func(b *interop.Bundle) { b.Tensors[0].F32[3] = float32(math.NaN()) })}},
		{"no config", "no HookedTransformerConfig", []string{"--in", write("noconfig", interop.TransformerLens, func(b *interop.Bundle) { b.Meta = map[string]string{} }), "--task", "induction"}},
		{"hf without metadata", "no headlab_config", []string{"--format", "hf", "--in", write("hfbare", interop.HF, func(b *interop.Bundle) { b.Meta = map[string]string{} }), "--task", "induction"}},
		{"hf read as transformerlens", "missing", []string{"--in", write("hfastl", interop.HF, func(b *interop.Bundle) { b.Meta["hooked_transformer_config"] = foreignConfig(t, foreign) })}},
		{"not safetensors", "not a safetensors file", []string{"--in", garbage, "--task", "induction"}},
		{"truncated", "its header describes", []string{"--in", truncated, "--task", "induction"}},
		{"directory", "not a regular file", []string{"--in", dir, "--task", "induction"}},
		{"no file", "no such file", []string{"--in", filepath.Join(dir, "absent.safetensors"), "--task", "induction"}},
		{"unknown format", "unknown format", []string{"--format", "gguf", "--in", foreign, "--task", "induction"}},
		{"no --in", "--in FILE and --out DIR are required", []string{"--task", "induction"}},
		{"out is a file", "not a directory", []string{"--in", foreign, "--task", "induction", "--out", garbage}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "ckpt")
			args := append([]string{"import", "--out", out}, c.args...)
			code, stdout, errs := headlab(t, args...)
			if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, c.want) || stdout != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", args[1:], code, stdout, errs, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s: a checkpoint was written", c.name)
			}
		})
	}
	// The same file, with the task, imports: the refusals above are the
	// edits'.
	out := filepath.Join(dir, "ok")
	if code, _, errs := headlab(t, "import", "--in", foreign, "--task", "induction", "--out", out); code != 0 {
		t.Fatalf("import of a clean file: exit %d: %s", code, errs)
	}
	back, _, err := train.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range back.Weights.Params {
		if !equalBits(p.Data, m.Weights.Params[i].Data) {
			t.Errorf("%s differs from the model exported", p.Name)
		}
	}
	if back.Train.Steps != 0 {
		t.Errorf("a model trained elsewhere records %d headlab steps", back.Train.Steps)
	}
}

func foreignConfig(t *testing.T, path string) string {
	t.Helper()
	data, _ := os.ReadFile(path)
	b, err := interop.ReadSafetensors(data)
	if err != nil {
		t.Fatal(err)
	}
	return b.Meta["hooked_transformer_config"]
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// torchPython is a Python with torch (Debian's python3-torch), or the
// test skips, unless CI is set, where it fails.
func torchPython(t *testing.T) string {
	t.Helper()
	py := defaultPython()
	if out, err := exec.Command(py, "-c", "import torch").CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s has no torch (python3-torch): %v %s", py, err, out)
		}
		t.Skipf("%s has no torch (python3-torch): %v", py, err)
	}
	return py
}

// A model trained in PyTorch (tools/torch_ref.py, written from
// docs/model.md), saved as a TransformerLens state dict, imports: headlab
// computes its logits within 1e-5 of PyTorch's (float64, in
// TransformerLens's conventions), and its heads table labels every head
// as tools/headpatterns_ref.py does from PyTorch's attention.
func TestImportPyTorchModel(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "torch")
	tools := filepath.Join("..", "..", "tools")
	out, err := exec.Command(py, filepath.Join(tools, "torch_ref.py"), "train", "--no-mlp", "--out", prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("torch_ref.py train: %v\n%s", err, out)
	}
	t.Logf("PyTorch training: %s", strings.TrimSpace(string(out)))
	run, dump, att := filepath.Join(dir, "run"), filepath.Join(dir, "dump.safetensors"), filepath.Join(dir, "torch-attention.json")
	for _, args := range [][]string{
		{"import", "--in", prefix + ".safetensors", "--task", "induction", "--out", run},
		{"dump", "--run", run, "--out", dump},
	} {
		if code, _, errs := headlab(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	m, _, err := train.Load(run)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Shape.NoMLP {
		t.Fatal("the attention-only model imported with an MLP")
	}
	out, err = exec.Command(py, filepath.Join(tools, "torch_ref.py"), "check", "--weights", prefix+".safetensors",
		"--config", prefix+".json", "--dump", dump, "--attention-out", att).CombinedOutput()
	if err != nil {
		t.Fatalf("torch_ref.py check (logits within 1e-5): %v\n%s", err, out)
	}
	t.Logf("PyTorch against headlab: %s", strings.TrimSpace(string(out)))

	ref, err := exec.Command(py, filepath.Join(tools, "headpatterns_ref.py"), att).Output()
	if err != nil {
		t.Fatalf("headpatterns_ref.py: %v", err)
	}
	var want []refHeadLabel
	if err := json.Unmarshal(ref, &want); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := headlab(t, "heads", "--run", run, "--json")
	if code != 0 {
		t.Fatalf("heads: exit %d: %s", code, errs)
	}
	var got struct{ Heads []refHeadLabel }
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Heads) != len(want) || len(want) != m.Shape.Layers*m.Shape.Heads {
		t.Fatalf("%d heads in headlab's table, %d in PyTorch's", len(got.Heads), len(want))
	}
	labelled := 0
	for i, w := range want {
		g := got.Heads[i]
		if g.Name != w.Name || g.Label != w.Label || math.Abs(g.Score-w.Score) > 1e-4 {
			t.Errorf("headlab %s %s %.5f, PyTorch %s %s %.5f", g.Name, g.Label, g.Score, w.Name, w.Label, w.Score)
		}
		if w.Label != "no clear pattern" {
			labelled++
		}
		t.Logf("%s %s %.4f (PyTorch %s %.4f)", g.Name, g.Label, g.Score, w.Label, w.Score)
	}
	if labelled == 0 {
		t.Error("no head of the PyTorch model has a pattern: the comparison says nothing")
	}
}

type refHeadLabel struct {
	Name  string  `json:"name"`
	Label string  `json:"label"`
	Score float64 `json:"score"`
}
