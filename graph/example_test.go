package graph_test

import (
	"fmt"
	"log"
	"slices"

	"headlab/graph"
)

// ExampleParamShapes lists a model's parameters by name and shape, in the
// order Weights holds them; linear weights are [in, out].
func ExampleParamShapes() {
	c := graph.Config{Vocab: 16, SeqLen: 16, Arch: graph.Arch{Layers: 1, Heads: 2, DModel: 32, DFF: 64, Positions: true, Causal: true}}
	if err := c.Validate(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("head width:", c.HeadDim())
	for _, p := range graph.ParamShapes(c) {
		fmt.Println(p.Name, p.Shape)
	}
	// Output:
	// head width: 16
	// tok_emb [16 32]
	// pos_emb [16 32]
	// blocks.0.ln1.weight [32]
	// blocks.0.ln1.bias [32]
	// blocks.0.attn.q.weight [32 32]
	// blocks.0.attn.q.bias [32]
	// blocks.0.attn.k.weight [32 32]
	// blocks.0.attn.k.bias [32]
	// blocks.0.attn.v.weight [32 32]
	// blocks.0.attn.v.bias [32]
	// blocks.0.attn.out.weight [32 32]
	// blocks.0.attn.out.bias [32]
	// blocks.0.ln2.weight [32]
	// blocks.0.ln2.bias [32]
	// blocks.0.mlp.fc1.weight [32 64]
	// blocks.0.mlp.fc1.bias [64]
	// blocks.0.mlp.fc2.weight [64 32]
	// blocks.0.mlp.fc2.bias [32]
	// ln_f.weight [32]
	// ln_f.bias [32]
	// unembed.weight [32 16]
	// unembed.bias [16]
}

// ExampleInitWeights draws a model's initial weights from a seed: the same
// seed gives the same weights, another seed others.
func ExampleInitWeights() {
	// The shape of the default induction model (train.Defaults("induction")).
	c := graph.Config{Vocab: 16, SeqLen: 16, Arch: graph.Arch{Layers: 2, Heads: 2, DModel: 32, DFF: 64, Positions: true, Causal: true}}
	w := graph.InitWeights(c, 1)
	fmt.Println("parameters:", w.Count())
	fmt.Println("tensors:", len(w.Params))
	q := w.Get("blocks.1.attn.q.weight")
	fmt.Println(q.Name, q.Shape)
	fmt.Println("same seed, same weights:", slices.Equal(q.Data, graph.InitWeights(c, 1).Get(q.Name).Data))
	fmt.Println("seed 2, other weights:", !slices.Equal(q.Data, graph.InitWeights(c, 2).Get(q.Name).Data))
	// Output:
	// parameters: 18704
	// tensors: 38
	// blocks.1.attn.q.weight [32 32]
	// same seed, same weights: true
	// seed 2, other weights: true
}
