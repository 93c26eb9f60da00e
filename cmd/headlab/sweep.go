package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/internal/progress"
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
	fs.StringVar(&o.measure, "measure", "all", "what every run measures beyond its ablation table: all, none, or a list of "+measureNames())
	_ = cmd.RegisterFlagCompletionFunc("measure", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append([]string{"all", "none"}, strings.Split(measureNames(), ", ")...), cobra.ShellCompDirectiveNoFileComp
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
	seeds, err := sweep.ParseSeeds(o.seeds)
	if err != nil {
		return usageError{err}
	}
	grid, err := sweep.ParseGrid(o.grid)
	if err != nil {
		return usageError{err}
	}
	// The base alone may be invalid when the grid changes what is wrong
	// with it (--heads 3 with d-model=48,96); Expand checks every result.
	base, err := o.model.config(cmd)
	if err != nil && len(grid) == 0 {
		return err
	}
	configs, err := sweep.Expand(base, grid, cmd.Flags().Changed("steps"))
	if err != nil {
		return usageError{err}
	}
	found := o.shard != ""
	if found {
		o.shardOf, err = sweep.ParseShard(o.shard)
	} else {
		o.shardOf, found, err = sweep.ShardFromEnv(os.Getenv)
	}
	if err != nil {
		return usageError{err}
	}
	all := sweep.Pairs(configs, seeds)
	o.pairs = o.shardOf.Select(all)
	o.sweepID = sweep.SweepID(all)
	o.shardNote = ""
	if found {
		o.shardNote = fmt.Sprintf("sweep: shard %s: %d of %d pairs", o.shardOf, len(o.pairs), len(all))
	}
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
	lay, err := layOut(e.stderr, dev, o.pairs, o.ask, o.analysis.Probed())
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
	if err := noteOthers(e.stderr, st.Backends, dev.Name(), func(held []string) string {
		return fmt.Sprintf("sweep: %s holds runs made on %s; these run on %s (backends agree as distributions over seeds, not bit for bit)",
			st.Path(), strings.Join(held, ", "), dev.Name())
	}); err != nil {
		st.Close()
		return err
	}
	method := string(cmp.Or(o.analysis.Ablation, inspect.AblateZero))
	if err := noteOthers(e.stderr, st.AblationMethods, method, func(held []string) string {
		return fmt.Sprintf("sweep: %s holds runs whose ablation table and circuit verdict are by %s ablation; these run by %s (each record says which, and report names both)",
			st.Path(), strings.Join(held, " and "), method)
	}); err != nil {
		st.Close()
		return err
	}
	sum, err := runSweep(e.stderr, st, o.pairs, sweepRun{layout: lay, retry: o.retry, bar: !o.quiet, analysis: o.analysis, first: dev, bf: o.backend})
	if cerr := st.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "sweep: %d pairs%s: %d already in %s, %d run now (%d failed)\n",
		sum.Total, shardNote(o.shardOf), sum.Skipped, o.db, sum.Done, sum.Failed)
	if sum.Interrupted {
		return interruptedError{fmt.Errorf("interrupted: %d of %d pairs are in %s (%d abandoned in flight); rerun the same command to finish",
			sum.Skipped+sum.Done, sum.Total, o.db, sum.Abandoned)}
	}
	return nil
}

// sweepRun is how runSweep runs: sweep.Options' fields that a command
// sets, and whether to draw progress.
type sweepRun struct {
	layout     sweep.Layout
	retry, bar bool
	analysis   sweep.Analysis
	keep       func(*sweep.Outcome)
	// first is the device the layout was made on; the first worker uses
	// it, later workers open their own of the same backend.
	first kernels.Device
	bf    backendFlag
}

// layOut lays out pairs on dev as ask says (sweep.NewLayout, then Fit),
// each model with the probed graph when probed, refusing before any work
// a run that does not fit the process's memory or the device's, or a
// --group the device cannot hold, and saying in one line when the
// default group size splits a configuration's seeds.
func layOut(stderr io.Writer, dev kernels.Device, pairs []sweep.Pair, ask sweep.Ask, probed bool) (sweep.Layout, error) {
	lay := sweep.NewLayout(dev, len(pairs), ask)
	configs := configsOf(pairs)
	// Before Fit, which builds one model of each shape.
	if err := checkHostMemory(dev, configs, lay.Models(len(pairs)), probed); err != nil {
		return lay, err
	}
	note, err := lay.Fit(dev, pairs, probed)
	var tl *sweep.TooLarge
	if errors.As(err, &tl) {
		return lay, usagef("--group %d: at most %d fit (%s)", tl.Asked, tl.Limit, tl.Why)
	}
	if err != nil {
		return lay, usageError{err}
	}
	if note != "" {
		fmt.Fprintf(stderr, "sweep: %s\n", note)
	}
	return lay, checkDeviceMemory(stderr, dev, configs, lay.Group, probed)
}

