package inspect

import (
	"fmt"

	"headlab/analysis"
	"headlab/tasks"
	"headlab/train"
)

// Circuit is a head's task-independent scores (docs/causal.md): what its
// weights do to a token (the full OV circuit) and where it attends on a
// repeated random sequence.
type Circuit struct {
	// OVCopying is the copying score of the full OV circuit, in [-1, 1]
	// (analysis.CopyingScore); OVCopyAccuracy the fraction of tokens whose
	// own logit the circuit raises most (analysis.CopyAccuracy).
	OVCopying      float64 `json:"ov_copying"`
	OVCopyAccuracy float64 `json:"ov_copy_accuracy"`
	// PrefixMatching is the mean attention from a token of a repeated
	// random run to the token after its earlier copy
	// (analysis.PrefixMatching).
	PrefixMatching float64 `json:"prefix_matching"`
}

// PrefixExamples is how many repeated random sequences the
// prefix-matching score averages over.
const PrefixExamples = ScoredExamples

// circuitAll fills every report's circuit scores and in-context learning
// score (Circuits); a model whose scores cannot be computed is an error.
func circuitAll(e *train.Evaluator, reports []*Report) error {
	ms, err := Circuits(e)
	if err != nil {
		return err
	}
	for s, r := range reports {
		if ms[s].Err != nil {
			return ms[s].Err
		}
		for i := range r.Heads {
			h := &r.Heads[i]
			h.Circuit = &ms[s].Heads[h.Layer*e.Models[s].Shape.Heads+h.Head]
		}
		r.ICL = ms[s].ICL
	}
	return nil
}

// ModelCircuits is one model's circuit scores: every head's, layer-major,
// and the in-context learning score of the first ScoredExamples held-out
// examples (nil where the model has none). Err says why they could not
// be computed (an OV circuit whose eigenvalues do not converge, as a
// diverged model's), and then they are missing.
type ModelCircuits struct {
	Heads []Circuit
	ICL   *float64
	Err   error
}

// Circuits measures the circuit scores of every model of e as it is
// (intact): the OV circuits from the weights, prefix matching from one
// pass over RepeatedTokens, the in-context learning score from the logits
// of the scored examples. The error is a pass's; a model's own failure
// is its ModelCircuits.Err, and the others are measured.
func Circuits(e *train.Evaluator) ([]ModelCircuits, error) {
	m := e.Models[0]
	T := m.Shape.SeqLen
	S := len(e.Models)
	rep := RepeatedTokens(PrefixExamples, T, trainedVocab(m.Task))
	bs := make([]*tasks.Batch, S)
	for s := range bs {
		bs[s] = rep
	}
	sn, err := e.Snapshot(bs, train.SnapshotOptions{Attention: rep.N})
	if err != nil {
		return nil, err
	}
	scored := e.HeldOutAll()
	for s, b := range scored {
		scored[s] = firstExamples(b, ScoredExamples)
	}
	logits, err := e.Snapshot(scored, train.SnapshotOptions{Attention: ScoredExamples, Logits: true})
	if err != nil {
		return nil, err
	}
	out := make([]ModelCircuits, S)
	for s, mod := range e.Models {
		out[s].Heads, out[s].Err = headCircuits(mod, sn[s].Attention)
		if out[s].Err != nil {
			out[s].Heads = nil
			continue
		}
		b := scored[s]
		if icl, err := analysis.ICLScore(b.Tokens, logits[s].Logits, b.N, b.T, mod.Shape.Vocab); err == nil {
			out[s].ICL = &icl
		}
	}
	return out, nil
}

