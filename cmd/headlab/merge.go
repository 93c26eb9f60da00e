package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"headlab/sweep"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newMergeCmd(e, nil) })
}

// mergeOptions are merge's flag and arguments.
type mergeOptions struct {
	out string
	ins []string
}

func newMergeCmd(e *env, runF func(*mergeOptions) error) *cobra.Command {
	o := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge --db OUT IN...",
		Short: "Combine sweep databases (one per shard) into one",
		Long:  longHelp("merge"),
		Args:  cobra.ArbitraryArgs,
		RunE:  runE(e, o, runF, runMerge),
	}
	cmd.Flags().StringVar(&o.out, "db", "", "database to merge into (created if missing)")
	return cmd
}

func (o *mergeOptions) check(_ *cobra.Command, ins []string) error {
	o.ins = ins
	if o.out == "" {
		return usagef("--db OUT is required")
	}
	if len(ins) == 0 {
		return usagef("name at least one database to merge into %s", o.out)
	}
	if err := checkOutputs(dbOut("db", o.out)); err != nil {
		return err
	}
	for _, in := range ins {
		// A missing input is a typo, not a conflict: exit 2.
		if _, err := os.Stat(in); err != nil {
			return usagef("database %s does not exist", in)
		}
	}
	return nil
}

func runMerge(e *env, o *mergeOptions) error {
	res, err := sweep.Merge(o.out, o.ins)
	if errors.Is(err, sweep.ErrRefused) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	res.Write(e.stdout, e.stderr, o.out, len(o.ins))
	return nil
}
