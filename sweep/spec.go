// Package sweep trains many (configuration, seed) pairs and keeps what each
// run found: the configurations of a grid crossed with a list of seeds,
// cut into deterministic shards, run by a pool of workers, stored one row
// per finished run in SQLite (docs/sweeps.md has the schema), merged across
// shards and summarised per configuration (spread over seeds, modes, the
// fraction of seeds that form the induction circuit).
//
// The package never chooses a backend: the caller hands the runner a
// function that makes one per worker.
package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"headlab/tasks"
	"headlab/train"
)

// maxSeeds bounds a seed list (each range and all of them together).
const maxSeeds = 1 << 20

// ParseSeeds reads a seed list such as "1-64" or "1,3,10-12" in the order
// given. A seed listed twice is an error: it would name the same run twice.
func ParseSeeds(s string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("seeds %q: empty item", s)
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seeds %q: %q is not a seed or a range like 1-64", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("seeds %q: %q is not a range like 1-64", s, part)
			}
		}
		if uint64(len(out))+b-a >= maxSeeds {
			return nil, fmt.Errorf("seeds %q: more than %d seeds", s, maxSeeds)
		}
		for x := a; ; x++ {
			if seen[x] {
				return nil, fmt.Errorf("seeds %q: seed %d is listed twice", s, x)
			}
			seen[x] = true
			out = append(out, x)
			if x == b {
				break
			}
		}
	}
	return out, nil
}

// Axis is one key of a grid and the values it takes, as written.
type Axis struct {
	Key    string
	Values []string
}

// GridKeys are the configuration fields a grid may vary, named like the
// train flags. positions, causal and no-mlp take on/off.
var GridKeys = []string{"task", "positions", "causal", "layers", "heads", "d-model", "d-ff", "lr", "batch", "steps",
	"loss", "train-examples", "weight-decay", "no-mlp", "seq-len", "vocab"}

// ParseGrid reads a grid such as "positions=on,off;layers=1,2". Keys are
// GridKeys (d_model and d_ff are accepted for d-model and d-ff); every
// value is checked here so that a typo fails before any training starts.
func ParseGrid(s string) ([]Axis, error) {
	var axes []Axis
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, vs, ok := strings.Cut(part, "=")
		k = strings.ReplaceAll(strings.TrimSpace(k), "_", "-")
		if !ok {
			return nil, fmt.Errorf("grid %q: %q is not key=value,value", s, part)
		}
		if k == "seed" || k == "seeds" {
			return nil, fmt.Errorf("grid %q: seeds are not a grid key, use --seeds", s)
		}
		if !slices.Contains(GridKeys, k) {
			return nil, fmt.Errorf("grid %q: unknown key %q (want one of %s)", s, k, strings.Join(GridKeys, ", "))
		}
		if slices.ContainsFunc(axes, func(a Axis) bool { return a.Key == k }) {
			return nil, fmt.Errorf("grid %q: key %q given twice", s, k)
		}
		ax := Axis{Key: k}
		for _, v := range strings.Split(vs, ",") {
			v = strings.TrimSpace(v)
			var probe train.Config
			if err := set(&probe, k, v); err != nil {
				return nil, fmt.Errorf("grid %q: %v", s, err)
			}
			ax.Values = append(ax.Values, v)
		}
		axes = append(axes, ax)
	}
	return axes, nil
}

// set writes one grid value into c.
func set(c *train.Config, key, v string) error {
	bad := func() error { return fmt.Errorf("%s=%q is not a valid value", key, v) }
	atoi := func(p *int) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return bad()
		}
		*p = n
		return nil
	}
	switch key {
	case "task":
		if v == "" {
			return bad()
		}
		c.Task, c.Data = v, "" // Expand hashes a folder's data
	case "positions", "causal", "no-mlp":
		var b bool
		switch strings.ToLower(v) {
		case "on", "true", "yes", "1":
			b = true
		case "off", "false", "no", "0":
		default:
			return bad()
		}
		switch key {
		case "positions":
			c.Positions = b
		case "causal":
			c.Causal = b
		default:
			c.NoMLP = b
		}
	case "layers":
		return atoi(&c.Layers)
	case "heads":
		return atoi(&c.Heads)
	case "d-model":
		return atoi(&c.DModel)
	case "d-ff":
		return atoi(&c.DFF)
	case "batch":
		return atoi(&c.Batch)
	case "steps":
		return atoi(&c.Steps)
	case "lr", "weight-decay":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad()
		}
		if key == "lr" {
			c.LR = f
		} else {
			c.WeightDecay = f
		}
	case "loss":
		if err := tasks.CheckLoss(v); err != nil {
			return err
		}
		c.Loss = v
	case "train-examples":
		return atoi(&c.TrainExamples)
	case "seq-len":
		return atoi(&c.SeqLen)
	case "vocab":
		return atoi(&c.Vocab)
	default:
		return fmt.Errorf("unknown grid key %q", key)
	}
	return nil
}

