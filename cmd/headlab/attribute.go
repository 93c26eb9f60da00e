package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/train"
	"headlab/viz"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newAttributeCmd(e, nil) })
}

// attributeOptions are attribute's flags.
type attributeOptions struct{ evalFlags }

func newAttributeCmd(e *env, runF func(*attributeOptions) error) *cobra.Command {
	o := &attributeOptions{}
	cmd := &cobra.Command{
		Use:   "attribute --run DIR",
		Short: "Direct logit attribution and the logit lens: which part writes the answer, and from which block it is there",
		Long: `Splits the logit of every held-out answer into what each part of the model
writes into the residual stream, read through the final LayerNorm with its
scale frozen at the run's own and along the answer's unembedding direction:
the token and positional embeddings, every head (its output through the
output projection), every block's output-projection bias and MLP, and the
final biases. The parts sum to the logit. Each part is reported as the mean
over every answer, at each answer position, and along the answer's
direction less the mean direction (the logit difference).

The logit lens reads the residual stream entering each block, and the
model's output, through the final LayerNorm and the unembedding: accuracy
and the answer's probability from each (docs/causal.md).`,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, runAttribute),
	}
	o.register(cmd, train.HeldOutExamples, "held-out examples (from the first) whose answers are attributed",
		"draw each part's mean share of the answer's logit as bars")
	return cmd
}

func (o *attributeOptions) check(*cobra.Command, []string) error { return o.evalFlags.check(1) }

func runAttribute(e *env, o *attributeOptions) error {
	return evaluate(e, &o.evalFlags, measurement[*inspect.AttributionReport]{
		measure: func(ev *train.Evaluator) ([]*inspect.AttributionReport, error) {
			return inspect.Attribute(ev, o.examples, 0)
		},
		figure: func(run string, r *inspect.AttributionReport) (*viz.Figure, error) {
			return attributionBars("direct logit attribution · "+run, r).Figure()
		},
		text: printAttribution,
	})
}

// attributionBars is r's parts as bars: each part's mean logit.
func attributionBars(title string, r *inspect.AttributionReport) viz.Bars {
	b := viz.Bars{Title: title, XLabel: "mean part of the answer's logit",
		Note: fmt.Sprintf("%d answers; the parts sum to the mean answer logit, %.3g", r.Answers, r.Logit)}
	for _, p := range r.Parts {
		b.Labels, b.Values = append(b.Labels, p.Name), append(b.Values, p.Logit)
	}
	return b
}

func printAttribution(w io.Writer, r *inspect.AttributionReport) {
	fmt.Fprintf(w, "Direct logit attribution on %d held-out examples (%d answers): mean answer logit %.3f, logit difference %.3f; "+
		"every answer's parts sum to its logit within %.1e.\n\n", r.Examples, r.Answers, r.Logit, r.LogitDiff, r.MaxResidual)
	fmt.Fprint(w, "| Part | Logit | Logit difference |")
	for _, t := range r.Positions {
		fmt.Fprintf(w, " at %d |", t)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "|---|---|---|"+strings.Repeat("---|", len(r.Positions)))
	for _, p := range r.Parts {
		fmt.Fprintf(w, "| %s | %.3f | %.3f |", p.Name, p.Logit, p.LogitDiff)
		for _, v := range p.ByPosition {
			fmt.Fprintf(w, " %.2f |", v)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nLogit lens: the residual stream entering each block, and the output, through the final LayerNorm and the unembedding.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Read at | Accuracy | Answer probability |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, l := range r.Lens {
		fmt.Fprintf(w, "| %s | %.1f%% | %.3f |\n", l.Name, 100*l.Accuracy, l.Probability)
	}
}
