package findings

import (
	"fmt"

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
