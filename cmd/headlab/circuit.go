package main

import (
	"io"

	"github.com/spf13/cobra"

	"headlab/circuit"
	"headlab/internal/progress"
	"headlab/kernels"
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
		Long:  longHelp("circuit") + corruptionHelp,
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runCircuit),
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
	rep, err := findCircuit(e, m, dev, circuit.Options{Examples: o.examples, Corruption: corruption, Direction: o.direction}, o.threshold, true)
	if err != nil {
		return err
	}
	return o.out.write(e, func() (*viz.Figure, error) {
		return rep.Graph("circuit · "+runTitle(m.Train), m.Shape.Layers).Figure()
	}, rep, func(w io.Writer) { circuit.WriteReport(w, rep) })
}

// findCircuit is circuit.FindIn with its progress on stderr as a bar.
func findCircuit(e *env, m *train.Model, dev kernels.Device, o circuit.Options, threshold float64, curve bool) (*circuit.Report, error) {
	report, finish := progress.Reporter(e.stderr, "circuit", "edge sets", false)
	defer finish()
	return circuit.FindIn(m, dev, o, threshold, curve, report)
}
