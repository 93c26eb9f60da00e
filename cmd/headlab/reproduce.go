package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"headlab/backend/cpu"
	"headlab/findings"
	"headlab/internal/atomicfile"
	"headlab/internal/progress"
	"headlab/internal/workers"
	"headlab/kernels"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/viz"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newReproduceCmd(e, nil) })
}

// reproduceOptions are reproduce's flags, and what check makes of them.
type reproduceOptions struct {
	out                  string
	seeds, small, atlas  int
	scale                float64
	workers              int
	resume, quiet, quick bool
	regime               bool
	loss                 string
	backend              backendFlag

	plan findings.Plan
	ask  sweep.Ask
}

func newReproduceCmd(e *env, runF func(*reproduceOptions) error) *cobra.Command {
	o := &reproduceOptions{}
	cmd := &cobra.Command{
		Use:   "reproduce",
		Short: "Rerun the published findings and write a report with our numbers beside them",
		Long: `Trains the runs behind headlab's published findings, as a sweep into
OUT/findings/findings.db, and writes OUT/findings.md: the default induction
model's ablation table and heatmaps, reverse and majority with and without
positional embeddings, how often the induction circuit forms, one layer
against two, reverse without positions and without the causal mask, the
default model's circuit by other measures (mean and resample ablation,
activation patching, OV copying and prefix-matching scores), and ten
claims of the sources (task signatures, redundancy, the pinned uniform head,
sinks, leaky tasks, interpretability by seed, the phase change, pruning,
syntax heads, unseen tokens), each measured number beside the published one
with a verdict whose rule is fixed in the code before the runs, every verdict
that depends on head labels shown under both label rules; and one grokking
run on modular addition (its setting, the delay between training and
held-out accuracy, its curves; no verdict). Every number
is measured by the run (with --resume, the sweep's runs by the run it
resumes; the claims' extra measurements are taken again). The full setting
is about 150 runs, under 20 minutes on 2 cores; --quick (--steps-scale 0.02
--seeds 4 --small-seeds 2 --atlas-seeds 4) is a check of the machinery, not
of the claims. The atlas (--atlas-seeds, 0 for none) groups that many seeds
of the default induction model (the circuit fraction's configuration,
seeds 1 to N), and the small set of majority and reverse, by the signature
of each one's circuit (docs/circuits.md, "Atlas"): those runs alone take
the signature measurement, and a resumed run of theirs stored without it
is trained again.
--regime adds the grid of which setting gives the published numbers
(d-model, learning rate, batch, steps; 9 cells of --seeds seeds), which
takes far longer: use the GPU backend where there is one.`,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, reproduce),
	}
	fs := cmd.Flags()
	fs.StringVar(&o.out, "out", "docs", "directory for findings.md; pictures and the database go in DIR/findings/")
	fs.IntVar(&o.seeds, "seeds", 32, "seeds of the default induction model for the circuit fraction")
	fs.IntVar(&o.small, "small-seeds", 8, "seeds of every other comparison (reverse, majority, one layer, no mask)")
	fs.IntVar(&o.atlas, "atlas-seeds", findings.DefaultAtlasSeeds, "seeds of the default induction model grouped by circuit in the atlas (0: no atlas)")
	fs.Float64Var(&o.scale, "steps-scale", 1, "multiply every step count by this (1 = the published setting; less for a quick check)")
	fs.IntVar(&o.workers, "workers", runtime.NumCPU(), "runs in flight at once")
	fs.BoolVar(&o.resume, "resume", false, "keep the runs of an interrupted reproduce in DIR/findings/findings.db instead of starting over")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&o.quick, "quick", false, "a small check of the machinery: --seeds 4 --small-seeds 2 --steps-scale 0.02")
	fs.BoolVar(&o.regime, "regime", false, "also sweep the regime grid (the loss, d-model, lr, batch, steps around the default; a finite training set; weight decay) and name the cell closest to the published model")
	fs.StringVar(&o.loss, "loss", tasks.NextToken, "training loss of every run (the regime grid runs both): next-token or answers")
	_ = cmd.RegisterFlagCompletionFunc("loss", cobra.FixedCompletions(tasks.Losses(), cobra.ShellCompDirectiveNoFileComp))
	o.backend.register(cmd)
	return cmd
}

