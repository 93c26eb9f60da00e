package main

import (
	"slices"
	"testing"

	"headlab/bench"
	"headlab/tasks"
)

// TestBenchVsModelFlags: bench vs-pytorch's model flags make the model it
// times (the default without them), --no-mlp drops d-ff as train does,
// and bad sizes are refused before any work, in train's words.
func TestBenchVsModelFlags(t *testing.T) {
	o := accepted(t, newBenchVsCmd, "vs-pytorch", "--callgrind=false")
	if d := bench.BenchConfig(32, tasks.NextToken); o.model != d || !slices.Equal(o.batches, []int{32, 64}) {
		t.Errorf("defaults: model %+v batches %v, want %+v and [32 64]", o.model, o.batches, d)
	}
	o = accepted(t, newBenchVsCmd, "vs-pytorch", "--layers", "4", "--heads", "8", "--d-model", "256", "--d-ff", "1024",
		"--seq-len", "64", "--vocab", "64", "--batches", "32", "--loss", tasks.Answers)
	m := o.model
	if m.Layers != 4 || m.Heads != 8 || m.DModel != 256 || m.DFF != 1024 || m.SeqLen != 64 || m.Vocab != 64 ||
		m.NoMLP || m.Loss != tasks.Answers || m.Batch != 32 || !slices.Equal(o.batches, []int{32}) {
		t.Errorf("big shape: %+v batches %v", m, o.batches)
	}
	if o = accepted(t, newBenchVsCmd, "vs-pytorch", "--no-mlp"); !o.model.NoMLP || o.model.DFF != 0 {
		t.Errorf("--no-mlp: %+v", o.model)
	}
	refused(t, newBenchVsCmd, "--heads 3 does not divide --d-model 32", "vs-pytorch", "--heads", "3")
	refused(t, newBenchVsCmd, "--vocab in T/2..", "vs-pytorch", "--seq-len", "64", "--vocab", "16")
	refused(t, newBenchVsCmd, "even --seq-len", "vs-pytorch", "--seq-len", "15")
	refused(t, newBenchVsCmd, "layers must be positive", "vs-pytorch", "--layers", "0")
	refused(t, newBenchVsCmd, "--batches must be in 1..4096", "vs-pytorch", "--batches", "32,0")
}
