package bench

import (
	"runtime"
	"testing"

	"headlab/backend/cpu"
	"headlab/tasks"
	"headlab/train"
)

// liveHeapMB is the live heap after a full collection.
func liveHeapMB() float64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// BenchmarkTrainStep times one training step (forward, backward, Adam) of
// the default induction model at batch 32 and 64 on the CPU backend. Run
// with -benchmem for allocations per step. Metrics: GFLOP/s (StepFlops per
// second); heap-MB, the live heap after the run; heap-growth-KB, how much
// the live heap grew between the warm-up and the end (flat: about 0 for
// any -benchtime); rss-MB, the process's peak resident memory so far.
func BenchmarkTrainStep(b *testing.B) {
	for _, batch := range []int{32, 64} {
		b.Run(map[int]string{32: "batch32", 64: "batch64"}[batch], func(b *testing.B) {
			c := train.Defaults("induction")
			c.Batch = batch
			tr, err := train.NewTrainer(c, cpu.New())
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			for range 5 { // warm up
				if _, err := tr.TrainStep(); err != nil {
					b.Fatal(err)
				}
			}
			before := liveHeapMB()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := tr.TrainStep(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(StepFlops(tr.Model.Shape, batch, tasks.LossPositions(tr.Model.Task, c.Loss))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			after := liveHeapMB()
			b.ReportMetric(after, "heap-MB")
			b.ReportMetric((after-before)*1024, "heap-growth-KB")
			_, peak := ResidentMB()
			b.ReportMetric(peak, "rss-MB")
		})
	}
}

// BenchmarkSweep is sweep throughput: one trainer per core (GOMAXPROCS),
// all stepping at once, for a fixed window; steps/s is the total.
func BenchmarkSweep(b *testing.B) {
	workers := runtime.GOMAXPROCS(0)
	for b.Loop() {
		r, err := SweepThroughput(workers, BenchConfig(32, tasks.NextToken), 2e9)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r, "steps/s")
	}
}

func TestStepFlops(t *testing.T) {
	c := train.Defaults("induction")
	tr, err := train.NewTrainer(c, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// 120.6 MFLOP at batch 64 on every row (the issue estimated about
	// 116); the last block's MLP and the unembedding on the answer rows,
	// half of them, take 14.2 off.
	every := make([]int, c.Model(tr.Model.Task).SeqLen)
	for i := range every {
		every[i] = i
	}
	if got := StepFlops(tr.Model.Shape, 64, every) / 1e6; got < 120 || got > 121 {
		t.Fatalf("StepFlops at batch 64 on every row = %.1f MFLOP", got)
	}
	if got := StepFlops(tr.Model.Shape, 64, tr.Model.Task.AnswerPositions()) / 1e6; got < 106 || got > 107 {
		t.Fatalf("StepFlops at batch 64 = %.1f MFLOP", got)
	}
}
