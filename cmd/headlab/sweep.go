package main

import (
	"cmp"
	"context"
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

func init() { commands = append(commands, sweepCmd) }

// sweepFlags are the flags that say which pairs a sweep runs and how.
type sweepFlags struct {
	tf           trainFlags
	bf           backendFlag
	seeds, grid  string
	db, shard    string
	workers      int
	group        int
	retry, noBar bool
	workersGiven bool
	groupGiven   bool
	// af and measure are --ablation and --measure; analysis what they
	// say, read by pairs (train --seeds has neither: the zero value).
	af       ablationFlag
	measure  string
	analysis sweep.Analysis
}

func sweepCmd(e *env) *cobra.Command {
	var f sweepFlags
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
prefix-matching scores, the ICL score); all (the default), none, or a list. On the CPU backend each worker trains one
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			pairs, shard, err := f.pairs(cmd, e.stderr)
			if err != nil {
				return err
			}
			if f.db == "" {
				return usagef("--db FILE is required")
			}
			if err := checkOutputs(dbOut("db", f.db)); err != nil {
				return err
			}
			dev, closeDev, err := f.bf.open(e.stderr)
			if err != nil {
				return err
			}
			defer closeDev()
			run, err := f.plan(e.stderr, dev, pairs)
			if err != nil {
				return err
			}
			st, err := sweep.Create(f.db)
			if err != nil {
				return usageError{err}
			}
			if err := noteBackends(e.stderr, st, dev.Name()); err != nil {
				st.Close()
				return err
			}
			if err := noteAblation(e.stderr, st, run.analysis); err != nil {
				st.Close()
				return err
			}
			sum, err := runSweep(e.stderr, st, pairs, run)
			if cerr := st.Close(); err == nil && cerr != nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "sweep: %d pairs%s: %d already in %s, %d run now (%d failed)\n",
				sum.Total, shardNote(shard), sum.Skipped, f.db, sum.Done, sum.Failed)
			if sum.Interrupted {
				return interruptedError{fmt.Errorf("interrupted: %d of %d pairs are in %s (%d abandoned in flight); rerun the same command to finish",
					sum.Skipped+sum.Done, sum.Total, f.db, sum.Abandoned)}
			}
			return nil
		},
	}
	f.tf.register(cmd)
	fs := cmd.Flags()
	// --seeds replaces --seed; hidden rather than removed so that
	// trainFlags stays one shared definition.
	_ = fs.MarkHidden("seed")
	fs.StringVar(&f.seeds, "seeds", "1", "seeds to train, e.g. 1-64 or 1,2,5-8")
	fs.StringVar(&f.grid, "grid", "", "configurations to cross, e.g. 'positions=on,off;layers=1,2'")
	fs.StringVar(&f.db, "db", "", "SQLite database to write (created if missing; resumed if not)")
	fs.StringVar(&f.shard, "shard", "", "run only shard i of n, e.g. 0/4 (default: from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID, else all)")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "groups in flight at once, each computing on one core (default: all CPUs on cpu, 1 on gl)")
	fs.IntVar(&f.group, "group", 0, "pairs of one configuration trained together (default: 1 on cpu; on gl as many as fit, at most 1024)")
	f.bf.register(cmd)
	fs.BoolVar(&f.retry, "retry-failed", false, "rerun pairs recorded as failed instead of skipping them")
	f.af.register(cmd)
	fs.StringVar(&f.measure, "measure", "all", "what every run measures beyond its ablation table: all, none, or a list of "+measureNames())
	_ = cmd.RegisterFlagCompletionFunc("measure", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append([]string{"all", "none"}, strings.Split(measureNames(), ", ")...), cobra.ShellCompDirectiveNoFileComp
	})
	fs.BoolVar(&f.noBar, "quiet", false, "no progress on stderr")
	return cmd
}

