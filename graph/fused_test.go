package graph

import (
	"testing"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// fusing is the CPU device that fuses, each fused kernel the kernels it
// replaces (kernels.Separately), counting its calls and the ColSum and Add
// calls made outside them.
type fusing struct {
	kernels.Device
	calls map[string]int
}

func newFusing() *fusing {
	return &fusing{Device: cpu.New(), calls: map[string]int{}}
}

func (d *fusing) Fuses() bool { return true }

// sep runs a fused kernel on the CPU device itself, its calls uncounted.
func (d *fusing) sep() kernels.Separately { return kernels.Separately{Device: d.Device} }

func (d *fusing) ColSum(S, rows, n int, x, out kernels.Tensor) error {
	d.calls["ColSum"]++
	return d.Device.ColSum(S, rows, n, x, out)
}

func (d *fusing) Add(S, n int, a, b, out kernels.Tensor) error {
	d.calls["Add"]++
	return d.Device.Add(S, n, a, b, out)
}

func (d *fusing) WeightGrad(S, m, n, k int, x, dy, dW, db kernels.Tensor) error {
	d.calls["WeightGrad"]++
	return d.sep().WeightGrad(S, m, n, k, x, dy, dW, db)
}

func (d *fusing) ColDotSum(S, rows, n int, a, b, dot, sum kernels.Tensor) error {
	d.calls["ColDotSum"]++
	return d.sep().ColDotSum(S, rows, n, a, b, dot, sum)
}

func (d *fusing) MatMulThen(S int, tA, tB bool, m, n, k int, a, b, bias, c kernels.Tensor, e kernels.Epilogue, x, out kernels.Tensor) error {
	d.calls[[...]string{"", "MatMulThen add", "MatMulThen mul", "MatMulThen colscale"}[e]]++
	return d.sep().MatMulThen(S, tA, tB, m, n, k, a, b, bias, c, e, x, out)
}

func (d *fusing) LayerNormGrad(S, rows, n int, gamma, dy, xh, inv, res, dx, dgamma, dbeta kernels.Tensor) error {
	if res.Buf != nil {
		d.calls["LayerNormGrad res"]++
	}
	d.calls["LayerNormGrad"]++
	return d.sep().LayerNormGrad(S, rows, n, gamma, dy, xh, inv, res, dx, dgamma, dbeta)
}

func (d *fusing) EmbedAdd(S, rows, n int, ids, table, ids2, table2, out kernels.Tensor) error {
	d.calls["EmbedAdd"]++
	return d.sep().EmbedAdd(S, rows, n, ids, table, ids2, table2, out)
}

func (d *fusing) Attend(S int, s kernels.Shape, q, k, v, g, p, o, og kernels.Tensor) error {
	d.calls["Attend"]++
	return d.sep().Attend(S, s, q, k, v, g, p, o, og)
}

func (d *fusing) AttendGrad(S int, s kernels.Shape, p, dO, q, k, v, dQ, dK, dV kernels.Tensor) error {
	d.calls["AttendGrad"]++
	return d.sep().AttendGrad(S, s, p, dO, q, k, v, dQ, dK, dV)
}

// trainStep runs a step of a training Net of c on d for two seeds and
// returns their losses, gradients and gate gradients.
func trainStep(t *testing.T, d kernels.Device, c Config) ([]float32, []float32, [][][]float64) {
	t.Helper()
	const batch = 3
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
	gates, err := n.GateGrads()
	if err != nil {
		t.Fatal(err)
	}
	loss := append([]float32(nil), read(t, n.Losses)...)
	return loss, read(t, func() ([]float32, error) { return n.read(n.Grads()) }), gates
}

// sameStep fails unless a training step of c gives the same losses,
// gradients and gate gradients, bit for bit, on fused and on apart.
func sameStep(t *testing.T, c Config, fused, apart kernels.Device) {
	t.Helper()
	wantL, wantG, wantGates := trainStep(t, apart, c)
	gotL, gotG, gotGates := trainStep(t, fused, c)
	if !sameFloats(gotL, wantL) || !sameFloats(gotG, wantG) {
		t.Fatalf("tied=%v: the fused Net's loss or gradients differ", c.TiedEmbeddings)
	}
	for s := range wantGates {
		for l := range wantGates[s] {
			for h, g := range wantGates[s][l] {
				if gotGates[s][l][h] != g {
					t.Fatalf("tied=%v: gate gradient %d %d %d is %v fused, %v apart", c.TiedEmbeddings, s, l, h, gotGates[s][l][h], g)
				}
			}
		}
	}
}

// TestFusedKernels: on a device with every fused kernel, the training Net
// runs each group the graph shows as one call (every bias gradient with
// the weight or gain gradient that reads its rows, each LayerNorm's three
// gradients and the residual's gradient added, the embeddings and their
// sum, attention forward and backward, each gradient's product with the
// sum, GELU derivative or gate after it), no Add or ColSum outside them,
// and gives the same loss and gradients, bit for bit.
func TestFusedKernels(t *testing.T) {
	for _, tied := range []bool{false, true} {
		c := smallConfig(true, true)
		c.TiedEmbeddings = tied
		f := newFusing()
		sameStep(t, c, f, cpu.New())
		L := c.Layers
		want := map[string]int{
			// q, k, v, out, fc1, fc2 per block, the unembedding's bias
			// (tied: its weight gradient is the embedding's).
			"WeightGrad": 6 * L,
			// Two LayerNorms a block and the final one; every block's
			// two add the residual's gradient.
			"LayerNormGrad": 2*L + 1, "LayerNormGrad res": 2 * L,
			"EmbedAdd": 1, "Attend": L, "AttendGrad": L,
			// The sums of q's, k's and v's input gradients, GELU's
			// derivative and the gate, a block each.
			"MatMulThen add": 2 * L, "MatMulThen mul": L, "MatMulThen colscale": L,
		}
		if !tied {
			want["WeightGrad"]++
		} else {
			// The embedding's two gradients summed: the unembedding's
			// product into the lookup's.
			want["MatMulThen add"]++
			// and the unembedding's bias, with no product reading dy's
			// rows by column: a column sum of its own.
			want["ColSum"] = 1
		}
		for k, v := range want {
			if f.calls[k] != v {
				t.Errorf("tied=%v: %d calls of %s, want %d (all: %v)", tied, f.calls[k], k, v, f.calls)
			}
		}
		if f.calls["Add"] != 0 || f.calls["ColSum"] != want["ColSum"] {
			t.Errorf("tied=%v: %d adds and %d column sums outside the fused kernels: %v", tied, f.calls["Add"], f.calls["ColSum"], f.calls)
		}
	}
}
