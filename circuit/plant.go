package circuit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"headlab/graph"
	"headlab/train"
)

// Planted models (docs/circuits.md): induction built by construction, not
// trained, after Elhage et al. 2021 and Olsson et al. 2022. A previous-
// token head in block 0 attends by positional QK from each position to
// the one before and copies that token into a subspace of its own; an
// induction head in block 1 reads that subspace with its keys
// (K-composition) and the current token with its query, so it attends to
// the position after the current token's earlier copy, and copies the
// token there (OV) into an output subspace the unembedding reads. Every
// other head has random weights; the MLPs write nothing.
const (
	// PlantInduction has one previous-token head (L0H0), one induction
	// head (L1H0) and random heads beside them.
	PlantInduction = "induction"
	// PlantRedundant has two induction heads (L1H0 and L1H1), each
	// writing half of the answer: either alone still gets it right.
	PlantRedundant = "redundant"
)

// PlantKinds lists the planted models.
var PlantKinds = []string{PlantInduction, PlantRedundant}

// The planted model's shape and its residual stream's subspaces: every
// feature is a one-hot entry +a on its dimension and -a on its mirror
// (the next block of 16), so each row's mean is 0 and the LayerNorms
// only scale.
const (
	plantD     = 128
	plantHeads = 4
	subTok     = 0  // the token (and its mirror at 16)
	subPos     = 32 // the position (48)
	subPrev    = 64 // the previous token, written by L0H0 (80)
	subOut     = 96 // the answer, written by the induction heads (112)
	plantA     = 4  // the features' magnitude
)

// Plant builds the planted model of kind (PlantKinds) for the induction
// task, its random heads drawn from seed, and the edges its circuit has
// under corruption (inspect's corruptions): those its construction uses
// whose sender differs between the clean and the corrupted run. The
// position embedding's edges (the previous-token head's query and key)
// never differ under a corruption of tokens, and no patching finds them;
// under first-half the induction heads' queries read second-half tokens,
// which it leaves as they are.
func Plant(kind string, seed uint64, corruption string) (*train.Model, []Edge, error) {
	var induction []int
	switch kind {
	case PlantInduction:
		induction = []int{0}
	case PlantRedundant:
		induction = []int{0, 1}
	default:
		return nil, nil, fmt.Errorf("unknown planted model %q (known: %s)", kind, strings.Join(PlantKinds, ", "))
	}
	c := train.Defaults("induction")
	c.Seed = seed
	c.Steps = 0
	c.Arch = graph.Arch{Layers: 2, Heads: plantHeads, DModel: plantD, DFF: 4, Positions: true, Causal: true}
	task, err := c.NewTask()
	if err != nil {
		return nil, nil, err
	}
	shape := c.Model(task)
	V, T, D := shape.Vocab, shape.SeqLen, plantD
	if V > 16 || T > 16 {
		return nil, nil, fmt.Errorf("circuit: a planted model holds 16 tokens and 16 positions, the task has %d and %d", V, T)
	}
	// After block 0's LayerNorm a feature reads a/sigma = sqrt(D/4) (four
	// entries of +-a); after block 1's, sqrt(D/6) (six).
	b := planter{w: graph.NewWeights(shape), V: V, T: T, D: D, dh: D / plantHeads,
		ln0: float32(math.Sqrt(float64(D) / 4)), ln1: float32(math.Sqrt(float64(D) / 6))}
	b.embeddings()
	b.prevTokenHead()
	b.inductionHeads(induction)
	b.randomHeads(induction, rand.New(rand.NewPCG(seed, 0x9a17ed)))
	for v := range V {
		b.set("unembed.weight", subOut+v, v, 5)
	}
	m := &train.Model{Train: c, Shape: shape, Task: task, Weights: b.w}
	return m, plantedEdges(induction, corruption), nil
}

// planter writes a planted model's weights: V tokens, T positions, D
// dimensions, dh per head; ln0 and ln1 are what a feature reads after
// block 0's and block 1's LayerNorm.
type planter struct {
	w           *graph.Weights
	V, T, D, dh int
	ln0, ln1    float32
}

// gap is the attention score of the wanted key over the rest.
const gap = 22

// set sets entry (i, j) of the matrix name.
func (b planter) set(name string, i, j int, v float32) {
	p := b.w.Get(name)
	p.Data[i*p.Shape[1]+j] = v
}

// feature writes v on dimension sub+k of row and -v on its mirror.
func (b planter) feature(name string, row, sub, k int, v float32) {
	b.set(name, row, sub+k, v)
	b.set(name, row, sub+16+k, -v)
}

// attn is the name prefix of layer l's attention weights.
func attn(l int) string { return fmt.Sprintf("blocks.%d.attn.", l) }

