package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"headlab/viz"
)

// How commands write what they found: a figure to a file (or stdout),
// and a report as text or JSON.

// reportTo is where a command prints its report: stdout, or stderr when
// one of the command's output paths is stdout, so that that file comes
// out whole (`heads --dump-attention - | python ...`).
func (e *env) reportTo(paths ...string) io.Writer {
	for _, p := range paths {
		if toStdout(p) {
			return e.stderr
		}
	}
	return e.stdout
}

// report prints a command's report where reportTo says: v as JSON with
// asJSON, else the text that text writes.
func (e *env) report(asJSON bool, v any, text func(io.Writer), paths ...string) error {
	w := e.reportTo(paths...)
	if asJSON {
		return writeJSON(w, v)
	}
	text(w)
	return nil
}

// writeJSON is the commands' one JSON style: indented by two spaces.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeFigure draws a figure into path ("-": stdout), unless path is ""
// (not asked for).
func (e *env) writeFigure(path string, draw func() (*viz.Figure, error)) error {
	if path == "" {
		return nil
	}
	fig, err := draw()
	if err != nil {
		return err
	}
	return viz.WriteStdout(path, e.stdout, fig)
}

// reportFlags are --png (alias --figure) and --json of a command that
// reports what it measured and may draw it.
type reportFlags struct {
	png  string
	json bool
}

// register adds the flags: figure says what --png draws, asJSON what
// --json prints.
func (f *reportFlags) register(cmd *cobra.Command, figure, asJSON string) {
	figureFlag(cmd, &f.png, "png", true, figure)
	cmd.Flags().BoolVar(&f.json, "json", false, asJSON)
}

// write draws the figure into --png when it is given, then prints v (as
// report does).
func (f *reportFlags) write(e *env, draw func() (*viz.Figure, error), v any, text func(io.Writer)) error {
	if err := e.writeFigure(f.png, draw); err != nil {
		return err
	}
	return e.report(f.json, v, text, f.png)
}
