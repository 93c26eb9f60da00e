package main

import (
	"fmt"

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
		text: inspect.WriteAttribution,
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
