package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"headlab/circuit"
	"headlab/inspect"
	"headlab/tasks"
	"headlab/train"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newPlantCmd(e, nil) })
}

// plantOptions are plant's flags.
type plantOptions struct {
	kind, out, corruption string
	seed                  uint64
	json                  bool
}

func newPlantCmd(e *env, runF func(*plantOptions) error) *cobra.Command {
	o := &plantOptions{}
	cmd := &cobra.Command{
		Use:   "plant --kind induction|redundant --out DIR",
		Short: "Write a model whose induction circuit is built by construction, not trained",
		Long:  longHelp("plant"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runPlant),
	}
	cmd.Flags().StringVar(&o.kind, "kind", circuit.PlantInduction, "the model: "+strings.Join(circuit.PlantKinds, " or "))
	cmd.Flags().StringVar(&o.out, "out", "", "checkpoint directory to write")
	cmd.Flags().StringVar(&o.corruption, "corruption", inspect.CorruptFirstHalf, "the corruption whose findable edges are printed: first-half or other")
	cmd.Flags().Uint64Var(&o.seed, "seed", 1, "the seed of the random heads (and of the held-out examples)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the planted edges as JSON")
	return cmd
}

func (o *plantOptions) check(*cobra.Command, []string) error {
	if !slices.Contains(circuit.PlantKinds, o.kind) {
		return usagef("--kind %q: want %s", o.kind, strings.Join(circuit.PlantKinds, " or "))
	}
	if o.out == "" {
		return usagef("--out DIR is required")
	}
	t, _ := tasks.New("induction")
	if err := inspect.CheckCorruption(t, o.corruption); err != nil {
		return usagef("--corruption: %v", err)
	}
	return checkOutputs(checkpointOut("out", o.out))
}

func runPlant(e *env, o *plantOptions) error {
	m, edges, err := circuit.Plant(o.kind, o.seed, o.corruption)
	if err != nil {
		return err
	}
	if err := train.Save(o.out, m, nil); err != nil {
		return err
	}
	rep := circuit.PlantedOf(o.kind, o.corruption, edges)
	return e.report(o.json, rep, func(w io.Writer) { rep.Write(w, o.out) })
}
