package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strings"

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
	p := inspect.PatchOptions{Examples: o.examples, Corruption: cmp.Or(o.corruption, inspect.Corruptions(m.Task)[0])}
	if err := inspect.CheckCorruption(m.Task, p.Corruption); err != nil {
		return p, usagef("--corruption: %v", err)
	}
	var err error
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
			// Progress on stderr: a bar on a terminal, a line each tenth
			// of the runs in a log.
			var bar *progress.Bar
			opts.Progress = func(done, total int) {
				if bar == nil {
					bar = progress.New(e.stderr, "patch", "runs", total)
				}
				if bar.OnTerminal() || done*10/total != (done-1)*10/total {
					bar.Update(done, "")
				}
			}
			r, err := inspect.Patch(ev, opts)
			if bar != nil {
				bar.Finish()
			}
			return r, err
		},
		figure: func(run string, r *inspect.PatchReport) (*viz.Figure, error) {
			return patchGrid("patching · "+run, r).Figure()
		},
		text: printPatch,
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

// twoDecimals is v to two decimals, without a sign on a value that rounds
// to zero.
func twoDecimals(v float64) string {
	if math.Abs(v) < 0.005 {
		return "0.00"
	}
	return fmt.Sprintf("%.2f", v)
}

func printPatch(w io.Writer, r *inspect.PatchReport) {
	fmt.Fprintf(w, "Corruption %s on %d held-out examples. Clean: logit difference %.3f, accuracy %.1f%%; corrupted: %.3f, %.1f%%.\n\n",
		r.Corruption, r.Examples, r.Clean.LogitDiff, 100*r.Clean.Accuracy, r.Corrupted.LogitDiff, 100*r.Corrupted.Accuracy)
	fmt.Fprintln(w, "Share of the logit difference restored, (M - M_corrupted) / (M_clean - M_corrupted), by position patched:")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| Patched |")
	for _, p := range r.Positions {
		fmt.Fprintf(w, " %d |", p)
	}
	fmt.Fprintln(w, " sum |")
	fmt.Fprintln(w, "|---|"+strings.Repeat("---|", len(r.Positions)+1))
	for _, p := range append(append([]inspect.Patched(nil), r.Heads...), r.Resid...) {
		fmt.Fprintf(w, "| %s |", p.Name)
		for _, v := range p.LogitDiff {
			fmt.Fprintf(w, " %s |", twoDecimals(v))
		}
		fmt.Fprintf(w, " %s |\n", twoDecimals(p.Total))
	}
	located := "none"
	if len(r.Located) > 0 {
		located = strings.Join(r.Located, ", ")
	}
	fmt.Fprintf(w, "\nHeads located by patching (sum at least %.1f): %s.\n", inspect.PatchLocated, located)
}

// corruptionHelp ends the help of every command that runs examples clean
// and corrupted (patch, circuit): the corruptions --corruption names.
const corruptionHelp = `Corruptions (--corruption; the task's default first):
  first-half  induction tasks: every first-half token replaced by a token the
              example does not hold, so no query has an earlier copy
  other       every task: another held-out example (the next one)`

// corruptionFlag registers --corruption into v.
func corruptionFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "corruption", "", "how each clean example is corrupted: first-half (induction tasks) or other (every task); default the task's first")
}