// headCircuits is every head's circuit scores of mod, layer-major, with
// its attention on RepeatedTokens.
func headCircuits(mod *train.Model, att *analysis.Attention) ([]Circuit, error) {
	ov, err := OVCircuits(mod)
	if err != nil {
		return nil, err
	}
	prefix, err := analysis.PrefixMatching(att, mod.Shape.SeqLen/2)
	if err != nil {
		return nil, err
	}
	var cs []Circuit
	for k := range ov {
		copying, err := analysis.CopyingScore(ov[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", analysis.HeadName(k/mod.Shape.Heads, k%mod.Shape.Heads), err)
		}
		cs = append(cs, Circuit{OVCopying: copying, OVCopyAccuracy: analysis.CopyAccuracy(ov[k]), PrefixMatching: prefix[k]})
	}
	return cs, nil
}

// trainedVocab is the number of token ids t's training data draws from:
// all of them but those it holds back.
func trainedVocab(t tasks.Task) int {
	if u, ok := t.(tasks.UnseenTask); ok {
		return t.Vocab() - u.HeldBack()
	}
	return t.Vocab()
}

// OVCircuits is every head's full OV circuit [V, V], layer-major, with
// LayerNorm's gains folded in and the writing weights and the unembedding
// centred, as TransformerLens's default weight processing leaves them
// (docs/causal.md): E_c diag(g1) W_V^h W_O^h_c diag(gf) U_c, row the token
// attended to, column the logit it moves. LayerNorm's scale and the
// biases are left out, and so are the positional embeddings.
func OVCircuits(m *train.Model) ([]analysis.Matrix, error) {
	c := m.Shape
	V, D := c.Vocab, c.DModel
	get := func(name string) ([]float32, error) {
		p := m.Weights.Get(name)
		if p == nil {
			return nil, fmt.Errorf("inspect: the model has no %s", name)
		}
		return p.Data, nil
	}
	emb, err := get("tok_emb")
	if err != nil {
		return nil, err
	}
	// E_c: each token's embedding less its mean over d-model.
	e := analysis.Matrix{Rows: V, Cols: D, Data: make([]float64, V*D)}
	for v := range V {
		row := e.Data[v*D : (v+1)*D]
		for j := range row {
			row[j] = float64(emb[v*D+j])
		}
		centre(row)
	}
	// U_c: the unembedding with the final gain folded in, less each
	// row's mean over the vocabulary.
	gf, err := get("ln_f.weight")
	if err != nil {
		return nil, err
	}
	u := analysis.Matrix{Rows: D, Cols: V, Data: make([]float64, D*V)}
	for j := range D {
		for v := range V {
			w := emb[v*D+j] // tied: W_U = tok_embᵀ
			if !c.TiedEmbeddings {
				wu, err := get("unembed.weight")
				if err != nil {
					return nil, err
				}
				w = wu[j*V+v]
			}
			u.Data[j*V+v] = float64(gf[j]) * float64(w)
		}
		centre(u.Data[j*V : (j+1)*V])
	}
	eu := map[int]analysis.Matrix{} // E_c diag(g1_l), per layer
	var out []analysis.Matrix
	for _, hw := range HeadWeights(m) {
		left, ok := eu[hw.Layer]
		if !ok {
			g1, err := get(fmt.Sprintf("blocks.%d.ln1.weight", hw.Layer))
			if err != nil {
				return nil, err
			}
			left = analysis.Matrix{Rows: V, Cols: D, Data: make([]float64, V*D)}
			for v := range V {
				for j := range D {
					left.Data[v*D+j] = e.Data[v*D+j] * float64(g1[j])
				}
			}
			eu[hw.Layer] = left
		}
		// W_O^h_c: each row less its mean over d-model.
		o := hw.O
		oc := analysis.Matrix{Rows: o.Rows, Cols: o.Cols, Data: append([]float64(nil), o.Data...)}
		for r := range oc.Rows {
			centre(oc.Data[r*D : (r+1)*D])
		}
		out = append(out, analysis.Mul(analysis.Mul(analysis.Mul(left, hw.V), oc), u))
	}
	return out, nil
}

// centre subtracts row's mean from each of its values.
func centre(row []float64) {
	var mean float64
	for _, x := range row {
		mean += x
	}
	mean /= float64(len(row))
	for i := range row {
		row[i] -= mean
	}
}

// RepeatedTokens is n sequences of length T, each a run of T/2 tokens
// drawn from ids 0..vocab-1 repeated to the end: token i of sequence k is
// r_k[i mod T/2], r_k[j] = Mix(k*(T/2) + j) mod vocab. Mix makes them
// reproducible outside Go (tools/causal_ref.py). No position is an answer.
func RepeatedTokens(n, T, vocab int) *tasks.Batch {
	half := T / 2
	b := &tasks.Batch{N: n, T: T, Tokens: make([]int, n*T), Targets: make([]int, n*T)}
	for k := range n {
		for i := range T {
			b.Tokens[k*T+i] = int(Mix(uint64(k*half+i%half)) % uint64(vocab))
			b.Targets[k*T+i] = tasks.NoTarget
		}
	}
	return b
}

// Mix is SplitMix64's output for counter k: (k+1) times the golden ratio
// 0x9e3779b97f4a7c15, then its two xor-shift-multiply rounds and a final
// xor-shift (Steele, Lea and Flood 2014).
func Mix(k uint64) uint64 {
	z := (k + 1) * 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
