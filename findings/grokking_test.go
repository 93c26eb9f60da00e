package findings

import (
	"encoding/json"
	"strings"
	"testing"

	"headlab/inspect"
	"headlab/sweep"
	"headlab/tasks"
)

// madeUpGrokking is a grokking run of p's setting with a made-up history
// every 100 steps: training accuracy first at 99% at step 300 (98.99% at
// 200 falls short), held-out accuracy exactly 99% at 2000 (98.9% at 1900)
// and dipping below it again at 2100, so that the first record at or
// above the level is the one that counts.
func madeUpGrokking(p Plan) *Grokking {
	g := &Grokking{Config: p.Grokking, Every: 100, Seconds: 13}
	for step := 0; step <= 3000; step += 100 {
		tr, ho := 1.0, 1.0
		switch {
		case step < 200:
			tr, ho = 0.02+0.3*float64(step)/100, 0.01
		case step == 200:
			tr, ho = 0.9899, 0.01
		case step == 300:
			tr, ho = 0.995, 0.008
		case step < 1800:
			ho = 0.02
		case step == 1800:
			ho = 0.52
		case step == 1900:
			ho = 0.989
		case step == 2000:
			ho = 0.99
		case step == 2100:
			ho = 0.95
		}
		g.History = append(g.History, inspect.Snapshot{Step: step, Accuracy: ho, TrainAccuracy: &tr})
	}
	return g
}

// TestGrokkingSection: the setting is the one issue 38 found, written
// as every flag of its train command; the section's table and delay come
// from the history by the first-reach rule; it gives no verdict.
func TestGrokkingSection(t *testing.T) {
	in := newInput()
	c := in.Plan.Grokking
	if c.Task != "modular-addition" || c.Vocab != 61 || c.Layers != 1 || c.Heads != 4 || c.DModel != 64 || c.DFF != 256 ||
		c.Batch != 256 || c.LR != 3e-3 || c.WeightDecay != 1 || c.Loss != tasks.Answers || c.Steps != 3000 || c.Seed != 1 ||
		in.Plan.grokkingEvery() != 100 {
		t.Fatalf("grokking setting %+v every %d", c, in.Plan.grokkingEvery())
	}
	const cmd = "headlab train --task modular-addition --vocab 61 --layers 1 --heads 4 --d-model 64 --d-ff 256 --batch 256 --lr 0.003 --weight-decay 1 --loss answers --steps 3000 --seed 1 --record-every 100 --save grok"
	if got := TrainCommand(c, 100, "grok"); got != cmd {
		t.Errorf("command\n%s\nwant\n%s", got, cmd)
	}
	in.Grokking = madeUpGrokking(in.Plan)
	tr, ho := in.Grokking.Delay()
	if tr != (Reach{300, true}) || ho != (Reach{2000, true}) {
		t.Fatalf("delay: training %+v, held-out %+v; want 300 and 2000", tr, ho)
	}
	text, tl := write(in.grokkingSection)
	wantRows(t, "grokking", tl, nil)
	wantIn(t, "grokking", text, "## Grokking on modular addition\n", "```\n"+cmd+"\n```",
		"| 0 | 2.0% | 1.0% |  |",
		"| 300 | 99.5% | 0.8% | training accuracy first at 99% |",
		"| 1800 | 100.0% | 52.0% |  |", "| 2000 | 100.0% | 99.0% | held-out accuracy first at 99% |", "| 3000 | 100.0% | 100.0% |  |",
		"Training accuracy first reaches 99% at step 300, held-out accuracy at step 2000: a delay of 1700 steps.",
		"Chance is 1.7%.", "trained in 13 s", "(findings/"+GrokkingFile+")", "No verdict")
	// Rows: each tenth of the run (0, 300, ..., 3000) and the two first
	// reaches (300 is both; 2000 is not a tenth).
	if n := strings.Count(text, "\n| ") - 1; n != 12 {
		t.Errorf("%d table rows, want 12:\n%s", n, text)
	}
	if strings.Contains(text, "Scaled") || strings.Contains(text, "| 1900 |") {
		t.Errorf("unscaled section shows a scale note or records between tenths:\n%s", text)
	}

	// Held-out accuracy never at 99%: the delay is a lower bound, with
	// its best.
	for i := range in.Grokking.History {
		in.Grokking.History[i].Accuracy = min(in.Grokking.History[i].Accuracy, 0.97)
	}
	text, _ = write(in.grokkingSection)
	wantIn(t, "no held-out reach", text, "Training accuracy first reaches 99% at step 300; held-out accuracy does not within the run's 3000 steps (best 97.0% at step 1900), so the delay is more than 2700 steps.")
	// Training accuracy never at 99% either: no delay.
	for i := range in.Grokking.History {
		v := min(*in.Grokking.History[i].TrainAccuracy, 0.98)
		in.Grokking.History[i].TrainAccuracy = &v
	}
	text, _ = write(in.grokkingSection)
	wantIn(t, "no training reach", text, "Training accuracy does not reach 99% in the run's 3000 steps (best 98.0% at step 200), so there is no delay to measure.")
	if strings.Contains(text, "first at 99%") {
		t.Errorf("a row marks a reach that did not happen:\n%s", text)
	}

	in.Grokking = nil
	text, _ = write(in.grokkingSection)
	wantIn(t, "no run", text, "No grokking run in this report.")
}

