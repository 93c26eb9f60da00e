package bench

import (
	"testing"

	"headlab/backend/cpu"
	"headlab/tasks"
	"headlab/train"
)

// bigShape is the larger shape of docs/performance.md (issue 38): 4 layers,
// 8 heads, d-model 256, d-ff 1024, T 64, vocab 64 (induction needs vocab >= T/2).
func bigShape(batch int) train.Config {
	c := BenchConfig(batch, tasks.NextToken)
	c.Layers, c.Heads, c.DModel, c.DFF, c.SeqLen, c.Vocab = 4, 8, 256, 1024, 64, 64
	return c.Sized()
}

// BenchmarkTrainStepBig times one CPU training step at bigShape, batch 32,
// on one goroutine; GFLOP/s is StepFlops per second, peak-% its share of
// SgemmPeak measured just before.
func BenchmarkTrainStepBig(b *testing.B) {
	c := bigShape(32)
	tr, err := train.NewTrainer(c, cpu.New())
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	for range 2 {
		if _, err := tr.TrainStep(); err != nil {
			b.Fatal(err)
		}
	}
	peak := SgemmPeak(512, 3e8)
	b.ResetTimer()
	for b.Loop() {
		if _, err := tr.TrainStep(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	gf := StepFlops(tr.Model.Shape, c.Batch, tasks.LossPositions(tr.Model.Task, c.Loss)) * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(gf, "GFLOP/s")
	b.ReportMetric(100*gf/peak.GFLOPs, "peak-%")
	b.ReportMetric(peak.GFLOPs, "peak-GFLOP/s")
}
