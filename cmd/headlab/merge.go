package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

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
		Long: `Copies every run of the IN databases into OUT (created if missing). A pair
(configuration, seed) found twice with the same results is kept once; with
different results the merge is refused with one line naming the pair, and
OUT is left as it was. The inputs are only read. The new OUT is built in a
temporary file beside it and renamed into place when every row is in. A
conflict, an input or OUT that is not a headlab sweep database or that
SQLite's integrity check finds damaged, or shards of different sweeps
(each shard records its sweep: every pair, hashed) exit 2.`,
		Args: cobra.ArbitraryArgs,
		RunE: runE(e, o, runF, runMerge),
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
	for _, n := range res.Notes {
		fmt.Fprintf(e.stderr, "merge: %s\n", n)
	}
	if len(res.Backends) > 1 {
		fmt.Fprintf(e.stderr, "merge: %s now holds runs of backends %s: they agree as distributions over seeds, not bit for bit\n",
			o.out, strings.Join(res.Backends, ", "))
	}
	fmt.Fprintf(e.stdout, "merged %d databases into %s: %d runs added, %d duplicates skipped, %d runs in all\n",
		len(o.ins), o.out, res.Added, res.Duplicates, res.Total)
	return nil
}
