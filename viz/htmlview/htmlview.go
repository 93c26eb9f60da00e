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
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"unicode/utf8"

	"headlab/analysis"
	"headlab/viz"
)

// MaxExamples is how many examples a page holds at most: the picker's
// choice, and a page that stays small (a few hundred kB at T=16).
const MaxExamples = 32

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
}

// Write writes a page of the first MaxExamples examples of att, each head
// labelled with its verdict in heads (analysis.ScoreAll), under title,
// each token named by token (the figures' name of token id: tasks.TokenName
// of the model's task; nil: viz.TokenLabel); with c, each example's
// patching and attribution too (c holds at least as many examples as the
// page shows).
func Write(w io.Writer, title string, att *analysis.Attention, heads []analysis.HeadScore, c *Causal, token func(id int) string) error {
	if err := att.Validate(); err != nil {
		return fmt.Errorf("html: %w", err)
	}
	shown := min(att.N, MaxExamples)
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
