package main

import (
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
		Long:  longHelp("curves"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runCurves),
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
	rep := h.Report()
	return o.out.write(e, func() (*viz.Figure, error) {
		title := o.run.dir
		if m, err := o.run.load(); err == nil {
			title = runTitle(m.Train)
		}
		return h.Curves(title).Figure()
	}, rep, rep.Write)
}