func (o *reproduceOptions) check(cmd *cobra.Command, _ []string) error {
	switch {
	case o.seeds < 1:
		return usagef("--seeds must be at least 1, got %d", o.seeds)
	case o.small < 1:
		return usagef("--small-seeds must be at least 1, got %d", o.small)
	case o.atlas < 0:
		return usagef("--atlas-seeds must be at least 0, got %d", o.atlas)
	case !(o.scale > 0 && o.scale <= 10):
		return usagef("--steps-scale must be in (0, 10], got %g", o.scale)
	case o.workers < 1:
		return usagef("--workers must be at least 1, got %d", o.workers)
	}
	if err := tasks.CheckLoss(o.loss); err != nil {
		return usageError{err}
	}
	if o.quick {
		for _, f := range []string{"seeds", "small-seeds", "atlas-seeds", "steps-scale"} {
			if cmd.Flags().Changed(f) {
				return usagef("--quick sets --%s; give one or the other", f)
			}
		}
		o.seeds, o.small, o.atlas, o.scale = 4, 2, 4, 0.02
	}
	if err := checkOutputs(dirOut("out", o.out)); err != nil {
		return err
	}
	o.ask = sweep.Ask{}
	if cmd.Flags().Changed("workers") {
		o.ask.Workers = o.workers
	}
	o.plan = findings.NewPlan(o.seeds, o.small, o.scale, o.regime, o.loss).WithAtlas(o.atlas)
	return o.backend.check()
}

// reproduceAnalysis is what the runs of p measure: everything, the
// signature on the atlas's configurations alone.
func reproduceAnalysis(p findings.Plan) sweep.Analysis {
	return sweep.Analysis{Measure: sweep.AllMeasures(), Signed: p.Signed()}
}

