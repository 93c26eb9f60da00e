package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"headlab/internal/atomicfile"
	"headlab/sweep"
	"headlab/viz"
)

func init() {
	commands = append(commands, func(e *env) *cobra.Command { return newAtlasCmd(e, nil) })
}

// atlasReport is what atlas --json prints.
type atlasReport struct {
	Database string              `json:"database"`
	Configs  []sweep.ConfigAtlas `json:"configs"`
}

// atlasOptions are atlas's flags.
type atlasOptions struct {
	db, config, csv, figure string
	json                    bool
}

func newAtlasCmd(e *env, runF func(*atlasOptions) error) *cobra.Command {
	o := &atlasOptions{}
	cmd := &cobra.Command{
		Use:   "atlas --db FILE",
		Short: "Group a sweep's seeds by the signature of their circuits: how many mechanisms, each one's share",
		Long: `Per configuration of a sweep database, the runs that hold a signature (swept
with --measure signature, the default: each run's circuit by path patching,
its load-bearing heads named by layer and role) grouped into mechanisms:
runs of one signature, and signatures one weak edge apart merged into the
more common, by the rule docs/circuits.md fixes ("Atlas"). For each
mechanism: its runs and share of the configuration's signed runs with a 95%
Wilson interval, their mean held-out accuracy, its representative seed (the
lowest seed of its own signature), and its signature's edges with their mean
effects. --figure draws a small graph of each. The database is opened
read-only. A database with no signature (one swept before schema version 7,
or with --measure leaving signature out) exits 2.`,
		Args: cobra.NoArgs,
		RunE: runE(e, o, runF, runAtlas),
	}
	cmd.Flags().StringVar(&o.db, "db", "", "sweep database to read")
	cmd.Flags().StringVar(&o.config, "config", "", "only the configuration of this key (as report prints it)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print one JSON object on stdout")
	cmd.Flags().StringVar(&o.csv, "csv", "", "write one row per mechanism to this CSV file")
	figureFlag(cmd, &o.figure, "figure", false, "draw each configuration's mechanisms as small graphs")
	return cmd
}

func (o *atlasOptions) check(*cobra.Command, []string) error {
	if o.db == "" {
		return usagef("--db FILE is required")
	}
	if err := checkFigures(o.figure); err != nil {
		return err
	}
	return checkOutputs(fileOut("csv", o.csv), fileOut("figure", o.figure))
}

func runAtlas(e *env, o *atlasOptions) error {
	st, err := sweep.OpenExisting(o.db)
	if err != nil {
		return usageError{err}
	}
	recs, err := st.Records()
	st.Close()
	if err != nil {
		return err
	}
	if o.config != "" {
		var mine []sweep.Record
		for _, r := range recs {
			if r.Key == o.config {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			return usagef("--config %q: no run of %s has that key", o.config, o.db)
		}
		recs = mine
	}
	atlas, err := sweep.Atlas(recs)
	if err != nil {
		return err
	}
	if len(atlas) == 0 {
		return usagef("%s holds no circuit signature (swept before schema version 7, or with --measure leaving signature out): sweep with --measure signature to take them", o.db)
	}
	if o.csv != "" {
		if err := atomicfile.Write(o.csv, func(w io.Writer) error { return sweep.WriteAtlasCSV(w, atlas) }); err != nil {
			return err
		}
	}
	if err := e.writeFigure(o.figure, func() (*viz.Figure, error) { return atlasFigure(o.db, atlas).Figure() }); err != nil {
		return err
	}
	return e.report(o.json, atlasReport{Database: o.db, Configs: atlas}, func(w io.Writer) { sweep.WriteAtlas(w, atlas) }, o.figure, o.csv)
}

// atlasPanels is how many mechanisms of a configuration the figure draws:
// the most common, two lines of four.
const atlasPanels = 8

// atlasFigure is the atlas's figure: a row per configuration, a panel per
// mechanism (the atlasPanels most common).
func atlasFigure(db string, atlas []sweep.ConfigAtlas) viz.Atlas {
	a := viz.Atlas{Title: "atlas · " + db,
		Note: "each panel one mechanism: its signature's edges, wide by mean effect (a share of the logit difference); heads named by layer and role"}
	for _, ca := range atlas {
		title := fmt.Sprintf("%s · %d signed seeds", sweep.ConfigName(ca.Config), ca.Signed)
		if n := len(ca.Mechanisms); n > atlasPanels {
			rest := 0
			for _, m := range ca.Mechanisms[atlasPanels:] {
				rest += m.Runs
			}
			title += fmt.Sprintf(" · the %d most common of %d mechanisms (the other %d hold %d seeds)", atlasPanels, n, n-atlasPanels, rest)
		}
		row := viz.AtlasRow{Title: title, Layers: ca.Config.Layers}
		for k, m := range ca.Mechanisms[:min(len(ca.Mechanisms), atlasPanels)] {
			p := viz.AtlasPanel{Title: fmt.Sprintf("%d: %.0f%% (%d of %d), seed %d, acc %.0f%%", k+1, 100*m.Share, m.Runs, ca.Signed, m.Representative, 100*m.Accuracy)}
			for _, ed := range m.Edges {
				p.Edges = append(p.Edges, viz.CircuitEdge{From: ed.From, To: ed.To, Effect: ed.Effect, In: true})
			}
			row.Panels = append(row.Panels, p)
		}
		a.Rows = append(a.Rows, row)
	}
	return a
}
