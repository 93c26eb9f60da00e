package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// forward is the model, top to bottom (docs/model.md): the logits and
// the loss of the batch. Every node it makes is one op of ops.go or
// attention.go. The builder's hooks (net.go, probe.go) bind what a Net
// gives a node, and in a probed Net keep or open an activation to
// replacement; in a Net that neither trains nor probes they change
// nothing but the head gate.
func (b *builder) forward() (logits, loss *G.Node) {
	c := b.n.Config
	x, first := b.resumeInput()
	if x == nil {
		x = embed(b.tokens, b.param("tok_emb"))
		if c.Positions {
			x = add(x, embed(b.positions(), b.param("pos_emb")))
		}
	}
	for l := first; l < c.Layers; l++ {
		p := fmt.Sprintf("blocks.%d.", l)
		gate := b.gate(l)
		x = b.residual(l, x)
		b.keepInput(l, x)

		q, k, v := b.qkv(l, x)
		pr := b.attention(l, attentionProbs(b.shape, q, k))
		o := b.heads(l, attentionMix(b.shape, pr, v), gate)
		x = b.keep(ResidMid, l, add(x, linear(o, b.param(p+"attn.out.weight"), b.param(p+"attn.out.bias"))))
		x = b.readRows(l, x)
		if c.NoMLP {
			continue
		}

		h := b.norm(b.receive(Receiver{Kind: ReceiverMLP, Layer: l}, x), p+"ln2")
		h = b.act(linear(h, b.param(p+"mlp.fc1.weight"), b.param(p+"mlp.fc1.bias")))
		x = add(x, b.keep(MLPOut, l, linear(h, b.param(p+"mlp.fc2.weight"), b.param(p+"mlp.fc2.bias"))))
	}
	logits = b.unembed(b.final(b.norm(b.receive(Receiver{Kind: ReceiverLogits, Layer: c.Layers}, x), "ln_f")))
	return logits, softmaxXent(logits, b.targets)
}

// qkv is block l's queries, keys and values of its incoming residual x,
// through the block's first LayerNorm; an edge Net (probe.go) gives each
// head's query, key and value an input of its own.
func (b *builder) qkv(l int, x *G.Node) (q, k, v *G.Node) {
	if b.edges != nil {
		return b.edgeQKV(l, x)
	}
	p := fmt.Sprintf("blocks.%d.", l)
	h := layerNorm(x, b.param(p+"ln1.weight"), b.param(p+"ln1.bias"))
	q = linear(h, b.param(p+"attn.q.weight"), b.param(p+"attn.q.bias"))
	k = linear(h, b.param(p+"attn.k.weight"), b.param(p+"attn.k.bias"))
	v = linear(h, b.param(p+"attn.v.weight"), b.param(p+"attn.v.bias"))
	return q, k, v
}

// unembed is the logits of normalised rows x: x Wu + bu, or x tok_embᵀ +
// bu with tied embeddings (the one tok_emb node: Gorgonia sums both
// gradients into it).
func (b *builder) unembed(x *G.Node) *G.Node {
	if b.n.Config.TiedEmbeddings {
		return linearT(x, b.param("tok_emb"), b.param("unembed.bias"))
	}
	return linear(x, b.param("unembed.weight"), b.param("unembed.bias"))
}
