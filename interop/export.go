package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"headlab/graph"
	"headlab/tasks"
	"headlab/train"
)

// Provenance is what every file headlab exports says about where it came
// from.
type Provenance struct {
	Version  string // headlab's module version
	Revision string // the VCS revision it was built from, or ""
}

// Metadata is headlab's own metadata for a file made from m: the config
// (the training flags and the model's shape, as config.json holds them),
// the task's vocabulary as strings, and the provenance. Every value is a
// string, as safetensors metadata must be; lists and objects are JSON.
func Metadata(m *train.Model, p Provenance) map[string]string {
	cfg, _ := json.Marshal(struct {
		Train train.Config `json:"train"`
		Model graph.Config `json:"model"`
	}{m.Train, m.Shape})
	vocab, _ := json.Marshal(Vocabulary(m))
	return map[string]string{
		"format":           "pt", // what safetensors' PyTorch loaders look for
		"headlab_config":   string(cfg),
		"headlab_vocab":    string(vocab),
		"headlab_version":  p.Version,
		"headlab_revision": p.Revision,
	}
}

// Vocabulary is the model's tokens as pictures and tables show them.
func Vocabulary(m *train.Model) []string {
	v := make([]string, m.Shape.Vocab)
	for i := range v {
		v[i] = tasks.TokenName(m.Task, i)
	}
	return v
}

// TLConfig holds the HookedTransformerConfig fields that describe a
// headlab model: HookedTransformerConfig(**cfg) builds the model the
// TransformerLens export loads into.
type TLConfig struct {
	DModel                  int     `json:"d_model"`
	DHead                   int     `json:"d_head"`
	NHeads                  int     `json:"n_heads"`
	DMLP                    int     `json:"d_mlp,omitempty"` // absent (None) for an attention-only model, whose d-ff is 0
	NLayers                 int     `json:"n_layers"`
	NCtx                    int     `json:"n_ctx"`
	DVocab                  int     `json:"d_vocab"`
	ActFn                   string  `json:"act_fn"`
	NormalizationType       string  `json:"normalization_type"`
	Eps                     float64 `json:"eps"`
	PositionalEmbeddingType string  `json:"positional_embedding_type"`
	AttentionDir            string  `json:"attention_dir"`
	AttnOnly                bool    `json:"attn_only,omitempty"`
}

// TransformerLensConfig is c's HookedTransformerConfig. headlab's GELU is
// the exact one (torch's F.gelu, TransformerLens's "gelu"), its LayerNorm
// eps 1e-5; a model without positions keeps the "standard" type and
// exports zeros for W_pos; an attention-only model (--no-mlp) is
// TransformerLens's attn_only, with no d_mlp.
func TransformerLensConfig(c graph.Config) TLConfig {
	dir := "causal"
	if !c.Causal {
		dir = "bidirectional"
	}
	return TLConfig{DModel: c.DModel, DHead: c.HeadDim(), NHeads: c.Heads, DMLP: c.DFF, NLayers: c.Layers,
		NCtx: c.SeqLen, DVocab: c.Vocab, ActFn: "gelu", NormalizationType: "LN", Eps: 1e-5,
		PositionalEmbeddingType: "standard", AttentionDir: dir, AttnOnly: c.NoMLP}
}

// TLConfigPath is where the HookedTransformerConfig of weights written to
// out goes: beside them, out with its extension replaced by ".json".
func TLConfigPath(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".json"
}

