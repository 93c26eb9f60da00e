// Package htmlview writes every head's attention as one self-contained
// HTML page, after CircuitsVis's attention grid: each head's pattern under
// its label, its rows and columns labelled with the example's tokens (as
// the viewer's panels), hover for query, key and weight, click to lock
// the readout, and a picker over the examples; with the causal tools' results
// (Causal), also the example's activation patching heatmap and its direct
// logit attribution bars. The data, the script and the style are inline
// and the page's Content-Security-Policy forbids every request, so it
// opens anywhere, offline, and sends nothing.
package htmlview

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"headlab/analysis"
	"headlab/internal/atomicfile"
	"headlab/viz"
)

// MaxExamples is how many examples a page holds at most: the picker's
// choice, and a page that stays small (a few hundred kB at T=16).
const MaxExamples = 32

// MaxCells is how many attention cells (examples x heads x T x T) a page
// holds at most: a model too big for MaxExamples examples within it gets
// fewer (at least one), so that its page stays about 10 MB (4 layers of
// 8 heads at T=64: 8 examples).
const MaxCells = 1 << 20

// Examples is how many of n examples a page of an L x H model at sequence
// length T shows: the first MaxExamples, fewer where they would exceed
// MaxCells, at least one.
func Examples(n, L, H, T int) int {
	return min(n, MaxExamples, max(1, MaxCells/max(1, L*H*T*T)))
}

// LabelChars is the most characters of a token's name the heatmaps' axes
// and the patching table's columns show: a longer name is cut with an
// ellipsis, as the figures cut theirs (the strip of tokens and the
// readout show it whole).
const LabelChars = 8

var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string

	pageTemplate = template.Must(template.New("page").Parse(pageHTML))
)

// data is what the script draws, as JSON.
type data struct {
	Title    string    `json:"title"`
	Causal   bool      `json:"causal"`
	L        int       `json:"layers"`
	H        int       `json:"heads"`
	T        int       `json:"seq_len"`
	Heads    []head    `json:"head_labels"` // [L*H], layer-major
	Examples []example `json:"examples"`
	Colors   []string  `json:"colors"` // viz.CellPalette, #rrggbb
	Tools    *tools    `json:"tools,omitempty"`
	Circuit  *circuit  `json:"circuit,omitempty"`
}

// tools names what each example's patching and attribution hold.
type tools struct {
	Corruption string   `json:"corruption"`
	Positions  []int    `json:"positions"`
	Rows       []string `json:"rows"`
	Parts      []string `json:"parts"`
}

type head struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

type example struct {
	// Tokens are the example's token names, Labels the same cut to
	// LabelChars.
	Tokens []string `json:"tokens"`
	Labels []string `json:"labels"`
	// Att[l*H+h] is that head's T*T weights, row-major (query, key),
	// rounded to 1e-4: the readout shows three decimals.
	Att [][]float64 `json:"att"`
	// Cells[l*H+h] are the same cells' colours, indices into Colors:
	// viz.CellIndex of the exact weights, so the page shows a figure's
	// and the viewer's colours.
	Cells [][]int `json:"cells"`
	// Patch[r][p] is the share of the example's logit difference patching
	// row r at position Positions[p] restores, rounded to 1e-3, and
	// PatchColors its colour (viz.Diverging over the example's largest
	// magnitude); Parts[k] the example's mean part k of its answer logits,
	// whose mean is Logit.
	Patch       [][]float64 `json:"patch,omitempty"`
	PatchColors [][]string  `json:"patch_colors,omitempty"`
	Parts       []float64   `json:"parts,omitempty"`
	Logit       float64     `json:"logit"`
}

