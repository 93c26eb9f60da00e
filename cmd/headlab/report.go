package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"headlab/sweep"
)

func init() { commands = append(commands, reportCmd) }

// sweepReport is what report --json prints.
type sweepReport struct {
	Database string               `json:"database"`
	Runs     int                  `json:"runs"`
	Configs  []sweep.ConfigReport `json:"configs"`
	// Against and Agreement: with --against, the other database and how
	// the two agree as distributions over seeds.
	Against   string            `json:"against,omitempty"`
	Agreement []sweep.Agreement `json:"agreement,omitempty"`
}

func reportCmd(e *env) *cobra.Command {
	var (
		db, pngDir, against, csvDir string
		figFormat                   string
		asJSON                      bool
	)
	cmd := &cobra.Command{
		Use:   "report --db FILE",
		Short: "Summarise a sweep database: spread over seeds, modes, circuit fraction, ablations",
		Long: `Per configuration of a sweep database: the number of seeds, mean, median,
minimum, maximum and every seed's held-out accuracy; a histogram; whether the
values split into two modes and how many seeds fall in each; the fraction of
seeds that formed the induction circuit with a 95% Wilson interval; and each
seed's single-head and joint ablations of the circuit's heads side by side.
The rules are in docs/sweeps.md. The database is opened read-only and
nothing on disk changes (a WAL-mode file in a read-only place is read with
SQLite's immutable=1). --csv DIR writes runs.csv and heads.csv.

With --against OTHER, it also compares the two databases' runs of the same
pairs (made on two backends, say) as docs/model.md says whole runs compare:
each seed's accuracy within 1 point for 90% of the seeds, every layer's
confidently labelled heads the same, and each side's circuit fraction inside
the other's Wilson interval; it exits 1 when a configuration differs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if db == "" {
				return usagef("--db FILE is required")
			}
			ext := "." + strings.TrimPrefix(figFormat, ".")
			if err := checkFigures("hist" + ext); err != nil {
				return usagef("--figure-format %q: want png, svg or pdf", figFormat)
			}
			if err := checkOutputs(dirOut("png", pngDir), dirOut("csv", csvDir)); err != nil {
				return err
			}
			recs, err := readDB(e.stderr, db, csvDir)
			if err != nil {
				return err
			}
			if csvDir != "" {
				fmt.Fprintf(e.stderr, "report: %s in %s\n", strings.Join(sweep.CSVFiles, " and "), csvDir)
			}
			var agreement []sweep.Agreement
			if against != "" {
				other, err := readDB(e.stderr, against, "")
				if err != nil {
					return err
				}
				agreement = sweep.Agree(recs, other)
			}
			reports := sweep.Summarize(recs)
			if pngDir != "" {
				if err := writeHistograms(pngDir, ext, reports); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "report: histograms in %s\n", pngDir)
			}
			if asJSON {
				if err := writeJSON(e.stdout, sweepReport{Database: db, Runs: len(recs), Configs: reports, Against: against, Agreement: agreement}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(e.stdout, "%s: %d runs, %d configurations\n\n", db, len(recs), len(reports))
				sweep.WriteText(e.stdout, reports)
				if against != "" {
					fmt.Fprintln(e.stdout)
					sweep.WriteAgreement(e.stdout, db, against, agreement)
				}
			}
			for _, g := range agreement {
				if !g.Agree {
					return fmt.Errorf("%s and %s differ on %s", db, against, g.Key)
				}
			}
			if against != "" && len(agreement) == 0 {
				return fmt.Errorf("%s and %s share no finished pair", db, against)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "sweep database to read")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object on stdout")
	cmd.Flags().StringVar(&against, "against", "", "another sweep database of the same pairs (e.g. another backend's) to compare with")
	cmd.Flags().StringVar(&csvDir, "csv", "", "write runs.csv and heads.csv (one row per head per run) into this directory")
	cmd.Flags().StringVar(&pngDir, "png", "", "write one accuracy histogram per configuration into this directory")
	cmd.Flags().StringVar(&pngDir, "figure", "", "the same as --png")
	cmd.Flags().StringVar(&figFormat, "figure-format", "png", "format of the histograms: png, svg or pdf")
	return cmd
}

// readDB reads every run of the sweep database at path, read-only, and
// writes its CSV files into csvDir unless that is "".
func readDB(stderr io.Writer, path, csvDir string) ([]sweep.Record, error) {
	st, err := sweep.OpenExisting(path)
	if err != nil {
		return nil, usageError{err}
	}
	defer st.Close()
	if n := st.Note(); n != "" {
		fmt.Fprintf(stderr, "report: %s\n", n)
	}
	if v := st.Version(); v < 5 {
		fmt.Fprintf(stderr, "report: %s is of schema version %d, before version 5's measurements: its runs have no mean or resample ablation, direct logit attribution, circuit scores or lens layer (empty in heads.csv, absent from runs.csv), and their ablations are by zero\n", path, v)
	}
	if csvDir != "" {
		if err := st.WriteCSV(csvDir); err != nil {
			return nil, err
		}
	}
	return st.Records()
}
