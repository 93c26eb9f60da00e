package graph

import (
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// summing is the CPU device with the fused column-sum kernels, each the
// two kernels it replaces, counting its ColSum calls.
type summing struct {
	kernels.Device
	colSums, fused int
}

func (d *summing) ColSum(S, rows, n int, x, out kernels.Tensor) error {
	d.colSums++
	return d.Device.ColSum(S, rows, n, x, out)
}

func (d *summing) WeightGrad(S, m, n, k int, x, dy, dW, db kernels.Tensor) error {
	d.fused++
	if err := d.Device.MatMul(S, true, false, m, n, k, x, dy, dW, kernels.Tensor{}); err != nil {
		return err
	}
	return d.Device.ColSum(S, k, n, dy, db)
}

func (d *summing) ColDotSum(S, rows, n int, a, b, dot, sum kernels.Tensor) error {
	d.fused++
	if err := d.Device.ColDot(S, rows, n, a, b, dot); err != nil {
		return err
	}
	return d.Device.ColSum(S, rows, n, a, sum)
}

// TestColumnSumsFuse: on a device with the fused kernels, every bias
// gradient (a linear layer's and a LayerNorm's) runs with the weight or
// gain gradient that reads the same rows, and the training Net gives the
// same loss and gradients, bit for bit.
func TestColumnSumsFuse(t *testing.T) {
	c := smallConfig(true, true)
	const batch = 3
	run := func(d kernels.Device) ([]float32, []float32) {
		b, err := NewBlock(d, c, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		if err := b.Upload([]*Weights{InitWeights(c, 1), InitWeights(c, 2)}); err != nil {
			t.Fatal(err)
		}
		n, err := BuildTrain(b, batch, []int{3, 5})
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		for s := range 2 {
			tok, tgt := answerBatch(c, batch, uint64(s), []int{3, 5})
			if err := n.SetInputs(s, tok, tgt); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Run(); err != nil {
			t.Fatal(err)
		}
		loss := append([]float32(nil), read(t, n.Losses)...)
		return loss, read(t, func() ([]float32, error) { return n.read(n.Grads()) })
	}
	plain := &summing{Device: cpu.New()}
	wantL, wantG := run(struct{ kernels.Device }{plain})
	fused := &summing{Device: cpu.New()}
	gotL, gotG := run(fused)
	if !sameFloats(gotL, wantL) || !sameFloats(gotG, wantG) {
		t.Fatal("the fused Net's loss or gradients differ")
	}
	// Each linear layer's bias (q, k, v, out, fc1, fc2 per block, and the
	// unembedding) and each LayerNorm's (two per block and the final).
	want := 6*c.Layers + 1 + 2*c.Layers + 1
	if fused.fused != want || plain.colSums != want || fused.colSums != 0 {
		t.Errorf("%d fused calls and %d column sums; without fusing %d column sums; want %d, 0 and %d", fused.fused, fused.colSums, plain.colSums, want, want)
	}
}