// Expand crosses base with every combination of the grid's values, the
// first axis varying slowest. When stepsSet is false and the grid has no
// steps axis, each configuration trains for its own task's default steps,
// as train does without --steps. Every configuration is validated;
// configurations that come out equal are kept once.
func Expand(base train.Config, grid []Axis, stepsSet bool) ([]train.Config, error) {
	hasSteps := slices.ContainsFunc(grid, func(a Axis) bool { return a.Key == "steps" })
	configs := []train.Config{base}
	for _, ax := range grid {
		var next []train.Config
		for _, c := range configs {
			for _, v := range ax.Values {
				d := c
				if err := set(&d, ax.Key, v); err != nil {
					return nil, err
				}
				next = append(next, d)
			}
		}
		configs = next
	}
	var out []train.Config
	seen := map[string]bool{}
	for _, c := range configs {
		c.Seed = 0
		if !stepsSet && !hasSteps {
			c.Steps = train.Defaults(c.Task).Steps
		}
		c = c.Sized() // sizes left 0 are the task's own
		if c.NoMLP {
			c.DFF = 0 // one attention-only model, whatever d-ff says
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("configuration %s: %v", Key(c), err)
		}
		if k := Key(c); !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// Key names a configuration, seed left out: the column config_key, which
// with the seed identifies a run. Its format is part of the database
// schema: changing it would make resumed sweeps rerun everything.
func Key(c train.Config) string {
	task := c.Task
	if tasks.IsFile(task) {
		// the data, not its path: two copies of it are one configuration
		task = tasks.FilePrefix + c.Sized().Data
	}
	k := fmt.Sprintf("task=%s layers=%d heads=%d d_model=%d d_ff=%d positions=%s causal=%s steps=%d batch=%d lr=%s",
		task, c.Layers, c.Heads, c.DModel, c.DFF, OnOff(c.Positions), OnOff(c.Causal), c.Steps, c.Batch,
		strconv.FormatFloat(c.LR, 'g', -1, 64))
	// Each only when it differs from what every run had before it was a
	// choice, so that the keys of every earlier sweep stay as they were
	// (their runs trained on the answers, on a fresh stream, without
	// weight decay) and a run of another objective never takes their key.
	if c.TiedEmbeddings {
		k += " tied_embeddings=on"
	}
	if c.NoMLP {
		k += " no_mlp=on"
	}
	if c.Loss != tasks.Answers {
		k += " loss=" + c.Loss
	}
	if c.TrainExamples > 0 {
		k += fmt.Sprintf(" train_examples=%d", c.TrainExamples)
	}
	if c.WeightDecay != 0 {
		k += " weight_decay=" + strconv.FormatFloat(c.WeightDecay, 'g', -1, 64)
	}
	if s, d := c.Sized(), (train.Config{Task: c.Task}).Sized(); s.SeqLen != d.SeqLen || s.Vocab != d.Vocab {
		k += fmt.Sprintf(" seq_len=%d vocab=%d", s.SeqLen, s.Vocab)
	}
	return k
}

// Pair is one run of a sweep: a configuration with its seed set.
type Pair struct {
	// Index is the pair's place in the sweep's stable order, the order
	// shards are cut from.
	Index  int
	Key    string
	Config train.Config
}

// Pairs crosses configurations with seeds, configuration-major: all seeds
// of the first configuration, then of the second, and so on.
func Pairs(configs []train.Config, seeds []uint64) []Pair {
	out := make([]Pair, 0, len(configs)*len(seeds))
	for _, c := range configs {
		for _, s := range seeds {
			c.Seed = s
			out = append(out, Pair{Index: len(out), Key: Key(c), Config: c})
		}
	}
	return out
}
