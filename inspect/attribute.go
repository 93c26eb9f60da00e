package inspect

import (
	"fmt"
	"math"

	"headlab/analysis"
	"headlab/graph"
	"headlab/tasks"
	"headlab/train"
)

// Kinds of part of the answer's logit in direct logit attribution.
const (
	PartEmbed    = "embed"     // the token embedding
	PartPosition = "pos_embed" // the positional embedding
	PartHead     = "head"      // one head's output through the output projection
	PartAttnBias = "attn_bias" // a block's output-projection bias
	PartMLP      = "mlp"       // a block's MLP output
	PartBias     = "bias"      // the final LayerNorm's bias and the unembedding's bias
)

// Part is one term of direct logit attribution: what one component
// writes into the residual stream, through the final LayerNorm with its
// scale frozen at the run's own, read along the answer's unembedding
// direction. The parts of an answer sum to its logit (Logit), and along
// the answer's direction less the mean direction, to its logit
// difference (LogitDiff).
type Part struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Layer int    `json:"layer"` // -1 for the embeddings and the bias
	Head  int    `json:"head"`  // -1 but for a head
	// Logit and LogitDiff are the means over every answer.
	Logit     float64 `json:"logit"`
	LogitDiff float64 `json:"logit_diff"`
	// ByPosition is the mean logit part at each answer position, in the
	// order of AttributionReport.Positions.
	ByPosition []float64 `json:"by_position"`
	// examples[k] is example k's mean logit part over its answers.
	examples []float64
}

// LensLayer is the logit lens at one point of the residual stream: the
// stream through the final LayerNorm and the unembedding, scored on every
// answer.
type LensLayer struct {
	// Name says where the stream is read: "L0 in", ..., and "out" (the
	// model's own logits).
	Name        string  `json:"name"`
	Accuracy    float64 `json:"accuracy"`
	Probability float64 `json:"answer_probability"`
}

// AttributionReport is direct logit attribution and the logit lens of
// one model on held-out examples.
type AttributionReport struct {
	Examples int `json:"examples"`
	Answers  int `json:"answers"`
	// Logit and LogitDiff are the answers' mean logit and logit
	// difference (the logit less the mean over the vocabulary).
	Logit     float64 `json:"logit"`
	LogitDiff float64 `json:"logit_diff"`
	// Positions are the answer positions, ascending.
	Positions []int  `json:"positions"`
	Parts     []Part `json:"parts"`
	// MaxResidual is the largest difference, over every answer, between
	// the sum of its parts and its logit: float32 rounding.
	MaxResidual float64     `json:"max_residual"`
	Lens        []LensLayer `json:"logit_lens"`
	// exLogit[k] is example k's mean answer logit.
	exLogit []float64
}

// PerExample is example k's mean logit over its answers and each part's
// mean over them, in Parts' order (k < the perExample Attribute kept).
func (r *AttributionReport) PerExample(k int) (logit float64, parts []float64) {
	for _, p := range r.Parts {
		parts = append(parts, p.examples[k])
	}
	return r.exLogit[k], parts
}

// directions is a model's unembedding read through the final LayerNorm's
// gain: for each token a, u_a = gf * W_U[:, a] less its mean over
// d-model (the LayerNorm's centring moved onto the direction), the same
// less its mean over the vocabulary (for the logit difference), and the
// constant parts.
type directions struct {
	u, ud      [][]float64 // [V][D]
	bias, biad []float64   // [V]: gf-folded LayerNorm bias . W_U[:, a] + b_U[a], and less its mean
}

func newDirections(m *train.Model) directions {
	c := m.Shape
	V, D := c.Vocab, c.DModel
	w := m.Weights
	gf, bf, bu := w.Get("ln_f.weight").Data, w.Get("ln_f.bias").Data, w.Get("unembed.bias").Data
	unembed := func(j, a int) float64 {
		if c.TiedEmbeddings {
			return float64(w.Get("tok_emb").Data[a*D+j])
		}
		return float64(w.Get("unembed.weight").Data[j*V+a])
	}
	d := directions{u: make([][]float64, V), ud: make([][]float64, V), bias: make([]float64, V), biad: make([]float64, V)}
	meanU := make([]float64, D)
	var meanB float64
	for a := range V {
		d.u[a] = make([]float64, D)
		var mean float64
		for j := range D {
			d.u[a][j] = float64(gf[j]) * unembed(j, a)
			mean += d.u[a][j] / float64(D)
			d.bias[a] += float64(bf[j]) * unembed(j, a)
		}
		d.bias[a] += float64(bu[a])
		for j := range D {
			d.u[a][j] -= mean
			meanU[j] += d.u[a][j] / float64(V)
		}
		meanB += d.bias[a] / float64(V)
	}
	for a := range V {
		d.ud[a] = make([]float64, D)
		for j := range D {
			d.ud[a][j] = d.u[a][j] - meanU[j]
		}
		d.biad[a] = d.bias[a] - meanB
	}
	return d
}

