package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

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
	if f.path == "" || f.path == atomicfile.Stdio {
		return nil
	}
	switch strings.ToLower(filepath.Ext(f.path)) {
	case ".html", ".htm":
		return nil
	}
	return usagef("--html %s: the page is HTML; give a file ending in .html", f.path)
}

func (f *htmlFlag) write(e *env, m *train.Model, dev kernels.Device, att *analysis.Attention, heads []analysis.HeadScore) error {
	if f.path == "" {
		return nil
	}
	c, err := pageCausal(m, dev, htmlview.Examples(att.N, att.L, att.H, att.T))
	if err != nil {
		return err
	}
	if f.circuit {
		if c.Circuit, err = pageCircuit(e, m, dev, f.threshold); err != nil {
			return err
		}
	}
	name := func(id int) string { return tasks.TokenName(m.Task, id) } // as the figures name them
	return atomicfile.WriteStdout(f.path, e.stdout, func(w io.Writer) error { return htmlview.Write(w, runTitle(m.Train), att, heads, c, name) })
}

// pageCausal is the page's patching (the task's default corruption) and
// attribution of each of the first n held-out examples, the examples the
// page shows, on the intact model.
func pageCausal(m *train.Model, dev kernels.Device, n int) (*htmlview.Causal, error) {
	ev, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, err
	}
	defer ev.Close()
	runs := max(n, 2) // patching's "other" corruption needs a second example
	pr, err := inspect.Patch(ev, inspect.PatchOptions{Examples: runs, PerExample: n})
	if err != nil {
		return nil, err
	}
	ar, err := inspect.Attribute(ev, runs, n)
	if err != nil {
		return nil, err
	}
	p, a := pr[0], ar[0]
	c := &htmlview.Causal{Corruption: p.Corruption, Positions: p.Positions}
	for _, x := range append(append([]inspect.Patched(nil), p.Heads...), p.Resid...) {
		c.Rows = append(c.Rows, x.Name)
	}
	for _, x := range a.Parts {
		c.Parts = append(c.Parts, x.Name)
	}
	for k := range n {
		heads, resid := p.PerExample(k)
		logit, parts := a.PerExample(k)
		c.Patch = append(c.Patch, append(heads, resid...))
		c.Attribution, c.Logit = append(c.Attribution, parts), append(c.Logit, logit)
	}
	return c, nil
}

// pageCircuit is the model's circuit as `headlab circuit` finds it by
// default (the task's first corruption, noising, train.EvalChunk
// examples) at threshold, without the curve past the circuit, with
// progress on stderr.
func pageCircuit(e *env, m *train.Model, dev kernels.Device, threshold float64) (*htmlview.Circuit, error) {
	r, err := circuit.NewRunner(m, dev, circuit.Options{Examples: train.EvalChunk})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rep, err := findCircuit(e, r, threshold, false)
	if err != nil {
		return nil, err
	}
	c := &htmlview.Circuit{Corruption: rep.Corruption, Direction: rep.Direction, Examples: rep.Examples,
		Threshold: rep.Threshold, Faithfulness: rep.Faithfulness}
	for _, x := range rep.Edges {
		c.Edges = append(c.Edges, htmlview.CircuitEdge{Name: x.Edge, From: x.From, To: x.To, Effect: x.Effect, Attribution: x.Attribution, In: x.InCircuit})
	}
	return c, nil
}
