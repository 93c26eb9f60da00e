package interop

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/nlpodyssey/safetensors"

	"headlab/graph"
	"headlab/train"
)

// Import reads weights another tool wrote, in layout f, back into
// headlab's model: the inverse of Export. What headlab's model cannot
// represent is refused, with one line naming it (Unrepresentable).

// Unrepresentable is a model that headlab's transformer cannot compute:
// rotary positions, another normalisation or activation, parallel
// attention, a weight it has no place for.
type Unrepresentable struct{ What string }

func (u *Unrepresentable) Error() string {
	return u.What + ": headlab's model cannot represent it (docs/interop.md, \"Importing\")"
}

func cannot(format string, a ...any) error { return &Unrepresentable{fmt.Sprintf(format, a...)} }

// Imported is a model read from a file another tool wrote.
type Imported struct {
	Shape   graph.Config
	Weights *graph.Weights
	// Train and Result are headlab's own, when the file carries them
	// (headlab_config and headlab_result in its metadata: an export of a
	// headlab checkpoint); nil otherwise.
	Train  *train.Config
	Result *train.Result
}

// ReadSafetensors decodes a safetensors file: its tensors (F32 only:
// headlab computes in float32) and metadata. It returns an error, never
// panics, on any input.
func ReadSafetensors(data []byte) (b *Bundle, err error) {
	defer func() {
		// The safetensors parser is not ours: contain any panic it has.
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("not a safetensors file: %v", r)
		}
	}()
	st, err := safetensors.Deserialize(data)
	if err != nil {
		return nil, fmt.Errorf("not a safetensors file: %v", err)
	}
	_, md, err := safetensors.ReadMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("not a safetensors file: %v", err)
	}
	b = &Bundle{Meta: md.Metadata()}
	for _, nt := range st.Tensors() {
		tv := nt.TensorView
		if tv.DType() != safetensors.F32 {
			return nil, fmt.Errorf("tensor %s is %s: headlab reads F32 weights", nt.Name, tv.DType())
		}
		t := Tensor{Name: nt.Name}
		for _, d := range tv.Shape() {
			t.Shape = append(t.Shape, int(d))
		}
		raw := tv.Data()
		t.F32 = make([]float32, len(raw)/4)
		for i := range t.F32 {
			t.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		b.Tensors = append(b.Tensors, t)
	}
	return b, nil
}

