// Package cpu is the CPU backend, serial and deterministic, the reference
// every other backend is checked against. Each attention kernel is a few
// small matrix products per (sequence, head) on simd.Gemm, with the
// softmax and its gradient between them on simd's row kernels (their sums
// in simd.RowSums, in each row's order); the plain-loop originals live on in
// reference_test.go, which the kernels must match.
//
// Outside simd's assembly every product here and in device.go is rounded
// before it is added or subtracted: an explicit float32(x*y) (float64 in
// the loss) forbids the fused multiply-add that the compiler may otherwise
// emit (GOAMD64=v3, arm64), so every build gives the same bits.
package cpu

import (
	"fmt"
	"math"
	"sync"

	"headlab/internal/simd"
	"headlab/kernels"
)

// attn holds the attention kernels on host slices, for one group of
// sequences; Device's attention methods call them on each seed's (or all
// seeds') arrays. It holds no state.
type attn struct{}

func check(s kernels.Shape, lens ...[2]int) error {
	if err := s.Validate(); err != nil {
		return err
	}
	for _, l := range lens {
		if l[0] != l[1] {
			return fmt.Errorf("cpu: slice of length %d, want %d for shape %+v", l[0], l[1], s)
		}
	}
	return nil
}

// scratch holds per-call temporaries; pooled so a step allocates nothing.
var scratch = sync.Pool{New: func() any { return new([]float32) }}

func getScratch(n int) (*[]float32, []float32) {
	p := scratch.Get().(*[]float32)
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	return p, (*p)[:n]
}

// heads calls f for every (sequence, head) with the offset of its [T, Dh]
// block in Q/K/V-shaped slices (row stride H*Dh) and of its [T, T] block
// in P-shaped ones.
func heads(s kernels.Shape, f func(off, poff int)) {
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			f((b*s.T*s.H+h)*s.Dh, (b*s.H+h)*s.T*s.T)
		}
	}
}

// Probs computes kernels.Device.Probs on slices: S = Q K^T per head on
// simd.Gemm, then each row's softmax over its visible keys (exp by
// simd.Exp), one call of each row kernel over every head's rows (each row
// is computed alone, so the bits are those of one head at a time).
func (attn) Probs(s kernels.Shape, q, k, p []float32) error {
	if err := check(s, [2]int{len(q), s.QKVLen()}, [2]int{len(k), s.QKVLen()}, [2]int{len(p), s.ProbsLen()}); err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(s.Dh)))
	ld, T := s.H*s.Dh, s.T
	sp, kt := getScratch(s.Dh*T + s.B*s.H*T)
	defer scratch.Put(sp)
	kt, sums := kt[:s.Dh*T], kt[s.Dh*T:]
	heads(s, func(off, poff int) {
		simd.Transpose(kt, k, off, ld, T, s.Dh)
		simd.Gemm(T, T, s.Dh, q[off:], ld, 1, kt, T, p[poff:], T, nil)
	})
	simd.ScaleSubMax(p, T, s.Causal, scale)
	simd.Exp(p)
	simd.RowSums(p, nil, T, s.Causal, sums)
	simd.DivRows(p, T, s.Causal, sums)
	return nil
}

// Mix computes kernels.Device.Mix on slices: O = P V per head (masked P is 0).
func (attn) Mix(s kernels.Shape, p, v, o []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(v), s.QKVLen()}, [2]int{len(o), s.QKVLen()}); err != nil {
		return err
	}
	ld, T := s.H*s.Dh, s.T
	heads(s, func(off, poff int) {
		simd.Gemm(T, s.Dh, T, p[poff:], T, 1, v[off:], ld, o[off:], ld, nil)
	})
	return nil
}

// MixGradP computes kernels.Device.MixGradP on slices: dP = dO V^T, masked cells 0.
func (attn) MixGradP(s kernels.Shape, dO, v, dP []float32) error {
	if err := check(s, [2]int{len(dO), s.QKVLen()}, [2]int{len(v), s.QKVLen()}, [2]int{len(dP), s.ProbsLen()}); err != nil {
		return err
	}
	ld, T := s.H*s.Dh, s.T
	sp, vt := getScratch(s.Dh * T)
	defer scratch.Put(sp)
	heads(s, func(off, poff int) {
		simd.Transpose(vt, v, off, ld, T, s.Dh)
		simd.Gemm(T, T, s.Dh, dO[off:], ld, 1, vt, T, dP[poff:], T, nil)
	})
	simd.ClearMasked(dP, T, s.Causal)
	return nil
}

// MixGradV computes kernels.Device.MixGradV on slices: dV = P^T dO.
func (attn) MixGradV(s kernels.Shape, p, dO, dV []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(dO), s.QKVLen()}, [2]int{len(dV), s.QKVLen()}); err != nil {
		return err
	}
	ld, T := s.H*s.Dh, s.T
	heads(s, func(off, poff int) {
		simd.Gemm(T, s.Dh, T, p[poff:], 1, T, dO[off:], ld, dV[off:], ld, nil)
	})
	return nil
}

// ProbsGradQ computes kernels.Device.ProbsGradQ on slices: dQ = scale * dS K.
func (attn) ProbsGradQ(s kernels.Shape, p, dP, k, dQ []float32) error {
	return probsGrad(s, p, dP, k, dQ, false)
}

// ProbsGradK computes kernels.Device.ProbsGradK on slices: dK = scale * dS^T Q.
func (attn) ProbsGradK(s kernels.Shape, p, dP, q, dK []float32) error {
	return probsGrad(s, p, dP, q, dK, true)
}

// probsGrad is out = scale * dS x (dQ from K) or, with transposed,
// scale * dS^T x (dK from Q): the same score gradient, read by rows or
// by columns.
func probsGrad(s kernels.Shape, p, dP, x, out []float32, transposed bool) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(dP), s.ProbsLen()}, [2]int{len(x), s.QKVLen()}, [2]int{len(out), s.QKVLen()}); err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(s.Dh)))
	ld, T := s.H*s.Dh, s.T
	ai, ap := T, 1 // element (i, j) of dS, or of dS^T
	if transposed {
		ai, ap = 1, T
	}
	// dS = P * (dP - rowsum(P*dP)), scaled, masked cells 0: every head's
	// rows in one call of each row kernel.
	sp, ds := getScratch(s.ProbsLen() + s.B*s.H*T)
	defer scratch.Put(sp)
	ds, rs := ds[:s.ProbsLen()], ds[s.ProbsLen():]
	simd.RowSums(p, dP, T, s.Causal, rs)
	simd.ScoreGradRows(ds, p, dP, T, s.Causal, scale, rs)
	heads(s, func(off, poff int) {
		simd.Gemm(T, s.Dh, T, ds[poff:], ai, ap, x[off:], ld, out[off:], ld, nil)
	})
	return nil
}
