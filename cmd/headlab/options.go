package main

import "github.com/spf13/cobra"

// Every command is built in gh's shape: its flags go into an options
// value, whose check turns them into what the command needs, refusing bad
// input in one line before any work (exit 2), and one run function does
// the work. A command's constructor takes runF, which a test gives to
// see the options without running anything; nil runs the command.

// options is a command's options value.
type options interface {
	// check refuses bad flags and arguments before any work starts, and
	// completes the options from them.
	check(cmd *cobra.Command, args []string) error
}

// runE is the RunE of a command with options o: check, then run (or
// runF, when a test gives one).
func runE[O options](e *env, o O, runF func(O) error, run func(*env, O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.check(cmd, args); err != nil {
			return err
		}
		if runF != nil {
			return runF(o)
		}
		return run(e, o)
	}
}
