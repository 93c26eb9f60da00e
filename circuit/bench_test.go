package circuit

import (
	"testing"

	"headlab/backend/cpu"
	"headlab/train"
)

// BenchmarkAttribute is attribution patching of every edge of the
// default model (61 edges) on one held-out batch (train.EvalChunk
// examples): one forward and one backward pass of the edge Net and the
// dot products. Compare BenchmarkTrainStep (docs/circuits.md).
func BenchmarkAttribute(b *testing.B) {
	m := model(b, 1)
	r, err := NewRunner(m, cpu.New(), Options{Examples: train.EvalChunk})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	for range b.N {
		if _, err := r.Attribute(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrainStep is one training step of the default model (batch
// 32), the unit BenchmarkAttribute is measured in.
func BenchmarkTrainStep(b *testing.B) {
	tr, err := train.NewTrainer(train.Defaults("induction"), cpu.New())
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	b.ResetTimer()
	for range b.N {
		if _, err := tr.TrainStep(); err != nil {
			b.Fatal(err)
		}
	}
}
