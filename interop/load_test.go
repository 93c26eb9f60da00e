package interop

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/internal/memlimit"
	"headlab/train"
)

// smallModel is an untrained induction model of a small shape.
func smallModel(t *testing.T) *train.Model {
	t.Helper()
	c := train.Defaults("induction")
	c.Layers, c.Heads, c.DModel, c.DFF = 1, 2, 8, 16
	tk, err := c.NewTask()
	if err != nil {
		t.Fatal(err)
	}
	shape := c.Model(tk)
	return &train.Model{Train: c, Shape: shape, Task: tk, Weights: graph.InitWeights(shape, 7)}
}

// TestExportLoadRoundTrip: an export written by WriteExport (with its
// TransformerLens config beside it) loads back as the same model, its
// result kept; asked for another task it is that task's model, or
// refused when the shapes differ; an unreadable file is refused by name.
func TestExportLoadRoundTrip(t *testing.T) {
	m := smallModel(t)
	ev, err := train.NewEvaluator(m, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(ev, m)
	ev.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Params != m.Weights.Count() || res.Accuracy < 0 || res.Accuracy > 1 || res.Chance != m.Task.Chance() || !(res.Loss > 0) {
		t.Fatalf("Evaluate: %+v", res)
	}
	out := filepath.Join(t.TempDir(), "m.safetensors")
	if err := WriteExport(m, &res, TransformerLens, Safetensors, out, nil, true, Provenance{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(TLConfigPath(out)); err != nil {
		t.Fatalf("no config beside: %v", err)
	}
	got, own, err := Load(TransformerLens, out, "")
	if err != nil {
		t.Fatal(err)
	}
	if own == nil || own.Accuracy != res.Accuracy || own.Params != res.Params || got.Train != m.Train || got.Shape != m.Shape || got.Task.Name() != m.Task.Name() {
		t.Fatalf("loaded %+v (result %+v), want %+v", got.Train, own, m.Train)
	}
	for i, p := range got.Weights.Params {
		for j, v := range p.Data {
			if math.Float32bits(v) != math.Float32bits(m.Weights.Params[i].Data[j]) {
				t.Fatalf("%s[%d] = %v, exported %v", p.Name, j, v, m.Weights.Params[i].Data[j])
			}
		}
	}
	// Another task: evaluated there from its defaults, no result kept.
	if got, own, err := Load(TransformerLens, out, "copy"); err == nil {
		if own != nil || got.Train.Task != "copy" || got.Train.Steps != 0 {
			t.Errorf("copy: %+v, result %+v", got.Train, own)
		}
	} else if !strings.HasPrefix(err.Error(), "--task copy: ") {
		t.Errorf("copy: %v", err)
	}
	if _, _, err := Load(TransformerLens, out+".missing", ""); err == nil || !strings.HasPrefix(err.Error(), out+".missing: ") {
		t.Errorf("missing file: %v", err)
	}
	var b bytes.Buffer
	rep := &ImportReport{Config: m.Train, Result: res, Kept: true}
	rep.WriteText(&b, m, "in.safetensors", "dir")
	if lines := strings.Split(b.String(), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "imported    in.safetensors into dir (") ||
		!strings.HasPrefix(lines[1], "accuracy    ") || lines[2] != "result      the file's own (a headlab export), saved as it was" {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestChooseFormat: --format wins over the extension; either refuses a
// format not allowed, in the command's words.
func TestChooseFormat(t *testing.T) {
	if f, err := ChooseFormat("x.npz", "", Safetensors, Safetensors, NPZ); err != nil || f != NPZ {
		t.Errorf("x.npz: %v %v", f, err)
	}
	if f, err := ChooseFormat("-", "", Safetensors, DumpFormats...); err != nil || f != Safetensors {
		t.Errorf("-: %v %v", f, err)
	}
	if f, err := ChooseFormat("x.bin", "json", Safetensors, DumpFormats...); err != nil || f != JSON {
		t.Errorf("--format json: %v %v", f, err)
	}
	if _, err := ChooseFormat("x.json", "", Safetensors, Safetensors, NPZ); err == nil || !strings.HasPrefix(err.Error(), "--out ") {
		t.Errorf("x.json: %v", err)
	}
	if _, err := ChooseFormat("x.npz", "csv", Safetensors, Safetensors, NPZ); err == nil || err.Error() != `unknown --format "csv": want safetensors, npz` {
		t.Errorf("--format csv: %v", err)
	}
}

// TestLoadRefusesWhatItCannotHold: a file of which three copies do not
// fit what this process may use is refused, naming the sizes, before it
// is read; one that fits loads.
func TestLoadRefusesWhatItCannotHold(t *testing.T) {
	defer func(f func() memlimit.Limit) { memLimit = f }(memLimit)
	m := smallModel(t)
	out := filepath.Join(t.TempDir(), "m.safetensors")
	if err := WriteExport(m, nil, HF, Safetensors, out, nil, false, Provenance{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	memLimit = func() memlimit.Limit { return memlimit.Limit{Bytes: 3 * fi.Size(), What: "test limit"} }
	if _, _, err := Load(HF, out, ""); err != nil {
		t.Errorf("a file whose three copies fit: %v", err)
	}
	memLimit = func() memlimit.Limit { return memlimit.Limit{Bytes: 3*fi.Size() - 1, What: "test limit"} }
	if _, _, err := Load(HF, out, ""); err == nil || !strings.Contains(err.Error(), "this process may use (test limit)") || !strings.HasPrefix(err.Error(), out+": importing its") {
		t.Errorf("a file whose three copies do not fit: %v", err)
	}
}
