// Package kernels defines the attention kernels that the model's graph calls
// and the Gorgonia ops that wrap them. A backend (backend/cpu, backend/gl)
// implements Backend; graph/ never knows which one is in use.
//
// Layout. Queries, keys, values and outputs are stored as [B, T, H, Dh]
// row-major float32, which is the model's [B*T, H*Dh] activation matrix
// with the heads side by side: no transpose is needed around attention.
// Attention probabilities are [B, H, T, T] (query row, key column).
package kernels

import "fmt"

// Shape describes one attention call over B sequences of T positions with
// H heads of width Dh.
type Shape struct {
	B, T, H, Dh int
	// Causal masks key j > query i.
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

// Visible says whether query i may attend to key j.
func (s Shape) Visible(i, j int) bool { return !s.Causal || j <= i }

// Backend computes the six attention kernels. Every method overwrites its
// output slices completely. Scale is 1/sqrt(Dh) throughout.
//
//	Probs:      P  = softmax_j(scale * Q K^T), masked cells exactly 0
//	Mix:        O  = P V
//	MixGradP:   dP = dO V^T
//	MixGradV:   dV = P^T dO
//	ProbsGradQ: dQ = scale * dS K,   dS = P * (dP - rowsum(P * dP))
//	ProbsGradK: dK = scale * dS^T Q
//
// Implementations must be deterministic: the same inputs give the same bits.
type Backend interface {
	Name() string
	Probs(s Shape, q, k, p []float32) error
	Mix(s Shape, p, v, o []float32) error
	MixGradP(s Shape, dO, v, dP []float32) error
	MixGradV(s Shape, p, dO, dV []float32) error
	ProbsGradQ(s Shape, p, dP, k, dQ []float32) error
	ProbsGradK(s Shape, p, dP, q, dK []float32) error
}