// ReadSafetensorsFile reads the safetensors file at path. Its header is
// read first, and a file whose size is not the one the header describes
// (truncated, or followed by anything) is refused before its data is
// read.
func ReadSafetensorsFile(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return nil, errors.New("not a safetensors file: shorter than its header's length")
	}
	n := binary.LittleEndian.Uint64(head[:])
	if n > 100<<20 || int64(n)+8 > fi.Size() {
		return nil, fmt.Errorf("not a safetensors file: a header of %d bytes in a file of %d", n, fi.Size())
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(f, header); err != nil {
		return nil, err
	}
	var entries map[string]struct {
		Offsets []int64 `json:"data_offsets"`
	}
	if err := json.Unmarshal(header, &entries); err != nil {
		return nil, fmt.Errorf("not a safetensors file: its header: %v", err)
	}
	var end int64
	for _, e := range entries {
		if len(e.Offsets) == 2 {
			end = max(end, e.Offsets[1])
		}
	}
	if want := 8 + int64(n) + end; fi.Size() != want {
		return nil, fmt.Errorf("not a safetensors file: %d bytes, its header describes %d", fi.Size(), want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ReadSafetensors(data)
}

// AddResult puts a checkpoint's result into an export's metadata
// (headlab_result), so that Import gives back the checkpoint whole.
func AddResult(b *Bundle, res *train.Result) {
	if res == nil {
		return
	}
	data, _ := json.Marshal(res)
	b.Meta["headlab_result"] = string(data)
}

// Import reads b, in layout f, as a headlab model. tlConfig is the
// HookedTransformerConfig (JSON) for TransformerLens weights whose
// metadata holds none (FILE.json beside them); nil when there is none.
func Import(f ExportFormat, b *Bundle, tlConfig []byte) (*Imported, error) {
	im, err := headlabMeta(b.Meta)
	if err != nil {
		return nil, err
	}
	switch f {
	case TransformerLens:
		if cfg, ok := b.Meta["hooked_transformer_config"]; ok {
			tlConfig = []byte(cfg)
		}
		if tlConfig == nil {
			return nil, errors.New("no HookedTransformerConfig: none in the file's metadata (hooked_transformer_config) and no FILE.json beside it")
		}
		if im.Shape, err = shapeOfTL(tlConfig); err != nil {
			return nil, err
		}
	case HF:
		if im.Train == nil {
			return nil, errors.New("no headlab_config in the metadata: hf weights do not say how many heads the model has (export them as transformerlens, or with headlab's metadata)")
		}
		if im.Shape, err = hfShape(*im.Train, b); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("import: unknown format %q", f)
	}
	if im.Train != nil {
		// headlab's own config says what the layouts cannot: positions
		// off (W_pos zeros) and tied embeddings (W_U = W_Eᵀ).
		im.Shape.Positions, im.Shape.TiedEmbeddings = im.Train.Positions, im.Train.TiedEmbeddings
		if im.Shape.Arch != im.Train.Arch {
			return nil, fmt.Errorf("the weights' shape %s differs from headlab_config's %+v", im.Shape, im.Train.Arch)
		}
	}
	if err := im.Shape.Validate(); err != nil {
		return nil, fmt.Errorf("model shape: %v", err)
	}
	layout := transformerLens
	if f == HF {
		layout = pytorch
	}
	if im.Weights, err = unlayout(im.Shape, layout, b); err != nil {
		return nil, err
	}
	return im, nil
}

// headlabMeta reads headlab's own metadata, when the file has it.
func headlabMeta(meta map[string]string) (*Imported, error) {
	im := &Imported{}
	if s, ok := meta["headlab_config"]; ok {
		var cfg struct {
			Train train.Config `json:"train"`
			Model graph.Config `json:"model"`
		}
		if err := json.Unmarshal([]byte(s), &cfg); err != nil {
			return nil, fmt.Errorf("metadata headlab_config: %v", err)
		}
		im.Train = &cfg.Train
	}
	if s, ok := meta["headlab_result"]; ok {
		im.Result = &train.Result{}
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(im.Result); err != nil {
			return nil, fmt.Errorf("metadata headlab_result: %v", err)
		}
	}
	return im, nil
}

// tlIgnored are HookedTransformerConfig fields that do not change what
// the model computes (names, devices, initialisation, hooks, tokenizer),
// and the rotary ones, which matter only under rotary positions (refused
// on their own).
var tlIgnored = []string{"model_name", "device", "n_devices", "seed", "tokenizer_name", "tokenizer_prepends_bos",
	"default_prepend_bos", "init_weights", "init_mode", "initializer_range", "dtype", "n_params", "from_checkpoint",
	"checkpoint_index", "checkpoint_label_type", "checkpoint_value", "use_attn_result", "use_split_qkv_input",
	"use_hook_mlp_in", "use_hook_tokens", "use_attn_in", "original_architecture", "ungroup_grouped_query_attention",
	"rotary_dim", "rotary_base", "rotary_adjacent_pairs", "use_NTK_by_parts_rope", "NTK_by_parts_low_freq_factor",
	"NTK_by_parts_high_freq_factor", "NTK_by_parts_factor", "NTK_original_ctx_len", "trust_remote_code",
	"load_in_4bit", "padding_side", "decoder_start_token_id", "tie_word_embeddings", "d_vocab_out"}

// shapeOfTL reads a HookedTransformerConfig as headlab's shape, refusing
// every setting headlab's model does not compute.
func shapeOfTL(data []byte) (graph.Config, error) {
	var c graph.Config
	var raw map[string]any // not hookedConfig: JSON errors name the type
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return c, fmt.Errorf("HookedTransformerConfig: %v", err)
	}
	cfg := hookedConfig(raw)
	if err := cfg.sizes(&c); err != nil {
		return c, err
	}
	c.NoMLP = cfg.flag("attn_only")
	if err := cfg.refuse(c); err != nil {
		return c, err
	}
	switch dir := cfg.str("attention_dir", "causal"); dir {
	case "causal":
		c.Causal = true
	case "bidirectional":
	default:
		return c, fmt.Errorf("HookedTransformerConfig: attention_dir %q, want causal or bidirectional", dir)
	}
	c.Positions = true
	if !c.NoMLP {
		var err error
		if c.DFF, err = cfg.need("d_mlp"); err != nil {
			return c, err
		}
	}
	return c, cfg.unknown()
}

// hfShape is the shape of hf weights: headlab_config's architecture, with
// the vocabulary and length of the weights themselves.
func hfShape(tc train.Config, b *Bundle) (graph.Config, error) {
	c := graph.Config{Arch: tc.Arch}
	for _, d := range []struct {
		name string
		to   *int
	}{{"tok_emb.weight", &c.Vocab}, {"pos_emb.weight", &c.SeqLen}} {
		t, ok := b.Get(d.name)
		if !ok || len(t.Shape) != 2 {
			return c, fmt.Errorf("tensor %s is missing", d.name)
		}
		*d.to = t.Shape[0]
	}
	return c, nil
}

// unlayout inverts layout (transformerLens or pytorch) for shape c: the
// layout is applied to two models whose weights name their own places
// (parameter element k, counted from 1, is k/4096 in one and k%4096+1 in
// the other: both exact in float32), so that each value read goes back
// to the place it came from, exactly, and whatever the layout repeats
// (tied embeddings) must agree and whatever it fills in (W_pos zeros
// without positions) must be zero. Every tensor of b must be one the
// layout writes (TransformerLens's buffers, *.mask and *.IGNORE, aside),
// with its shape.
func unlayout(c graph.Config, layout func(graph.Config, *graph.Weights) []Tensor, b *Bundle) (*graph.Weights, error) {
	const base = 4096
	w := graph.NewWeights(c)
	hi, lo := graph.NewWeights(c), graph.NewWeights(c)
	var flat []*float32 // flat[k-1] is parameter element k
	for i, p := range w.Params {
		for j := range p.Data {
			flat = append(flat, &p.Data[j])
			k := len(flat)
			hi.Params[i].Data[j], lo.Params[i].Data[j] = float32(k/base), float32(k%base+1)
		}
	}
	seen := make([]bool, len(flat))
	want, wantLo := layout(c, hi), layout(c, lo)
	for t, wt := range want {
		got, ok := b.Get(wt.Name)
		if !ok {
			return nil, fmt.Errorf("tensor %s is missing", wt.Name)
		}
		if !slices.Equal(got.Shape, wt.Shape) || len(got.F32) != len(wt.F32) {
			return nil, fmt.Errorf("tensor %s has shape %v, want %v", wt.Name, got.Shape, wt.Shape)
		}
		for i, v := range got.F32 {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("tensor %s holds %v", wt.Name, v)
			}
			l := int(wantLo[t].F32[i])
			if l == 0 { // filled in by the layout, no parameter's
				if v != 0 {
					return nil, cannot("tensor %s is not zero where headlab_config says the model has no such weights", wt.Name)
				}
				continue
			}
			k := int(wt.F32[i])*base + l - 1 - 1
			if seen[k] && *flat[k] != v {
				return nil, cannot("tensor %s differs from the weights it repeats (tied embeddings: W_U must be W_E transposed)", wt.Name)
			}
			*flat[k], seen[k] = v, true
		}
	}
	if i := slices.Index(seen, false); i >= 0 {
		return nil, fmt.Errorf("import: the layout leaves parameter element %d out", i)
	}
	for _, t := range b.Tensors {
		if strings.HasSuffix(t.Name, ".mask") || strings.HasSuffix(t.Name, ".IGNORE") {
			continue // TransformerLens's buffers, which it builds itself
		}
		if !slices.ContainsFunc(want, func(x Tensor) bool { return x.Name == t.Name }) {
			return nil, cannot("tensor %s (headlab's model has no such weight)", t.Name)
		}
	}
	return w, nil
}
