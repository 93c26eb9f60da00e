package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/atomicfile"
	"headlab/tasks"
	"headlab/train"
	"headlab/viz"
)

func init() {
	commands = append(commands,
		func(e *env) *cobra.Command { return newHeadsCmd(e, nil) },
		func(e *env) *cobra.Command { return newScoreCmd(e, nil) })
}

// pictureFlags are --png (alias --figure) and --arcs: figures of one
// held-out example.
type pictureFlags struct{ png, arcs string }

func (p *pictureFlags) register(cmd *cobra.Command) {
	figureFlag(cmd, &p.png, "png", true, "draw every head's attention on one held-out example as a heatmap grid")
	figureFlag(cmd, &p.arcs, "arcs", false, "draw every head's attention on one held-out example as arcs")
}

// check refuses unknown figure formats before any work starts.
func (p *pictureFlags) check() error { return checkFigures(p.png, p.arcs) }

// paths are the pictures' paths, for reportTo.
func (p *pictureFlags) paths() []string { return []string{p.png, p.arcs} }

// outputs are the pictures' paths, for checkOutputs.
func (p *pictureFlags) outputs() []output {
	return []output{fileOut("png", p.png), fileOut("arcs", p.arcs)}
}

// write draws example 0 of att with each head titled by its score, the
// figure titled title (the run), its tokens named as task names them
// (nil: as tasks.TokenLabel does); "-" is stdout.
func (p *pictureFlags) write(e *env, title string, att *analysis.Attention, heads []analysis.HeadScore, task tasks.Task) error {
	if p.png == "" && p.arcs == "" {
		return nil
	}
	g := viz.HeadGrid(title, att, heads, 0, task)
	if err := e.writeFigure(p.png, func() (*viz.Figure, error) { return viz.Heatmaps(g) }); err != nil {
		return err
	}
	return e.writeFigure(p.arcs, func() (*viz.Figure, error) { return viz.Arcs(g) })
}

// headsOptions are heads' flags, and what check makes of them.
type headsOptions struct {
	run               runFlag
	ablate, dump      string
	json, composition bool
	pics              pictureFlags
	html              htmlFlag
	backend           backendFlag
	relation          relationFlag
	ablation          ablationFlag

	method inspect.Ablation
}

func newHeadsCmd(e *env, runF func(*headsOptions) error) *cobra.Command {
	o := &headsOptions{}
	cmd := &cobra.Command{
		Use:   "heads --run DIR",
		Short: "Score, label and ablate the heads of a saved model",
		Long:  longHelp("heads"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runHeads),
	}
	o.run.register(cmd, "checkpoint directory written by train --save")
	ablateFlag(cmd, &o.ablate, &o.run.dir)
	o.ablation.register(cmd)
	cmd.Flags().BoolVar(&o.composition, "composition", false, "also print Q-, K- and V-composition of every cross-layer pair of heads (Elhage et al. 2021) beside a random baseline")
	cmd.Flags().StringVar(&o.dump, "dump-attention", "", "write the scored batch's attention as JSON (the format score reads)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object on stdout")
	o.pics.register(cmd)
	o.html.register(cmd)
	o.backend.register(cmd)
	o.relation.register(cmd)
	return cmd
}

func (o *headsOptions) check(cmd *cobra.Command, _ []string) error {
	o.relation.read(cmd)
	if err := o.run.required(); err != nil {
		return err
	}
	if err := o.html.check(); err != nil {
		return err
	}
	if err := checkOutputs(append(o.pics.outputs(), fileOut("dump-attention", o.dump), fileOut("html", o.html.path))...); err != nil {
		return err
	}
	if err := o.pics.check(); err != nil {
		return err
	}
	var err error
	o.method, err = o.ablation.method()
	return err
}

