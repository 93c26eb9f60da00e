package main

import (
	"fmt"
	"strings"

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
loss, held-out accuracy and each head's winning score against step, marking
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
				if err := viz.Write(png, fig); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(e.stdout, struct {
					Phase   any `json:"phase_change"`
					Records int `json:"records"`
				}{phase, len(h)})
			}
			printPhase(e.stdout, phase)
			for _, c := range labelChanges(h) {
				fmt.Fprintf(e.stdout, "step %5d  %s\n", int(c.Step), c.Text)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&runDir, "run", "", "checkpoint directory with a recorded history")
	figureFlag(cmd, &png, "png", true, "draw loss, accuracy and head scores in three panels")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the phase change as JSON")
	return cmd
}

// labelChanges marks every step where some head's label differs from its
// label at the previous record, one marker per step.
func labelChanges(h inspect.History) []viz.Marker {
	var out []viz.Marker
	last := map[string]string{}
	for k, s := range h {
		var changed []string
		for _, hs := range s.Heads {
			if k > 0 && last[hs.Name] != hs.Label {
				changed = append(changed, hs.Name+" "+hs.Label)
			}
			last[hs.Name] = hs.Label
		}
		if len(changed) > 0 {
			out = append(out, viz.Marker{Step: float64(s.Step), Text: strings.Join(changed, ", ")})
		}
	}
	return out
}

func curves(title string, h inspect.History) viz.Curves {
	c := viz.Curves{Title: title, Loss: viz.Curve{Name: "loss"}, Accuracy: viz.Curve{Name: "accuracy"}}
	heads := map[string]int{}
	for _, s := range h {
		step := float64(s.Step)
		if s.Loss != nil {
			c.Loss.Steps = append(c.Loss.Steps, step)
			c.Loss.Values = append(c.Loss.Values, *s.Loss)
		}
		c.Accuracy.Steps = append(c.Accuracy.Steps, step)
		c.Accuracy.Values = append(c.Accuracy.Values, s.Accuracy)
		for _, hs := range s.Heads {
			k, ok := heads[hs.Name]
			if !ok {
				k = len(c.Heads)
				heads[hs.Name] = k
				c.Heads = append(c.Heads, viz.Curve{Name: hs.Name})
			}
			c.Heads[k].Steps = append(c.Heads[k].Steps, step)
			c.Heads[k].Values = append(c.Heads[k].Values, hs.Score)
		}
	}
	c.Markers = labelChanges(h)
	p := h.Phase()
	c.PhaseFrom, c.PhaseTo = float64(min(p.InductionFrom, p.AccuracyFrom)), float64(max(p.InductionTo, p.AccuracyTo))
	return c
}
