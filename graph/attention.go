package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"headlab/kernels"
)

// Attention ops: q, k, v and outputs are [B*T, H*Dh] (heads side by side),
// probabilities are [B*H*T, T]. Every kernel runs on the backend be, so
// switching backends never touches the model.

func kernelOp(be kernels.Backend, s kernels.Shape, name string, out tensor.Shape,
	run func(out []float32, in [][]float32) error, grad func(in G.Nodes, out, dOut *G.Node) (G.Nodes, error), in ...*G.Node) *G.Node {
	dims := make([]int, len(in))
	diff := make([]bool, len(in))
	for i := range in {
		dims[i] = 2
		diff[i] = grad != nil
	}
	return apply(&op{
		name:   fmt.Sprintf("%s(%s,%+v)", name, be.Name(), s),
		inDims: dims,
		out:    out,
		fwd:    run,
		grad:   grad,
		diff:   diff,
	}, in...)
}

// AttentionProbs is P = softmax(Q K^T / sqrt(Dh)) with the shape's mask.
func AttentionProbs(be kernels.Backend, s kernels.Shape, q, k *G.Node) *G.Node {
	return kernelOp(be, s, "attn_probs", tensor.Shape{s.B * s.H * s.T, s.T},
		func(out []float32, in [][]float32) error { return be.Probs(s, in[0], in[1], out) },
		func(in G.Nodes, p, dP *G.Node) (G.Nodes, error) {
			qkv := tensor.Shape{s.B * s.T, s.H * s.Dh}
			dq := kernelOp(be, s, "attn_probs_grad_q", qkv,
				func(out []float32, in [][]float32) error { return be.ProbsGradQ(s, in[0], in[1], in[2], out) },
				nil, p, dP, in[1])
			dk := kernelOp(be, s, "attn_probs_grad_k", qkv,
				func(out []float32, in [][]float32) error { return be.ProbsGradK(s, in[0], in[1], in[2], out) },
				nil, p, dP, in[0])
			return G.Nodes{dq, dk}, nil
		}, q, k)
}

// AttentionMix is O = P V: each head's output is the attention-weighted sum
// of its value vectors.
func AttentionMix(be kernels.Backend, s kernels.Shape, p, v *G.Node) *G.Node {
	qkv := tensor.Shape{s.B * s.T, s.H * s.Dh}
	return kernelOp(be, s, "attn_mix", qkv,
		func(out []float32, in [][]float32) error { return be.Mix(s, in[0], in[1], out) },
		func(in G.Nodes, _, dO *G.Node) (G.Nodes, error) {
			dp := kernelOp(be, s, "attn_mix_grad_p", in[0].Shape().Clone(),
				func(out []float32, in [][]float32) error { return be.MixGradP(s, in[0], in[1], out) },
				nil, dO, in[1])
			dv := kernelOp(be, s, "attn_mix_grad_v", qkv,
				func(out []float32, in [][]float32) error { return be.MixGradV(s, in[0], in[1], out) },
				nil, in[0], dO)
			return G.Nodes{dp, dv}, nil
		}, p, v)
}
