package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"headlab/sweep"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newReportCmd(e, nil) })
}

// sweepReport is what report --json prints.
type sweepReport = sweep.DBReport

// reportOptions are report's flags, and what check makes of them.
type reportOptions struct {
	db, pngDir, against, csvDir string
	figFormat                   string
	json                        bool

	ext string // the histograms' extension, from --figure-format
}

func newReportCmd(e *env, runF func(*reportOptions) error) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report --db FILE",
		Short: "Summarise a sweep database: spread over seeds, modes, circuit fraction, ablations",
		Long:  longHelp("report"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runReport),
	}
	cmd.Flags().StringVar(&o.db, "db", "", "sweep database to read")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object on stdout")
	cmd.Flags().StringVar(&o.against, "against", "", "another sweep database of the same pairs (e.g. another backend's) to compare with")
	cmd.Flags().StringVar(&o.csvDir, "csv", "", "write runs.csv and heads.csv (one row per head per run) into this directory")
	cmd.Flags().StringVar(&o.pngDir, "png", "", "write one accuracy histogram per configuration into this directory")
	cmd.Flags().StringVar(&o.pngDir, "figure", "", "the same as --png")
	cmd.Flags().StringVar(&o.figFormat, "figure-format", "png", "format of the histograms: png, svg or pdf")
	return cmd
}

func (o *reportOptions) check(*cobra.Command, []string) error {
	if o.db == "" {
		return usagef("--db FILE is required")
	}
	o.ext = "." + strings.TrimPrefix(o.figFormat, ".")
	if err := checkFigures("hist" + o.ext); err != nil {
		return usagef("--figure-format %q: want png, svg or pdf", o.figFormat)
	}
	return checkOutputs(dirOut("png", o.pngDir), dirOut("csv", o.csvDir))
}

func runReport(e *env, o *reportOptions) error {
	rep, err := sweep.ReportDB(e.stderr, o.db, o.against, o.csvDir)
	if err != nil {
		return err
	}
	if o.pngDir != "" {
		if err := sweep.WriteHistograms(o.pngDir, o.ext, rep.Configs); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "report: histograms in %s\n", o.pngDir)
	}
	if err := e.report(o.json, rep, rep.Write); err != nil {
		return err
	}
	return rep.Disagreement()
}
