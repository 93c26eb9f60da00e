package bench

import (
	"runtime"
	"testing"

	"headlab/backend/cpu"
	"headlab/train"
)

// BenchmarkTrainStep times one training step (forward, backward, Adam) of
// the default induction model at batch 32 and 64 on the CPU backend.
// Run with -benchmem for allocations per step; heap-MB is the live heap
// after the run, which must stay flat as steps grow.
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
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := tr.TrainStep(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MB")
		})
	}
}