// Causal is the causal tools' results for the examples a page shows
// (docs/causal.md), each example's own: the patching heatmap (one row per
// patched activation, one column per position) and the direct logit
// attribution of its answers.
type Causal struct {
	Corruption string
	Positions  []int
	Rows       []string
	// Patch[n][r][p] is example n's normalised logit difference for row r
	// patched at Positions[p].
	Patch [][][]float64
	Parts []string
	// Attribution[n][k] is example n's mean part k of its answer logits,
	// and Logit[n] its mean answer logit.
	Attribution [][]float64
	Logit       []float64
	// Circuit is the model's circuit, or nil for a page without one.
	Circuit *Circuit
}

// Circuit is a model's circuit as edges (circuit.Report, docs/circuits.md):
// how it was measured, its faithfulness, and every edge's effect.
type Circuit struct {
	Corruption, Direction string
	Examples              int
	Threshold             float64
	Faithfulness          float64
	Edges                 []CircuitEdge
}

// CircuitEdge is one edge: its name (sender->receiver), its sender and
// receiver, its effect by path patching and by attribution patching,
// and whether the circuit keeps it.
type CircuitEdge struct {
	Name, From, To      string
	Effect, Attribution float64
	In                  bool
}

// MaxOtherEdges is how many edges outside the circuit the page lists at
// most, largest effect first: a model of 32 heads has thousands of edges.
const MaxOtherEdges = 24

// circuit is what the page shows of a Circuit: its edges, then the
// largest others whose effect rounds away from zero, each rounded to 1e-3.
type circuit struct {
	Corruption   string        `json:"corruption"`
	Direction    string        `json:"direction"`
	Examples     int           `json:"examples"`
	Threshold    float64       `json:"threshold"`
	Faithfulness float64       `json:"faithfulness"`
	Total        int           `json:"total"`  // edges in the model
	Hidden       int           `json:"hidden"` // others with an effect not listed
	Edges        []circuitEdge `json:"edges"`
}

type circuitEdge struct {
	Name        string  `json:"name"`
	From        string  `json:"from"`
	To          string  `json:"to"`
	Effect      float64 `json:"effect"`
	Attribution float64 `json:"attribution"`
	In          bool    `json:"in"`
}

// pageCircuit is c as the page lists it: the circuit's edges by effect,
// largest first, then at most MaxOtherEdges others of effect at least
// 0.005 in magnitude, largest magnitude first.
func pageCircuit(c *Circuit) *circuit {
	p := &circuit{Corruption: c.Corruption, Direction: c.Direction, Examples: c.Examples,
		Threshold: c.Threshold, Faithfulness: math.Round(c.Faithfulness*1e3) / 1e3, Total: len(c.Edges), Edges: []circuitEdge{}}
	var in, out []CircuitEdge
	for _, e := range c.Edges {
		switch {
		case e.In:
			in = append(in, e)
		case math.Abs(e.Effect) >= 0.005:
			out = append(out, e)
		}
	}
	slices.SortStableFunc(in, func(a, b CircuitEdge) int { return cmp.Compare(b.Effect, a.Effect) })
	slices.SortStableFunc(out, func(a, b CircuitEdge) int { return cmp.Compare(math.Abs(b.Effect), math.Abs(a.Effect)) })
	if len(out) > MaxOtherEdges {
		p.Hidden, out = len(out)-MaxOtherEdges, out[:MaxOtherEdges]
	}
	for _, e := range append(in, out...) {
		p.Edges = append(p.Edges, circuitEdge{Name: e.Name, From: e.From, To: e.To, In: e.In,
			Effect: math.Round(e.Effect*1e3) / 1e3, Attribution: math.Round(e.Attribution*1e3) / 1e3})
	}
	return p
}

