package inspect

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"headlab/analysis"
)

// demoHistory: three records; the first has no loss; L0H0 changes label
// at step 20 and back at 30, L1H0 at 30; L1H1 first appears at step 20.
func demoHistory() History {
	loss := func(v float64) *float64 { return &v }
	hs := func(name, label string, score float64) analysis.HeadScore {
		return analysis.HeadScore{Name: name, Label: label, Score: score}
	}
	return History{
		{Step: 0, Accuracy: 0.1, Heads: []analysis.HeadScore{hs("L0H0", "uniform", 0.5), hs("L1H0", analysis.NoClearPattern, 0.3)}},
		{Step: 20, Loss: loss(1.5), Accuracy: 0.4, Heads: []analysis.HeadScore{hs("L0H0", "previous-token", 0.6), hs("L1H0", analysis.NoClearPattern, 0.35), hs("L1H1", "uniform", 0.7)}},
		{Step: 30, Loss: loss(0.5), Accuracy: 0.9, Heads: []analysis.HeadScore{hs("L0H0", "uniform", 0.55), hs("L1H0", "induction", 0.8), hs("L1H1", "uniform", 0.75)}},
	}
}

func TestHistorySeries(t *testing.T) {
	h := demoHistory()
	if got, want := h.Loss(), (Series{Name: "loss", Steps: []int{20, 30}, Values: []float64{1.5, 0.5}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Loss = %+v, want %+v", got, want)
	}
	if got, want := h.Accuracy(), (Series{Name: "accuracy", Steps: []int{0, 20, 30}, Values: []float64{0.1, 0.4, 0.9}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Accuracy = %+v, want %+v", got, want)
	}
	want := []Series{
		{Name: "L0H0", Steps: []int{0, 20, 30}, Values: []float64{0.5, 0.6, 0.55}},
		{Name: "L1H0", Steps: []int{0, 20, 30}, Values: []float64{0.3, 0.35, 0.8}},
		{Name: "L1H1", Steps: []int{20, 30}, Values: []float64{0.7, 0.75}},
	}
	if got := h.HeadScores(); !reflect.DeepEqual(got, want) {
		t.Errorf("HeadScores = %+v, want %+v", got, want)
	}
}

// TestLabelChanges: a change is against the previous record; the first
// record changes nothing, and a head that appears later counts as changed.
func TestLabelChanges(t *testing.T) {
	got := demoHistory().LabelChanges()
	want := []LabelChange{
		{Step: 20, Heads: []string{"L0H0 previous-token", "L1H1 uniform"}},
		{Step: 30, Heads: []string{"L0H0 uniform", "L1H0 induction"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LabelChanges = %+v, want %+v", got, want)
	}
	if s := got[1].Text(); s != "L0H0 uniform, L1H0 induction" {
		t.Errorf("Text = %q", s)
	}
	if c := (History{demoHistory()[0]}).LabelChanges(); c != nil {
		t.Errorf("one record: %+v, want none", c)
	}
}

// TestHistoryFileRoundTrip: what File writes, LoadHistory reads back.
func TestHistoryFileRoundTrip(t *testing.T) {
	h := demoHistory()
	f, err := h.File()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Errorf("read back %+v, want %+v", got, h)
	}
}

// TestHistoryReport: curves' report is the phase change and the number
// of records as JSON; its text is the phase line, then a line per label
// change.
func TestHistoryReport(t *testing.T) {
	h := demoHistory()
	r := h.Report()
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(js), `{"phase_change":{`) || !strings.HasSuffix(string(js), `,"records":3}`) {
		t.Errorf("json %s", js)
	}
	var b strings.Builder
	r.Write(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 1+len(h.LabelChanges()) || !strings.HasPrefix(lines[0], "phase change: ") ||
		lines[1] != fmt.Sprintf("step %5d  %s", h.LabelChanges()[0].Step, h.LabelChanges()[0].Text()) {
		t.Errorf("text:\n%s", b.String())
	}
}