// WriteTLConfig writes TransformerLensConfig(c) as indented JSON, the file
// that HookedTransformerConfig(**json.load(f)) reads.
func WriteTLConfig(w io.Writer, c graph.Config) error {
	data, err := json.MarshalIndent(TransformerLensConfig(c), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ExportFormat is a layout of a model's weights.
type ExportFormat string

// The export layouts, as --format names them.
const (
	TransformerLens ExportFormat = "transformerlens"
	HF              ExportFormat = "hf"
)

// ExportFormats lists the layouts Export knows.
var ExportFormats = []ExportFormat{TransformerLens, HF}

// ParseExportFormat reads a --format value.
func ParseExportFormat(s string) (ExportFormat, error) {
	for _, f := range ExportFormats {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	names := make([]string, len(ExportFormats))
	for i, f := range ExportFormats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q: want %s", s, strings.Join(names, " or "))
}

// Export lays m's weights out in format f, with headlab's metadata (and,
// for TransformerLens, the HookedTransformerConfig as JSON under
// "hooked_transformer_config").
func Export(m *train.Model, f ExportFormat, p Provenance) (*Bundle, error) {
	b := &Bundle{Meta: Metadata(m, p)}
	switch f {
	case TransformerLens:
		b.Tensors = transformerLens(m.Shape, m.Weights)
		cfg, _ := json.Marshal(TransformerLensConfig(m.Shape))
		b.Meta["hooked_transformer_config"] = string(cfg)
	case HF:
		b.Tensors = pytorch(m.Shape, m.Weights)
	default:
		return nil, fmt.Errorf("export: unknown format %q", f)
	}
	return b, nil
}

// transformerLens renames and reshapes headlab's [in, out] weights into
// HookedTransformer's state dict. headlab's head h owns columns
// h*Dh..(h+1)*Dh-1 of q, k, v and rows h*Dh.. of the output projection,
// so W_Q[h][m][d] = Wq[m][h*Dh+d] and W_O[h][d][m] = Wout[h*Dh+d][m]; the
// MLP, the embeddings and the unembedding are [in, out] in both.
func transformerLens(c graph.Config, w *graph.Weights) []Tensor {
	D, H, Dh := c.DModel, c.Heads, c.HeadDim()
	get := func(name string) []float32 { return w.Get(name).Data }
	same := func(to, from string, shape ...int) Tensor { return Tensor{Name: to, Shape: shape, F32: get(from)} }
	pos := make([]float32, c.SeqLen*D)
	if c.Positions {
		pos = get("pos_emb")
	}
	ts := []Tensor{same("embed.W_E", "tok_emb", c.Vocab, D), {Name: "pos_embed.W_pos", Shape: []int{c.SeqLen, D}, F32: pos}}
	for l := range c.Layers {
		in, out := fmt.Sprintf("blocks.%d.", l), fmt.Sprintf("blocks.%d.", l) // the same prefix in both
		ts = append(ts, same(out+"ln1.w", in+"ln1.weight", D), same(out+"ln1.b", in+"ln1.bias", D))
		for _, p := range []string{"q", "k", "v"} {
			W, bias := get(in+"attn."+p+".weight"), get(in+"attn."+p+".bias")
			heads := make([]float32, H*D*Dh)
			for h := range H {
				for m := range D {
					copy(heads[(h*D+m)*Dh:(h*D+m+1)*Dh], W[m*D+h*Dh:m*D+(h+1)*Dh])
				}
			}
			P := strings.ToUpper(p)
			ts = append(ts, Tensor{Name: out + "attn.W_" + P, Shape: []int{H, D, Dh}, F32: heads},
				Tensor{Name: out + "attn.b_" + P, Shape: []int{H, Dh}, F32: bias})
		}
		// Wout's rows are already head-major: [H*Dh, D] is [H][Dh][D].
		ts = append(ts, same(out+"attn.W_O", in+"attn.out.weight", H, Dh, D), same(out+"attn.b_O", in+"attn.out.bias", D))
		if !c.NoMLP {
			ts = append(ts, same(out+"ln2.w", in+"ln2.weight", D), same(out+"ln2.b", in+"ln2.bias", D),
				same(out+"mlp.W_in", in+"mlp.fc1.weight", D, c.DFF), same(out+"mlp.b_in", in+"mlp.fc1.bias", c.DFF),
				same(out+"mlp.W_out", in+"mlp.fc2.weight", c.DFF, D), same(out+"mlp.b_out", in+"mlp.fc2.bias", D))
		}
	}
	return append(ts, same("ln_final.w", "ln_f.weight", D), same("ln_final.b", "ln_f.bias", D),
		Tensor{Name: "unembed.W_U", Shape: []int{D, c.Vocab}, F32: unembedding(c, w)}, same("unembed.b_U", "unembed.bias", c.Vocab))
}

// unembedding is W_U, [D, V]: unembed.weight, or with tied embeddings
// tok_emb transposed.
func unembedding(c graph.Config, w *graph.Weights) []float32 {
	if !c.TiedEmbeddings {
		return w.Get("unembed.weight").Data
	}
	return transpose(w.Get("tok_emb").Data, c.Vocab, c.DModel)
}

// transpose is the [cols, rows] transpose of a row-major [rows, cols] matrix.
func transpose(a []float32, rows, cols int) []float32 {
	t := make([]float32, len(a))
	for i := range rows {
		for j := range cols {
			t[j*rows+i] = a[i*cols+j]
		}
	}
	return t
}

// pytorch gives the weights PyTorch's usual names and layouts: nn.Linear
// weights [out, in] (headlab's transposed), nn.Embedding and nn.LayerNorm
// as they are. The module these names fit is in docs/interop.md.
func pytorch(c graph.Config, w *graph.Weights) []Tensor {
	D := c.DModel
	same := func(to, from string) Tensor { p := w.Get(from); return Tensor{Name: to, Shape: p.Shape, F32: p.Data} }
	linear := func(to, from string) []Tensor {
		p := w.Get(from + ".weight")
		in, out := p.Shape[0], p.Shape[1]
		return []Tensor{{Name: to + ".weight", Shape: []int{out, in}, F32: transpose(p.Data, in, out)}, same(to+".bias", from+".bias")}
	}
	ts := []Tensor{same("tok_emb.weight", "tok_emb")}
	if c.Positions {
		ts = append(ts, same("pos_emb.weight", "pos_emb"))
	} else {
		ts = append(ts, Tensor{Name: "pos_emb.weight", Shape: []int{c.SeqLen, D}, F32: make([]float32, c.SeqLen*D)})
	}
	for l := range c.Layers {
		b := fmt.Sprintf("blocks.%d.", l)
		ts = append(ts, same(b+"ln1.weight", b+"ln1.weight"), same(b+"ln1.bias", b+"ln1.bias"))
		ts = append(ts, linear(b+"attn.q_proj", b+"attn.q")...)
		ts = append(ts, linear(b+"attn.k_proj", b+"attn.k")...)
		ts = append(ts, linear(b+"attn.v_proj", b+"attn.v")...)
		ts = append(ts, linear(b+"attn.out_proj", b+"attn.out")...)
		if !c.NoMLP {
			ts = append(ts, same(b+"ln2.weight", b+"ln2.weight"), same(b+"ln2.bias", b+"ln2.bias"))
			ts = append(ts, linear(b+"mlp.fc1", b+"mlp.fc1")...)
			ts = append(ts, linear(b+"mlp.fc2", b+"mlp.fc2")...)
		}
	}
	ts = append(ts, same("ln_f.weight", "ln_f.weight"), same("ln_f.bias", "ln_f.bias"))
	// nn.Linear's weight is [out, in]: tok_emb itself when tied.
	return append(ts, Tensor{Name: "unembed.weight", Shape: []int{c.Vocab, D}, F32: transpose(unembedding(c, w), D, c.Vocab)},
		same("unembed.bias", "unembed.bias"))
}