// Write writes a page of the first Examples examples of att, each head
// labelled with its verdict in heads (analysis.ScoreAll), under title,
// each token named by token (the figures' name of token id: tasks.TokenName
// of the model's task; nil: viz.TokenLabel); with c, each example's
// patching and attribution too (c holds at least as many examples as the
// page shows).
func Write(w io.Writer, title string, att *analysis.Attention, heads []analysis.HeadScore, c *Causal, token func(id int) string) error {
	if err := att.Validate(); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	shown := Examples(att.N, att.L, att.H, att.T)
	if c != nil && (len(c.Patch) < shown || len(c.Attribution) < shown || len(c.Logit) < shown) {
		return fmt.Errorf("html: causal results for %d examples, the page shows %d", min(len(c.Patch), len(c.Attribution), len(c.Logit)), shown)
	}
	d := data{Title: title, Causal: att.Causal, L: att.L, H: att.H, T: att.T, Heads: make([]head, att.L*att.H)}
	for l := range att.L {
		for h := range att.H {
			d.Heads[l*att.H+h] = head{Name: analysis.HeadName(l, h), Title: "no score"}
		}
	}
	for _, hs := range heads {
		if hs.Layer < att.L && hs.Head < att.H {
			d.Heads[hs.Layer*att.H+hs.Head].Title = hs.Title()
		}
	}
	if token == nil {
		token = viz.TokenLabel
	}
	if c != nil {
		d.Tools = &tools{Corruption: c.Corruption, Positions: c.Positions, Rows: c.Rows, Parts: c.Parts}
		if c.Circuit != nil {
			d.Circuit = pageCircuit(c.Circuit)
		}
	}
	for n := range shown {
		ex := example{}
		if c != nil {
			ex.Patch, ex.PatchColors = patchCells(c.Patch[n])
			ex.Parts, ex.Logit = roundAll(c.Attribution[n], 1e-3), math.Round(c.Logit[n]*1e3)/1e3
		}
		for _, id := range att.Tokens[n*att.T : (n+1)*att.T] {
			name := token(id)
			ex.Tokens = append(ex.Tokens, name)
			ex.Labels = append(ex.Labels, viz.Fit(name, LabelChars, utf8.RuneCountInString))
		}
		for l := range att.L {
			for h := range att.H {
				m := make([]float64, 0, att.T*att.T)
				cells := make([]int, 0, att.T*att.T)
				for i := range att.T {
					for j := range att.T {
						w := att.At(n, l, h, i, j)
						m = append(m, math.Round(float64(w)*1e4)/1e4)
						cells = append(cells, viz.CellIndex(att.Causal && j > i, w))
					}
				}
				ex.Att = append(ex.Att, m)
				ex.Cells = append(ex.Cells, cells)
			}
		}
		d.Examples = append(d.Examples, ex)
	}
	for _, c := range viz.CellPalette() {
		d.Colors = append(d.Colors, fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B))
	}
	// json.Marshal escapes <, > and &, so the data cannot close its script.
	// NaN has no JSON: none reaches here (the causal values are finite).
	js, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return pageTemplate.Execute(w, struct {
		Title  string
		Style  template.CSS
		Script template.JS
		Data   template.JS
	}{title, template.CSS(pageCSS), template.JS(pageJS), template.JS(js)})
}

// patchCells is an example's patching rows rounded for the readout, and
// their colours: viz.Diverging over the largest magnitude (at least 0.01).
func patchCells(rows [][]float64) ([][]float64, [][]string) {
	scale := 0.01
	for _, r := range rows {
		for _, v := range r {
			scale = max(scale, math.Abs(v))
		}
	}
	var vals [][]float64
	var cols [][]string
	for _, r := range rows {
		var cs []string
		for _, v := range r {
			c := viz.Diverging(v / scale)
			cs = append(cs, fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B))
		}
		vals, cols = append(vals, roundAll(r, 1e-3)), append(cols, cs)
	}
	return vals, cols
}

// roundAll is xs rounded to multiples of step.
func roundAll(xs []float64, step float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Round(x/step) * step
	}
	return out
}

// CheckPath refuses, before any work, a path a page cannot go to: one
// whose extension is not a page's ("" and stdout are fine).
func CheckPath(path string) error {
	if path == "" || path == atomicfile.Stdio {
		return nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		return nil
	}
	return fmt.Errorf("%s: the page is HTML; give a file ending in .html", path)
}
