package cpu

import (
	"math"

	"headlab/internal/simd"
	"headlab/kernels"
)

// The attention kernels as the plain loops they were before they moved onto
// simd.Gemm: one query row, one key at a time. TestKernelsMatchReference
// holds the fast kernels to these.

// row returns the offset of (b, t, h) in a [B, T, H, Dh] slice.
func row(s kernels.Shape, b, t, h int) int { return ((b*s.T+t)*s.H + h) * s.Dh }

// prow returns the offset of row i of head (b, h) in a [B, H, T, T] slice.
func prow(s kernels.Shape, b, h, i int) int { return ((b*s.H+h)*s.T + i) * s.T }

func dot(a, b []float32) float32 {
	var sum float32
	for i := range a {
		sum += a[i] * b[i]
	}
	return sum
}

// refProbs is the plain-loop Probs.
func refProbs(s kernels.Shape, q, k, p []float32) error {
	if err := check(s, [2]int{len(q), s.QKVLen()}, [2]int{len(k), s.QKVLen()}, [2]int{len(p), s.ProbsLen()}); err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(s.Dh)))
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for i := 0; i < s.T; i++ {
				pr := p[prow(s, b, h, i) : prow(s, b, h, i)+s.T]
				qi := q[row(s, b, i, h) : row(s, b, i, h)+s.Dh]
				n := simd.Visible(i, s.T, s.Causal)
				maxv := float32(math.Inf(-1))
				for j := 0; j < n; j++ {
					pr[j] = scale * dot(qi, k[row(s, b, j, h):row(s, b, j, h)+s.Dh])
					maxv = max(maxv, pr[j])
				}
				var sum float32
				for j := 0; j < n; j++ {
					pr[j] = float32(math.Exp(float64(pr[j] - maxv)))
					sum += pr[j]
				}
				for j := 0; j < n; j++ {
					pr[j] /= sum
				}
				clear(pr[n:])
			}
		}
	}
	return nil
}

// refMix is the plain-loop Mix.
func refMix(s kernels.Shape, p, v, o []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(v), s.QKVLen()}, [2]int{len(o), s.QKVLen()}); err != nil {
		return err
	}
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for i := 0; i < s.T; i++ {
				oi := o[row(s, b, i, h) : row(s, b, i, h)+s.Dh]
				clear(oi)
				pr := p[prow(s, b, h, i) : prow(s, b, h, i)+s.T]
				for j := 0; j < simd.Visible(i, s.T, s.Causal); j++ {
					w := pr[j]
					vj := v[row(s, b, j, h) : row(s, b, j, h)+s.Dh]
					for d := range oi {
						oi[d] += w * vj[d]
					}
				}
			}
		}
	}
	return nil
}

// refMixGradP is the plain-loop MixGradP.
func refMixGradP(s kernels.Shape, dO, v, dP []float32) error {
	if err := check(s, [2]int{len(dO), s.QKVLen()}, [2]int{len(v), s.QKVLen()}, [2]int{len(dP), s.ProbsLen()}); err != nil {
		return err
	}
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for i := 0; i < s.T; i++ {
				pr := dP[prow(s, b, h, i) : prow(s, b, h, i)+s.T]
				doi := dO[row(s, b, i, h) : row(s, b, i, h)+s.Dh]
				n := simd.Visible(i, s.T, s.Causal)
				for j := 0; j < n; j++ {
					pr[j] = dot(doi, v[row(s, b, j, h):row(s, b, j, h)+s.Dh])
				}
				clear(pr[n:])
			}
		}
	}
	return nil
}

// refMixGradV is the plain-loop MixGradV.
func refMixGradV(s kernels.Shape, p, dO, dV []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(dO), s.QKVLen()}, [2]int{len(dV), s.QKVLen()}); err != nil {
		return err
	}
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for j := 0; j < s.T; j++ {
				dvj := dV[row(s, b, j, h) : row(s, b, j, h)+s.Dh]
				clear(dvj)
				for i := 0; i < s.T; i++ {
					if j >= simd.Visible(i, s.T, s.Causal) {
						continue
					}
					w := p[prow(s, b, h, i)+j]
					doi := dO[row(s, b, i, h) : row(s, b, i, h)+s.Dh]
					for d := range dvj {
						dvj[d] += w * doi[d]
					}
				}
			}
		}
	}
	return nil
}

// refScoreGrad fills ds with dS for row i of head (b, h): P * (dP - rowsum(P*dP)).
func refScoreGrad(s kernels.Shape, p, dP []float32, b, h, i int, ds []float32) {
	off := prow(s, b, h, i)
	pr, dpr := p[off:off+s.T], dP[off:off+s.T]
	n := simd.Visible(i, s.T, s.Causal)
	var rs float32
	for j := 0; j < n; j++ {
		rs += pr[j] * dpr[j]
	}
	for j := 0; j < n; j++ {
		ds[j] = pr[j] * (dpr[j] - rs)
	}
	clear(ds[n:])
}

// refProbsGradQ is the plain-loop ProbsGradQ.
func refProbsGradQ(s kernels.Shape, p, dP, k, dQ []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(dP), s.ProbsLen()}, [2]int{len(k), s.QKVLen()}, [2]int{len(dQ), s.QKVLen()}); err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(s.Dh)))
	ds := make([]float32, s.T)
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for i := 0; i < s.T; i++ {
				refScoreGrad(s, p, dP, b, h, i, ds)
				dqi := dQ[row(s, b, i, h) : row(s, b, i, h)+s.Dh]
				clear(dqi)
				for j := 0; j < simd.Visible(i, s.T, s.Causal); j++ {
					w := scale * ds[j]
					kj := k[row(s, b, j, h) : row(s, b, j, h)+s.Dh]
					for d := range dqi {
						dqi[d] += w * kj[d]
					}
				}
			}
		}
	}
	return nil
}

// refProbsGradK is the plain-loop ProbsGradK.
func refProbsGradK(s kernels.Shape, p, dP, q, dK []float32) error {
	if err := check(s, [2]int{len(p), s.ProbsLen()}, [2]int{len(dP), s.ProbsLen()}, [2]int{len(q), s.QKVLen()}, [2]int{len(dK), s.QKVLen()}); err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(s.Dh)))
	ds := make([]float32, s.T*s.T)
	for b := 0; b < s.B; b++ {
		for h := 0; h < s.H; h++ {
			for i := 0; i < s.T; i++ {
				refScoreGrad(s, p, dP, b, h, i, ds[i*s.T:(i+1)*s.T])
			}
			for j := 0; j < s.T; j++ {
				dkj := dK[row(s, b, j, h) : row(s, b, j, h)+s.Dh]
				clear(dkj)
				for i := 0; i < s.T; i++ {
					if j >= simd.Visible(i, s.T, s.Causal) {
						continue
					}
					w := scale * ds[i*s.T+j]
					qi := q[row(s, b, i, h) : row(s, b, i, h)+s.Dh]
					for d := range dkj {
						dkj[d] += w * qi[d]
					}
				}
			}
		}
	}
	return nil
}
