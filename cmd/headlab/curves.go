package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/train"
	"headlab/viz"
)

func init() { commands = append(commands, curvesCmd) }

func curvesCmd(e *env) *cobra.Command {
	var (
		runDir, png string
		asJSON      bool
	)
	cmd := &cobra.Command{
		Use:   "curves --run DIR --png FILE.{png,svg,pdf}",
		Short: "Plot loss, accuracy and every head's score over training, with the phase change",
		Long: `Reads the history that train --record-every K --save DIR recorded and plots
loss, held-out accuracy, the in-context learning score (next-token loss late
in the sequence minus early, docs/causal.md; histories recorded before it
have none) and each head's winning score against step, marking
where a head's label changed and shading the phase change: the steps over
which the induction score and the accuracy make most of their rise (20% to
80% of the way up).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runDir == "" {
				return usagef("--run DIR is required")
			}
			if err := checkFigures(png); err != nil {
				return err
			}
			if err := checkOutputs(fileOut("png", png)); err != nil {
				return err
			}
			h, err := inspect.LoadHistory(runDir)
			if err != nil {
				return usageError{err}
			}
			phase := h.Phase()
			if png != "" {
				title := runDir
				if m, _, err := train.Load(runDir); err == nil {
					title = runTitle(m.Train)
				}
				fig, err := curves(title, h).Figure()
				if err != nil {
					return err
				}
				if err := viz.WriteStdout(png, e.stdout, fig); err != nil {
					return err
				}
			}
			w := e.reportTo(png)
			if asJSON {
				return writeJSON(w, struct {
					Phase   any `json:"phase_change"`
					Records int `json:"records"`
				}{phase, len(h)})
			}
			printPhase(w, phase)
			for _, c := range h.LabelChanges() {
				fmt.Fprintf(w, "step %5d  %s\n", c.Step, c.Text())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&runDir, "run", "", "checkpoint directory with a recorded history")
	figureFlag(cmd, &png, "png", true, "draw loss, accuracy and head scores in three panels")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the phase change as JSON")
	return cmd
}

// curves is the figure of history h: its series and label changes from
// inspect, the phase change's span shaded.
func curves(title string, h inspect.History) viz.Curves {
	c := viz.Curves{Title: title, Loss: vizCurve(h.Loss()), Accuracy: vizCurve(h.Accuracy()), ICL: vizCurve(h.ICL())}
	for _, s := range h.HeadScores() {
		c.Heads = append(c.Heads, vizCurve(s))
	}
	for _, ch := range h.LabelChanges() {
		c.Markers = append(c.Markers, viz.Marker{Step: float64(ch.Step), Text: ch.Text()})
	}
	from, to := h.Phase().Span()
	c.PhaseFrom, c.PhaseTo = float64(from), float64(to)
	return c
}

// vizCurve is a series as viz draws it.
func vizCurve(s inspect.Series) viz.Curve {
	c := viz.Curve{Name: s.Name, Values: s.Values}
	for _, step := range s.Steps {
		c.Steps = append(c.Steps, float64(step))
	}
	return c
}
