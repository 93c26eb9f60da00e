package train

import (
	"strings"

	"github.com/spf13/pflag"

	"headlab/tasks"
)

// Flags are the command-line flags that define a training run, in the
// Kubernetes AddFlags style: train, sweep, view and bench vs-pytorch
// register them, and Config resolves them.
type Flags struct {
	cfg         Config
	noPositions bool
	noCausal    bool
}

// AddFlags registers the flags on fs, in the order --help shows them.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	d := Defaults("induction")
	fs.StringVar(&f.cfg.Task, "task", "induction", "task: "+strings.Join(tasks.Names(), ", "))
	fs.IntVar(&f.cfg.SeqLen, "seq-len", 0, "sequence length (default: the task's, induction 16; docs/tasks.md says which each task takes)")
	fs.IntVar(&f.cfg.Vocab, "vocab", 0, "vocabulary size (default: the task's, induction 16)")
	fs.Uint64Var(&f.cfg.Seed, "seed", d.Seed, "random seed for weights and data")
	fs.IntVar(&f.cfg.Steps, "steps", 0, "training steps (default: the task's plateau, induction 2500)")
	fs.IntVar(&f.cfg.Batch, "batch", d.Batch, "sequences per step")
	fs.Float64Var(&f.cfg.LR, "lr", d.LR, "Adam learning rate")
	fs.StringVar(&f.cfg.Loss, "loss", d.Loss, "training loss: next-token (every position: the answer where there is one, else the next token) or answers (the answer positions alone)")
	fs.IntVar(&f.cfg.TrainExamples, "train-examples", 0, "train on a finite set of this many sequences, drawn once and sampled with replacement (0: a fresh stream)")
	fs.Float64Var(&f.cfg.WeightDecay, "weight-decay", 0, "decoupled (AdamW) weight decay")
	fs.IntVar(&f.cfg.Layers, "layers", d.Layers, "transformer blocks")
	fs.IntVar(&f.cfg.Heads, "heads", d.Heads, "attention heads per block (must divide --d-model)")
	fs.IntVar(&f.cfg.DModel, "d-model", d.DModel, "residual stream width")
	fs.IntVar(&f.cfg.DFF, "d-ff", d.DFF, "feed-forward hidden width")
	fs.BoolVar(&f.noPositions, "no-positions", false, "switch positional embeddings off")
	fs.BoolVar(&f.noCausal, "no-causal", false, "switch the causal mask off")
	fs.BoolVar(&f.cfg.TiedEmbeddings, "tied-embeddings", false, "unembed with the token embedding transposed (no separate unembedding matrix)")
	fs.BoolVar(&f.cfg.NoMLP, "no-mlp", false, "attention-only: no MLP (and no LayerNorm before it) in any block")
}

// Config resolves the flags into a validated configuration; changed says
// which flags were given. Sizes not given stay 0, the task's own
// (Config.Sized writes them in), so that a sweep's grid over tasks gives
// each its own.
func (f *Flags) Config(changed func(name string) bool) (Config, error) {
	c := f.cfg
	c.Positions, c.Causal = !f.noPositions, !f.noCausal
	if !changed("steps") {
		c.Steps = Defaults(c.Task).Steps
	}
	if c.NoMLP && !changed("d-ff") {
		c.DFF = 0 // an attention-only model has no MLP to size
	}
	return c, c.Validate()
}
