package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"headlab/findings"
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
	findings.Options
	out           string
	resume, quiet bool
	backend       backendFlag

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
	fs.IntVar(&o.Seeds, "seeds", 32, "seeds of the default induction model for the circuit fraction")
	fs.IntVar(&o.Small, "small-seeds", 8, "seeds of every other comparison (reverse, majority, one layer, no mask)")
	fs.IntVar(&o.Atlas, "atlas-seeds", findings.DefaultAtlasSeeds, "seeds of the default induction model grouped by circuit in the atlas (0: no atlas)")
	fs.Float64Var(&o.Scale, "steps-scale", 1, "multiply every step count by this (1 = the published setting; less for a quick check)")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "runs in flight at once")
	fs.BoolVar(&o.resume, "resume", false, "keep the runs of an interrupted reproduce in DIR/findings/findings.db instead of starting over")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&o.Quick, "quick", false, "a small check of the machinery: --seeds 4 --small-seeds 2 --steps-scale 0.02")
	fs.BoolVar(&o.Regime, "regime", false, "also sweep the regime grid (the loss, d-model, lr, batch, steps around the default; a finite training set; weight decay) and name the cell closest to the published model")
	fs.StringVar(&o.Loss, "loss", tasks.NextToken, "training loss of every run (the regime grid runs both): next-token or answers")
	_ = cmd.RegisterFlagCompletionFunc("loss", cobra.FixedCompletions(tasks.Losses(), cobra.ShellCompDirectiveNoFileComp))
	o.backend.register(cmd)
	return cmd
}

func (o *reproduceOptions) check(cmd *cobra.Command, _ []string) error {
	if err := o.Validate(cmd.Flags().Changed); err != nil {
		return usageError{err}
	}
	if err := checkOutputs(dirOut("out", o.out)); err != nil {
		return err
	}
	o.ask = sweep.Ask{}
	if cmd.Flags().Changed("workers") {
		o.ask.Workers = o.Workers
	}
	o.plan = o.Plan()
	return o.backend.check()
}

func reproduce(e *env, o *reproduceOptions) error {
	dev, closeDev, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeDev()
	p := o.plan
	analysis := findings.ReproduceAnalysis(p)
	lay, err := sweep.LayOut(e.stderr, dev, p.Pairs(), o.ask, analysis.Probed())
	if err != nil {
		return err
	}
	res, err := findings.Reproduce(findings.ReproduceOptions{
		Plan: p, Out: o.out, Resume: o.resume, Quiet: o.quiet, Stderr: e.stderr,
		Device: dev, Workers: lay.Workers, Sharing: lay.Sharing(), Version: versionLine(), Platform: sweep.PlatformOf,
		Sweep: func(st *sweep.Store, pairs []sweep.Pair, keep func(*sweep.Outcome)) (sweep.Summary, error) {
			return runSweep(e.stderr, st, pairs, sweep.Options{Workers: lay.Workers, Group: lay.Group, Analysis: analysis, Keep: keep,
				NewPlatform: o.backend.platforms(dev)}, !o.quiet)
		},
		Each: func(n int, unit, note string, do func(int, kernels.Device) error) error {
			return sweep.EachShown(e.stderr, "reproduce", n, dev, lay.Sharing(), o.quiet, unit, note, do)
		},
		Draw: findings.Drawing{
			Heads:    e.drawHeads,
			Grokking: e.drawGrokking,
			Histograms: func(dir string, reports []sweep.ConfigReport) error {
				return sweep.WriteHistograms(dir, ".png", reports)
			},
			Atlas: func(path string, atlas []sweep.ConfigAtlas) error {
				return e.writeFigure(path, sweep.AtlasFigure("findings.db", atlas).Figure)
			},
		},
	})
	var bad *findings.ClaimsFileError
	switch {
	case errors.As(err, &bad):
		return usageError{err}
	case err != nil:
		return err
	case res.Summary.Interrupted:
		sum := res.Summary
		return interruptedError{fmt.Errorf("interrupted: %d of %d runs are in %s; rerun with --resume to finish", sum.Skipped+sum.Done, sum.Total, res.DB)}
	}
	return nil
}

// drawHeads draws every head's attention on the first held-out example.
func (e *env) drawHeads(path string, o *sweep.Outcome) error {
	if o.Attention == nil || o.Report == nil {
		return fmt.Errorf("no attention to draw for %s", path)
	}
	return e.writeFigure(path, func() (*viz.Figure, error) {
		return viz.Heatmaps(viz.HeadGrid(runTitle(o.Record.Config), o.Attention, o.Report.Scores(), 0))
	})
}

// drawGrokking draws the grokking run's curves as curves draws them.
func (e *env) drawGrokking(path string, g *findings.Grokking) error {
	return e.writeFigure(path, curves(runTitle(g.Config), g.History).Figure)
}
