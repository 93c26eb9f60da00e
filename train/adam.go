package train

import (
	"fmt"
	"math"

	"headlab/kernels"
)

// adam is Adam on a device over the parameter blocks of S models: the
// arithmetic of Gorgonia's AdamSolver (v0.9.18, float32, no clipping),
// operation for operation and rounding for rounding (kernels.Device.Adam;
// docs/model.md gives the formula; TestAdamMatchesGorgonia checks it bit
// for bit), after AdamW's decoupled weight decay where a model has one.
// Each model has its own learning rate and weight decay, and a model
// whose loss stopped being finite stops moving.
type adam struct {
	dev   kernels.Device
	S, n  int
	t     int
	m, v  kernels.Tensor // [S][n]
	negLR kernels.Tensor // [S][1]: minus each model's learning rate
	decay kernels.Tensor // [S][1]: each model's 1 - lr*wd
	// failed holds, per model, the step whose loss was not finite, or 0.
	failed kernels.Tensor
	mem    kernels.Arena
}

// newAdam makes Adam for len(lrs) models of n parameters, model s with
// learning rate lrs[s] and weight decay wds[s].
func newAdam(dev kernels.Device, n int, lrs, wds []float64) (_ *adam, err error) {
	S := len(lrs)
	a := &adam{dev: dev, S: S, n: n, mem: kernels.Arena{Dev: dev, S: S}}
	// A failure frees what was made.
	defer func() {
		if err != nil {
			a.free()
		}
	}()
	alloc := a.mem.Dense
	for _, t := range []*kernels.Tensor{&a.m, &a.v} {
		if *t, err = alloc(n); err != nil {
			return nil, err
		}
	}
	if a.negLR, err = alloc(1); err != nil {
		return nil, err
	}
	if a.decay, err = alloc(1); err != nil {
		return nil, err
	}
	if a.failed, err = alloc(1); err != nil {
		return nil, err
	}
	neg, decay := make([]float32, S), make([]float32, S)
	for s, lr := range lrs {
		// PyTorch's AdamW: w *= 1 - lr*wd, the factor from float64.
		neg[s], decay[s] = -float32(lr), float32(1-lr*wds[s])
	}
	if err := dev.Upload(a.negLR, S, neg); err != nil {
		return nil, err
	}
	return a, dev.Upload(a.decay, S, decay)
}

// step records which models' loss is not finite, then updates every
// other model's weights w from its gradients g ([S][n] each).
func (a *adam) step(w, g, loss kernels.Tensor) error {
	a.t++
	if err := a.dev.MarkDiverged(a.S, loss, a.failed, a.t); err != nil {
		return err
	}
	c1 := float32(1) / float32(1-math.Pow(kernels.AdamBeta1, float64(a.t)))
	c2 := float32(1) / float32(1-math.Pow(kernels.AdamBeta2, float64(a.t)))
	return a.dev.Adam(a.S, a.n, w, g, a.m, a.v, a.negLR, a.decay, a.failed, c1, c2)
}

// diverged reads, per model, the step at which its loss stopped being
// finite, or 0.
func (a *adam) diverged() ([]int, error) {
	f := make([]float32, a.S)
	if err := a.dev.Download(f, a.failed, a.S); err != nil {
		return nil, err
	}
	out := make([]int, a.S)
	for s, v := range f {
		if v < 0 || v != float32(int(v)) {
			return nil, fmt.Errorf("train: divergence record %v", v)
		}
		out[s] = int(v)
	}
	return out, nil
}

func (a *adam) free() { a.mem.Free() }
