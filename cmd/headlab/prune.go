package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/train"
	"headlab/viz"
)

func init() { commands = append(commands, pruneCmd) }

func pruneCmd(e *env) *cobra.Command {
	var (
		runDir, png      string
		asJSON           bool
		examples, orders int
		bf               backendFlag
	)
	cmd := &cobra.Command{
		Use:   "prune --run DIR",
		Short: "Remove heads in order of increasing importance and watch accuracy fall",
		Long: `Ranks heads by Michel et al.'s (2019) importance, the mean over held-out
examples of |d loss / d gate| for a gate on the head's output, switches them
off one at a time, least important first, and prints held-out accuracy
against the fraction of heads removed beside the mean over random orders.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runDir == "" {
				return usagef("--run DIR is required")
			}
			if examples < 1 || examples > train.HeldOutExamples || orders < 1 {
				return usagef("--examples must be in 1..%d and --random-orders positive", train.HeldOutExamples)
			}
			if err := checkOutputs(fileOut("png", png)); err != nil {
				return err
			}
			m, _, err := train.Load(runDir)
			if err != nil {
				return usageError{err}
			}
			be, closeBackend, err := bf.open(e.stderr)
			if err != nil {
				return err
			}
			defer closeBackend()
			r, err := inspect.Prune(m, be, examples, orders)
			if err != nil {
				return err
			}
			if png != "" {
				var imp, rnd viz.Curve
				imp.Name, rnd.Name = "least important first", fmt.Sprintf("random order (mean of %d)", orders)
				for _, s := range r.Steps {
					imp.Steps, imp.Values = append(imp.Steps, s.Fraction), append(imp.Values, s.Accuracy)
					rnd.Steps, rnd.Values = append(rnd.Steps, s.Fraction), append(rnd.Values, s.RandomAccuracy)
				}
				if err := viz.WriteLinesPNG(png, viz.Lines{Title: "pruning " + runDir, XLabel: "fraction of heads removed",
					YLabel: "held-out accuracy", Curves: []viz.Curve{imp, rnd}}); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(e.stdout, r)
			}
			fmt.Fprintln(e.stdout, "| Heads removed | Fraction | Last removed | Importance | Held-out accuracy | Random order |")
			fmt.Fprintln(e.stdout, "|---|---|---|---|---|---|")
			for k, s := range r.Steps {
				imp := ""
				if k > 0 {
					imp = fmt.Sprintf("%.4f", r.Importance[k-1].Importance)
				}
				fmt.Fprintf(e.stdout, "| %d | %.2f | %s | %s | %.1f%% | %.1f%% |\n", s.Removed, s.Fraction, s.Head, imp, 100*s.Accuracy, 100*s.RandomAccuracy)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&runDir, "run", "", "checkpoint directory written by train --save")
	cmd.Flags().StringVar(&png, "png", "", "plot accuracy against the fraction of heads removed (PNG)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	cmd.Flags().IntVar(&examples, "examples", 256, "held-out examples the importance is averaged over")
	cmd.Flags().IntVar(&orders, "random-orders", 20, "random orders averaged for the baseline")
	bf.register(cmd)
	return cmd
}