// noteOthers writes the line line(held) when the values a store holds
// (list: its backends, its ablation methods) name one besides this, the
// one of the runs to come.
func noteOthers(stderr io.Writer, list func() ([]string, error), this string, line func(held []string) string) error {
	held, err := list()
	if err != nil {
		return err
	}
	for _, v := range held {
		if v != this {
			fmt.Fprintln(stderr, line(held))
			break
		}
	}
	return nil
}

// runSweep runs pairs into st with a progress bar on stderr, stopping
// cleanly on SIGINT or SIGTERM: the first stops new runs, the second
// abandons those in flight.
func runSweep(stderr io.Writer, st *sweep.Store, pairs []sweep.Pair, run sweepRun) (sweep.Summary, error) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	abort := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	defer stopsGracefully(sigs)()
	over := make(chan struct{})
	defer close(over)
	go func() {
		for n := 0; ; {
			select {
			case <-over:
				return
			case s := <-sigs:
				n++
				if n == 1 {
					fmt.Fprintf(stderr, "\nsweep: %v: starting no new runs, finishing the runs in flight (again to abandon them)\n", s)
					stop()
				} else {
					fmt.Fprintf(stderr, "\nsweep: %v: abandoning the runs in flight\n", s)
					close(abort)
					return
				}
			}
		}
	}()
	pb := progress.New(stderr, "sweep", "runs", len(pairs))
	var mu sync.Mutex
	first := run.first
	opt := sweep.Options{
		Workers: run.layout.Workers,
		Group:   run.layout.Group,
		NewPlatform: func() (sweep.Platform, error) {
			mu.Lock()
			dev := first
			first = nil
			mu.Unlock()
			if dev == nil {
				d, _, err := run.bf.open(io.Discard)
				if err != nil {
					return sweep.Platform{}, err
				}
				dev = d
			}
			return platform(dev), nil
		},
		Abort:       abort,
		Keep:        run.keep,
		RetryFailed: run.retry,
		Analysis:    run.analysis,
		Note:        func(n string) { fmt.Fprintf(stderr, "sweep: %s: %s\n", st.Path(), n) },
	}
	if run.bar {
		opt.Progress = func(p sweep.Progress) {
			if p.Last == nil {
				pb.Resume(p.Skipped)
			}
			pb.Update(p.Skipped+p.Done, sweepNote(p, pb.OnTerminal()))
		}
	}
	sum, err := sweep.Run(ctx, st, pairs, opt)
	if run.bar {
		pb.Finish()
	}
	return sum, err
}

// measureNames lists the measurements --measure names.
func measureNames() string {
	var names []string
	for _, m := range sweep.Measures {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

// shardNote is " in shard i/n", or "" for the whole sweep.
func shardNote(s sweep.Shard) string {
	if s == sweep.All {
		return ""
	}
	return " in shard " + s.String()
}

// sweepNote is what the progress line says beside the counts: failures
// and runs in flight, and in a log the run that just landed.
func sweepNote(p sweep.Progress, tty bool) string {
	note := fmt.Sprintf("%d failed, %d running", p.Failed, p.Running)
	if p.Elsewhere > 0 {
		note += fmt.Sprintf(", %d in another process", p.Elsewhere)
	}
	if p.Last == nil {
		return note + fmt.Sprintf(", %d already in the database", p.Skipped)
	}
	if tty {
		return note
	}
	r := p.Last
	what := fmt.Sprintf("accuracy %.1f%%", 100*r.Accuracy)
	if r.Status != sweep.StatusOK {
		what = "FAILED: " + r.Error
	}
	return note + fmt.Sprintf(" · seed %d %s: %s in %.1f s", r.Config.Seed, r.Key, what, r.Seconds)
}