// TestGrokkingScaled: --steps-scale scales the run and its interval, and
// the section says so, with the setting at scale 1.
func TestGrokkingScaled(t *testing.T) {
	p := NewPlan(4, 2, 0.02, false, tasks.NextToken)
	if p.Grokking.Steps != 60 || p.grokkingEvery() != 2 || p.Grokking.Loss != tasks.Answers {
		t.Fatalf("scaled grokking: %d steps every %d at %s, want 60 every 2 at answers", p.Grokking.Steps, p.grokkingEvery(), p.Grokking.Loss)
	}
	in := &Input{Plan: p, Grokking: &Grokking{Config: p.Grokking, Every: 2}}
	for step := 0; step <= 60; step += 2 {
		tr := min(1, float64(step)/30)
		in.Grokking.History = append(in.Grokking.History, inspect.Snapshot{Step: step, Accuracy: tr / 2, TrainAccuracy: &tr})
	}
	text, _ := write(in.grokkingSection)
	wantIn(t, "scaled", text, "--steps 60 --seed 1 --record-every 2 --save grok",
		"> **Scaled:** this run's steps are scaled by 0.02 (`--steps-scale`): 60 steps recorded every 2, where the setting is 3000 recorded every 100",
		"Training accuracy first reaches 99% at step 30; held-out accuracy does not within the run's 60 steps (best 50.0% at step 30), so the delay is more than 30 steps.",
		"| 6 | 20.0% | 10.0% |  |", "| 30 | 100.0% | 50.0% | training accuracy first at 99% |")
}

// TestGrokkingStored: claims.json keeps the run, and a resume reuses it
// only for the same setting and interval; the page holds the section
// once, under both label rules.
func TestGrokkingStored(t *testing.T) {
	p := NewPlan(4, 2, 1, false, tasks.NextToken)
	m := NewMeasured(p, nil, nil)
	m.Grokking = madeUpGrokking(p)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Measured
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	g := back.GrokkingFor(p)
	if g == nil || len(g.History) != 31 || *g.History[3].TrainAccuracy != 0.995 {
		t.Fatalf("stored grokking run not reused: %+v", g)
	}
	for _, other := range []Plan{NewPlan(4, 2, 0.5, false, tasks.NextToken), NewPlan(4, 2, 0.999, false, tasks.NextToken)} {
		if back.GrokkingFor(other) != nil {
			t.Errorf("a grokking run of %d steps every 100 reused for %d every %d", p.Grokking.Steps, other.Grokking.Steps, other.grokkingEvery())
		}
	}
	if (Measured{}).GrokkingFor(p) != nil {
		t.Error("no stored run, yet one reused")
	}

	var b strings.Builder
	Markdown(&b, Input{Plan: p, ByID: map[sweep.RunID]*sweep.Record{}, Grokking: g, Out: "docs"})
	if n := strings.Count(b.String(), "## Grokking on modular addition\n"); n != 1 {
		t.Errorf("the page holds the grokking section %d times, want 1", n)
	}
	if strings.Count(b.String(), "a delay of 1700 steps") != 1 {
		t.Error("the page lacks the delay, or repeats it")
	}
}
