package sweep

import (
	"os"
	"runtime"

	"github.com/spf13/pflag"

	"headlab/inspect"
	"headlab/internal/preflight"
	"headlab/train"
)

// Flags are the sweep command's own flags (AddFlags), resolved into a
// sweep into a database by Resolve; the train flags give its base
// configuration.
type Flags struct {
	seeds, grid, db, shard, measure string
	workers, group                  int
	retry                           bool
}

// AddFlags declares the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.seeds, "seeds", "1", "seeds to train, e.g. 1-64 or 1,2,5-8")
	fs.StringVar(&f.grid, "grid", "", "configurations to cross, e.g. 'positions=on,off;layers=1,2'")
	fs.StringVar(&f.db, "db", "", "SQLite database to write (created if missing; resumed if not)")
	fs.StringVar(&f.shard, "shard", "", "run only shard i of n, e.g. 0/4 (default: from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID, else all)")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "groups in flight at once, each computing on one core (default: all CPUs on cpu, 1 on gl)")
	fs.IntVar(&f.group, "group", 0, "pairs of one configuration trained together (default: 1 on cpu; on gl as many as fit, at most 1024)")
	fs.BoolVar(&f.retry, "retry-failed", false, "rerun pairs recorded as failed instead of skipping them")
	fs.StringVar(&f.measure, "measure", "all", "what every run measures beyond its ablation table: all, none, or a list of "+MeasureNames())
}

// Resolve is the flags' sweep: this shard's pairs of the grid over base
// (baseErr: why base is invalid, Spec's BaseErr), each analysed with
// method, into the database, whose file must be new or a headlab sweep
// database; and the line naming the shard ("" without one). Every
// field but the device's is set. Bad input is refused
// (preflight.Refusal) before any work; changed says which flags were
// given (an unset --workers or --group is left to the layout).
func (f *Flags) Resolve(base train.Config, baseErr error, method inspect.Ablation, changed func(string) bool) (DB, string, error) {
	var d DB
	if f.workers < 1 {
		return d, "", preflight.Refusef("--workers must be at least 1, got %d", f.workers)
	}
	if changed("workers") {
		d.Ask.Workers = f.workers
	}
	if changed("group") {
		if f.group < 1 {
			return d, "", preflight.Refusef("--group must be at least 1, got %d", f.group)
		}
		d.Ask.Group = f.group
	}
	measures, err := ParseMeasures(f.measure)
	if err != nil {
		return d, "", preflight.Refuse(err)
	}
	d.Analysis = Analysis{Ablation: method, Measure: measures}
	plan, err := Spec{Seeds: f.seeds, Grid: f.grid, Shard: f.shard, Base: base, BaseErr: baseErr,
		StepsSet: changed("steps"), Getenv: os.Getenv}.Plan()
	if err != nil {
		return d, "", err
	}
	d.Pairs, d.Shard, d.SweepID = plan.Pairs, plan.Shard, plan.ID
	if f.db == "" {
		return d, "", preflight.Refusef("--db FILE is required")
	}
	if err := preflight.Outputs(preflight.Database("db", f.db)); err != nil {
		return d, "", err
	}
	if err := CheckIntact(f.db); err != nil {
		return d, "", preflight.Refuse(err)
	}
	d.Path, d.RetryFailed = f.db, f.retry
	return d, plan.Note, nil
}
