package main

import (
	"errors"
	"fmt"

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
		Long:  longHelp("reproduce"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, reproduce),
	}
	fs := cmd.Flags()
	fs.StringVar(&o.out, "out", "docs", "directory for findings.md; pictures and the database go in DIR/findings/")
	fs.BoolVar(&o.resume, "resume", false, "keep the runs of an interrupted reproduce in DIR/findings/findings.db instead of starting over")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	o.AddFlags(fs)
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
			return sweep.RunInterruptible(e.stderr, st, pairs, sweep.Options{Workers: lay.Workers, Group: lay.Group, Analysis: analysis, Keep: keep,
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
		return viz.Heatmaps(viz.HeadGrid(runTitle(o.Record.Config), o.Attention, o.Report.Scores(), 0, nil))
	})
}

// drawGrokking draws the grokking run's curves as curves draws them.
func (e *env) drawGrokking(path string, g *findings.Grokking) error {
	return e.writeFigure(path, g.History.Curves(runTitle(g.Config)).Figure)
}