func dot(x []float32, y []float64) float64 {
	var s float64
	for i, v := range x {
		s += float64(v) * y[i]
	}
	return s
}

// Attribute measures direct logit attribution and the logit lens of every
// model of e on its first `examples` held-out examples, keeping the first
// perExample examples' own parts (AttributionReport.PerExample).
func Attribute(e *train.Evaluator, examples, perExample int) ([]*AttributionReport, error) {
	S := len(e.Models)
	bs := make([]*tasks.Batch, S)
	for s, held := range e.HeldOutAll() {
		bs[s] = firstExamples(held, examples)
	}
	N := bs[0].N
	K := min(perExample, N)
	reports := make([]*AttributionReport, S)
	ms := make([]*attrModel, S)
	for s := range S {
		reports[s], ms[s] = newAttrModel(e.Models[s], N, K)
	}
	c := e.Models[0].Shape
	read := func(net *graph.Net, first, n int) error {
		reads, err := readAttrPass(net, c)
		if err != nil {
			return err
		}
		for s := range S {
			ms[s].addPass(reports[s], reads, bs[s], s, first, n)
		}
		return nil
	}
	if _, err := e.Snapshot(bs, train.SnapshotOptions{Probe: &train.Probe{Read: read}}); err != nil {
		return nil, err
	}
	for s, r := range reports {
		ms[s].finish(r)
	}
	return reports, nil
}

// attrModel is one model's attribution weights, folded onto the answer
// directions once, and its running sums over the passes: Attribute's
// per-model state, kept apart so each step reads what it needs.
type attrModel struct {
	shape        graph.Config
	K            int // examples whose own parts are kept
	dir          directions
	emb, pos     []float32
	ob           [][]float32   // [l][D] output-projection biases
	wo           [][][]float64 // [l*H+h][a][Dh]: W_O^h u_a
	sums         []float64     // per part
	byPos        [][]float64   // [part][t]
	posN         []int         // answers at each position
	lensHit      []float64     // per lens point
	lensProb     []float64
	logit, ldiff float64
}

// newAttrModel lists mod's parts in the order the terms are taken and
// folds its weights onto the answer directions.
func newAttrModel(mod *train.Model, N, K int) (*AttributionReport, *attrModel) {
	c := mod.Shape
	L, H, T := c.Layers, c.Heads, c.SeqLen
	w := mod.Weights
	r := &AttributionReport{Examples: N, exLogit: make([]float64, K)}
	r.Parts = append(r.Parts, Part{Name: "embed", Kind: PartEmbed, Layer: -1, Head: -1})
	if c.Positions {
		r.Parts = append(r.Parts, Part{Name: "pos_embed", Kind: PartPosition, Layer: -1, Head: -1})
	}
	x := &attrModel{shape: c, K: K, dir: newDirections(mod), emb: w.Get("tok_emb").Data}
	if c.Positions {
		x.pos = w.Get("pos_emb").Data
	}
	for l := range L {
		for h := range H {
			r.Parts = append(r.Parts, Part{Name: analysis.HeadName(l, h), Kind: PartHead, Layer: l, Head: h})
			x.wo = append(x.wo, x.headDirections(w.Get(fmt.Sprintf("blocks.%d.attn.out.weight", l)).Data, h))
		}
		r.Parts = append(r.Parts, Part{Name: fmt.Sprintf("L%d attn bias", l), Kind: PartAttnBias, Layer: l, Head: -1})
		if !c.NoMLP {
			r.Parts = append(r.Parts, Part{Name: fmt.Sprintf("L%d mlp", l), Kind: PartMLP, Layer: l, Head: -1})
		}
		x.ob = append(x.ob, w.Get(fmt.Sprintf("blocks.%d.attn.out.bias", l)).Data)
	}
	r.Parts = append(r.Parts, Part{Name: "bias", Kind: PartBias, Layer: -1, Head: -1})
	for i := range r.Parts {
		r.Parts[i].examples = make([]float64, K)
	}
	x.sums = make([]float64, 2*len(r.Parts))
	x.byPos = make([][]float64, len(r.Parts))
	for i := range x.byPos {
		x.byPos[i] = make([]float64, T)
	}
	x.posN = make([]int, T)
	x.lensHit, x.lensProb = make([]float64, L+1), make([]float64, L+1)
	return r, x
}

