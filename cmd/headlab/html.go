package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"headlab/analysis"
	"headlab/internal/atomicfile"
	"headlab/train"
	"headlab/viz/htmlview"
)

// htmlFlag is heads --html: every head's attention as one offline page.
type htmlFlag struct{ path string }

func (f *htmlFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.path, "html", "", fmt.Sprintf(`write every head's attention on the first %d scored examples as one self-contained HTML page (hover, click to lock, example picker; "-" is stdout)`, htmlview.MaxExamples))
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

func (f *htmlFlag) write(e *env, m *train.Model, att *analysis.Attention, heads []analysis.HeadScore) error {
	if f.path == "" {
		return nil
	}
	return atomicfile.WriteStdout(f.path, e.stdout, func(w io.Writer) error { return htmlview.Write(w, runTitle(m.Train), att, heads) })
}
