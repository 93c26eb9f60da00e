package interop

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"headlab/graph"
)

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]Format{"a.safetensors": Safetensors, "dir/B.NPZ": NPZ, "-": Safetensors, "x.json": JSON} {
		if got, err := FormatOf(path, Safetensors, Safetensors, NPZ, JSON); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", path, got, err, want)
		}
	}
	if got, err := FormatOf("/dev/null", NPZ, Safetensors, NPZ); err != nil || got != NPZ {
		t.Errorf("/dev/null: %q %v, want the default", got, err)
	}
	for _, path := range []string{"a.pt", "model", "a.json.gz", t.TempDir()} {
		if _, err := FormatOf(path, Safetensors, Safetensors, NPZ, JSON); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line", path, err)
		}
	}
	if _, err := ParseExportFormat("onnx"); err == nil {
		t.Error("onnx accepted")
	}
}

// Every .npy entry starts with the magic and a header that pads data to
// 64 bytes, as numpy's format 1.0 requires, and ends its dict with a newline.
func TestNPZEntries(t *testing.T) {
	b := &Bundle{Tensors: []Tensor{
		{Name: "a", Shape: []int{2, 3}, F32: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "v", Shape: []int{3}, I64: []int64{-1, 0, 7}},
	}, Meta: map[string]string{"k": "é"}}
	var buf bytes.Buffer
	if err := WriteNPZ(&buf, b); err != nil {
		t.Fatal(err)
	}
	z, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a.npy":          "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
		"v.npy":          "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
		MetaKey + ".npy": "{'descr': '<U9', 'fortran_order': False, 'shape': (), }",
	}
	for _, f := range z.File {
		r, _ := f.Open()
		data, _ := io.ReadAll(r)
		if string(data[:8]) != "\x93NUMPY\x01\x00" {
			t.Fatalf("%s: magic %q", f.Name, data[:8])
		}
		n := int(binary.LittleEndian.Uint16(data[8:]))
		header := string(data[10 : 10+n])
		if (10+n)%64 != 0 || !strings.HasSuffix(header, "\n") || strings.TrimRight(header, " \n") != want[f.Name] {
			t.Errorf("%s: header %q (%d bytes)", f.Name, header, 10+n)
		}
		delete(want, f.Name)
	}
	if len(want) > 0 {
		t.Errorf("entries missing: %v", want)
	}
}

// W_Q[h][m][d] is column h*Dh+d of headlab's q weight, and W_O[h][d][m]
// row h*Dh+d of its output projection; hf transposes every linear weight.
func TestLayouts(t *testing.T) {
	c := graph.Config{Vocab: 5, SeqLen: 4, Arch: graph.Arch{Layers: 1, Heads: 2, DModel: 6, DFF: 8, Positions: false, Causal: true}}
	w := graph.InitWeights(c, 3)
	tl := transformerLens(c, w)
	get := func(ts []Tensor, name string) Tensor {
		for _, x := range ts {
			if x.Name == name {
				return x
			}
		}
		t.Fatalf("no %s", name)
		return Tensor{}
	}
	q, o := w.Get("blocks.0.attn.q.weight").Data, w.Get("blocks.0.attn.out.weight").Data
	WQ, WO := get(tl, "blocks.0.attn.W_Q").F32, get(tl, "blocks.0.attn.W_O").F32
	D, Dh := 6, 3
	for h := range 2 {
		for m := range D {
			for d := range Dh {
				if WQ[(h*D+m)*Dh+d] != q[m*D+h*Dh+d] || WO[(h*Dh+d)*D+m] != o[(h*Dh+d)*D+m] {
					t.Fatalf("head %d, m %d, d %d misplaced", h, m, d)
				}
			}
		}
	}
	for _, v := range get(tl, "pos_embed.W_pos").F32 {
		if v != 0 {
			t.Fatal("W_pos without positions is not zero")
		}
	}
	hf := pytorch(c, w)
	fc1, hf1 := w.Get("blocks.0.mlp.fc1.weight").Data, get(hf, "blocks.0.mlp.fc1.weight")
	if hf1.Shape[0] != 8 || hf1.Shape[1] != 6 {
		t.Fatalf("fc1 shape %v, want [8 6]", hf1.Shape)
	}
	for i := range 6 {
		for j := range 8 {
			if hf1.F32[j*6+i] != fc1[i*8+j] {
				t.Fatalf("fc1 (%d,%d) not transposed", i, j)
			}
		}
	}
}

// TestTLConfigFile: the config goes beside the weights under .json, and
// reads back as TransformerLensConfig, one key per line, ending in a
// newline.
func TestTLConfigFile(t *testing.T) {
	for out, want := range map[string]string{
		"tl.safetensors": "tl.json", "dir/tl.npz": "dir/tl.json", "a.b/model": "a.b/model.json", "x.y.safetensors": "x.y.json",
	} {
		if got := TLConfigPath(out); got != want {
			t.Errorf("TLConfigPath(%q) = %q, want %q", out, got, want)
		}
	}
	c := graph.Config{Vocab: 5, SeqLen: 4, Arch: graph.Arch{Layers: 1, Heads: 2, DModel: 6, DFF: 8, Positions: false, Causal: false}}
	var b bytes.Buffer
	if err := WriteTLConfig(&b, c); err != nil {
		t.Fatal(err)
	}
	var got TLConfig
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := TransformerLensConfig(c); got != want {
		t.Errorf("read back %+v, want %+v", got, want)
	}
	if s := b.String(); !strings.HasSuffix(s, "}\n") || !strings.Contains(s, "\n  \"attention_dir\": \"bidirectional\"") {
		t.Errorf("not indented JSON ending in a newline:\n%s", s)
	}
}
