package main

import (
	"strings"

	"github.com/spf13/cobra"

	"headlab/train"
	"headlab/viz"
)

// figureFlag registers a figure flag: --name and, for the main figure of
// a command, --figure as its alias. The file's extension (.png, .svg,
// .pdf) chooses the format.
func figureFlag(cmd *cobra.Command, p *string, name string, alias bool, what string) {
	usage := what + " (PNG, SVG or PDF, by the file's extension)"
	cmd.Flags().StringVar(p, name, "", usage)
	if alias {
		cmd.Flags().StringVar(p, "figure", "", "the same as --"+name)
	}
	_ = cmd.RegisterFlagCompletionFunc(name, figureCompletion)
}

// figureCompletion offers files of the formats viz writes.
func figureCompletion(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var exts []string
	for _, f := range viz.Formats {
		exts = append(exts, strings.TrimPrefix(f, "."))
	}
	return exts, cobra.ShellCompDirectiveFilterFileExt
}

// checkFigures refuses, before any work starts, a figure path whose
// extension no writer knows. Empty paths are flags not given.
func checkFigures(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := viz.CheckPath(p); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// checkFigure is checkFigures and checkOutputs for one figure flag's
// path: an extension no writer knows, or a path that cannot be written.
func checkFigure(flag, path string) error {
	if err := checkFigures(path); err != nil {
		return err
	}
	return checkOutputs(fileOut(flag, path))
}

// runTitle names a run in a figure's title: task, shape, seed and steps.
var runTitle = train.Title
