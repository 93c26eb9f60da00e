package main

import (
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
		Long:  longHelp("attribute"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runAttribute),
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
			return r.Bars("direct logit attribution · " + run).Figure()
		},
		text: inspect.WriteAttribution,
	})
}
