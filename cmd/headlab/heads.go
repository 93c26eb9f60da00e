package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/atomicfile"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
	"headlab/viz"
)

func init() { commands = append(commands, headsCmd, scoreCmd) }

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
// figure titled title (the run); "-" is stdout.
func (p *pictureFlags) write(stdout io.Writer, title string, att *analysis.Attention, heads []analysis.HeadScore) error {
	if p.png == "" && p.arcs == "" {
		return nil
	}
	g := viz.HeadGrid(title, att, heads, 0)
	for _, f := range []struct {
		path string
		draw func(viz.Grid) (*viz.Figure, error)
	}{{p.png, viz.Heatmaps}, {p.arcs, viz.Arcs}} {
		if f.path == "" {
			continue
		}
		fig, err := f.draw(g)
		if err != nil {
			return err
		}
		if err := viz.WriteStdout(f.path, stdout, fig); err != nil {
			return err
		}
	}
	return nil
}

func headsCmd(e *env) *cobra.Command {
	var (
		runDir, ablate, dump string
		asJSON, composition  bool
		pics                 pictureFlags
		html                 htmlFlag
		bf                   backendFlag
		rf                   relationFlag
		af                   ablationFlag
	)
	cmd := &cobra.Command{
		Use:   "heads --run DIR",
		Short: "Score, label and ablate the heads of a saved model",
		Long: `Scores every head of a checkpoint against the canonical patterns of
docs/head-patterns.md on 256 held-out examples, names it after the best one,
and prints held-out accuracy with each head switched off (--ablation: zeroed,
replaced by its mean, or by its output on another example). Also prints each
head's circuit scores (the copying score and top-1 copy accuracy of its full
OV circuit, its prefix-matching score on repeated random tokens) and the
model's in-context learning score (docs/causal.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runDir == "" {
				return usagef("--run DIR is required")
			}
			if err := html.check(); err != nil {
				return err
			}
			if err := checkOutputs(append(pics.outputs(), fileOut("dump-attention", dump), fileOut("html", html.path))...); err != nil {
				return err
			}
			if err := pics.check(); err != nil {
				return err
			}
			method, err := af.method()
			if err != nil {
				return err
			}
			m, off, be, closeBackend, err := openRun(e, runDir, ablate, &bf)
			if err != nil {
				return err
			}
			defer closeBackend()
			rel, err := rf.index(cmd, m.Task)
			if err != nil {
				return err
			}
			rep, att, err := inspect.Analyze(m, be, inspect.Options{Off: off, Ablation: method, Relation: rel, Circuit: true})
			if err != nil {
				return err
			}
			if dump != "" {
				if err := atomicfile.WriteStdout(dump, e.stdout, func(w io.Writer) error { return analysis.WriteAttention(w, att) }); err != nil {
					return err
				}
			}
			if err := pics.write(e.stdout, runTitle(m.Train), att, rep.Scores()); err != nil {
				return err
			}
			if err := html.write(e, m, be, att, rep.Scores()); err != nil {
				return err
			}
			var comp *inspect.CompositionReport
			if composition {
				c := inspect.Composition(m)
				comp = &c
			}
			w := e.reportTo(append(pics.paths(), dump, html.path)...)
			if asJSON {
				return writeJSON(w, struct {
					*inspect.Report
					Composition *inspect.CompositionReport `json:"composition,omitempty"`
				}{rep, comp})
			}
			printHeads(w, rep)
			if comp != nil {
				fmt.Fprintln(w)
				inspect.WriteCompositionTable(w, *comp)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&runDir, "run", "", "checkpoint directory written by train --save")
	ablateFlag(cmd, &ablate, &runDir)
	af.register(cmd)
	cmd.Flags().BoolVar(&composition, "composition", false, "also print Q-, K- and V-composition of every cross-layer pair of heads (Elhage et al. 2021) beside a random baseline")
	cmd.Flags().StringVar(&dump, "dump-attention", "", "write the scored batch's attention as JSON (the format score reads)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	pics.register(cmd)
	html.register(cmd)
	bf.register(cmd)
	rf.register(cmd)
	return cmd
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
	done, prefix := "", typed
	if k := strings.LastIndexByte(typed, ','); k >= 0 {
		done, prefix = typed[:k+1], typed[k+1:]
	}
	named := strings.Split(done, ",")
	var out []string
	for l := range m.Shape.Layers {
		for h := range m.Shape.Heads {
			name := analysis.HeadName(l, h)
			if strings.HasPrefix(name, prefix) && !slices.Contains(named, name) {
				out = append(out, done+name)
			}
		}
	}
	return out
}

func printHeads(w io.Writer, r *inspect.Report) {
	inspect.WriteAblationTable(w, r)
	fmt.Fprintln(w)
	inspect.WriteScoreTable(w, r.Scores())
	if len(r.Heads) > 0 && len(r.Heads[0].Relations) > 0 {
		fmt.Fprintln(w)
		inspect.WriteRelationTable(w, r.Scores())
	}
	if r.ByKind != nil {
		fmt.Fprintln(w)
		inspect.WriteByKind(w, r.ByKind)
	}
	if len(r.Heads) > 0 && r.Heads[0].Circuit != nil {
		fmt.Fprintln(w)
		inspect.WriteCircuitTable(w, r)
	}
}

// relationFlag is --relation: the relation whose best head accuracy by
// kind switches off.
type relationFlag struct{ name string }

func (f *relationFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "relation", "", "relation whose best head is switched off for the accuracy by kind (default: the task's first; agreement: verb->subject)")
}

// index resolves the flag against task t: 0 when not given.
func (f *relationFlag) index(cmd *cobra.Command, t tasks.Task) (int, error) {
	if !cmd.Flags().Changed("relation") {
		return 0, nil
	}
	i, err := tasks.RelationIndex(t, f.name)
	if err != nil {
		return 0, usagef("--relation: %v", err)
	}
	return i, nil
}

func scoreCmd(e *env) *cobra.Command {
	var (
		file   string
		asJSON bool
		pics   pictureFlags
	)
	cmd := &cobra.Command{
		Use:   "score --attention FILE.json",
		Short: "Score attention patterns from any source against the canonical patterns",
		Long: `Reads {"causal": bool, "tokens": [N][T], "attention": [N][L][H][T][T]}
(as written by heads --dump-attention, or by a PyTorch model) and prints
every head's pattern scores and label, following docs/head-patterns.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usagef("--attention FILE is required")
			}
			if err := pics.check(); err != nil {
				return err
			}
			if err := checkOutputs(pics.outputs()...); err != nil {
				return err
			}
			f, err := os.Open(file)
			if err != nil {
				return usageError{err}
			}
			defer f.Close()
			att, err := analysis.ReadAttention(f)
			if err != nil {
				return usageError{fmt.Errorf("%s: %v", file, err)}
			}
			heads := analysis.ScoreAll(att)
			if err := pics.write(e.stdout, "attention from "+file, att, heads); err != nil {
				return err
			}
			w := e.reportTo(pics.paths()...)
			if asJSON {
				return writeJSON(w, struct {
					Heads []analysis.HeadScore `json:"heads"`
				}{heads})
			}
			inspect.WriteScoreTable(w, heads)
			if len(att.Relations) > 0 {
				fmt.Fprintln(w)
				inspect.WriteRelationTable(w, heads)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "attention", "", "attention file (JSON)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	pics.register(cmd)
	return cmd
}

// openRun loads the checkpoint in runDir, reads --ablate against its
// shape and opens the backend: what every command that reads a trained
// model's heads does first.
func openRun(e *env, runDir, ablate string, bf *backendFlag) (*train.Model, [][]bool, kernels.Device, func(), error) {
	m, _, err := train.Load(runDir)
	if err != nil {
		return nil, nil, nil, nil, usageError{err}
	}
	off, err := analysis.ParseHeads(ablate, m.Shape.Layers, m.Shape.Heads)
	if err != nil {
		return nil, nil, nil, nil, usagef("--ablate: %v", err)
	}
	be, closeBackend, err := bf.open(e.stderr)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return m, off, be, closeBackend, nil
}
