package tasks

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nlpodyssey/safetensors"
)

// handData is a small data set written by hand: sequences of 4, answers
// at positions 2 and 3, four training lines and three held-out lines of
// which one (the second) is also a training line.
var handData = map[string]string{
	"train.jsonl": `{"tokens": [0, 1, 2, 3], "targets": [null, null, 3, 0]}
{"tokens": [1, 1, 2, 2], "targets": [null, null, 2, 1]}
{"tokens": [2, 0, 1, 3], "targets": [null, null, 3, 2]}
{"tokens": [3, 3, 3, 3], "targets": [null, null, 3, 1]}
`,
	"heldout.jsonl": `{"tokens": [0, 2, 2, 1], "targets": [null, null, 3, 0]}
{"tokens": [1, 1, 2, 2], "targets": [null, null, 2, 1]}
{"tokens": [3, 1, 0, 0], "targets": [null, null, 1, 0]}
`,
	"vocab.txt": "a\nb\nc\nd\n",
}

// writeFolder writes files into a new folder and returns its path.
func writeFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDataFolder: a folder of JSONL reads as a task with its sizes,
// answer positions, names, leakage and chance floor (the most frequent
// training answer at each position: 3 at 2, 1 at 3, which gets 1 of
// the 3 held-out answers at 2 and 1 of 3 at 3); training draws its lines,
// the held-out stream runs through heldout in order; the hash is the
// content's, the same in another folder, another for other data.
func TestDataFolder(t *testing.T) {
	dir := writeFolder(t, handData)
	task, err := New(FilePrefix + dir)
	if err != nil {
		t.Fatal(err)
	}
	d := task.(*Data)
	if d.SeqLen() != 4 || d.Vocab() != 4 || !slices.Equal(d.AnswerPositions(), []int{2, 3}) || d.Leakage() != 1 {
		t.Errorf("T %d V %d answers %v leakage %d", d.SeqLen(), d.Vocab(), d.AnswerPositions(), d.Leakage())
	}
	if got := d.Chance(); got != 2.0/6 {
		t.Errorf("chance %v, want 2/6", got)
	}
	if TokenName(d, 2) != "c" || TokenName(Induction{N: 8, V: 16}, 2) != "C" {
		t.Errorf("token 2 named %q", TokenName(d, 2))
	}
	h := NewStream(d, 1, HeldOut).Next(4)
	if !slices.Equal(h.Tokens[:4], []int{0, 2, 2, 1}) || !slices.Equal(h.Tokens[12:], []int{0, 2, 2, 1}) {
		t.Errorf("held-out stream %v, want heldout's lines in order, then again", h.Tokens)
	}
	tr := NewStream(d, 1, Train).Next(200)
	seen := map[string]bool{}
	for e := range tr.N {
		line := fmt.Sprint(tr.Tokens[e*4 : e*4+4])
		if !strings.Contains(handData["train.jsonl"], strings.Trim(strings.ReplaceAll(line, " ", ", "), "[]")) {
			t.Fatalf("training drew %s, not a training line", line)
		}
		seen[line] = true
	}
	if len(seen) != 4 {
		t.Errorf("200 draws saw %d of the 4 training lines", len(seen))
	}
	// Under next-token loss a position with no answer gets the next token.
	got := make([]int, len(h.Targets))
	LossTargets(NextToken, h, got)
	if !slices.Equal(got[:4], []int{2, 2, 3, 0}) {
		t.Errorf("next-token targets %v", got[:4])
	}

	again, err := New(FilePrefix + writeFolder(t, handData))
	if err != nil || again.(*Data).Hash() != d.Hash() {
		t.Errorf("the same data in another folder hashes to %v, %v; want %s", again, err, d.Hash())
	}
	changed := map[string]string{"vocab.txt": handData["vocab.txt"], "train.jsonl": handData["train.jsonl"],
		"heldout.jsonl": strings.Replace(handData["heldout.jsonl"], "[3, 1, 0, 0]", "[3, 1, 0, 1]", 1)}
	other, err := New(FilePrefix + writeFolder(t, changed))
	if err != nil || other.(*Data).Hash() == d.Hash() {
		t.Errorf("changed data: %v, the same hash", err)
	}
	if _, err := Make(FilePrefix+dir, Sizes{Vocab: 5}); err == nil || !strings.Contains(err.Error(), "only the data's --seq-len 4 and --vocab 4") {
		t.Errorf("--vocab 5 against a vocab.txt of 4 names: %v", err)
	}
}

