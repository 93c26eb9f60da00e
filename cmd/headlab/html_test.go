package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/internal/browsertest"
)

// heads --html writes a page that opens in headless Chromium, draws every
// head of the model under its name, shows the example's patching heatmap
// (every head and each block's residual stream by position) and its
// attribution bars, and asks for nothing.
func TestHeadsHTMLInChromium(t *testing.T) {
	run := trained(t, "induction", "--heads", "3", "--d-model", "24")
	page := filepath.Join(t.TempDir(), "heads.html")
	code, out, errs := headlab(t, "heads", "--run", run, "--html", page, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"src=", "href=", "@import", "url("} {
		if strings.Contains(string(b), bad) {
			t.Errorf("the page holds %q: it must need no other file", bad)
		}
	}
	_, stdout, _ := headlab(t, "heads", "--run", run, "--html", "-", "--html-circuit=false")
	if !strings.HasPrefix(stdout, string(b[:strings.Index(string(b), "<script>const DATA")])) || strings.Contains(stdout, `"circuit":`) ||
		!strings.Contains(string(b), `"circuit":`) {
		t.Error(`--html - does not write the same page to stdout, or --html-circuit=false does not leave the circuit out`)
	}
	ctx := browsertest.Start(t)
	tab, v := browsertest.Open(t, ctx, page)
	labels := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll(".head .label b")].map(e => e.textContent)`)
	want := []string{"L0H0", "L0H1", "L0H2", "L1H0", "L1H1", "L1H2"}
	if strings.Join(labels, " ") != strings.Join(want, " ") {
		t.Errorf("heads on the page: %v, want %v", labels, want)
	}
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll("canvas.pattern").length`); n != len(want) {
		t.Errorf("%d patterns drawn, want %d", n, len(want))
	}
	rows := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#patch th.row")].map(e => e.textContent)`)
	if strings.Join(rows, " ") != strings.Join(append(want, "resid L0", "resid L1"), " ") {
		t.Errorf("patching rows %v", rows)
	}
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll("#patch td").length`); n != 8*16 {
		t.Errorf("%d patching cells, want 8 rows of 16 positions", n)
	}
	if n := browsertest.Eval[int](t, tab, `document.querySelectorAll("#attr .bar").length`); n != 2+2*(3+2)+1 {
		t.Errorf("%d attribution bars, want 13", n)
	}
	// The model's circuit, as headlab circuit finds it: its edges listed
	// first, marked, each drawn.
	if browsertest.Eval[bool](t, tab, `document.getElementById("circuit").hidden`) {
		t.Error("the page shows no circuit")
	}
	in := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#circuit-edges tr.in td:first-child")].map(e => e.textContent)`)
	if len(in) == 0 || browsertest.Eval[int](t, tab, `document.querySelectorAll("#circuit-graph line.in").length`) != len(in) {
		t.Errorf("circuit edges listed %v, not each drawn", in)
	}
	if note := browsertest.Eval[string](t, tab, `document.getElementById("circuit-note").textContent`); !strings.Contains(note, "first-half corruption") || !strings.Contains(note, "threshold 90%") {
		t.Errorf("circuit note %q", note)
	}
	if title := browsertest.Eval[string](t, tab, `document.title`); !strings.Contains(title, "induction") || !strings.Contains(title, "seed 1") {
		t.Errorf("title %q does not name the run", title)
	}
	if o := v.Outside(t, tab); len(o) > 0 {
		t.Errorf("requests: %v", o)
	}
	if ex := v.Exceptions(); len(ex) > 0 {
		t.Errorf("the script threw: %v", ex)
	}
	if !strings.Contains(out, `"heads"`) {
		t.Errorf("--json output lost: %q", out)
	}
}

// heads --html-threshold outside (0, 1] is refused before any work: one
// line, exit 2, no page.
func TestHeadsHTMLThreshold(t *testing.T) {
	run := trained(t, "induction")
	page := filepath.Join(t.TempDir(), "heads.html")
	for _, bad := range []string{"0", "1.5", "-0.2", "NaN"} {
		code, _, errs := headlab(t, "heads", "--run", run, "--html", page, "--html-threshold", bad)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "--html-threshold") {
			t.Errorf("--html-threshold %s: exit %d, stderr %q", bad, code, errs)
		}
		if _, err := os.Stat(page); err == nil {
			t.Fatalf("--html-threshold %s wrote the page", bad)
		}
	}
}
