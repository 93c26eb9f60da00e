package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"headlab/internal/interrupt"
	"headlab/kernels"
	"headlab/sweep"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newSweepCmd(e, nil) })
}

// sweepOptions are sweep's flags, and what check makes of them.
type sweepOptions struct {
	model          trainFlags
	backend        backendFlag
	seeds, grid    string
	db, shard      string
	workers, group int
	retry, quiet   bool
	ablation       ablationFlag
	measure        string

	pairs []sweep.Pair
	// shardOf is the shard pairs are of (sweep.All without one), and
	// shardNote the line that says so ("" without one).
	shardOf   sweep.Shard
	shardNote string
	sweepID   int32 // sweep.SweepID of every pair, marked in a shard's database
	ask       sweep.Ask
	analysis  sweep.Analysis
}

func newSweepCmd(e *env, runF func(*sweepOptions) error) *cobra.Command {
	o := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep --seeds 1-64 --db FILE",
		Short: "Train every (configuration, seed) pair of a grid and store each run in SQLite",
		Long: `Trains every pair of a grid of configurations and a list of seeds and
stores each run in a SQLite database as soon as its group finishes: accuracy,
loss, time, every head's label and scores, and single-head and joint ablations
(docs/sweeps.md has the schema). --ablation says how the ablation table and so
the circuit rule switch heads off (zero, the default, mean or resample);
--measure chooses what else every run stores (docs/causal.md): mean, resample
(each head off alone by that method), attribution (each head's direct logit
attribution, the logit-lens layer), circuit (each head's OV copying and
prefix-matching scores, the ICL score), signature (the circuit as edges by
path patching and its signature, which headlab atlas groups: docs/circuits.md;
a run stored without one, measured otherwise alike, is trained again, with the
same bits, and replaced);
all (the default), none, or a list. On the CPU backend each worker trains one
pair at a time on one core; on --backend gl the pairs of one configuration
train together, --group of them in lockstep on the GPU (default: as many as
fit, at most 1024). Rerunning the same command resumes: finished pairs are
skipped. Ctrl-C stops new runs and waits for those in flight (a second Ctrl-C
abandons them). Several sweeps may share one database on a local disk: each
claims the pairs it trains, and skips those another claimed or stored. The
file must be new (absent or empty) or a headlab sweep database; anything else
is refused, untouched.

The train flags set the base configuration; --grid varies it, e.g.
--grid 'positions=on,off;layers=1,2' (keys: ` + strings.Join(sweep.GridKeys, ", ") + `).
--shard i/n runs every n-th pair; without it a Kubernetes Indexed Job
(JOB_COMPLETION_INDEX, JOB_COMPLETIONS) or a Slurm array
(SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) picks the shard.`,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, runSweepCmd),
	}
	o.model.register(cmd)
	fs := cmd.Flags()
	// --seeds replaces --seed; hidden rather than removed so that
	// trainFlags stays one shared definition.
	_ = fs.MarkHidden("seed")
	fs.StringVar(&o.seeds, "seeds", "1", "seeds to train, e.g. 1-64 or 1,2,5-8")
	fs.StringVar(&o.grid, "grid", "", "configurations to cross, e.g. 'positions=on,off;layers=1,2'")
	fs.StringVar(&o.db, "db", "", "SQLite database to write (created if missing; resumed if not)")
	fs.StringVar(&o.shard, "shard", "", "run only shard i of n, e.g. 0/4 (default: from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID, else all)")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "groups in flight at once, each computing on one core (default: all CPUs on cpu, 1 on gl)")
	fs.IntVar(&o.group, "group", 0, "pairs of one configuration trained together (default: 1 on cpu; on gl as many as fit, at most 1024)")
	o.backend.register(cmd)
	fs.BoolVar(&o.retry, "retry-failed", false, "rerun pairs recorded as failed instead of skipping them")
	o.ablation.register(cmd)
	fs.StringVar(&o.measure, "measure", "all", "what every run measures beyond its ablation table: all, none, or a list of "+sweep.MeasureNames())
	_ = cmd.RegisterFlagCompletionFunc("measure", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append([]string{"all", "none"}, strings.Split(sweep.MeasureNames(), ", ")...), cobra.ShellCompDirectiveNoFileComp
	})
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	return cmd
}

