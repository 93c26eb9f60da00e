package main

import (
	"github.com/spf13/cobra"

	"headlab/inspect"
)

// ablationFlag is --ablation: how a switched-off head's output is
// replaced, wherever heads are switched off.
type ablationFlag struct{ name string }

func (f *ablationFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "ablation", string(inspect.AblateZero),
		"how a switched-off head's output is replaced: zero, mean (its mean at each position over the examples measured) or resample (its output on another of them); docs/causal.md")
	_ = cmd.RegisterFlagCompletionFunc("ablation", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, a := range inspect.Ablations {
			names = append(names, string(a))
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}

// method reads the flag: an unknown method is bad input.
func (f *ablationFlag) method() (inspect.Ablation, error) {
	a, err := inspect.ParseAblation(f.name)
	if err != nil {
		return "", usagef("--ablation: %v", err)
	}
	return a, nil
}

// enoughExamples refuses, as bad input, fewer examples than method needs.
func enoughExamples(method inspect.Ablation, examples int) error {
	if examples < method.MinExamples() {
		return usagef("--examples %d: %s ablation needs at least %d", examples, method, method.MinExamples())
	}
	return nil
}
