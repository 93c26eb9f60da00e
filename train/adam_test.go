package train

import (
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAdamMatchesGorgonia runs headlab's Adam and Gorgonia's AdamSolver
// side by side on the same weights and gradients: the weights must agree
// bit for bit after every step.
func TestAdamMatchesGorgonia(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{7, 64, 1000}
	var pairs []G.ValueGrad
	var ws, gs [][]float32
	var gorg [][2][]float32 // Gorgonia's weights and gradients
	for _, n := range sizes {
		w := make([]float32, n)
		for j := range w {
			w[j] = float32(r.NormFloat64())
		}
		gw, gg := slices.Clone(w), make([]float32, n)
		ws, gs = append(ws, w), append(gs, make([]float32, n))
		gorg = append(gorg, [2][]float32{gw, gg})
		pairs = append(pairs, valueGrad{
			tensor.New(tensor.WithShape(n), tensor.WithBacking(gw)),
			tensor.New(tensor.WithShape(n), tensor.WithBacking(gg))})
	}
	solver := G.NewAdamSolver(G.WithLearnRate(3e-3))
	mine := newAdam(3e-3, sizes)
	for step := 0; step < 50; step++ {
		for i := range gorg {
			gd := gorg[i][1]
			for j := range gd {
				gd[j] = float32(r.NormFloat64()) * float32(r.Float64())
				if j%5 == 0 {
					gd[j] *= 1e-4
				}
			}
			copy(gs[i], gd)
		}
		if err := solver.Step(pairs); err != nil {
			t.Fatal(err)
		}
		mine.step(ws, gs)
		for i := range gorg {
			if !slices.Equal(ws[i], gorg[i][0]) {
				t.Fatalf("step %d tensor %d: weights differ from AdamSolver", step, i)
			}
		}
	}
}

// valueGrad hands a weight tensor and its gradient to AdamSolver.
type valueGrad struct{ w, g *tensor.Dense }

func (v valueGrad) Value() G.Value         { return v.w }
func (v valueGrad) Grad() (G.Value, error) { return v.g, nil }
