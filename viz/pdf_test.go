package viz

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pdfFigures are a figure of every kind the commands write, each with a
// title that carries the runes beyond ASCII headlab's text uses, and the
// labels pdftotext must find whole in its PDF.
func pdfFigures() map[string]struct {
	make   func() (*Figure, error)
	labels []string
} {
	grid := demoGrid()
	grid.Title = "induction · 2 layers × 2 heads · seed 1 · 2500 steps"
	arcs := demoGrid()
	arcs.Title = grid.Title
	hist := demoAccuracyHistogram()
	hist.Title = "sweep · seeds 1–12 × d-model 32 (12 seeds)"
	lines := demoLines()
	lines.Title = "pruning · induction · 2 layers × 2 heads"
	patch := PatchGrid{Title: "patching · induction · 2 layers × 2 heads", Note: "share of the answer's logit difference restored",
		Rows: []string{"L0H0", "L0H1", "resid L0"}, Columns: []string{"<bos>", "the", "cat"},
		Values: [][]float64{{0, 0.5, -0.25}, {0, 0, 0.1}, {0.02, 0, 0}}, Gaps: []int{2}}
	bars := Bars{Title: "attribution · induction · 2 layers × 2 heads", XLabel: "mean part of the answer's logit",
		Labels: []string{"L1H1", "mlp1", "L1H0"}, Values: []float64{4.96, 6.11, -0.31}}
	circuit := CircuitGraph{Title: "circuit · induction · 2 layers × 2 heads", Note: "edges by their effect", Layers: 2,
		Edges:     []CircuitEdge{{From: "L0H1", To: "L1H1.k", Effect: 0.8, In: true}, {From: "embed", To: "L0H1", Effect: 0.3, In: true}, {From: "L1H1", To: "logits", Effect: 0.9, In: true}},
		Curve:     []float64{0, 0.5, 0.8, 0.95},
		Threshold: 0.9, Kept: 3}
	return map[string]struct {
		make   func() (*Figure, error)
		labels []string
	}{
		"heads":     {func() (*Figure, error) { return Heatmaps(grid) }, []string{grid.Title, "L0H0 · previous-token 0.85", "L1H0 · induction 0.81", "<bos>", "weight"}},
		"arcs":      {func() (*Figure, error) { return Arcs(arcs) }, []string{arcs.Title, "L0H1 · attention-sink 0.71", "L1H1 · uniform 0.50", "<eos>"}},
		"curves":    {demoCurves().Figure, []string{"demo · 2 layers × 2 heads, d-model 32 · seed 1 · 600 steps", "held-out accuracy", "step 275: L1H0 induction 0.55"}},
		"prune":     {lines.Figure, []string{lines.Title, "fraction of heads removed", "held-out accuracy", "random order (mean of 20)"}},
		"histogram": {hist.Figure, []string{hist.Title, "held-out accuracy (%)", "chance 12.5%", "seeds"}},
		"patch":     {patch.Figure, []string{patch.Title, patch.Note, "resid L0", "<bos>"}},
		"attribute": {bars.Figure, []string{bars.Title, bars.XLabel, "L1H1", "mlp1"}},
		"circuit":   {circuit.Figure, []string{circuit.Title, circuit.Note, "L0H1", "logits"}},
	}
}

// pdftotext is poppler's text extractor, which reads a PDF's text as a
// reader's viewer would (scripts/setup.sh installs poppler-utils). Without
// it the test skips, except under CI, where it fails.
func pdftotext(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and pdftotext is missing (poppler-utils): %v", err)
		}
		t.Skipf("pdftotext (poppler-utils) is missing: %v", err)
	}
	return path
}

// pdfWords are the words pdftotext -bbox finds on a PDF's one page, with
// the page's size, in points.
type pdfWords struct {
	Page struct {
		W     float64 `xml:"width,attr"`
		H     float64 `xml:"height,attr"`
		Words []struct {
			XMin float64 `xml:"xMin,attr"`
			YMin float64 `xml:"yMin,attr"`
			XMax float64 `xml:"xMax,attr"`
			YMax float64 `xml:"yMax,attr"`
			Text string  `xml:",chardata"`
		} `xml:"word"`
	} `xml:"body>doc>page"`
}

