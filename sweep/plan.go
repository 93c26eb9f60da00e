package sweep

import (
	"fmt"

	"headlab/internal/preflight"
	"headlab/train"
)

// Spec is a sweep as its flags give it: a seed list, a grid over a base
// configuration, and a shard (ParseShard's "i/n"; "" takes it from the
// environment, ShardFromEnv, else the whole sweep).
type Spec struct {
	Seeds, Grid, Shard string
	// Base is the base configuration, and BaseErr why it is invalid:
	// the base alone may be, when the grid changes what is wrong with it
	// (--heads 3 with d-model=48,96); Expand checks every result.
	Base    train.Config
	BaseErr error
	// StepsSet says the steps were given (Expand).
	StepsSet bool
	Getenv   func(string) string
}

// Planned is a Spec resolved: this shard's pairs, the shard, the
// sweep's SweepID, and the line that names the shard ("" without one).
type Planned struct {
	Pairs []Pair
	Shard Shard
	ID    int32
	Note  string
}

// Plan resolves s, refusing (preflight.Refusal) a list, grid or shard
// that does not parse and a configuration that is invalid; an invalid
// base without a grid is BaseErr itself.
func (s Spec) Plan() (Planned, error) {
	var p Planned
	seeds, err := ParseSeeds(s.Seeds)
	if err != nil {
		return p, preflight.Refuse(err)
	}
	grid, err := ParseGrid(s.Grid)
	if err != nil {
		return p, preflight.Refuse(err)
	}
	if s.BaseErr != nil && len(grid) == 0 {
		return p, s.BaseErr
	}
	configs, err := Expand(s.Base, grid, s.StepsSet)
	if err != nil {
		return p, preflight.Refuse(err)
	}
	found := s.Shard != ""
	if found {
		p.Shard, err = ParseShard(s.Shard)
	} else {
		p.Shard, found, err = ShardFromEnv(s.Getenv)
	}
	if err != nil {
		return p, preflight.Refuse(err)
	}
	all := Pairs(configs, seeds)
	p.Pairs, p.ID = p.Shard.Select(all), SweepID(all)
	if found {
		p.Note = fmt.Sprintf("sweep: shard %s: %d of %d pairs", p.Shard, len(p.Pairs), len(all))
	}
	return p, nil
}