func runHeads(e *env, o *headsOptions) error {
	m, off, err := o.run.loadOff(o.ablate)
	if err != nil {
		return err
	}
	be, closeBackend, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeBackend()
	rel, err := o.relation.index(m.Task)
	if err != nil {
		return err
	}
	rep, att, err := inspect.Analyze(m, be, inspect.Options{Off: off, Ablation: o.method, Relation: rel, Circuit: true, Composition: o.composition})
	if err != nil {
		return err
	}
	if o.dump != "" {
		if err := atomicfile.WriteStdout(o.dump, e.stdout, func(w io.Writer) error { return analysis.WriteAttention(w, att) }); err != nil {
			return err
		}
	}
	if err := o.pics.write(e, runTitle(m.Train), att, rep.Scores(), m.Task); err != nil {
		return err
	}
	if err := o.html.write(e, m, be, att, rep.Scores()); err != nil {
		return err
	}
	return e.report(o.json, rep, func(w io.Writer) { inspect.WriteReport(w, rep) }, append(o.pics.paths(), o.dump, o.html.path)...)
}

// ablateFlag registers --ablate, its values completed with the heads of
// the checkpoint --run names (*runDir, read when the shell asks).
func ablateFlag(cmd *cobra.Command, ablate, runDir *string) {
	cmd.Flags().StringVar(ablate, "ablate", "", "heads to switch off, e.g. L0H0,L1H1")
	_ = cmd.RegisterFlagCompletionFunc("ablate", func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
		return completeHeads(*runDir, typed), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// completeHeads offers the heads of the checkpoint in runDir for --ablate:
// the list typed so far (a comma-separated prefix) followed by each head
// it does not name yet. Nothing without a readable checkpoint.
func completeHeads(runDir, typed string) []string {
	m, _, err := train.Load(runDir)
	if runDir == "" || err != nil {
		return nil
	}
	return inspect.CompleteHeads(m.Shape.Layers, m.Shape.Heads, typed)
}

// relationFlag is --relation: the relation whose best head accuracy by
// kind switches off.
type relationFlag struct {
	name  string
	asked bool // set by read
}

func (f *relationFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "relation", "", "relation whose best head is switched off for the accuracy by kind (default: the task's first; agreement: verb->subject)")
}

// read notes whether cmd was given the flag.
func (f *relationFlag) read(cmd *cobra.Command) { f.asked = cmd.Flags().Changed("relation") }

// index resolves the flag against task t: 0 when not given.
func (f *relationFlag) index(t tasks.Task) (int, error) {
	if !f.asked {
		return 0, nil
	}
	i, err := tasks.RelationIndex(t, f.name)
	if err != nil {
		return 0, usagef("--relation: %v", err)
	}
	return i, nil
}

// scoreOptions are score's flags.
type scoreOptions struct {
	file string
	json bool
	pics pictureFlags
}

func newScoreCmd(e *env, runF func(*scoreOptions) error) *cobra.Command {
	o := &scoreOptions{}
	cmd := &cobra.Command{
		Use:   "score --attention FILE.json",
		Short: "Score attention patterns from any source against the canonical patterns",
		Long:  longHelp("score"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runScore),
	}
	cmd.Flags().StringVar(&o.file, "attention", "", "attention file (JSON)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object on stdout")
	o.pics.register(cmd)
	return cmd
}

func (o *scoreOptions) check(*cobra.Command, []string) error {
	if o.file == "" {
		return usagef("--attention FILE is required")
	}
	if err := o.pics.check(); err != nil {
		return err
	}
	return checkOutputs(o.pics.outputs()...)
}

func runScore(e *env, o *scoreOptions) error {
	f, err := os.Open(o.file)
	if err != nil {
		return usageError{err}
	}
	defer f.Close()
	att, err := analysis.ReadAttention(f)
	if err != nil {
		return usageError{fmt.Errorf("%s: %v", o.file, err)}
	}
	heads := analysis.ScoreAll(att)
	if err := o.pics.write(e, "attention from "+o.file, att, heads, nil); err != nil {
		return err
	}
	return e.report(o.json, struct {
		Heads []analysis.HeadScore `json:"heads"`
	}{heads}, func(w io.Writer) { inspect.WriteScores(w, heads, len(att.Relations) > 0) }, o.pics.paths()...)
}
