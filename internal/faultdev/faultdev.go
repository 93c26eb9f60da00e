// Package faultdev wraps a kernels.Device so that one model's gradient
// turns infinite at one step, as an overflow or a faulty GPU would make
// it, for tests of the failure path. No learning rate the validator
// accepts makes headlab's models diverge (LayerNorm and Adam keep every
// value finite), so the tests need the fault from below: everything above
// the device (the training loop, Adam, divergence marking, the sweep and
// its store) runs as it does in a real run.
package faultdev

import (
	"math"

	"headlab/kernels"
)

// Device is dev with an infinite gradient for model Seed at Adam's At-th
// call (step At: a Group calls Adam once a step). Adam then turns that
// model's weights into NaN (Inf/Inf), and the next forward pass gives it
// a NaN loss.
type Device struct {
	kernels.Device
	Seed, At int
	calls    int
}

// Adam is the device's Adam, with the fault injected into g first.
func (d *Device) Adam(S, n int, w, g, m, v, negLR, decay, failed kernels.Tensor, c1, c2 float32) error {
	d.calls++
	if d.calls == d.At {
		grads := make([]float32, S*g.Len)
		if err := d.Download(grads, g, S); err != nil {
			return err
		}
		grads[d.Seed*g.Len] = float32(math.Inf(1))
		if err := d.Upload(g, S, grads); err != nil {
			return err
		}
	}
	return d.Device.Adam(S, n, w, g, m, v, negLR, decay, failed, c1, c2)
}
