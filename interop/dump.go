package interop

import (
	"encoding/json"
	"fmt"
	"io"

	"headlab/analysis"
	"headlab/train"
)

// Dump is what a model did on a batch of examples: their tokens and
// targets, every head's attention, and the logits.
type Dump struct {
	Attention *analysis.Attention // tokens and attention [N, L, H, T, T]
	Targets   []int               // [N*T], -1 where a position is not an answer
	Logits    []float32           // [N*T*V]
	Vocab     []string            // token id -> string
}

// Bundle lays d out as tensors: tokens and targets [N, T] (int64),
// attention [N, L, H, T, T] and logits [N, T, V] (float32). The metadata
// holds meta (headlab's, see Metadata), the token strings as a JSON
// [N][T] array, and whether the mask was causal.
func (d *Dump) Bundle(meta map[string]string) (*Bundle, error) {
	a := d.Attention
	V := len(d.Vocab)
	if len(d.Logits) != a.N*a.T*V || len(d.Targets) != a.N*a.T {
		return nil, fmt.Errorf("dump: %d logits and %d targets for %d examples of %d tokens over %d symbols", len(d.Logits), len(d.Targets), a.N, a.T, V)
	}
	toks, tgts := make([]int64, len(a.Tokens)), make([]int64, len(d.Targets))
	strs := make([][]string, a.N)
	for n := range strs {
		strs[n] = make([]string, a.T)
		for i := range a.T {
			t := a.Tokens[n*a.T+i]
			if t >= V {
				return nil, fmt.Errorf("dump: token %d outside the vocabulary of %d", t, V)
			}
			toks[n*a.T+i], strs[n][i] = int64(t), d.Vocab[t]
		}
	}
	for k, t := range d.Targets {
		tgts[k] = int64(max(t, -1))
	}
	text, _ := json.Marshal(strs)
	m := map[string]string{}
	for k, v := range meta {
		m[k] = v
	}
	m["token_strings"] = string(text)
	m["causal"] = fmt.Sprint(a.Causal)
	return &Bundle{Meta: m, Tensors: []Tensor{
		{Name: "tokens", Shape: []int{a.N, a.T}, I64: toks},
		{Name: "targets", Shape: []int{a.N, a.T}, I64: tgts},
		{Name: "attention", Shape: []int{a.N, a.L, a.H, a.T, a.T}, F32: a.Probs},
		{Name: "logits", Shape: []int{a.N, a.T, V}, F32: d.Logits},
	}}, nil
}

// DumpFormats are the formats a dump can be written in. JSON is the
// attention file (analysis.WriteAttention: causal, tokens, attention),
// which headlab score reads; it holds no logits.
var DumpFormats = []Format{Safetensors, NPZ, JSON}

// WriteDump writes d in format f with meta as its metadata.
func WriteDump(w io.Writer, f Format, d *Dump, meta map[string]string) error {
	if f == JSON {
		return analysis.WriteAttention(w, d.Attention)
	}
	b, err := d.Bundle(meta)
	if err != nil {
		return err
	}
	return Write(w, f, b)
}

// Write writes b in format f (safetensors or .npz).
func Write(w io.Writer, f Format, b *Bundle) error {
	switch f {
	case Safetensors:
		return WriteSafetensors(w, b)
	case NPZ:
		return WriteNPZ(w, b)
	}
	return fmt.Errorf("no tensor writer for %s", f)
}

// DumpOf gathers a dump of m's attention and logits on att's examples.
func DumpOf(m *train.Model, att *analysis.Attention, targets []int, logits []float32) *Dump {
	return &Dump{Attention: att, Targets: targets, Logits: logits, Vocab: Vocabulary(m)}
}
