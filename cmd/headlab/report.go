package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"headlab/sweep"
)

func init() { commands = append(commands, reportCmd) }

// sweepReport is what report --json prints.
type sweepReport struct {
	Database string               `json:"database"`
	Runs     int                  `json:"runs"`
	Configs  []sweep.ConfigReport `json:"configs"`
}

func reportCmd(e *env) *cobra.Command {
	var (
		db, pngDir string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "report --db FILE",
		Short: "Summarise a sweep database: spread over seeds, modes, circuit fraction, ablations",
		Long: `Per configuration of a sweep database: the number of seeds, mean, median,
minimum, maximum and every seed's held-out accuracy; a histogram; whether the
values split into two modes and how many seeds fall in each; the fraction of
seeds that formed the induction circuit with a 95% Wilson interval; and each
seed's single-head and joint ablations of the circuit's heads side by side.
The rules are in docs/sweeps.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if db == "" {
				return usagef("--db FILE is required")
			}
			st, err := sweep.OpenExisting(db)
			if err != nil {
				return usageError{err}
			}
			recs, err := st.Records()
			st.Close()
			if err != nil {
				return err
			}
			reports := sweep.Summarize(recs)
			if pngDir != "" {
				if err := sweep.WriteHistograms(pngDir, reports); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "report: histograms in %s\n", pngDir)
			}
			if asJSON {
				return writeJSON(e.stdout, sweepReport{Database: db, Runs: len(recs), Configs: reports})
			}
			fmt.Fprintf(e.stdout, "%s: %d runs, %d configurations\n\n", db, len(recs), len(reports))
			sweep.WriteText(e.stdout, reports)
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "sweep database to read")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	cmd.Flags().StringVar(&pngDir, "png", "", "write one accuracy histogram per configuration into this directory (PNG)")
	return cmd
}
