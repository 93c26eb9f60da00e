package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/viz"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newCurvesCmd(e, nil) })
}

// curvesOptions are curves' flags.
type curvesOptions struct {
	run runFlag
	out reportFlags
}

func newCurvesCmd(e *env, runF func(*curvesOptions) error) *cobra.Command {
	o := &curvesOptions{}
	cmd := &cobra.Command{
		Use:   "curves --run DIR --png FILE.{png,svg,pdf}",
		Short: "Plot loss, accuracy and every head's score over training, with the phase change",
		Long: `Reads the history that train --record-every K --save DIR recorded and plots
loss, held-out accuracy beside training accuracy (a grokking run shows
the delay between them), the in-context learning score (next-token loss late
in the sequence minus early, docs/causal.md; histories recorded before it
have none) and each head's winning score against step, marking
where a head's label changed and shading the phase change: the steps over
which the induction score and the accuracy make most of their rise (20% to
80% of the way up).`,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, runCurves),
	}
	o.run.register(cmd, "checkpoint directory with a recorded history")
	o.out.register(cmd, "draw loss, accuracy and head scores in three panels", "print the phase change as JSON")
	return cmd
}

func (o *curvesOptions) check(*cobra.Command, []string) error {
	if err := o.run.required(); err != nil {
		return err
	}
	return checkFigure("png", o.out.png)
}

func runCurves(e *env, o *curvesOptions) error {
	h, err := inspect.LoadHistory(o.run.dir)
	if err != nil {
		return usageError{err}
	}
	phase := h.Phase()
	return o.out.write(e, func() (*viz.Figure, error) {
		title := o.run.dir
		if m, err := o.run.load(); err == nil {
			title = runTitle(m.Train)
		}
		return curves(title, h).Figure()
	}, struct {
		Phase   any `json:"phase_change"`
		Records int `json:"records"`
	}{phase, len(h)}, func(w io.Writer) {
		printPhase(w, phase)
		for _, c := range h.LabelChanges() {
			fmt.Fprintf(w, "step %5d  %s\n", c.Step, c.Text())
		}
	})
}

// curves is the figure of history h: its series and label changes from
// inspect, the phase change's span shaded.
func curves(title string, h inspect.History) viz.Curves {
	c := viz.Curves{Title: title, Loss: vizCurve(h.Loss()), Accuracy: vizCurve(h.Accuracy()), TrainAccuracy: vizCurve(h.TrainAccuracy()), ICL: vizCurve(h.ICL())}
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
