package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"headlab/kernels"
	"headlab/sweep"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newSweepCmd(e, nil) })
}

// sweepOptions are sweep's flags, and what check makes of them.
type sweepOptions struct {
	model    trainFlags
	backend  backendFlag
	own      sweep.Flags
	quiet    bool
	ablation ablationFlag

	// db is the sweep check resolves but for its device, and shardNote
	// the line that names its shard ("" without one).
	db        sweep.DB
	shardNote string
}

func newSweepCmd(e *env, runF func(*sweepOptions) error) *cobra.Command {
	o := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep --seeds 1-64 --db FILE",
		Short: "Train every (configuration, seed) pair of a grid and store each run in SQLite",
		Long:  strings.ReplaceAll(longHelp("sweep"), "{grid-keys}", strings.Join(sweep.GridKeys, ", ")),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runSweepCmd),
	}
	o.model.register(cmd)
	fs := cmd.Flags()
	// --seeds replaces --seed; hidden rather than removed so that
	// trainFlags stays one shared definition.
	_ = fs.MarkHidden("seed")
	o.own.AddFlags(fs)
	o.backend.register(cmd)
	o.ablation.register(cmd)
	_ = cmd.RegisterFlagCompletionFunc("measure", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append([]string{"all", "none"}, strings.Split(sweep.MeasureNames(), ", ")...), cobra.ShellCompDirectiveNoFileComp
	})
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	return cmd
}

// check resolves the flags into this shard's pairs and how to run them
// (sweep.Flags.Resolve).
func (o *sweepOptions) check(cmd *cobra.Command, _ []string) error {
	if cmd.Flags().Changed("seed") {
		return usagef("sweep takes --seeds, a list such as 1-64, not --seed")
	}
	if err := o.backend.check(); err != nil {
		return err
	}
	method, err := o.ablation.method()
	if err != nil {
		return err
	}
	base, baseErr := o.model.config(cmd)
	o.db, o.shardNote, err = o.own.Resolve(base, baseErr, method, cmd.Flags().Changed)
	return err
}

// runSweepCmd is the sweep command's run: the pairs into the database
// (sweep.RunDB), a signal's stop exiting 130.
func runSweepCmd(e *env, o *sweepOptions) error {
	if o.shardNote != "" {
		fmt.Fprintln(e.stderr, o.shardNote)
	}
	dev, closeDev, err := o.backend.open(e.stderr)
	if err != nil {
		return err
	}
	defer closeDev()
	d := o.db
	d.Progress, d.Device, d.NewPlatform, d.Stderr = !o.quiet, dev, o.backend.platforms(dev), e.stderr
	err = sweep.RunDB(d)
	if ie := (*sweep.InterruptedError)(nil); errors.As(err, &ie) {
		return interruptedError{err}
	}
	return err
}

// platforms gives a sweep's workers their devices: the first dev, each
// later one its own of b's backend.
func (b backendFlag) platforms(dev kernels.Device) func() (sweep.Platform, error) {
	return sweep.Platforms(dev, func() (kernels.Device, error) {
		d, _, err := b.open(io.Discard)
		return d, err
	})
}
