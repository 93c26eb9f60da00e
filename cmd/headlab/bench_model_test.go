package main

import (
	"testing"

	"headlab/bench"
	"headlab/tasks"
)

// TestBenchModelFlags: bench's model flags size the model of the parts
// that train or model one (the default without them, at each part's
// batch), and bad sizes are refused before any work, in train's words.
func TestBenchModelFlags(t *testing.T) {
	o := accepted(t, newBenchCmd, "bench", "--parts", "model")
	if d := bench.BenchConfig(64, tasks.NextToken); o.own.Config(64) != d {
		t.Errorf("defaults: %+v, want %+v", o.own.Config(64), d)
	}
	o = accepted(t, newBenchCmd, "bench", "--parts", "model", "--layers", "4", "--heads", "8", "--d-model", "256", "--d-ff", "1024",
		"--seq-len", "64", "--vocab", "64", "--batch", "32")
	m := o.own.Config(o.own.Batch)
	if m.Layers != 4 || m.Heads != 8 || m.DModel != 256 || m.DFF != 1024 || m.SeqLen != 64 || m.Vocab != 64 || m.Batch != 32 || m.Task != "induction" {
		t.Errorf("big shape: %+v", m)
	}
	refused(t, newBenchCmd, "--heads 3 does not divide --d-model 32", "bench", "--parts", "model", "--heads", "3")
	refused(t, newBenchCmd, "even --seq-len", "bench", "--seq-len", "15")
	refused(t, newBenchCmd, "layers must be positive", "bench", "--layers", "0")
}
