package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/train"
)

// TestSizesInGridAndKey: seq-len and vocab are grid keys; a
// configuration at its task's default sizes keeps the key it had before
// they were a choice, whether they are written in or left 0; other sizes
// get a key of their own; a grid over tasks gives each task its own
// default sizes; a size a task cannot take is refused naming the range.
func TestSizesInGridAndKey(t *testing.T) {
	base := train.Defaults("induction")
	zero := base
	zero.SeqLen, zero.Vocab = 0, 0
	old := "task=induction layers=2 heads=2 d_model=32 d_ff=64 positions=on causal=on steps=2500 batch=32 lr=0.003 loss=next-token"
	if Key(base) != old || Key(zero) != old {
		t.Errorf("default sizes give keys %q, %q; want %q", Key(base), Key(zero), old)
	}
	grid, err := ParseGrid("seq-len=16,32;vocab=64")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Expand(zero, grid, false)
	if err != nil || len(cs) != 2 {
		t.Fatalf("%d configurations, %v", len(cs), err)
	}
	if want := old + " seq_len=16 vocab=64"; Key(cs[0]) != want {
		t.Errorf("key %q, want %q", Key(cs[0]), want)
	}
	if cs[1].SeqLen != 32 || cs[1].Vocab != 64 || !strings.HasSuffix(Key(cs[1]), " seq_len=32 vocab=64") {
		t.Errorf("seq-len=32 vocab=64: %+v, key %q", cs[1], Key(cs[1]))
	}
	grid, _ = ParseGrid("task=majority,copy")
	cs, err = Expand(zero, grid, false)
	if err != nil || cs[0].SeqLen != 15 || cs[0].Vocab != 3 || cs[1].SeqLen != 16 || cs[1].Vocab != 16 {
		t.Errorf("a grid over tasks: %+v, %v", cs, err)
	}
	grid, _ = ParseGrid("seq-len=15")
	if _, err := Expand(zero, grid, false); err == nil || !strings.Contains(err.Error(), "even --seq-len") {
		t.Errorf("seq-len=15 for induction: %v", err)
	}
	if _, err := ParseGrid("vocab=x"); err == nil {
		t.Error("vocab=x parsed")
	}
}

// TestFileTaskKey: the same data under two paths is one configuration
// (one key, which names the data's hash and not the path); changed data
// is another; the report says how many held-out sequences leak.
func TestFileTaskKey(t *testing.T) {
	lines := map[string]string{
		"train.jsonl":   `{"tokens": [0, 1, 2], "targets": [null, 2, 0]}` + "\n" + `{"tokens": [1, 2, 0], "targets": [null, 0, 1]}` + "\n",
		"heldout.jsonl": `{"tokens": [1, 2, 0], "targets": [null, 0, 1]}` + "\n", // a training line
	}
	folder := func(heldout string) string {
		dir := t.TempDir()
		for name, text := range lines {
			if name == "heldout.jsonl" && heldout != "" {
				text = heldout
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	a, b := folder(""), folder("")
	changed := folder(`{"tokens": [2, 1, 1], "targets": [null, 1, 2]}` + "\n")
	grid, err := ParseGrid("task=file:" + a + ",file:" + b + ",file:" + changed)
	if err != nil {
		t.Fatal(err)
	}
	base := train.Defaults("induction")
	base.SeqLen, base.Vocab = 0, 0 // as the flags leave them: each task's own
	cs, err := Expand(base, grid, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || Key(cs[0]) == Key(cs[1]) || strings.Contains(Key(cs[0]), a) || !strings.Contains(Key(cs[0]), "task=file:sha256:") {
		t.Errorf("three folders, two datasets: %d configurations, keys %q", len(cs), []string{Key(cs[0]), Key(cs[len(cs)-1])})
	}
	if cs[0].SeqLen != 3 || cs[0].Vocab != 3 || cs[0].Data == "" {
		t.Errorf("a folder's configuration: %+v", cs[0])
	}
	reps := Summarize([]Record{{Key: Key(cs[0]), Config: cs[0], Status: StatusOK, FinishedAt: "x"}})
	if l := reps[0].Leakage; l == nil || *l != 1 {
		t.Errorf("the report's leakage: %v, want 1", l)
	}
	var text strings.Builder
	WriteText(&text, reps)
	if !strings.Contains(text.String(), "1 held-out sequences also occur in training") {
		t.Errorf("the report says nothing of the leakage:\n%s", text.String())
	}
}
