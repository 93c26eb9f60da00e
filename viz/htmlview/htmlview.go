// Package htmlview writes every head's attention as one self-contained
// HTML page, after CircuitsVis's attention grid: each head's pattern under
// its label, hover for query, key and weight, click to lock the readout,
// and a picker over the examples. The data, the script and the style are
// inline and the page's Content-Security-Policy forbids every request, so
// it opens anywhere, offline, and sends nothing.
package htmlview

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"

	"headlab/analysis"
	"headlab/tasks"
	"headlab/viz"
)

// MaxExamples is how many examples a page holds at most: the picker's
// choice, and a page that stays small (a few hundred kB at T=16).
const MaxExamples = 32

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
}

type head struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

type example struct {
	Tokens []string `json:"tokens"`
	// Att[l*H+h] is that head's T*T weights, row-major (query, key),
	// rounded to 1e-4: the readout shows three decimals.
	Att [][]float64 `json:"att"`
	// Cells[l*H+h] are the same cells' colours, indices into Colors:
	// viz.CellIndex of the exact weights, so the page shows a figure's
	// and the viewer's colours.
	Cells [][]int `json:"cells"`
}

// Write writes a page of the first MaxExamples examples of att, each head
// labelled with its verdict in heads (analysis.ScoreAll), under title.
func Write(w io.Writer, title string, att *analysis.Attention, heads []analysis.HeadScore) error {
	if err := att.Validate(); err != nil {
		return fmt.Errorf("html: %w", err)
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
	for n := range min(att.N, MaxExamples) {
		ex := example{}
		for _, id := range att.Tokens[n*att.T : (n+1)*att.T] {
			ex.Tokens = append(ex.Tokens, tasks.TokenLabel(id))
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
