package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"headlab/analysis"
	"headlab/circuit"
	"headlab/inspect"
	"headlab/internal/atomicfile"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
	"headlab/viz/htmlview"
)

// htmlFlag is heads --html: every head's attention as one offline page,
// with the model's circuit unless --html-circuit=false.
type htmlFlag struct {
	path      string
	circuit   bool
	threshold float64
}

func (f *htmlFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.path, "html", "", fmt.Sprintf(`write every head's attention on the first %d scored examples (fewer for big models: at most %d attention cells) as one self-contained HTML page (hover, click to lock, example picker, zoom, one head alone), with each example's activation patching and direct logit attribution on the intact model, and the model's circuit; "-" is stdout`, htmlview.MaxExamples, htmlview.MaxCells))
	cmd.Flags().BoolVar(&f.circuit, "html-circuit", true, "the --html page shows the model's circuit (headlab circuit's, default corruption, noising, "+fmt.Sprint(train.EvalChunk)+" examples); false skips finding it, the slow part at large sizes")
	cmd.Flags().Float64Var(&f.threshold, "html-threshold", circuit.DefaultThreshold, "the share of the logit difference the --html page's circuit keeps, in (0, 1]")
}

// check refuses, before any work, a path whose extension is not a page's
// and a circuit threshold that is not a share.
func (f *htmlFlag) check() error {
	if err := circuit.CheckThreshold(f.threshold); err != nil {
		return usagef("--html-threshold: %v", err)
	}
	if err := htmlview.CheckPath(f.path); err != nil {
		return usagef("--html %v", err)
	}
	return nil
}

func (f *htmlFlag) write(e *env, m *train.Model, dev kernels.Device, att *analysis.Attention, heads []analysis.HeadScore) error {
	if f.path == "" {
		return nil
	}
	c, err := inspect.PageCausal(m, dev, htmlview.Examples(att.N, att.L, att.H, att.T))
	if err != nil {
		return err
	}
	if f.circuit {
		// headlab circuit's by default, without the curve past the circuit.
		rep, err := findCircuit(e, m, dev, circuit.Options{Examples: train.EvalChunk}, f.threshold, false)
		if err != nil {
			return err
		}
		c.Circuit = rep.Page()
	}
	name := func(id int) string { return tasks.TokenName(m.Task, id) } // as the figures name them
	return atomicfile.WriteStdout(f.path, e.stdout, func(w io.Writer) error { return htmlview.Write(w, runTitle(m.Train), att, heads, c, name) })
}
