package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"headlab/sweep"
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
func runTitle(c train.Config) string {
	s := fmt.Sprintf("%s · %d layer%s × %d heads, d-model %d · seed %d · %d steps",
		c.Task, c.Layers, plural(c.Layers), c.Heads, c.DModel, c.Seed, c.Steps)
	if !c.Positions {
		s += " · no positions"
	}
	if !c.Causal {
		s += " · no causal mask"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeHistograms draws every configuration's accuracy histogram
// (viz.AccuracyHistogram) into dir, as ext, named by sweep.HistogramFile.
func writeHistograms(dir, ext string, reports []sweep.ConfigReport) error {
	if err := viz.CheckPath("hist" + ext); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range reports {
		cr := &reports[i]
		if cr.Seeds == 0 {
			continue
		}
		bins := make([]viz.Bin, len(cr.Histogram))
		for k, b := range cr.Histogram {
			bins[k] = viz.Bin(b)
		}
		title := fmt.Sprintf("%s (%d seeds)", sweep.ConfigName(cr.Config), cr.Seeds)
		fig, err := viz.AccuracyHistogram(title, bins, cr.Chance).Figure()
		if err != nil {
			return err
		}
		if err := viz.Write(sweep.HistogramFile(dir, ext, cr), fig); err != nil {
			return err
		}
	}
	return nil
}
