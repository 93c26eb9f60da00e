package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSizeFlags: --seq-len and --vocab reach train's configuration, the
// defaults are the task's own, and a size the task cannot take, or a
// defective data folder, is refused in one line before any work.
func TestSizeFlags(t *testing.T) {
	o := accepted(t, newTrainCmd, "train", "--task", "induction", "--seq-len", "32", "--vocab", "64")
	if o.config.SeqLen != 32 || o.config.Vocab != 64 {
		t.Errorf("--seq-len 32 --vocab 64 gives %d, %d", o.config.SeqLen, o.config.Vocab)
	}
	o = accepted(t, newTrainCmd, "train", "--task", "majority")
	if o.config.SeqLen != 15 || o.config.Vocab != 3 {
		t.Errorf("majority's sizes read as %d, %d", o.config.SeqLen, o.config.Vocab)
	}
	refused(t, newTrainCmd, "even --seq-len", "train", "--seq-len", "31")
	refused(t, newTrainCmd, "--vocab in 2..T", "train", "--task", "majority", "--vocab", "16")
	refused(t, newSweepCmd, "even --seq-len", "sweep", "--db", filepath.Join(t.TempDir(), "s.db"), "--seeds", "1", "--grid", "seq-len=15")

	dir := t.TempDir()
	for name, text := range map[string]string{
		"train.jsonl":   `{"tokens": [0, 1, 2], "targets": [null, 2, 0]}` + "\n",
		"heldout.jsonl": `{"tokens": [0, 1], "targets": [null, 2]}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refused(t, newTrainCmd, "heldout.jsonl line 1: field tokens has 2 tokens", "train", "--task", "file:"+dir)
}