// pairs resolves the flags into this shard's pairs.
func (f *sweepFlags) pairs(cmd *cobra.Command, stderr io.Writer) ([]sweep.Pair, sweep.Shard, error) {
	if cmd.Flags().Changed("seed") {
		return nil, sweep.Shard{}, usagef("sweep takes --seeds, a list such as 1-64, not --seed")
	}
	if f.workers < 1 {
		return nil, sweep.Shard{}, usagef("--workers must be at least 1, got %d", f.workers)
	}
	f.workersGiven, f.groupGiven = cmd.Flags().Changed("workers"), cmd.Flags().Changed("group")
	if f.groupGiven && f.group < 1 {
		return nil, sweep.Shard{}, usagef("--group must be at least 1, got %d", f.group)
	}
	if err := f.bf.check(); err != nil {
		return nil, sweep.Shard{}, err
	}
	method, err := f.af.method()
	if err != nil {
		return nil, sweep.Shard{}, err
	}
	measures, err := sweep.ParseMeasures(f.measure)
	if err != nil {
		return nil, sweep.Shard{}, usageError{err}
	}
	f.analysis = sweep.Analysis{Ablation: method, Measure: measures}
	seeds, err := sweep.ParseSeeds(f.seeds)
	if err != nil {
		return nil, sweep.Shard{}, usageError{err}
	}
	grid, err := sweep.ParseGrid(f.grid)
	if err != nil {
		return nil, sweep.Shard{}, usageError{err}
	}
	// The base alone may be invalid when the grid changes what is wrong
	// with it (--heads 3 with d-model=48,96); Expand checks every result.
	base, err := f.tf.config(cmd)
	if err != nil && len(grid) == 0 {
		return nil, sweep.Shard{}, err
	}
	configs, err := sweep.Expand(base, grid, cmd.Flags().Changed("steps"))
	if err != nil {
		return nil, sweep.Shard{}, usageError{err}
	}
	var shard sweep.Shard
	found := f.shard != ""
	if found {
		shard, err = sweep.ParseShard(f.shard)
	} else {
		shard, found, err = sweep.ShardFromEnv(os.Getenv)
	}
	if err != nil {
		return nil, sweep.Shard{}, usageError{err}
	}
	all := sweep.Pairs(configs, seeds)
	pairs := shard.Select(all)
	if found {
		fmt.Fprintf(stderr, "sweep: shard %s: %d of %d pairs\n", shard, len(pairs), len(all))
	}
	return pairs, shard, nil
}

// sweepRun is how runSweep runs: sweep.Options' fields that a command
// sets, and whether to draw progress.
type sweepRun struct {
	workers, group int
	retry, bar     bool
	analysis       sweep.Analysis
	keep           func(*sweep.Outcome)
	// first is the device opened to check the flags; the first worker
	// uses it, later workers open their own of the same backend.
	first kernels.Device
	bf    backendFlag
}

// plan chooses workers and group size for pairs on dev, refusing an
// explicit --group the device cannot hold, and saying in one line when
// the default group size splits a configuration's seeds.
func (f *sweepFlags) plan(stderr io.Writer, dev kernels.Device, pairs []sweep.Pair) (sweepRun, error) {
	run := sweepRun{workers: f.workers, group: f.group, retry: f.retry, bar: !f.noBar, analysis: f.analysis, first: dev, bf: f.bf}
	// Workers share a host device (the CPU) and compute in parallel;
	// another device runs one worker's groups.
	_, host := dev.(kernels.Host)
	if !f.workersGiven && !host {
		run.workers = 1
	}
	// Every model of a group holds the probed graph too when the
	// analysis runs it (about 18 MB more for the default model).
	probed := f.analysis.Probed()
	// Before GroupLimit, which builds one model of each shape.
	if err := checkHostMemory(dev, configsOf(pairs), memoryModels(run, host, len(pairs)), probed); err != nil {
		return run, err
	}
	// On the CPU a group runs seed by seed and a seed-step costs what a
	// lone model's does, or a few percent more (docs/performance.md,
	// "Groups on the CPU"): one pair a worker is the faster default.
	if !f.groupGiven && host {
		run.group = 1
		return run, nil
	}
	limit, why, split, err := sweep.GroupLimit(dev, pairs, probed)
	if err != nil {
		return run, usageError{err}
	}
	if f.groupGiven {
		if f.group > limit {
			return run, usagef("--group %d: at most %d fit (%s)", f.group, limit, why)
		}
		return run, checkDeviceMemory(stderr, dev, configsOf(pairs), f.group, probed)
	}
	run.group = limit
	if split {
		fmt.Fprintf(stderr, "sweep: training in groups of %d models: %s\n", limit, why)
	}
	return run, checkDeviceMemory(stderr, dev, configsOf(pairs), run.group, probed)
}

// noteBackends says in one line when st holds runs of another backend.
func noteBackends(stderr io.Writer, st *sweep.Store, backend string) error {
	bs, err := st.Backends()
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b != backend {
			fmt.Fprintf(stderr, "sweep: %s holds runs made on %s; these run on %s (backends agree as distributions over seeds, not bit for bit)\n",
				st.Path(), strings.Join(bs, ", "), backend)
			break
		}
	}
	return nil
}

// noteAblation says in one line when st holds runs whose ablation table
// (and circuit verdict) is by another method than a's.
func noteAblation(stderr io.Writer, st *sweep.Store, a sweep.Analysis) error {
	ms, err := st.AblationMethods()
	if err != nil {
		return err
	}
	method := string(cmp.Or(a.Ablation, inspect.AblateZero))
	for _, m := range ms {
		if m != method {
			fmt.Fprintf(stderr, "sweep: %s holds runs whose ablation table and circuit verdict are by %s ablation; these run by %s (each record says which, and report names both)\n",
				st.Path(), strings.Join(ms, " and "), method)
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
		Workers: run.workers,
		Group:   run.group,
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