// TestPDFText: the text of every kind of figure written as PDF reads back
// whole (titles with "·" and "×", panel titles, labels), and every word
// lies on the page. gonum/plot's own PDF canvas failed both: its fonts
// were WinAnsi fed UTF-8 ("L0H0 Â· uniform"), and the extra glyphs pushed
// a wide title's last word off the page.
func TestPDFText(t *testing.T) {
	tool := pdftotext(t)
	dir := t.TempDir()
	for name, c := range pdfFigures() {
		t.Run(name, func(t *testing.T) {
			f, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name+".pdf")
			if err := Write(path, f); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(tool, "-enc", "UTF-8", path, "-").CombinedOutput()
			if err != nil {
				t.Fatalf("pdftotext: %v\n%s", err, out)
			}
			text := string(out)
			for _, want := range c.labels {
				if !strings.Contains(text, want) {
					t.Errorf("the PDF's text lacks %q; it reads:\n%s", want, text)
				}
			}
			if strings.ContainsAny(text, "ÂÃ") {
				t.Errorf("the PDF's text is UTF-8 read as WinAnsi:\n%s", text)
			}
			out, err = exec.Command(tool, "-enc", "UTF-8", "-bbox", path, "-").Output()
			if err != nil {
				t.Fatalf("pdftotext -bbox: %v", err)
			}
			var doc pdfWords
			// pdftotext -bbox writes XHTML with a doctype Go's decoder
			// need not resolve.
			dec := xml.NewDecoder(bytes.NewReader(out))
			dec.Strict = false
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("pdftotext -bbox: %v", err)
			}
			p := doc.Page
			if d := p.W - float64(f.W); d*d > 1 || len(p.Words) == 0 {
				t.Fatalf("page %.1f pt wide with %d words, want %.1f pt", p.W, len(p.Words), float64(f.W))
			}
			for _, w := range p.Words {
				if w.XMin < 0 || w.YMin < 0 || w.XMax > p.W || w.YMax > p.H {
					t.Errorf("%q at x %.1f-%.1f, y %.1f-%.1f runs off the %.1fx%.1f page", w.Text, w.XMin, w.XMax, w.YMin, w.YMax, p.W, p.H)
				}
			}
		})
	}
}

// TestPDFTitleWidth: a title's last word ends in the PDF where the layout
// measured it to end, so a title fitted to its figure stays on the page.
func TestPDFTitleWidth(t *testing.T) {
	tool := pdftotext(t)
	g := demoGrid()
	g.Title = "induction · 2 layers × 2 heads · seed 1 · 2500 steps · a title that sets the figure's width"
	f, err := Heatmaps(g)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wide.pdf")
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "-enc", "UTF-8", "-bbox", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v", err)
	}
	var doc pdfWords
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.Strict = false
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	end := float64(margin + style(bold, titleSize, textColor).Width(g.Title))
	var last float64
	for _, w := range doc.Page.Words {
		if w.Text == "width" {
			last = w.XMax
		}
	}
	if d := last - end; d < -1 || d > 1 {
		t.Errorf("the title ends at x %.1f pt in the PDF, %.1f pt as measured (page %.1f wide)", last, end, doc.Page.W)
	}
}

// TestPDFSameBytes: the same figure is the same PDF (a fixed creation
// date, fonts and their subsets in a fixed order).
func TestPDFSameBytes(t *testing.T) {
	f, err := Heatmaps(demoGrid())
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := f.Encode(&a, ".pdf"); err != nil {
		t.Fatal(err)
	}
	if err := f.Encode(&b, ".pdf"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("two encodings differ: %d and %d bytes", a.Len(), b.Len())
	}
}
