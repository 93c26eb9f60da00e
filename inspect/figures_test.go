package inspect

import (
	"reflect"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/train"
	"headlab/viz"
)

// TestFiguresCarryTheReports: each figure holds its report's numbers in
// the report's order, under the names the report gives them.
func TestFiguresCarryTheReports(t *testing.T) {
	p := &PatchReport{Corruption: "other", Positions: []int{3, 5},
		Heads: []Patched{{Name: "L0H0", LogitDiff: []float64{0.1, 0.2}}, {Name: "L0H1", LogitDiff: []float64{0.3, 0.4}}},
		Resid: []Patched{{Name: "resid 0", LogitDiff: []float64{1, 0.9}}}}
	g := p.Grid("t")
	if !reflect.DeepEqual(g.Rows, []string{"L0H0", "L0H1", "resid 0"}) || !reflect.DeepEqual(g.Columns, []string{"3", "5"}) ||
		!reflect.DeepEqual(g.Gaps, []int{2}) || g.Values[1][1] != 0.4 || g.Values[2][0] != 1 || !strings.Contains(g.Note, "other-corrupted") {
		t.Errorf("patch grid %+v", g)
	}
	pr := &PruneReport{RandomOrders: 3, Orders: []OrderCurve{{Order: "greedy", Steps: []PruneStep{{Fraction: 0, Accuracy: 1}, {Fraction: 0.5, Accuracy: 0.7}}}}}
	l := pr.Lines("t")
	if len(l.Curves) != 1 || l.Curves[0].Name != OrderTitle("greedy", 3) || !reflect.DeepEqual(l.Curves[0].Steps, []float64{0, 0.5}) ||
		!reflect.DeepEqual(l.Curves[0].Values, []float64{1, 0.7}) {
		t.Errorf("prune lines %+v", l)
	}
	a := &AttributionReport{Answers: 7, Logit: 2.5, Parts: []Part{{Name: "embed", Logit: 1}, {Name: "L0H0", Logit: 1.5}}}
	b := a.Bars("t")
	if !reflect.DeepEqual(b.Labels, []string{"embed", "L0H0"}) || !reflect.DeepEqual(b.Values, []float64{1, 1.5}) || !strings.Contains(b.Note, "7 answers") {
		t.Errorf("attribution bars %+v", b)
	}
	c := demoHistory().Curves("t")
	if !reflect.DeepEqual(c.Loss, viz.Curve{Name: "loss", Steps: []float64{20, 30}, Values: []float64{1.5, 0.5}}) ||
		len(c.Heads) != len(demoHistory().HeadScores()) || len(c.Markers) != len(demoHistory().LabelChanges()) {
		t.Errorf("curves %+v", c)
	}
}

// TestPageCausalIsPatchAndAttribute: the page's rows for each example are
// that example's own patching and attribution, as Patch and Attribute give
// them.
func TestPageCausalIsPatchAndAttribute(t *testing.T) {
	c := train.Defaults("induction")
	c.Steps = 30
	m, _, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := evaluatorOf(t, m)
	page, err := PageCausal(m, cpu.New(), 3)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := Patch(ev, PatchOptions{Examples: 3, PerExample: 3})
	if err != nil {
		t.Fatal(err)
	}
	ar, err := Attribute(ev, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Patch) != 3 || len(page.Rows) != len(pr[0].Heads)+len(pr[0].Resid) || len(page.Parts) != len(ar[0].Parts) {
		t.Fatalf("page of %d examples, %d rows, %d parts", len(page.Patch), len(page.Rows), len(page.Parts))
	}
	heads, resid := pr[0].PerExample(2)
	logit, parts := ar[0].PerExample(2)
	if !reflect.DeepEqual(page.Patch[2], append(heads, resid...)) || page.Logit[2] != logit || !reflect.DeepEqual(page.Attribution[2], parts) {
		t.Error("example 2's page rows are not its patching and attribution")
	}
}

// TestAnalyzeComposition: asked for, the report carries the model's
// composition scores and its text ends with their table; not asked for,
// neither.
func TestAnalyzeComposition(t *testing.T) {
	c := train.Defaults("induction")
	c.Steps = 10
	m, _, err := train.Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, asked := range []bool{false, true} {
		rep, _, err := Analyze(m, cpu.New(), Options{Composition: asked})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		WriteReport(&b, rep)
		has := strings.Contains(b.String(), "| Earlier head | Later head | Q-composition")
		if asked != (rep.Composition != nil) || asked != has || (asked && !reflect.DeepEqual(*rep.Composition, Composition(m))) {
			t.Errorf("composition asked %v: report has it %v, text has it %v", asked, rep.Composition != nil, has)
		}
	}
}
