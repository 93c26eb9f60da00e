package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"headlab/backend/cpu"
)

// TestAdamMatchesGorgonia runs headlab's Adam and Gorgonia's AdamSolver
// side by side on the same weights and gradients: the weights must agree
// bit for bit after every step. A third model in the same block, with
// AdamW's weight decay, follows the float64 AdamW update.
func TestAdamMatchesGorgonia(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{7, 64, 1000}
	var pairs []G.ValueGrad
	var ws [][]float32
	var gorg [][2][]float32 // Gorgonia's weights and gradients
	for _, n := range sizes {
		w := make([]float32, n)
		for j := range w {
			w[j] = float32(r.NormFloat64())
		}
		gw, gg := slices.Clone(w), make([]float32, n)
		ws = append(ws, w)
		gorg = append(gorg, [2][]float32{gw, gg})
		pairs = append(pairs, valueGrad{
			tensor.New(tensor.WithShape(n), tensor.WithBacking(gw)),
			tensor.New(tensor.WithShape(n), tensor.WithBacking(gg))})
	}
	solver := G.NewAdamSolver(G.WithLearnRate(3e-3))
	// headlab's Adam runs on the CPU device over one flat block; a second
	// model with another learning rate shares it and must not disturb it,
	// and a third decays its weights.
	dev := cpu.New()
	flat := slices.Concat(ws...)
	n := len(flat)
	block := cpu.Wrap(slices.Concat(flat, flat, flat))
	block.Len, block.Stride = n, n
	grads := cpu.Wrap(make([]float32, 3*n))
	grads.Len, grads.Stride = n, n
	loss := cpu.Wrap([]float32{1, 1, 1})
	loss.Len, loss.Stride = 1, 1
	const wd = 0.5
	mine, err := newAdam(dev, n, []float64{3e-3, 1e-1, 3e-3}, []float64{0, 0, wd})
	if err != nil {
		t.Fatal(err)
	}
	// AdamW in float64: PyTorch's update, for the third model.
	ref := make([]float64, n)
	for j, x := range flat {
		ref[j] = float64(x)
	}
	rm, rv := make([]float64, n), make([]float64, n)
	for step := 0; step < 50; step++ {
		g := grads.Buf.(*cpu.Buffer).Data()
		at := 0
		for i := range gorg {
			gd := gorg[i][1]
			for j := range gd {
				gd[j] = float32(r.NormFloat64()) * float32(r.Float64())
				if j%5 == 0 {
					gd[j] *= 1e-4
				}
			}
			at += copy(g[at:], gd)
		}
		copy(g[n:], g[:n])
		copy(g[2*n:], g[:n])
		t1 := float64(step + 1)
		for j := range ref {
			gr := float64(g[j])
			rm[j] = 0.9*rm[j] + 0.1*gr
			rv[j] = 0.999*rv[j] + 0.001*gr*gr
			mh, vh := rm[j]/(1-math.Pow(0.9, t1)), rv[j]/(1-math.Pow(0.999, t1))
			ref[j] = ref[j]*(1-3e-3*wd) - 3e-3*mh/(math.Sqrt(vh)+1e-8)
		}
		if err := solver.Step(pairs); err != nil {
			t.Fatal(err)
		}
		if err := mine.step(block, grads, loss); err != nil {
			t.Fatal(err)
		}
		w := block.Buf.(*cpu.Buffer).Data()
		if !slices.Equal(w[:n], slices.Concat(gorg[0][0], gorg[1][0], gorg[2][0])) {
			t.Fatalf("step %d: weights differ from AdamSolver", step)
		}
		if slices.Equal(w[:n], w[n:2*n]) {
			t.Fatalf("step %d: the model with learning rate 0.1 moved as the other did", step)
		}
		for j, x := range w[2*n:] {
			if d := math.Abs(float64(x) - ref[j]); d > 1e-5*(1+math.Abs(ref[j])) {
				t.Fatalf("step %d: weight %d with decay is %v, AdamW in float64 %v", step, j, x, ref[j])
			}
		}
	}
	// The decay moved the third model away from the first, by about
	// lr*wd*|w| a step.
	w := block.Buf.(*cpu.Buffer).Data()
	if d := math.Abs(float64(w[2*n]-w[0])) / math.Abs(float64(w[0])); d < 0.5*50*3e-3*wd {
		t.Fatalf("weight decay moved weight 0 by %.3g of itself in 50 steps, want about %.3g", d, 50*3e-3*wd)
	}
	// A loss that is not finite stops that model and records the step.
	loss.Buf.(*cpu.Buffer).Data()[1] = float32(math.NaN())
	before := slices.Clone(block.Buf.(*cpu.Buffer).Data())
	if err := mine.step(block, grads, loss); err != nil {
		t.Fatal(err)
	}
	after := block.Buf.(*cpu.Buffer).Data()
	if !slices.Equal(before[n:2*n], after[n:2*n]) || slices.Equal(before[:n], after[:n]) {
		t.Fatal("the diverged model moved, or the healthy one did not")
	}
	if d, err := mine.diverged(); err != nil || d[0] != 0 || d[1] != 51 || d[2] != 0 {
		t.Fatalf("diverged steps %v, %v; want [0 51 0]", d, err)
	}
}

// valueGrad hands a weight tensor and its gradient to AdamSolver.
type valueGrad struct{ w, g *tensor.Dense }

func (v valueGrad) Value() G.Value         { return v.w }
func (v valueGrad) Grad() (G.Value, error) { return v.g, nil }
