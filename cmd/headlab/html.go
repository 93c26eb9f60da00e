package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/atomicfile"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
	"headlab/viz/htmlview"
)

// htmlFlag is heads --html: every head's attention as one offline page.
type htmlFlag struct{ path string }

func (f *htmlFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.path, "html", "", fmt.Sprintf(`write every head's attention on the first %d scored examples as one self-contained HTML page (hover, click to lock, example picker), with each example's activation patching and direct logit attribution on the intact model; "-" is stdout`, htmlview.MaxExamples))
}

// check refuses, before any work, a path whose extension is not a page's.
func (f *htmlFlag) check() error {
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
	c, err := pageCausal(m, dev, min(att.N, htmlview.MaxExamples))
	if err != nil {
		return err
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