// TestDataRefusals: every defect is one line naming the file, the line
// and the field.
func TestDataRefusals(t *testing.T) {
	tr, ho := handData["train.jsonl"], handData["heldout.jsonl"]
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"bad JSON", map[string]string{"train.jsonl": tr + "{\"tokens\": [1,\n", "heldout.jsonl": ho}, "train.jsonl line 5: not JSON"},
		{"ragged", map[string]string{"train.jsonl": tr, "heldout.jsonl": ho + `{"tokens": [1, 2, 3, 0], "targets": [null, 1]}` + "\n"}, "heldout.jsonl line 4: field targets has 2 entries, tokens 4"},
		{"lengths", map[string]string{"train.jsonl": tr + `{"tokens": [1, 2, 3], "targets": [null, null, 1]}` + "\n", "heldout.jsonl": ho}, "train.jsonl line 5: field tokens has 3 tokens, line 1 has 4"},
		{"lengths across files", map[string]string{"train.jsonl": tr, "heldout.jsonl": `{"tokens": [1, 2, 3], "targets": [null, null, 1]}` + "\n"}, "heldout.jsonl line 1: field tokens has 3 tokens"},
		{"token outside vocab.txt", map[string]string{"train.jsonl": strings.Replace(tr, "[3, 3, 3, 3]", "[3, 3, 4, 3]", 1), "heldout.jsonl": ho, "vocab.txt": "a\nb\nc\nd\n"}, "train.jsonl line 4: field tokens[2] is 4, outside the vocabulary 0..3 (vocab.txt names 4 tokens)"},
		{"target outside vocab.txt", map[string]string{"train.jsonl": tr, "heldout.jsonl": strings.Replace(ho, "[null, null, 1, 0]", "[null, null, 7, 0]", 1), "vocab.txt": "a\nb\nc\nd\n"}, "heldout.jsonl line 3: field targets[2] is 7"},
		{"negative token", map[string]string{"train.jsonl": strings.Replace(tr, "[1, 1, 2, 2]", "[1, -1, 2, 2]", 1), "heldout.jsonl": ho}, "train.jsonl line 2: field tokens[1] is -1"},
		{"negative target", map[string]string{"train.jsonl": strings.Replace(tr, "[null, null, 2, 1]", "[null, -2, 2, 1]", 1), "heldout.jsonl": ho}, "train.jsonl line 2: field targets[1] is -2"},
		{"a string", map[string]string{"train.jsonl": strings.Replace(tr, "[0, 1, 2, 3]", `[0, "b", 2, 3]`, 1), "heldout.jsonl": ho}, "train.jsonl line 1: field tokens holds a string"},
		{"unknown field", map[string]string{"train.jsonl": strings.Replace(tr, `{"tokens": [0`, `{"mask": 1, "tokens": [0`, 1), "heldout.jsonl": ho}, `train.jsonl line 1: unknown field "mask"`},
		{"no targets", map[string]string{"train.jsonl": tr + `{"tokens": [1, 2, 3, 0]}` + "\n", "heldout.jsonl": ho}, "train.jsonl line 5: field targets is missing"},
		{"no answers", map[string]string{"train.jsonl": tr, "heldout.jsonl": `{"tokens": [1, 2, 3, 0], "targets": [null, null, null, null]}` + "\n"}, "heldout.jsonl: no answer positions"},
		{"empty", map[string]string{"train.jsonl": "", "heldout.jsonl": ho}, "train.jsonl: no examples"},
		{"blank line", map[string]string{"train.jsonl": tr + "\n", "heldout.jsonl": ho}, "train.jsonl line 5: an empty line"},
		{"no heldout", map[string]string{"train.jsonl": tr}, "no heldout.jsonl"},
		{"two formats", map[string]string{"train.jsonl": tr, "train.npz": "x", "heldout.jsonl": ho}, "both train.jsonl and train.npz"},
		{"empty name", map[string]string{"train.jsonl": tr, "heldout.jsonl": ho, "vocab.txt": "a\n\nc\nd\n"}, "vocab.txt line 2: an empty token name"},
		{"name twice", map[string]string{"train.jsonl": tr, "heldout.jsonl": ho, "vocab.txt": "a\nb\na\nd\n"}, `vocab.txt line 3: token name "a" is line 1's too`},
		{"not a safetensors file", map[string]string{"train.safetensors": "junk", "heldout.jsonl": ho}, "train.safetensors: not a safetensors file"},
		{"not an npz", map[string]string{"train.npz": "junk", "heldout.jsonl": ho}, "train.npz: not an .npz archive"},
	} {
		_, err := New(FilePrefix + writeFolder(t, c.files))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
	if _, err := New(FilePrefix + filepath.Join(t.TempDir(), "absent")); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("an absent folder: %v", err)
	}
}

// TestDataTensors: the arrays `headlab dump` writes, as safetensors or
// .npz, read as the same data as the JSONL that holds the same examples:
// one hash.
func TestDataTensors(t *testing.T) {
	want, err := New(FilePrefix + writeFolder(t, handData))
	if err != nil {
		t.Fatal(err)
	}
	d := want.(*Data)
	for _, format := range []string{".safetensors", ".npz"} {
		dir := writeFolder(t, map[string]string{"vocab.txt": handData["vocab.txt"]})
		for name, ex := range map[string]examples{TrainFile: d.train, HeldOutFile: d.heldout} {
			var b []byte
			if format == ".npz" {
				b = npzOf(t, ex, d.t)
			} else {
				b = safetensorsOf(t, ex, d.t)
			}
			if err := os.WriteFile(filepath.Join(dir, name+format), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := New(FilePrefix + dir)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if got.(*Data).Hash() != d.Hash() {
			t.Errorf("%s reads as other data than the JSONL", format)
		}
	}
}

// int64s is v as little-endian int64 bytes.
func int64s(v []int) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(x)))
	}
	return b
}

func safetensorsOf(t *testing.T, ex examples, T int) []byte {
	views := map[string]safetensors.TensorView{}
	for name, v := range map[string][]int{"tokens": ex.tokens, "targets": ex.targets} {
		tv, err := safetensors.NewTensorView(safetensors.I64, []uint64{uint64(ex.n), uint64(T)}, int64s(v))
		if err != nil {
			t.Fatal(err)
		}
		views[name] = tv
	}
	b, err := safetensors.Serialize(views, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func npzOf(t *testing.T, ex examples, T int) []byte {
	var buf strings.Builder
	z := zip.NewWriter(&buf)
	for name, v := range map[string][]int{"tokens": ex.tokens, "targets": ex.targets} {
		w, err := z.Create(name + ".npy")
		if err != nil {
			t.Fatal(err)
		}
		header := fmt.Sprintf("{'descr': '<i8', 'fortran_order': False, 'shape': (%d, %d), }", ex.n, T)
		header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
		b = append(append(b, header...), int64s(v)...)
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}
