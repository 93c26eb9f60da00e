package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/atomicfile"
	"headlab/train"
	"headlab/viz"
)

func init() { commands = append(commands, headsCmd, scoreCmd) }

// pictureFlags are --png and --arcs: pictures of one held-out example.
type pictureFlags struct{ png, arcs string }

func (p *pictureFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.png, "png", "", "draw every head's attention on one held-out example as a heatmap grid (PNG)")
	cmd.Flags().StringVar(&p.arcs, "arcs", "", "draw every head's attention on one held-out example as arcs (PNG)")
}

// outputs are the pictures' paths, for checkOutputs.
func (p *pictureFlags) outputs() []output {
	return []output{fileOut("png", p.png), fileOut("arcs", p.arcs)}
}

// write draws example 0 of att with each head titled by its score.
func (p *pictureFlags) write(att *analysis.Attention, heads []analysis.HeadScore) error {
	if p.png == "" && p.arcs == "" {
		return nil
	}
	g := viz.HeadGrid(att, heads, 0)
	if p.png != "" {
		if err := viz.WriteHeatmapsPNG(p.png, g); err != nil {
			return err
		}
	}
	if p.arcs != "" {
		return viz.WriteArcsPNG(p.arcs, g)
	}
	return nil
}

func headsCmd(e *env) *cobra.Command {
	var (
		runDir, ablate, dump string
		asJSON, composition  bool
		pics                 pictureFlags
		bf                   backendFlag
	)
	cmd := &cobra.Command{
		Use:   "heads --run DIR",
		Short: "Score, label and ablate the heads of a saved model",
		Long: `Scores every head of a checkpoint against the canonical patterns of
docs/head-patterns.md on 256 held-out examples, names it after the best one,
and prints held-out accuracy with each head switched off.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runDir == "" {
				return usagef("--run DIR is required")
			}
			if err := checkOutputs(append(pics.outputs(), fileOut("dump-attention", dump))...); err != nil {
				return err
			}
			m, _, err := train.Load(runDir)
			if err != nil {
				return usageError{err}
			}
			off, err := inspect.ParseHeads(ablate, m.Shape)
			if err != nil {
				return usagef("--ablate: %v", err)
			}
			be, closeBackend, err := bf.open(e.stderr)
			if err != nil {
				return err
			}
			defer closeBackend()
			rep, att, err := inspect.Analyze(m, be, off)
			if err != nil {
				return err
			}
			if dump != "" {
				if err := atomicfile.Write(dump, func(w io.Writer) error { return analysis.WriteAttention(w, att) }); err != nil {
					return err
				}
			}
			if err := pics.write(att, rep.Scores()); err != nil {
				return err
			}
			var comp *inspect.CompositionReport
			if composition {
				c := inspect.Composition(m)
				comp = &c
			}
			if asJSON {
				return writeJSON(e.stdout, struct {
					*inspect.Report
					Composition *inspect.CompositionReport `json:"composition,omitempty"`
				}{rep, comp})
			}
			printHeads(e.stdout, rep)
			if comp != nil {
				fmt.Fprintln(e.stdout)
				inspect.WriteCompositionTable(e.stdout, *comp)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&runDir, "run", "", "checkpoint directory written by train --save")
	cmd.Flags().StringVar(&ablate, "ablate", "", "heads to switch off, e.g. L0H0,L1H1")
	cmd.Flags().BoolVar(&composition, "composition", false, "also print Q-, K- and V-composition of every cross-layer pair of heads (Elhage et al. 2021) beside a random baseline")
	cmd.Flags().StringVar(&dump, "dump-attention", "", "write the scored batch's attention as JSON (the format score reads)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	pics.register(cmd)
	bf.register(cmd)
	return cmd
}

func printHeads(w io.Writer, r *inspect.Report) {
	inspect.WriteAblationTable(w, r)
	fmt.Fprintln(w)
	inspect.WriteScoreTable(w, r.Scores())
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
			if err := pics.write(att, heads); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, struct {
					Heads []analysis.HeadScore `json:"heads"`
				}{heads})
			}
			inspect.WriteScoreTable(e.stdout, heads)
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "attention", "", "attention file (JSON)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	pics.register(cmd)
	return cmd
}
