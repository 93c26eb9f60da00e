//go:build cgo

package graph

import (
	"testing"

	"headlab/kernels"
)

// TestFusedKernelsGL: on the GL device, a training step with its fused
// kernels gives the bits of the same step with them hidden (each group's
// kernels one by one), in fewer dispatches.
func TestFusedKernelsGL(t *testing.T) {
	d := glDevice(t)
	apart := kernels.Apart(d)
	for _, tied := range []bool{false, true} {
		for _, causal := range []bool{true, false} {
			c := smallConfig(true, causal)
			c.TiedEmbeddings = tied
			before := d.Stats().Dispatches
			trainStep(t, apart, c)
			mid := d.Stats().Dispatches
			trainStep(t, d, c)
			if fused, one := d.Stats().Dispatches-mid, mid-before; fused >= one {
				t.Errorf("tied=%v causal=%v: %d dispatches fused, %d apart", tied, causal, fused, one)
			}
			sameStep(t, c, d, apart)
		}
	}
}