// embeddings writes the token and position features and sets every
// LayerNorm's gain to 1.
func (b planter) embeddings() {
	for t := range b.V {
		b.feature("tok_emb", t, subTok, t, plantA)
	}
	for p := range b.T {
		b.feature("pos_emb", p, subPos, p, plantA)
	}
	for _, n := range []string{"blocks.0.ln1.weight", "blocks.1.ln1.weight", "blocks.0.ln2.weight", "blocks.1.ln2.weight", "ln_f.weight"} {
		for i := range b.w.Get(n).Data {
			b.w.Get(n).Data[i] = 1
		}
	}
}

// prevTokenHead writes L0H0: query p matches key p-1 by position; it
// copies the token.
func (b planter) prevTokenHead() {
	for p := range b.T {
		b.set(attn(0)+"q.weight", subPos+p, p, gap*float32(math.Sqrt(float64(b.dh)))/(b.ln0*b.ln0))
		if p+1 < b.dh {
			b.set(attn(0)+"k.weight", subPos+p, p+1, 1)
		}
	}
	for t := range b.V {
		b.set(attn(0)+"v.weight", subTok+t, t, 1)
		b.set(attn(0)+"out.weight", t, subPrev+t, plantA/b.ln0)
		b.set(attn(0)+"out.weight", t, subPrev+16+t, -plantA/b.ln0)
	}
}

// inductionHeads writes the induction heads of block 1: query the current
// token, key the previous token (K-composition), copy the token attended
// to into the output, each head a share of it.
func (b planter) inductionHeads(induction []int) {
	dh, ln1 := b.dh, b.ln1
	for _, h := range induction {
		for t := range b.V {
			b.set(attn(1)+"q.weight", subTok+t, h*dh+t, gap*float32(math.Sqrt(float64(dh)))/(ln1*ln1))
			b.set(attn(1)+"k.weight", subPrev+t, h*dh+t, 1)
			if t == 0 {
				// Position 0 has no previous token (L0H0 attends to
				// itself there): a query bias and position 0's key keep
				// every query off it.
				b.w.Get(attn(1) + "q.bias").Data[(h+1)*dh-1] = 1
				b.set(attn(1)+"k.weight", subPos, (h+1)*dh-1, -2*gap*float32(math.Sqrt(float64(dh)))/ln1)
			}
			b.set(attn(1)+"v.weight", subTok+t, h*dh+t, 1)
			out := float32(2) / ln1 / float32(len(induction))
			b.set(attn(1)+"out.weight", h*dh+t, subOut+t, out)
			b.set(attn(1)+"out.weight", h*dh+t, subOut+16+t, -out)
		}
	}
}

// randomHeads gives every head but L0H0 and the induction heads random
// weights drawn from rng, in a fixed order.
func (b planter) randomHeads(induction []int, rng *rand.Rand) {
	D, dh := b.D, b.dh
	for l := range 2 {
		for h := range plantHeads {
			if l == 0 && h == 0 || l == 1 && h < len(induction) {
				continue
			}
			for _, n := range []string{"q", "k", "v", "out"} {
				p := b.w.Get(attn(l) + n + ".weight")
				std := 0.1
				if n == "out" {
					std = 0.01
				}
				for i := range D {
					for j := h * dh; j < (h+1)*dh; j++ {
						if n == "out" {
							p.Data[j*D+i] = float32(rng.NormFloat64() * std)
						} else {
							p.Data[i*D+j] = float32(rng.NormFloat64() * std)
						}
					}
				}
			}
		}
	}
}

// plantedEdges are the edges of the construction that a corruption of
// tokens can find (Plant).
func plantedEdges(induction []int, corruption string) []Edge {
	prev := Sender{Kind: SenderHead, Layer: 0, Head: 0}
	embed := Sender{Kind: SenderEmbed}
	es := []Edge{{From: embed, To: graph.Receiver{Kind: graph.ReceiverV, Layer: 0, Head: 0}}}
	for _, h := range induction {
		if corruption != "first-half" {
			es = append(es, Edge{From: embed, To: graph.Receiver{Kind: graph.ReceiverQ, Layer: 1, Head: h}})
		}
		es = append(es,
			Edge{From: prev, To: graph.Receiver{Kind: graph.ReceiverK, Layer: 1, Head: h}},
			Edge{From: embed, To: graph.Receiver{Kind: graph.ReceiverV, Layer: 1, Head: h}},
			Edge{From: Sender{Kind: SenderHead, Layer: 1, Head: h}, To: graph.Receiver{Kind: graph.ReceiverLogits, Layer: 2}})
	}
	return es
}