// check resolves the flags into this shard's pairs and how to run them.
func (o *sweepOptions) check(cmd *cobra.Command, _ []string) error {
	if cmd.Flags().Changed("seed") {
		return usagef("sweep takes --seeds, a list such as 1-64, not --seed")
	}
	if o.workers < 1 {
		return usagef("--workers must be at least 1, got %d", o.workers)
	}
	o.ask = sweep.Ask{}
	if cmd.Flags().Changed("workers") {
		o.ask.Workers = o.workers
	}
	if cmd.Flags().Changed("group") {
		if o.group < 1 {
			return usagef("--group must be at least 1, got %d", o.group)
		}
		o.ask.Group = o.group
	}
	if err := o.backend.check(); err != nil {
		return err
	}
	method, err := o.ablation.method()
	if err != nil {
		return err
	}
	measures, err := sweep.ParseMeasures(o.measure)
	if err != nil {
		return usageError{err}
	}
	o.analysis = sweep.Analysis{Ablation: method, Measure: measures}
	base, baseErr := o.model.config(cmd)
	plan, err := sweep.Spec{Seeds: o.seeds, Grid: o.grid, Shard: o.shard, Base: base, BaseErr: baseErr,
		StepsSet: cmd.Flags().Changed("steps"), Getenv: os.Getenv}.Plan()
	if err != nil {
		return err
	}
	o.pairs, o.shardOf, o.sweepID, o.shardNote = plan.Pairs, plan.Shard, plan.ID, plan.Note
	if o.db == "" {
		return usagef("--db FILE is required")
	}
	if err := checkOutputs(dbOut("db", o.db)); err != nil {
		return err
	}
	if err := sweep.CheckIntact(o.db); err != nil {
		return usageError{err}
	}
	return nil
}

// runSweepCmd is the sweep command's run: the pairs into the database.
func runSweepCmd(e *env, o *sweepOptions) error {
	if o.shardNote != "" {
		fmt.Fprintln(e.stderr, o.shardNote)
	}
	dev, closeDev, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeDev()
	lay, err := sweep.LayOut(e.stderr, dev, o.pairs, o.ask, o.analysis.Probed())
	if err != nil {
		return err
	}
	st, err := sweep.Create(o.db)
	if err != nil {
		return usageError{err}
	}
	if err := st.MarkShard(o.shardOf, o.sweepID); err != nil {
		st.Close()
		return err
	}
	if err := st.NoteMixed(e.stderr, dev.Name(), o.analysis); err != nil {
		st.Close()
		return err
	}
	sum, err := runSweep(e.stderr, st, o.pairs, sweep.Options{Workers: lay.Workers, Group: lay.Group, RetryFailed: o.retry,
		Analysis: o.analysis, NewPlatform: o.backend.platforms(dev)}, !o.quiet)
	if cerr := st.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	sum.Write(e.stderr, o.shardOf, o.db)
	if sum.Interrupted {
		return interruptedError{fmt.Errorf("interrupted: %d of %d pairs are in %s (%d abandoned in flight); rerun the same command to finish",
			sum.Skipped+sum.Done, sum.Total, o.db, sum.Abandoned)}
	}
	return nil
}

// runSweep runs pairs into st (sweep.RunShown), stopping cleanly on
// SIGINT or SIGTERM: the first stops new runs, the second abandons
// those in flight.
func runSweep(stderr io.Writer, st *sweep.Store, pairs []sweep.Pair, opt sweep.Options, bar bool) (sweep.Summary, error) {
	ctx, abort, stop := interrupt.Twice(stderr, "sweep", "starting no new runs, finishing the runs in flight (again to abandon them)", "abandoning the runs in flight")
	defer stop()
	opt.Abort = abort
	return sweep.RunShown(ctx, stderr, st, pairs, opt, bar)
}

// platforms gives a sweep's workers their devices: the first dev, each
// later one its own of b's backend.
func (b backendFlag) platforms(dev kernels.Device) func() (sweep.Platform, error) {
	return sweep.Platforms(dev, func() (kernels.Device, error) {
		d, _, err := b.open(io.Discard)
		return d, err
	})
}
