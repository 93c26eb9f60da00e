package main

import (
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
		Long:  longHelp("atlas"),
		Args:  cobra.NoArgs,
		RunE:  runE(e, o, runF, runAtlas),
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
	atlas, err := sweep.AtlasDB(o.db, o.config)
	if err != nil {
		return err
	}
	if o.csv != "" {
		if err := atomicfile.Write(o.csv, func(w io.Writer) error { return sweep.WriteAtlasCSV(w, atlas) }); err != nil {
			return err
		}
	}
	if err := e.writeFigure(o.figure, func() (*viz.Figure, error) { return sweep.AtlasFigure(o.db, atlas).Figure() }); err != nil {
		return err
	}
	return e.report(o.json, atlasReport{Database: o.db, Configs: atlas}, func(w io.Writer) { sweep.WriteAtlas(w, atlas) }, o.figure, o.csv)
}
