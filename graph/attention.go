package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"headlab/kernels"
)

// Attention ops: q, k, v and outputs are [B*T, H*Dh] (heads side by side),
// probabilities are [B*H*T, T]. Each is one attention kernel of the
// device the executor runs on.

func kernelOp(s kernels.Shape, kind opKind, name string, out tensor.Shape,
	run func(c *call) error, grad func(in G.Nodes, out, dOut *G.Node) (G.Nodes, error), in ...*G.Node) *G.Node {
	dims := make([]int, len(in))
	diff := make([]bool, len(in))
	for i := range in {
		dims[i] = 2
		diff[i] = grad != nil
	}
	return apply(&op{
		name:   fmt.Sprintf("%s(%+v)", name, s),
		inDims: dims,
		out:    out,
		run:    run,
		grad:   grad,
		diff:   diff,
		fuse:   fusible{kind: kind, shape: s},
	}, in...)
}

// attentionProbs is P = softmax(Q K^T / sqrt(Dh)) with the shape's mask.
func attentionProbs(s kernels.Shape, q, k *G.Node) *G.Node {
	return kernelOp(s, kindProbs, "attn_probs", tensor.Shape{s.B * s.H * s.T, s.T},
		func(c *call) error { return c.d.Probs(c.S, s, c.in[0], c.in[1], c.out) },
		func(in G.Nodes, p, dP *G.Node) (G.Nodes, error) {
			qkv := tensor.Shape{s.B * s.T, s.H * s.Dh}
			dq := kernelOp(s, kindProbsGradQ, "attn_probs_grad_q", qkv,
				func(c *call) error { return c.d.ProbsGradQ(c.S, s, c.in[0], c.in[1], c.in[2], c.out) },
				nil, p, dP, in[1])
			dk := kernelOp(s, kindProbsGradK, "attn_probs_grad_k", qkv,
				func(c *call) error { return c.d.ProbsGradK(c.S, s, c.in[0], c.in[1], c.in[2], c.out) },
				nil, p, dP, in[0])
			return G.Nodes{dq, dk}, nil
		}, q, k)
}

// attentionMix is O = P V: each head's output is the attention-weighted sum
// of its value vectors.
func attentionMix(s kernels.Shape, p, v *G.Node) *G.Node {
	qkv := tensor.Shape{s.B * s.T, s.H * s.Dh}
	return kernelOp(s, kindMix, "attn_mix", qkv,
		func(c *call) error { return c.d.Mix(c.S, s, c.in[0], c.in[1], c.out) },
		func(in G.Nodes, _, dO *G.Node) (G.Nodes, error) {
			dp := kernelOp(s, kindMixGradP, "attn_mix_grad_p", in[0].Shape().Clone(),
				func(c *call) error { return c.d.MixGradP(c.S, s, c.in[0], c.in[1], c.out) },
				nil, dO, in[1])
			dv := kernelOp(s, kindMixGradV, "attn_mix_grad_v", qkv,
				func(c *call) error { return c.d.MixGradV(c.S, s, c.in[0], c.in[1], c.out) },
				nil, in[0], dO)
			return G.Nodes{dp, dv}, nil
		}, p, v)
}
