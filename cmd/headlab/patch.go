package main

import (
	"cmp"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/internal/progress"
	"headlab/train"
	"headlab/viz"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newPatchCmd(e, nil) })
}

// layerPositionFlags are --layer and --position: one block and one
// position to restrict a measurement to, checked against the model's
// shape before any work.
type layerPositionFlags struct {
	layer, position           int
	layerAsked, positionAsked bool // set by read
}

func (f *layerPositionFlags) register(cmd *cobra.Command, what string) {
	cmd.Flags().IntVar(&f.layer, "layer", -1, "only this block (0 is the first; default every block)"+what)
	cmd.Flags().IntVar(&f.position, "position", -1, "only this position (0 is the first; default every position)"+what)
}

// read notes which of the flags cmd was given.
func (f *layerPositionFlags) read(cmd *cobra.Command) {
	f.layerAsked, f.positionAsked = cmd.Flags().Changed("layer"), cmd.Flags().Changed("position")
}

// lists are the flags as lists for inspect (nil: all), or bad input when
// a given one is out of the model's range.
func (f *layerPositionFlags) lists(m *train.Model) (layers, positions []int, err error) {
	if f.layerAsked {
		if f.layer < 0 || f.layer >= m.Shape.Layers {
			return nil, nil, usagef("--layer %d: the model's blocks are 0..%d", f.layer, m.Shape.Layers-1)
		}
		layers = []int{f.layer}
	}
	if f.positionAsked {
		if f.position < 0 || f.position >= m.Shape.SeqLen {
			return nil, nil, usagef("--position %d: the model's positions are 0..%d", f.position, m.Shape.SeqLen-1)
		}
		positions = []int{f.position}
	}
	return layers, positions, nil
}

// patchOptions are patch's flags.
type patchOptions struct {
	evalFlags
	corruption string
	only       layerPositionFlags
}

func newPatchCmd(e *env, runF func(*patchOptions) error) *cobra.Command {
	o := &patchOptions{}
	cmd := &cobra.Command{
		Use:   "patch --run DIR",
		Short: "Activation patching: where the answer is computed, head by head and position by position",
		Long:  longHelp("patch") + corruptionHelp,
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runPatch),
	}
	o.register(cmd, train.EvalChunk, "held-out examples (from the first) run clean and corrupted",
		"draw the heatmap: every head and each block's residual stream by position")
	corruptionFlag(cmd, &o.corruption)
	o.only.register(cmd, " patched")
	return cmd
}

func (o *patchOptions) check(cmd *cobra.Command, _ []string) error {
	o.only.read(cmd)
	return o.evalFlags.check(2)
}

// patching is what to patch in model m: --corruption (default the task's
// first), --layer and --position, refused when m cannot take them.
func (o *patchOptions) patching(m *train.Model) (inspect.PatchOptions, error) {
	p := inspect.PatchOptions{Examples: o.examples}
	var err error
	if p.Corruption, err = corruptionOf(m, o.corruption); err != nil {
		return p, err
	}
	p.Layers, p.Positions, err = o.only.lists(m)
	return p, err
}

func runPatch(e *env, o *patchOptions) error {
	var opts inspect.PatchOptions
	return evaluate(e, &o.evalFlags, measurement[*inspect.PatchReport]{
		fits: func(m *train.Model) (err error) {
			opts, err = o.patching(m)
			return err
		},
		measure: func(ev *train.Evaluator) ([]*inspect.PatchReport, error) {
			var finish func()
			opts.Progress, finish = progress.Reporter(e.stderr, "patch", "runs", true)
			defer finish()
			return inspect.Patch(ev, opts)
		},
		figure: func(run string, r *inspect.PatchReport) (*viz.Figure, error) {
			return r.Grid("patching · " + run).Figure()
		},
		text: inspect.WritePatch,
	})
}

// corruptionHelp ends the help of every command that runs examples clean
// and corrupted (patch, circuit): the corruptions --corruption names.
var corruptionHelp = longHelp("corruptions")

// corruptionOf is the corruption --corruption names (default the task's
// first), refused when m's task has no such corruption.
func corruptionOf(m *train.Model, name string) (string, error) {
	c := cmp.Or(name, inspect.Corruptions(m.Task)[0])
	if err := inspect.CheckCorruption(m.Task, c); err != nil {
		return "", usagef("--corruption: %v", err)
	}
	return c, nil
}

// corruptionFlag registers --corruption into v.
func corruptionFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "corruption", "", "how each clean example is corrupted: first-half (induction tasks) or other (every task); default the task's first")
}
