package circuit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"headlab/backend/cpu"
)

// TestGraphAndPage: the figure and the page hold every edge of the report
// in its order, with its effect and whether it is in the circuit, and
// the figure's note says how much the circuit keeps.
func TestGraphAndPage(t *testing.T) {
	r := &Report{Corruption: "other", Direction: Denoising, Examples: 8, Threshold: 0.8, Faithfulness: 0.9,
		Edges: []EdgeResult{
			{Edge: "embed->L0H0.q", From: "embed", To: "L0H0.q", Effect: 0.3, Attribution: 0.25, InCircuit: true},
			{Edge: "L0H0->logits", From: "L0H0", To: "logits", Effect: -0.1, Attribution: 0.01},
		},
		Circuit: []string{"embed->L0H0.q"}, Curve: []float64{0, 0.9}}
	g := r.Graph("title", 2)
	if g.Layers != 2 || g.Kept != 1 || len(g.Edges) != 2 || g.Edges[0].From != "embed" || g.Edges[1].To != "logits" ||
		!g.Edges[0].In || g.Edges[1].In || g.Edges[1].Effect != -0.1 || !strings.Contains(g.Note, "keeps 90% of the logit difference with 1 of 2 edges") {
		t.Errorf("graph %+v", g)
	}
	p := r.Page()
	if p.Direction != Denoising || p.Faithfulness != 0.9 || len(p.Edges) != 2 || p.Edges[0].Name != "embed->L0H0.q" ||
		p.Edges[0].Attribution != 0.25 || !p.Edges[0].In || p.Edges[1].In {
		t.Errorf("page %+v", p)
	}
}

// TestFindInIsFind: FindIn gives what Find gives on a runner of the same
// model and options, bit for bit.
func TestFindInIsFind(t *testing.T) {
	m, _, err := Plant(PlantInduction, 1, "first-half")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Examples: 8}
	r, err := NewRunner(m, cpu.New(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, err := Find(r, 0.8, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := FindIn(m, cpu.New(), o, 0.8, false, func(int, int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || calls == 0 {
		t.Errorf("FindIn %+v (progress told %d times), Find %+v", got, calls, want)
	}
}

// TestPlantedReport: the report names each planted edge as Edge.String
// does, in JSON under planted_edges and in the text one a line.
func TestPlantedReport(t *testing.T) {
	_, edges, err := Plant(PlantRedundant, 1, "other")
	if err != nil {
		t.Fatal(err)
	}
	p := PlantedOf(PlantRedundant, "other", edges)
	js, _ := json.Marshal(p)
	var b bytes.Buffer
	p.Write(&b, "DIR")
	if len(p.Edges) != len(edges) || len(edges) == 0 || p.Edges[0] != edges[0].String() ||
		!strings.HasPrefix(string(js), `{"corruption":"other","kind":"redundant","planted_edges":[`) ||
		!strings.HasPrefix(b.String(), "Planted redundant model in DIR. Edges patching under other can find:\n  "+edges[0].String()+"\n") ||
		strings.Count(b.String(), "\n") != len(edges)+1 {
		t.Errorf("json %s\ntext %s", js, b.String())
	}
}
