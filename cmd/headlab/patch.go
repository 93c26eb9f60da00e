package main

import (
	"cmp"
	"fmt"

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
		Long: `Runs held-out examples (the clean runs) and a corrupted copy of each, then
writes one clean activation into the corrupted run at a time: each head's
output (before the output projection) at each position, and the residual
stream entering each block at each position. It reports what each patch
restores, normalised as (M - M_corrupted) / (M_clean - M_corrupted) for M the
answer's logit difference (its logit less the mean logit) and for M the
accuracy on the clean answers, and names the heads whose restored logit
difference, summed over positions, reaches 0.1 (docs/causal.md).

` + corruptionHelp,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, runPatch),
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
			opts.Progress, finish = progressBar(e, "patch", "runs", true)
			defer finish()
			return inspect.Patch(ev, opts)
		},
		figure: func(run string, r *inspect.PatchReport) (*viz.Figure, error) {
			return patchGrid("patching · "+run, r).Figure()
		},
		text: inspect.WritePatch,
	})
}

// patchGrid is r's heatmap: the heads, then the residual streams, by
// position, each cell the normalised logit difference patching restores.
func patchGrid(title string, r *inspect.PatchReport) viz.PatchGrid {
	g := viz.PatchGrid{Title: title, Note: fmt.Sprintf("share of the answer's logit difference restored by patching the clean activation into the %s-corrupted run, per position", r.Corruption)}
	for _, p := range r.Positions {
		g.Columns = append(g.Columns, fmt.Sprint(p))
	}
	for _, p := range r.Heads {
		g.Rows, g.Values = append(g.Rows, p.Name), append(g.Values, p.LogitDiff)
	}
	g.Gaps = []int{len(r.Heads)}
	for _, p := range r.Resid {
		g.Rows, g.Values = append(g.Rows, p.Name), append(g.Values, p.LogitDiff)
	}
	return g
}

// progressBar is a progress report on stderr as a bar, made at the first
// report (when the total is known); with tenths, a log (not a terminal)
// gets a line each tenth of the work only. finish ends the bar.
func progressBar(e *env, name, unit string, tenths bool) (report func(done, total int), finish func()) {
	var bar *progress.Bar
	report = func(done, total int) {
		if bar == nil {
			bar = progress.New(e.stderr, name, unit, total)
		}
		if !tenths || bar.OnTerminal() || done*10/total != (done-1)*10/total {
			bar.Update(done, "")
		}
	}
	return report, func() {
		if bar != nil {
			bar.Finish()
		}
	}
}

// corruptionHelp ends the help of every command that runs examples clean
// and corrupted (patch, circuit): the corruptions --corruption names.
const corruptionHelp = `Corruptions (--corruption; the task's default first):
  first-half  induction tasks: every first-half token replaced by a token the
              example does not hold, so no query has an earlier copy
  other       every task: another held-out example (the next one)`

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