func reproduce(e *env, o *reproduceOptions) error {
	dev, closeDev, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeDev()
	p := o.plan
	pairs := p.Pairs()
	lay, err := layOut(e.stderr, dev, pairs, o.ask, reproduceAnalysis(p).Probed())
	if err != nil {
		return err
	}
	run := sweepRun{layout: lay, bar: !o.quiet, analysis: reproduceAnalysis(p), first: dev, bf: o.backend}
	pics := filepath.Join(o.out, "findings")
	claimsPath := filepath.Join(pics, findings.ClaimsFile)
	if err := os.MkdirAll(pics, 0o755); err != nil {
		return err
	}
	dbPath := filepath.Join(pics, "findings.db")
	if !o.resume {
		// Start over: every number in the report comes from this run.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		old, _ := filepath.Glob(filepath.Join(pics, "hist-*.png"))
		for _, f := range append(old, filepath.Join(pics, findings.HeatmapFile), filepath.Join(pics, findings.GrokkingFile), claimsPath) {
			os.Remove(f)
		}
	}
	var stored findings.Measured
	if o.resume {
		data, err := os.ReadFile(claimsPath)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(data, &stored); err != nil {
				return usagef("%s: %v (remove it to measure the claims again)", claimsPath, strings.ReplaceAll(err.Error(), "\n", " "))
			}
		}
	}
	st, err := sweep.Create(dbPath)
	if err != nil {
		return err
	}
	defer st.Close()
	seed1 := sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}
	heatmap := filepath.Join(pics, findings.HeatmapFile)
	// The claims' extra measurements, taken on the models as they finish
	// (on the CPU, beside whatever device trains).
	// Each is written to claims.json as soon as it is taken, so that an
	// interrupted reproduce keeps it.
	extras := stored.Map()
	for id := range extras {
		if !slices.ContainsFunc(pairs, func(pr sweep.Pair) bool { return pr.Key == id.Key && pr.Config.Seed == id.Seed }) {
			delete(extras, id) // an earlier plan's
		}
	}
	var dyn []findings.DynamicsSeed
	grok := stored.GrokkingFor(p)
	var extraErr error
	var mu sync.Mutex
	save := func() error {
		m := findings.NewMeasured(p, extras, dyn)
		m.Grokking = grok
		data, err := json.MarshalIndent(m, "", " ")
		if err != nil {
			return err
		}
		return atomicfile.Write(claimsPath, func(w io.Writer) error { _, err := w.Write(append(data, '\n')); return err })
	}
	measure := func(out *sweep.Outcome) {
		x, err := p.Measure(out, cpu.New())
		mu.Lock()
		defer mu.Unlock()
		if err == nil && x != nil {
			extras[out.Record.ID()] = x
			err = save()
		}
		extraErr = cmp.Or(extraErr, err)
	}
	keep := func(out *sweep.Outcome) {
		if out.Record.ID() == seed1 {
			if err := drawHeads(heatmap, out); err != nil {
				fmt.Fprintf(e.stderr, "reproduce: %v\n", err)
			}
		}
		measure(out)
	}
	fmt.Fprintf(e.stderr, "reproduce: %d runs into %s\n", len(pairs), dbPath)
	start := time.Now()
	run.keep = keep
	sum, err := runSweep(e.stderr, st, pairs, run)
	if err != nil {
		return err
	}
	if sum.Interrupted {
		return interruptedError{fmt.Errorf("interrupted: %d of %d runs are in %s; rerun with --resume to finish", sum.Skipped+sum.Done, sum.Total, dbPath)}
	}
	wall := time.Since(start)
	all, err := st.Records()
	if err != nil {
		return err
	}
	// The report is of this plan's runs: a resumed database may hold
	// others (an earlier plan's), which stay there but count nowhere.
	inPlan := map[sweep.RunID]bool{}
	for _, pr := range pairs {
		inPlan[sweep.RunID{Key: pr.Key, Seed: pr.Config.Seed}] = true
	}
	var recs []sweep.Record
	for _, r := range all {
		if inPlan[r.ID()] {
			recs = append(recs, r)
		}
	}
	byID := map[sweep.RunID]*sweep.Record{}
	for i := range recs {
		byID[recs[i].ID()] = &recs[i]
	}
	// A resumed run may hold seed 1 from before: train it again for its
	// pictures, which also checks that the stored numbers reproduce.
	var notes []string
	if _, err := os.Stat(heatmap); err != nil && byID[seed1] != nil && byID[seed1].Status == sweep.StatusOK {
		p1 := sweep.Pair{Key: seed1.Key, Config: byID[seed1].Config}
		again, err := sweep.RunOne(p1, platform(dev), sweep.AnalysisOf(byID[seed1]), nil)
		if err != nil {
			return err
		}
		if f, a, b := sweep.Differ(byID[seed1], &again.Record); f != "" {
			notes = append(notes, fmt.Sprintf("Retraining seed 1 for its pictures gave a different %s (%s, stored %s): the stored runs may come from another build.", f, b, a))
		}
		if err := drawHeads(heatmap, again); err != nil {
			return err
		}
	}
	// Runs carried over by --resume have no extra measurements, or lack
	// some: train them again and measure them.
	var redo []sweep.Pair
	for _, pr := range pairs {
		id := sweep.RunID{Key: pr.Key, Seed: pr.Config.Seed}
		if r := byID[id]; r != nil && r.Status == sweep.StatusOK && p.NeedsExtra(pr.Config) && !extras[id].Complete() {
			redo = append(redo, pr)
		}
	}
	if len(redo) > 0 && !o.quiet {
		fmt.Fprintf(e.stderr, "reproduce: %d runs carried over lack their extra measurements; training them again\n", len(redo))
	}
	err = onWorkers(e.stderr, len(redo), dev, lay.Sharing(), o.quiet, "runs", "again for their extra measurements", func(i int, d kernels.Device) error {
		again, err := sweep.RunOne(redo[i], platform(d), sweep.Analysis{}, nil)
		if err == nil {
			measure(again)
		}
		return err
	})
	if err != nil {
		return err
	}
	if extraErr != nil {
		return extraErr
	}
	if dyn = stored.DynamicsFor(p); dyn == nil {
		if dyn, err = runDynamics(e.stderr, p, dev, lay.Sharing(), o.quiet); err != nil {
			return err
		}
		if err := save(); err != nil {
			return err
		}
	}
	if grok == nil {
		if !o.quiet {
			fmt.Fprintf(e.stderr, "reproduce: the grokking run, %d steps of modular addition with a history\n", p.Grokking.Steps)
		}
		if grok, err = p.RunGrokking(dev); err != nil {
			return err
		}
		if err := save(); err != nil {
			return err
		}
	}
	// Its curves, drawn as curves draws them, from the history kept in
	// claims.json (a resumed run's too).
	fig, err := curves(runTitle(grok.Config), grok.History).Figure()
	if err != nil {
		return err
	}
	if err := viz.Write(filepath.Join(pics, findings.GrokkingFile), fig); err != nil {
		return err
	}
	reports := sweep.Summarize(p.Reported(recs))
	if err := writeHistograms(pics, ".png", reports); err != nil {
		return err
	}
	// A resumed folder may hold an earlier plan's histograms: the folder
	// holds this report's pictures alone.
	kept := map[string]bool{}
	for i := range reports {
		kept[sweep.HistogramFile(pics, ".png", &reports[i])] = true
	}
	old, _ := filepath.Glob(filepath.Join(pics, "hist-*.png"))
	for _, f := range old {
		if !kept[f] {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	in := findings.Input{Plan: p, Reports: reports, ByID: byID, Summary: sum, Wall: wall,
		Workers: lay.Workers, Out: o.out, Notes: notes, Version: versionLine(), Extras: extras, Dynamics: dyn, Grokking: grok}
	if err := drawAtlas(filepath.Join(pics, findings.AtlasFile), &in); err != nil {
		return err
	}
	var md strings.Builder
	findings.Markdown(&md, in)
	path := filepath.Join(o.out, "findings.md")
	if err := atomicfile.Write(path, func(w io.Writer) error { _, err := io.WriteString(w, md.String()); return err }); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "reproduce: wrote %s and its pictures in %s\n", path, pics)
	return nil
}

