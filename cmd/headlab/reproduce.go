package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"headlab/findings"
	"headlab/internal/atomicfile"
	"headlab/sweep"
	"headlab/viz"
)

func init() { commands = append(commands, reproduceCmd) }

func reproduceCmd(e *env) *cobra.Command {
	var (
		out          string
		seeds, small int
		scale        float64
		workers      int
		resume       bool
		quiet        bool
		bf           backendFlag
	)
	cmd := &cobra.Command{
		Use:   "reproduce",
		Short: "Rerun the published findings and write a report with our numbers beside them",
		Long: `Trains the runs behind headlab's published findings, as a sweep into
OUT/findings/findings.db, and writes OUT/findings.md: the default induction
model's ablation table and heatmaps, reverse and majority with and without
positional embeddings, how often the induction circuit forms, one layer
against two, and reverse without positions and without the causal mask, each
measured number beside the published one with a verdict. Every number is
measured by the run (with --resume, by the run it resumes). The full setting
is 80 runs, a few minutes on 2 cores; --steps-scale 0.02 --seeds 4
--small-seeds 2 is a quick check.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case seeds < 1:
				return usagef("--seeds must be at least 1, got %d", seeds)
			case small < 1:
				return usagef("--small-seeds must be at least 1, got %d", small)
			case !(scale > 0 && scale <= 10):
				return usagef("--steps-scale must be in (0, 10], got %g", scale)
			case workers < 1:
				return usagef("--workers must be at least 1, got %d", workers)
			}
			if err := checkOutputs(dirOut("out", out)); err != nil {
				return err
			}
			f := sweepFlags{bf: bf, workers: workers, workersGiven: cmd.Flags().Changed("workers"), noBar: quiet}
			return reproduce(e, reproduceOpts{out: out, plan: findings.NewPlan(seeds, small, scale), flags: f, resume: resume})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out", "docs", "directory for findings.md; pictures and the database go in DIR/findings/")
	fs.IntVar(&seeds, "seeds", 32, "seeds of the default induction model for the circuit fraction")
	fs.IntVar(&small, "small-seeds", 8, "seeds of every other comparison (reverse, majority, one layer, no mask)")
	fs.Float64Var(&scale, "steps-scale", 1, "multiply every step count by this (1 = the published setting; less for a quick check)")
	fs.IntVar(&workers, "workers", runtime.NumCPU(), "runs in flight at once")
	fs.BoolVar(&resume, "resume", false, "keep the runs of an interrupted reproduce in DIR/findings/findings.db instead of starting over")
	fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	bf.register(cmd)
	return cmd
}

type reproduceOpts struct {
	out    string
	plan   findings.Plan
	flags  sweepFlags // workers, backend, progress
	resume bool
}

func reproduce(e *env, o reproduceOpts) error {
	if err := o.flags.bf.check(); err != nil {
		return err
	}
	dev, closeDev, err := o.flags.bf.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeDev()
	p := o.plan
	pairs := p.Pairs()
	run, err := o.flags.plan(e.stderr, dev, pairs)
	if err != nil {
		return err
	}
	pics := filepath.Join(o.out, "findings")
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
		for _, f := range append(old, filepath.Join(pics, findings.HeatmapFile)) {
			os.Remove(f)
		}
	}
	st, err := sweep.Create(dbPath)
	if err != nil {
		return err
	}
	defer st.Close()
	seed1 := sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}
	heatmap := filepath.Join(pics, findings.HeatmapFile)
	keep := func(out *sweep.Outcome) {
		if out.Record.ID() == seed1 {
			if err := drawHeads(heatmap, out); err != nil {
				fmt.Fprintf(e.stderr, "reproduce: %v\n", err)
			}
		}
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
	recs, err := st.Records()
	if err != nil {
		return err
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
		again, err := sweep.RunOne(p1, platform(dev), nil)
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
	reports := sweep.Summarize(recs)
	if err := sweep.WriteHistograms(pics, reports); err != nil {
		return err
	}
	var md strings.Builder
	findings.Markdown(&md, findings.Input{Plan: p, Reports: reports, ByID: byID, Summary: sum, Wall: wall,
		Workers: run.workers, Out: o.out, Notes: notes, Version: version})
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
	return viz.WriteHeatmapsPNG(path, viz.HeadGrid(o.Attention, o.Report.Scores(), 0))
}