// headDirections is head h's output projection (of the block whose
// weight wo is) read along each answer direction, so a head's part is
// one short dot product per answer.
func (x *attrModel) headDirections(wo []float32, h int) [][]float64 {
	c := x.shape
	D, V, dh := c.DModel, c.Vocab, c.HeadDim()
	per := make([][]float64, V)
	for a := range V {
		per[a] = make([]float64, 2*dh) // the logit's, then the logit difference's
		for k := range dh {
			row := wo[(h*dh+k)*D : (h*dh+k+1)*D]
			per[a][k], per[a][dh+k] = dot(row, x.dir.u[a]), dot(row, x.dir.ud[a])
		}
	}
	return per
}

// attrPass is one pass's reads, copied: the Net reuses its buffers.
type attrPass struct {
	heads, mlps [][]float32 // [l]; mlps[l] nil without an MLP
	lens        [][]float32 // [point]: each block's input, then the logits
	inv         []float32   // the final LayerNorm's scale per row
}

// readAttrPass copies what attribution reads out of a pass.
func readAttrPass(net *graph.Net, c graph.Config) (*attrPass, error) {
	L := c.Layers
	p := &attrPass{heads: make([][]float32, L), mlps: make([][]float32, L), lens: make([][]float32, L+1)}
	var err error
	for l := range L {
		if p.heads[l], err = copied(net.Capture(graph.HeadOut, l)); err != nil {
			return nil, err
		}
		if !c.NoMLP { // an attention-only model has no MLP part
			if p.mlps[l], err = copied(net.Capture(graph.MLPOut, l)); err != nil {
				return nil, err
			}
		}
		if p.lens[l], err = copied(net.LensLogits(l)); err != nil {
			return nil, err
		}
	}
	if p.lens[L], err = copied(net.Logits()); err != nil {
		return nil, err
	}
	if p.inv, err = copied(net.FinalScale()); err != nil {
		return nil, err
	}
	return p, nil
}

// addPass adds model s's answers of examples first..first+n-1 (batch b)
// out of one pass's reads.
func (x *attrModel) addPass(r *AttributionReport, p *attrPass, b *tasks.Batch, s, first, n int) {
	T := x.shape.SeqLen
	parts := make([]float64, 2*len(r.Parts))
	for j := range n {
		i := first + j
		var exN int
		for t := range T {
			a := b.Targets[i*T+t]
			if a < 0 {
				continue
			}
			row := (s*train.EvalChunk+j)*T + t // in the pass's tensors
			x.terms(parts, p, b.Tokens[i*T+t], a, t, row)
			x.addAnswer(r, parts, p, a, i, t, row)
			exN++
		}
		if i < x.K && exN > 0 {
			for q := range r.Parts {
				r.Parts[q].examples[i] /= float64(exN)
			}
			r.exLogit[i] /= float64(exN)
		}
	}
}

// terms fills parts with each part's logit and logit difference for
// answer a of token id at position t (row of the pass), in Parts' order.
func (x *attrModel) terms(parts []float64, p *attrPass, id, a, t, row int) {
	c := x.shape
	L, H, D := c.Layers, c.Heads, c.DModel
	dh := c.HeadDim()
	sc := float64(p.inv[row])
	k := 0
	term := func(lv, dv float64) {
		parts[2*k], parts[2*k+1] = lv, dv
		k++
	}
	term(sc*dot(x.emb[id*D:(id+1)*D], x.dir.u[a]), sc*dot(x.emb[id*D:(id+1)*D], x.dir.ud[a]))
	if x.pos != nil {
		term(sc*dot(x.pos[t*D:(t+1)*D], x.dir.u[a]), sc*dot(x.pos[t*D:(t+1)*D], x.dir.ud[a]))
	}
	for l := range L {
		for h := range H {
			o := p.heads[l][row*D+h*dh : row*D+(h+1)*dh]
			wo := x.wo[l*H+h][a]
			term(sc*dot(o, wo[:dh]), sc*dot(o, wo[dh:]))
		}
		term(sc*dot(x.ob[l], x.dir.u[a]), sc*dot(x.ob[l], x.dir.ud[a]))
		if p.mlps[l] != nil {
			mlp := p.mlps[l][row*D : (row+1)*D]
			term(sc*dot(mlp, x.dir.u[a]), sc*dot(mlp, x.dir.ud[a]))
		}
	}
	term(x.dir.bias[a], x.dir.biad[a])
}

