// Package kernels defines Device, the kernels of a training step on
// tensors that live on a device, each for S models at once (device.go).
// A backend (backend/cpu, backend/gl) implements it; graph's executor maps
// every node of the model's Gorgonia graph to one of its kernels and never
// knows which backend is in use.
//
// Attention layout. Queries, keys, values and outputs are stored as [B, T, H, Dh]
// row-major float32, which is the model's [B*T, H*Dh] activation matrix
// with the heads side by side: no transpose is needed around attention.
// Attention probabilities are [B, H, T, T] (query row, key column).
package kernels

import "fmt"

// Shape describes one attention call over B sequences of T positions with
// H heads of width Dh.
type Shape struct {
	B, T, H, Dh int
	// Causal masks key j > query i: query i sees keys 0..i (the rule's
	// one definition in Go is internal/simd's Visible, which the CPU
	// kernels run on; the GL kernels write it in GLSL).
	Causal bool
}

// Validate reports a shape that no kernel can run.
func (s Shape) Validate() error {
	if s.B <= 0 || s.T <= 0 || s.H <= 0 || s.Dh <= 0 {
		return fmt.Errorf("kernels: shape %+v has a non-positive size", s)
	}
	return nil
}

// QKVLen is the length of a query, key, value or output slice.
func (s Shape) QKVLen() int { return s.B * s.T * s.H * s.Dh }

// ProbsLen is the length of a probabilities slice.
func (s Shape) ProbsLen() int { return s.B * s.H * s.T * s.T }
