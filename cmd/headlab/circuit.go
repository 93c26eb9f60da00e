package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"headlab/circuit"
	"headlab/train"
	"headlab/viz"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newCircuitCmd(e, nil) })
}

// circuitOptions are circuit's flags.
type circuitOptions struct {
	evalFlags
	corruption, direction string
	threshold             float64
}

func newCircuitCmd(e *env, runF func(*circuitOptions) error) *cobra.Command {
	o := &circuitOptions{}
	cmd := &cobra.Command{
		Use:   "circuit --run DIR",
		Short: "The model's circuit as edges: which part reads which, by path patching and attribution patching",
		Long: `Measures every edge of the model, a sender (the token or position embedding,
a head's output, an MLP's output) reaching one receiver (a head's query, key or
value input, an MLP's input, the logits), by path patching: the sender's
contribution to that one receiver's input is replaced by its value on the
corrupted run (--direction noising, the default) or, running the corrupted
examples, by its value on the clean run (denoising), every other path left as
it is and every LayerNorm recomputed. Attribution patching estimates every edge
at once from one forward and one backward pass.

The circuit is the smallest edge set found that keeps at least --threshold of
the answer's logit difference, (M - M_corrupted) / (M_clean - M_corrupted),
with every other edge patched: the edges ranked by attribution, the shortest
prefix of the ranking that keeps the threshold (the faithfulness curve is
every prefix's share), then each of its edges dropped, last-ranked first, when
the rest still keep it (docs/circuits.md).

` + corruptionHelp,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, runCircuit),
	}
	o.register(cmd, train.EvalChunk, "held-out examples (from the first) run clean and corrupted",
		"draw the circuit: nodes by layer, edges by effect, with the faithfulness curve")
	corruptionFlag(cmd, &o.corruption)
	cmd.Flags().StringVar(&o.direction, "direction", circuit.Noising, "noising (patch corrupted values into the clean run) or denoising (clean values into the corrupted run)")
	cmd.Flags().Float64Var(&o.threshold, "threshold", circuit.DefaultThreshold, "the share of the logit difference the circuit keeps, in (0, 1]")
	return cmd
}

func (o *circuitOptions) check(*cobra.Command, []string) error {
	if err := circuit.CheckThreshold(o.threshold); err != nil {
		return usagef("--threshold: %v", err)
	}
	if err := circuit.CheckDirection(o.direction); err != nil {
		return usagef("--direction: %v", err)
	}
	return o.evalFlags.check(2)
}

func runCircuit(e *env, o *circuitOptions) error {
	m, err := o.run.load()
	if err != nil {
		return err
	}
	corruption, err := corruptionOf(m, o.corruption)
	if err != nil {
		return err
	}
	dev, done, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer done()
	r, err := circuit.NewRunner(m, dev, circuit.Options{Examples: o.examples, Corruption: corruption, Direction: o.direction})
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := findCircuit(e, r, o.threshold, true)
	if err != nil {
		return err
	}
	return o.out.write(e, func() (*viz.Figure, error) {
		return circuitFigure("circuit · "+runTitle(m.Train), m.Shape.Layers, rep).Figure()
	}, rep, func(w io.Writer) { circuit.WriteReport(w, rep) })
}

// circuitFigure is rep's drawing: its nodes by layer, every edge with an
// effect, the circuit's drawn strong, and the faithfulness curve.
func circuitFigure(title string, layers int, rep *circuit.Report) viz.CircuitGraph {
	g := viz.CircuitGraph{Title: title, Layers: layers, Curve: rep.Curve, Threshold: rep.Threshold, Kept: len(rep.Circuit),
		Note: fmt.Sprintf("%s, %s corruption, %d examples: the circuit keeps %.0f%% of the logit difference with %d of %d edges",
			rep.Direction, rep.Corruption, rep.Examples, 100*rep.Faithfulness, len(rep.Circuit), len(rep.Edges))}
	for _, e := range rep.Edges {
		g.Edges = append(g.Edges, viz.CircuitEdge{From: e.From, To: e.To, Effect: e.Effect, In: e.InCircuit})
	}
	return g
}

// findCircuit is circuit.Find with its progress on stderr as a bar.
func findCircuit(e *env, r *circuit.Runner, threshold float64, curve bool) (*circuit.Report, error) {
	report, finish := progressBar(e, "circuit", "edge sets", false)
	defer finish()
	return circuit.Find(r, threshold, curve, report)
}