// addAnswer adds one answer's parts (a at position t of example i, row
// of the pass) to the sums, and scores it on every lens point.
func (x *attrModel) addAnswer(r *AttributionReport, parts []float64, p *attrPass, a, i, t, row int) {
	V := x.shape.Vocab
	var total float64
	for q := range r.Parts {
		total += parts[2*q]
		x.sums[2*q] += parts[2*q]
		x.sums[2*q+1] += parts[2*q+1]
		x.byPos[q][t] += parts[2*q]
		if i < x.K {
			r.Parts[q].examples[i] += parts[2*q]
		}
	}
	out := p.lens[len(p.lens)-1][row*V : (row+1)*V]
	r.MaxResidual = max(r.MaxResidual, math.Abs(total-float64(out[a])))
	x.logit += float64(out[a])
	x.ldiff += LogitDiff(out, a)
	if i < x.K {
		r.exLogit[i] += float64(out[a])
	}
	x.posN[t]++
	r.Answers++
	for q, lg := range p.lens {
		hit, prob := answerScore(lg[row*V:(row+1)*V], a)
		x.lensHit[q] += hit
		x.lensProb[q] += prob
	}
}

// finish turns the sums into r's means.
func (x *attrModel) finish(r *AttributionReport) {
	L := x.shape.Layers
	A := float64(max(r.Answers, 1))
	r.Logit, r.LogitDiff = x.logit/A, x.ldiff/A
	for t, k := range x.posN {
		if k > 0 {
			r.Positions = append(r.Positions, t)
		}
	}
	for p := range r.Parts {
		r.Parts[p].Logit, r.Parts[p].LogitDiff = x.sums[2*p]/A, x.sums[2*p+1]/A
		for _, t := range r.Positions {
			r.Parts[p].ByPosition = append(r.Parts[p].ByPosition, x.byPos[p][t]/float64(x.posN[t]))
		}
	}
	for p := range L + 1 {
		name := "out"
		if p < L {
			name = fmt.Sprintf("L%d in", p)
		}
		r.Lens = append(r.Lens, LensLayer{Name: name, Accuracy: x.lensHit[p] / A, Probability: x.lensProb[p] / A})
	}
}

// LensReach is the fraction of the model's own accuracy at which the
// logit lens counts the answer as there (LensLayer).
const LensReach = 0.9

// LensLayer is the fewest blocks after which the logit lens reaches
// LensReach of the model's own accuracy: the first point of r.Lens
// (0: the embeddings alone, "L0 in"; the number of blocks: only the
// model's output) whose accuracy is at least LensReach times the
// output's, inclusive whatever the rounding.
func (r *AttributionReport) LensLayer() int {
	final := r.Lens[len(r.Lens)-1].Accuracy
	for p, l := range r.Lens {
		if l.Accuracy >= LensReach*final-analysis.Slack {
			return p
		}
	}
	return len(r.Lens) - 1
}

// HeadLogit is head (l, h)'s mean part of the answer's logit, and
// whether r has it.
func (r *AttributionReport) HeadLogit(l, h int) (float64, bool) {
	for _, p := range r.Parts {
		if p.Kind == PartHead && p.Layer == l && p.Head == h {
			return p.Logit, true
		}
	}
	return 0, false
}

// answerScore is whether the answer is the argmax of row (ties to the
// smaller id, as the device counts hits) and its softmax probability.
func answerScore(row []float32, answer int) (hit, prob float64) {
	best := 0
	for j, v := range row {
		if v > row[best] {
			best = j
		}
	}
	if best == answer {
		hit = 1
	}
	return hit, math.Exp(-analysis.NextTokenLoss(row, answer))
}

// copied is a copy of a read of a Net's buffer, and the read's error.
func copied(v []float32, err error) ([]float32, error) {
	return append([]float32(nil), v...), err
}
