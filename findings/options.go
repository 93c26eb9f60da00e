package findings

import (
	"fmt"
	"runtime"

	"github.com/spf13/pflag"

	"headlab/tasks"
)

// Options are reproduce's settings as its flags give them; Validate
// checks them before any work, and Plan turns them into the runs.
type Options struct {
	Seeds, Small, Atlas int // --seeds, --small-seeds, --atlas-seeds
	Scale               float64
	Workers             int
	Quick, Regime       bool
	Loss                string
}

// AddFlags declares the flags of o on fs, with their defaults: the
// published setting.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Seeds, "seeds", 32, "seeds of the default induction model for the circuit fraction")
	fs.IntVar(&o.Small, "small-seeds", 8, "seeds of every other comparison (reverse, majority, one layer, no mask)")
	fs.IntVar(&o.Atlas, "atlas-seeds", DefaultAtlasSeeds, "seeds of the default induction model grouped by circuit in the atlas (0: no atlas)")
	fs.Float64Var(&o.Scale, "steps-scale", 1, "multiply every step count by this (1 = the published setting; less for a quick check)")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "runs in flight at once")
	fs.BoolVar(&o.Quick, "quick", false, "a small check of the machinery: --seeds 4 --small-seeds 2 --steps-scale 0.02")
	fs.BoolVar(&o.Regime, "regime", false, "also sweep the regime grid (the loss, d-model, lr, batch, steps around the default; a finite training set; weight decay) and name the cell closest to the published model")
	fs.StringVar(&o.Loss, "loss", tasks.NextToken, "training loss of every run (the regime grid runs both): next-token or answers")
}

// quickFlags are the flags --quick sets, each named as on the command line.
var quickFlags = []string{"seeds", "small-seeds", "atlas-seeds", "steps-scale"}

// Validate refuses a setting out of range, in one line naming its flag,
// and with Quick sets the small check's counts; changed says which flags
// were given (--quick refuses any flag it sets).
func (o *Options) Validate(changed func(name string) bool) error {
	switch {
	case o.Seeds < 1:
		return fmt.Errorf("--seeds must be at least 1, got %d", o.Seeds)
	case o.Small < 1:
		return fmt.Errorf("--small-seeds must be at least 1, got %d", o.Small)
	case o.Atlas < 0:
		return fmt.Errorf("--atlas-seeds must be at least 0, got %d", o.Atlas)
	case !(o.Scale > 0 && o.Scale <= 10):
		return fmt.Errorf("--steps-scale must be in (0, 10], got %g", o.Scale)
	case o.Workers < 1:
		return fmt.Errorf("--workers must be at least 1, got %d", o.Workers)
	}
	if err := tasks.CheckLoss(o.Loss); err != nil {
		return err
	}
	if !o.Quick {
		return nil
	}
	for _, f := range quickFlags {
		if changed(f) {
			return fmt.Errorf("--quick sets --%s; give one or the other", f)
		}
	}
	o.Seeds, o.Small, o.Atlas, o.Scale = 4, 2, 4, 0.02
	return nil
}

// Plan is the runs the options ask for.
func (o Options) Plan() Plan {
	return NewPlan(o.Seeds, o.Small, o.Scale, o.Regime, o.Loss).WithAtlas(o.Atlas)
}
