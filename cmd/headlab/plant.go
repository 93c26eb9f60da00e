package main

import (
	"fmt"
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
		Long: `Writes a checkpoint of the induction task whose weights are set by hand
(docs/circuits.md): a previous-token head (L0H0) that attends to the position
before by positional QK and copies its token, an induction head (L1H0) whose
keys read that head's output (K-composition) and whose OV circuit copies the
token it attends to into the logits, and heads of random weights beside them;
--kind redundant has two induction heads (L1H0, L1H1), each writing half of
the answer. It prints the planted edges that patching under --corruption can
find, for checking circuit (or any other tool) against them.`,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, runPlant),
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
	names := []string{}
	for _, ed := range edges {
		names = append(names, ed.String())
	}
	return e.report(o.json, map[string]any{"kind": o.kind, "corruption": o.corruption, "planted_edges": names}, func(w io.Writer) {
		fmt.Fprintf(w, "Planted %s model in %s. Edges patching under %s can find:\n  %s\n", o.kind, o.out, o.corruption, strings.Join(names, "\n  "))
	})
}
