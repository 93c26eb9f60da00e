package interop

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"headlab/graph"
)

// hookedConfig is a HookedTransformerConfig as JSON decodes it, numbers
// kept as json.Number (shapeOfTL).
type hookedConfig map[string]any

// str is setting k as text, def when it is null or missing.
func (cfg hookedConfig) str(k, def string) string {
	if v, ok := cfg[k].(string); ok {
		return v
	}
	if cfg[k] == nil {
		return def
	}
	return fmt.Sprint(cfg[k])
}

// num is setting k as a number, def when it is not one.
func (cfg hookedConfig) num(k string, def float64) float64 {
	if n, ok := cfg[k].(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return def
}

// flag is setting k when it is true or false, false otherwise.
func (cfg hookedConfig) flag(k string) bool { b, _ := cfg[k].(bool); return b }

// need is setting k, which must be a positive integer.
func (cfg hookedConfig) need(k string) (int, error) {
	n, ok := cfg[k].(json.Number)
	v, err := n.Int64()
	if !ok || err != nil || v <= 0 || v > math.MaxInt32 {
		return 0, fmt.Errorf("HookedTransformerConfig: %s is %v, want a positive integer", k, cfg[k])
	}
	return int(v), nil
}

// sizes reads the model's sizes into c.
func (cfg hookedConfig) sizes(c *graph.Config) error {
	var err error
	for _, f := range []struct {
		key string
		to  *int
	}{{"n_layers", &c.Layers}, {"d_model", &c.DModel}, {"n_ctx", &c.SeqLen}, {"d_head", new(int)}, {"n_heads", &c.Heads}, {"d_vocab", &c.Vocab}} {
		if *f.to, err = cfg.need(f.key); err != nil {
			return err
		}
	}
	return nil
}

// refuse refuses the first setting headlab's model of sizes c does not
// compute; each refusal names the setting, in the order a reader checks a
// model.
func (cfg hookedConfig) refuse(c graph.Config) error {
	switch {
	case cfg.str("positional_embedding_type", "standard") != "standard":
		return cannot("positional_embedding_type %q (headlab learns absolute positions, \"standard\")", cfg.str("positional_embedding_type", ""))
	case cfg.str("normalization_type", "") != "LN":
		return cannot("normalization_type %s (headlab's blocks are pre-LayerNorm, \"LN\")", cfg.str("normalization_type", "null"))
	case !c.NoMLP && cfg.str("act_fn", "") != "gelu":
		return cannot("act_fn %s (headlab's MLP uses the exact GELU, \"gelu\")", cfg.str("act_fn", "null"))
	case cfg.flag("parallel_attn_mlp"):
		return cannot("parallel_attn_mlp (headlab's MLP reads the residual stream after attention)")
	case cfg.flag("gated_mlp"):
		return cannot("gated_mlp (headlab's MLP is W_out gelu(W_in x))")
	case cfg.flag("final_rms"):
		return cannot("final_rms (headlab's final normalisation is LayerNorm)")
	case cfg.flag("use_local_attn"):
		return cannot("use_local_attn (headlab's heads see every earlier position)")
	case cfg.flag("scale_attn_by_inverse_layer_idx"):
		return cannot("scale_attn_by_inverse_layer_idx (headlab scales scores by 1/sqrt(d_head) alone)")
	case cfg["use_attn_scale"] == false:
		return cannot("use_attn_scale false (headlab scales scores by 1/sqrt(d_head))")
	case cfg.flag("use_qk_norm"):
		return cannot("use_qk_norm (headlab normalises no queries or keys)")
	case cfg.flag("use_normalization_before_and_after"):
		return cannot("use_normalization_before_and_after (headlab's blocks are pre-LayerNorm only)")
	case cfg.flag("post_embedding_ln"):
		return cannot("post_embedding_ln (headlab has no LayerNorm after the embeddings)")
	case cfg.num("eps", 1e-5) != 1e-5:
		return cannot("eps %v (headlab's LayerNorm eps is 1e-5)", cfg.num("eps", 0))
	case cfg.num("d_head", 0)*float64(c.Heads) != float64(c.DModel):
		return cannot("d_head %v x n_heads %d != d_model %d (headlab's heads split d_model)", cfg.num("d_head", 0), c.Heads, c.DModel)
	case cfg["attn_scale"] != nil && cfg.num("attn_scale", -1) != -1 && cfg.num("attn_scale", -1) != math.Sqrt(cfg.num("d_head", 0)):
		return cannot("attn_scale %v (headlab divides scores by sqrt(d_head))", cfg["attn_scale"])
	case cfg["n_key_value_heads"] != nil && cfg.num("n_key_value_heads", 0) != float64(c.Heads):
		return cannot("n_key_value_heads %v (headlab's heads each have their own keys and values)", cfg["n_key_value_heads"])
	case cfg.num("d_vocab_out", -1) != -1 && cfg.num("d_vocab_out", -1) != float64(c.Vocab):
		return cannot("d_vocab_out %v != d_vocab %d (headlab reads out its own vocabulary)", cfg["d_vocab_out"], c.Vocab)
	case cfg.num("output_logits_soft_cap", -1) > 0 || cfg.num("attn_scores_soft_cap", -1) > 0:
		return cannot("soft-capped logits or scores (headlab caps neither)")
	case cfg["num_experts"] != nil:
		return cannot("num_experts (headlab's MLP is one dense layer)")
	}
	return nil
}

// tlKnown are the settings shapeOfTL reads or refuses.
var tlKnown = []string{"n_layers", "d_model", "n_ctx", "d_head", "n_heads", "d_vocab", "d_mlp", "attn_only", "act_fn",
	"positional_embedding_type", "normalization_type", "parallel_attn_mlp", "gated_mlp", "final_rms", "use_local_attn",
	"scale_attn_by_inverse_layer_idx", "use_attn_scale", "use_qk_norm", "use_normalization_before_and_after",
	"post_embedding_ln", "eps", "attn_scale", "n_key_value_heads", "output_logits_soft_cap", "attn_scores_soft_cap",
	"num_experts", "attention_dir", "window_size", "attn_types", "experts_per_token"}

// unknown refuses a setting that is set (not null or false) and that
// headlab neither reads nor ignores.
func (cfg hookedConfig) unknown() error {
	for k, v := range cfg {
		if !slices.Contains(tlKnown, k) && !slices.Contains(tlIgnored, k) && v != nil && v != false {
			return cannot("HookedTransformerConfig field %s = %v, which headlab does not know", k, v)
		}
	}
	return nil
}