// drawHeads draws every head's attention on the first held-out example.
func drawHeads(path string, o *sweep.Outcome) error {
	if o.Attention == nil || o.Report == nil {
		return fmt.Errorf("no attention to draw for %s", path)
	}
	fig, err := viz.Heatmaps(viz.HeadGrid(runTitle(o.Record.Config), o.Attention, o.Report.Scores(), 0))
	if err != nil {
		return err
	}
	return viz.Write(path, fig)
}

// runDynamics trains claim 7's seeds with a history, par at once on dev.
func runDynamics(stderr io.Writer, p findings.Plan, dev kernels.Device, par int, quiet bool) ([]findings.DynamicsSeed, error) {
	out := make([]findings.DynamicsSeed, len(p.SmallSet))
	if !quiet {
		fmt.Fprintf(stderr, "reproduce: %d seeds of %d steps with a history for the phase change\n", len(p.SmallSet), p.Dynamics.Steps)
	}
	err := onWorkers(stderr, len(p.SmallSet), dev, par, quiet, "seeds", "histories for the phase change", func(i int, d kernels.Device) (err error) {
		out[i], err = p.RunDynamics(p.SmallSet[i], d)
		return err
	})
	return out, err
}

// onWorkers runs do(0) ... do(n-1) on dev, par at once (a layout's
// Sharing), with a progress bar over them (unless quiet), counted in
// unit and described by note. It returns every error do returned.
func onWorkers(stderr io.Writer, n int, dev kernels.Device, par int, quiet bool, unit, note string, do func(i int, d kernels.Device) error) error {
	if n == 0 {
		return nil
	}
	errs := make([]error, n)
	var bar *progress.Bar
	var done atomic.Int64
	if !quiet {
		bar = progress.New(stderr, "reproduce", unit, n)
		bar.Update(0, note)
	}
	workers.Each(n, par, func(i int) {
		errs[i] = do(i, dev)
		if bar != nil {
			bar.Update(int(done.Add(1)), note)
		}
	})
	if bar != nil {
		bar.Finish()
	}
	return errors.Join(errs...)
}

// drawAtlas draws the atlas of in's plan into path, or removes an older
// one when there is none to draw.
func drawAtlas(path string, in *findings.Input) error {
	atlas, err := sweep.Atlas(in.AtlasRecords())
	if err != nil {
		return err
	}
	if len(atlas) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	fig, err := atlasFigure("findings.db", atlas).Figure()
	if err != nil {
		return err
	}
	return viz.Write(path, fig)
}
