package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"headlab/inspect"
	"headlab/train"
	"headlab/viz"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newPruneCmd(e, nil) })
}

// pruneOptions are prune's flags, and what check makes of them.
type pruneOptions struct {
	run              runFlag
	out              reportFlags
	order            string
	examples, orders int
	backend          backendFlag
	ablation         ablationFlag

	orderList []string
	method    inspect.Ablation
}

func newPruneCmd(e *env, runF func(*pruneOptions) error) *cobra.Command {
	o := &pruneOptions{}
	cmd := &cobra.Command{
		Use:   "prune --run DIR",
		Short: "Remove heads one at a time in several orders and watch accuracy fall",
		Long:  longHelp("prune"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runPrune),
	}
	o.run.register(cmd, "checkpoint directory written by train --save")
	o.out.register(cmd, "plot accuracy against the fraction of heads removed, every order on one figure", "print one JSON object on stdout")
	cmd.Flags().StringVar(&o.order, "order", "all", "pruning orders, comma-separated: "+strings.Join(inspect.Orders, ", ")+", or all")
	cmd.Flags().IntVar(&o.examples, "examples", 256, "held-out examples the orders choose on (importance, greedy's accuracies)")
	cmd.Flags().IntVar(&o.orders, "random-orders", 20, "random orders averaged for the random curve")
	o.ablation.register(cmd)
	o.backend.register(cmd)
	return cmd
}

func (o *pruneOptions) check(*cobra.Command, []string) error {
	if err := o.run.required(); err != nil {
		return err
	}
	if o.examples < 1 || o.examples > train.HeldOutExamples || o.orders < 1 {
		return usagef("--examples must be in 1..%d and --random-orders positive", train.HeldOutExamples)
	}
	if err := checkFigures(o.out.png); err != nil {
		return err
	}
	var err error
	if o.orderList, err = inspect.ParseOrders(o.order); err != nil {
		return usagef("--order: %v", err)
	}
	if o.method, err = o.ablation.method(); err != nil {
		return err
	}
	if err := enoughExamples(o.method, o.examples); err != nil {
		return err
	}
	return checkOutputs(fileOut("png", o.out.png))
}

func runPrune(e *env, o *pruneOptions) error {
	m, err := o.run.load()
	if err != nil {
		return err
	}
	be, closeBackend, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeBackend()
	r, err := inspect.PruneBy(m, be, o.method, o.examples, o.orders, o.orderList)
	if err != nil {
		return err
	}
	return o.out.write(e, func() (*viz.Figure, error) {
		return r.Lines("pruning · " + runTitle(m.Train)).Figure()
	}, r, func(w io.Writer) { inspect.WritePrune(w, r) })
}
