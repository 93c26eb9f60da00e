package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/nlpodyssey/safetensors"

	"headlab/analysis"
	"headlab/internal/atomicfile"
	"headlab/interop"
	"headlab/train"
)

// trained saves a briefly trained model of task with extra train flags.
func trained(t *testing.T, task string, flags ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "--task", task, "--steps", "20", "--quiet", "--save", dir}, flags...)
	if code, _, errs := headlab(t, args...); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	return dir
}

// numpyCheck runs tools/interop_ref.py and returns its exit status and
// output. numpy must be there (scripts/setup.sh installs python3-numpy).
func numpyCheck(t *testing.T, weights, layout, dump string) (int, string) {
	t.Helper()
	py := defaultPython()
	if out, err := exec.Command(py, "-c", "import numpy").CombinedOutput(); err != nil {
		t.Fatalf("%s has no numpy (scripts/setup.sh installs python3-numpy): %v %s", py, err, out)
	}
	cmd := exec.Command(py, filepath.Join("..", "..", "tools", "interop_ref.py"), "--weights", weights, "--layout", layout, "--dump", dump)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		t.Fatal(err)
	}
	return 0, string(out)
}

func readTensors(t *testing.T, path string) safetensors.SafeTensors {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := safetensors.Deserialize(b)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The TransformerLens export has exactly the names and shapes of
// HookedTransformer's state dict, and numpy, computing in TransformerLens's
// conventions (and in PyTorch's for the hf layout), reproduces headlab's
// attention to 1e-5 and its logits to 1e-4, with and without positions and
// the causal mask.
func TestExportReproducedByNumpy(t *testing.T) {
	for _, c := range []struct {
		task  string
		flags []string
	}{{"induction", nil}, {"majority", []string{"--no-positions", "--no-causal", "--heads", "4"}}} {
		t.Run(c.task, func(t *testing.T) {
			run := trained(t, c.task, c.flags...)
			m, _, err := train.Load(run)
			if err != nil {
				t.Fatal(err)
			}
			sh := m.Shape
			dir := t.TempDir()
			tl, hf := filepath.Join(dir, "tl.safetensors"), filepath.Join(dir, "hf.safetensors")
			for _, args := range [][]string{
				{"export", "--run", run, "--format", "transformerlens", "--out", tl},
				{"export", "--run", run, "--format", "hf", "--out", hf},
				{"export", "--run", run, "--out", filepath.Join(dir, "tl.npz")},
				{"dump", "--run", run, "--examples", "24", "--out", filepath.Join(dir, "d.safetensors")},
				{"dump", "--run", run, "--examples", "24", "--out", filepath.Join(dir, "d.npz")},
			} {
				if code, _, errs := headlab(t, args...); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errs)
				}
			}

			st := readTensors(t, tl)
			D, H, Dh, F, V, T := sh.DModel, sh.Heads, sh.HeadDim(), sh.DFF, sh.Vocab, sh.SeqLen
			want := map[string][]int{"embed.W_E": {V, D}, "pos_embed.W_pos": {T, D},
				"ln_final.w": {D}, "ln_final.b": {D}, "unembed.W_U": {D, V}, "unembed.b_U": {V}}
			for l := range sh.Layers {
				p := fmt.Sprintf("blocks.%d.", l)
				for _, n := range []string{"ln1.w", "ln1.b", "ln2.w", "ln2.b", "attn.b_O", "mlp.b_out"} {
					want[p+n] = []int{D}
				}
				for _, x := range "QKV" {
					want[p+"attn.W_"+string(x)] = []int{H, D, Dh}
					want[p+"attn.b_"+string(x)] = []int{H, Dh}
				}
				want[p+"attn.W_O"] = []int{H, Dh, D}
				want[p+"mlp.W_in"], want[p+"mlp.b_in"], want[p+"mlp.W_out"] = []int{D, F}, []int{F}, []int{F, D}
			}
			if st.Len() != len(want) {
				t.Errorf("%d tensors, want %d: %v", st.Len(), len(want), st.Names())
			}
			for name, shape := range want {
				tv, ok := st.Tensor(name)
				if !ok {
					t.Errorf("no tensor %s", name)
				} else if fmt.Sprint(tv.Shape()) != fmt.Sprint(shape) {
					t.Errorf("%s: shape %v, want %v", name, tv.Shape(), shape)
				}
			}
			if !sh.Positions {
				tv, _ := st.Tensor("pos_embed.W_pos")
				if bytes.Count(tv.Data(), []byte{0}) != len(tv.Data()) {
					t.Error("W_pos of a model without positions is not zeros")
				}
			}

			var cfg map[string]any
			side, err := os.ReadFile(filepath.Join(dir, "tl.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(side, &cfg); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(tl)
			_, md, err := safetensors.ReadMetadata(raw)
			if err != nil {
				t.Fatal(err)
			}
			meta := md.Metadata()
			if meta["hooked_transformer_config"] != string(mustCompact(t, side)) {
				t.Errorf("metadata config %s differs from tl.json %s", meta["hooked_transformer_config"], side)
			}
			dirWant := map[bool]string{true: "causal", false: "bidirectional"}[sh.Causal]
			for k, v := range map[string]any{"d_model": D, "d_head": Dh, "n_heads": H, "d_mlp": F, "n_layers": sh.Layers,
				"n_ctx": T, "d_vocab": V, "act_fn": "gelu", "normalization_type": "LN", "eps": 1e-5,
				"positional_embedding_type": "standard", "attention_dir": dirWant} {
				if fmt.Sprint(cfg[k]) != fmt.Sprint(v) {
					t.Errorf("tl.json %s = %v, want %v", k, cfg[k], v)
				}
			}
			var vocab []string
			if err := json.Unmarshal([]byte(meta["headlab_vocab"]), &vocab); err != nil || len(vocab) != V || vocab[0] != "A" {
				t.Errorf("vocabulary %q: %v", meta["headlab_vocab"], err)
			}
			if !strings.Contains(meta["headlab_config"], `"task":"`+c.task+`"`) {
				t.Errorf("config %q", meta["headlab_config"])
			}
			if _, ok := meta["headlab_revision"]; !ok {
				t.Error("no revision in the metadata")
			}

			for _, k := range []struct{ weights, layout, dump string }{
				{tl, "transformerlens", "d.safetensors"}, {hf, "hf", "d.safetensors"},
				{filepath.Join(dir, "tl.npz"), "transformerlens", "d.npz"},
			} {
				code, out := numpyCheck(t, k.weights, k.layout, filepath.Join(dir, k.dump))
				if code != 0 {
					t.Fatalf("numpy check of %s on %s: exit %d: %s", k.layout, k.dump, code, out)
				}
				t.Logf("%s, %s: %s", k.layout, k.dump, strings.TrimSpace(out))
			}

			// The check can fail: with two heads' queries swapped, numpy's
			// attention is not headlab's.
			b, err := interop.Export(m, interop.TransformerLens, provenance())
			if err != nil {
				t.Fatal(err)
			}
			wq, _ := b.Get("blocks.0.attn.W_Q")
			n := D * Dh
			tmp := append([]float32(nil), wq.F32[:n]...)
			copy(wq.F32[:n], wq.F32[n:2*n])
			copy(wq.F32[n:2*n], tmp)
			bad := filepath.Join(dir, "swapped.safetensors")
			if err := atomicfile.Write(bad, func(w io.Writer) error { return interop.WriteSafetensors(w, b) }); err != nil {
				t.Fatal(err)
			}
			if code, out := numpyCheck(t, bad, "transformerlens", filepath.Join(dir, "d.safetensors")); code != 1 {
				t.Fatalf("numpy check of swapped heads: exit %d, want 1: %s", code, out)
			}
		})
	}
}

func mustCompact(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// "-" is stdout for the dump, the export and heads --dump-attention, and
// no file named "-" appears.
func TestDashWritesToStdout(t *testing.T) {
	run := trained(t, "copy")
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)

	code, out, errs := headlab(t, "dump", "--run", run, "--examples", "3", "--out", "-", "--format", "json")
	if code != 0 {
		t.Fatalf("dump: exit %d: %s", code, errs)
	}
	a, err := analysis.ReadAttention(strings.NewReader(out))
	if err != nil || a.N != 3 {
		t.Fatalf("dump --out - gave %d bytes that do not read as 3 examples: %v", len(out), err)
	}
	code, out, errs = headlab(t, "export", "--run", run, "--out", "-")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	st, err := safetensors.Deserialize([]byte(out))
	if err != nil {
		t.Fatalf("export --out - is not safetensors: %v", err)
	}
	if _, ok := st.Tensor("blocks.0.attn.W_Q"); !ok {
		t.Fatal("export to stdout lacks W_Q")
	}
	// With a file on stdout, the report goes to stderr: stdout holds
	// the file alone (heads --dump-attention - | python ...).
	code, out, errs = headlab(t, "heads", "--run", run, "--dump-attention", "-")
	if code != 0 {
		t.Fatalf("heads: exit %d: %s", code, errs)
	}
	var whole map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &whole); err != nil || whole["attention"] == nil {
		t.Fatalf("heads --dump-attention - did not write the attention file alone to stdout: %v", err)
	}
	if !strings.Contains(errs, "| Head switched off |") {
		t.Errorf("the ablation table is not on stderr: %q", errs)
	}
	// Figures to "-" are PNG, whatever the command; the report moves.
	hist := trained(t, "copy", "--record-every", "10")
	for _, args := range [][]string{
		{"heads", "--run", run, "--png", "-"},
		{"heads", "--run", run, "--arcs", "-", "--json"},
		{"score", "--attention", filepath.Join(dir, "..", "att.json"), "--figure", "-"},
		{"curves", "--run", hist, "--png", "-"},
		{"prune", "--run", run, "--figure", "-", "--json", "--order", "greedy"},
		{"train", "--steps", "2", "--quiet", "--arcs", "-", "--json"},
	} {
		if args[0] == "score" {
			att := filepath.Join(t.TempDir(), "att.json")
			if code, _, errs := headlab(t, "heads", "--run", run, "--dump-attention", att); code != 0 {
				t.Fatal(errs)
			}
			args[2] = att
		}
		code, out, errs := headlab(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if _, err := png.Decode(strings.NewReader(out)); err != nil {
			t.Errorf("%v: stdout is not one PNG: %v (%d bytes)", args, err, len(out))
		}
		if len(out) > 0 && !strings.HasSuffix(out, "IEND\xaeB`\x82") {
			t.Errorf("%v: something follows the PNG on stdout", args)
		}
		if slices.Contains(args, "--json") && !strings.Contains(errs, "{\n") {
			t.Errorf("%v: the JSON report is not on stderr: %q", args, errs)
		}
	}
	// Two outputs cannot share stdout, and directories and databases
	// cannot be stdout at all: one line, exit 2, before any work.
	for _, args := range [][]string{
		{"heads", "--run", run, "--png", "-", "--dump-attention", "-"},
		{"train", "--steps", "1", "--save", "-"},
		{"report", "--db", filepath.Join(dir, "x.db"), "--csv", "-"},
		{"sweep", "--task", "copy", "--seeds", "1", "--steps", "1", "--db", "-"},
		{"merge", "--db", "-", filepath.Join(dir, "x.db")},
	} {
		code, out, errs := headlab(t, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "stdout") {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q", args, code, len(out), errs)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("files were made in the working directory: %v", entries)
	}
}

// An unknown --format, or an extension no writer knows, is one line and
// exit 2, and writes nothing.
func TestInteropBadInput(t *testing.T) {
	run := trained(t, "copy")
	dir := t.TempDir()
	// The TransformerLens config's place beside the weights is taken.
	configDir := t.TempDir()
	os.Mkdir(filepath.Join(configDir, "a.json"), 0o755)
	for name, args := range map[string][]string{
		"export format":    {"export", "--run", run, "--format", "onnx", "--out", filepath.Join(dir, "a.safetensors")},
		"export extension": {"export", "--run", run, "--out", filepath.Join(dir, "a.pt")},
		"export no ext":    {"export", "--run", run, "--out", filepath.Join(dir, "model")},
		"dump format":      {"dump", "--run", run, "--format", "hdf5", "--out", filepath.Join(dir, "a.safetensors")},
		"dump extension":   {"dump", "--run", run, "--out", filepath.Join(dir, "a.csv")},
		"dump examples":    {"dump", "--run", run, "--examples", "0", "--out", filepath.Join(dir, "a.npz")},
		"dump no run":      {"dump", "--run", filepath.Join(dir, "nothing"), "--out", filepath.Join(dir, "a.npz")},
		"heads html ext":   {"heads", "--run", run, "--html", filepath.Join(dir, "a.png")},
		"dump no dir":      {"dump", "--run", run, "--out", filepath.Join(dir, "missing", "a.npz")},
		"export no dir":    {"export", "--run", run, "--out", filepath.Join(dir, "missing", "a.safetensors")},
		"export config":    {"export", "--run", run, "--out", filepath.Join(configDir, "a.safetensors")},
	} {
		code, out, errs := headlab(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.HasPrefix(errs, "headlab: ") || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", name, code, out, errs)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("bad input left files: %v", entries)
	}
}

// An export to a pipe writes the weights through it and puts no config
// file beside it (the config is in the metadata): /dev/stdout.json was
// once made that way.
func TestExportToAPipeLeavesNothingBeside(t *testing.T) {
	run := trained(t, "copy")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	if code, _, errs := headlab(t, "export", "--run", run, "--out", fifo); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, md, err := safetensors.ReadMetadata(<-got)
	if err != nil {
		t.Fatalf("the pipe did not carry safetensors: %v", err)
	}
	if md.Metadata()["hooked_transformer_config"] == "" {
		t.Error("no HookedTransformerConfig in the metadata")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("beside the pipe: %v", entries)
	}
}
