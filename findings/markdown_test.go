package findings

import (
	"strings"
	"testing"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// TestPlanSeeds: the circuit fraction uses seeds 1..seeds, every other
// comparison 1..small.
func TestPlanSeeds(t *testing.T) {
	p := NewPlan(4, 2, 1, false, tasks.NextToken)
	if len(p.CircuitSeeds) != 4 || p.CircuitSeeds[0] != 1 || p.CircuitSeeds[3] != 4 ||
		len(p.SmallSet) != 2 || p.SmallSet[0] != 1 || p.SmallSet[1] != 2 {
		t.Fatalf("circuit seeds %v, small set %v", p.CircuitSeeds, p.SmallSet)
	}
	if p = NewPlan(1, 3, 1, false, tasks.NextToken); len(p.CircuitSeeds) != 1 || len(p.SmallSet) != 3 {
		t.Fatalf("circuit seeds %v, small set %v", p.CircuitSeeds, p.SmallSet)
	}
}

// records makes one finished record per pair of p with the accuracy acc
// gives its configuration; seed 1 of the default model gets the
// published model's heads and forms the circuit.
func records(p Plan, acc func(c train.Config) float64) map[sweep.RunID]*sweep.Record {
	out := map[sweep.RunID]*sweep.Record{}
	for _, pr := range p.Pairs() {
		r := &sweep.Record{Key: pr.Key, Config: pr.Config, Status: sweep.StatusOK, Accuracy: acc(pr.Config), Chance: 0.14}
		if pr.Key == sweep.Key(p.Induction) && pr.Config.Seed == 1 {
			head := func(l, h int, label string, off float64) inspect.Head {
				return inspect.Head{HeadScore: analysis.HeadScore{Name: "L" + string(rune('0'+l)) + "H" + string(rune('0'+h)), Layer: l, Head: h, Label: label, Score: 0.9}, AblatedAccuracy: off}
			}
			r.Heads = []inspect.Head{head(0, 0, "previous-token", 0.228), head(0, 1, analysis.NoClearPattern, 0.357),
				head(1, 0, "induction", 0.224), head(1, 1, "attention-sink", 0.997)}
			low := 0.2
			r.Ablation = sweep.Ablation{Intact: r.Accuracy, Induction: sweep.Joint{Heads: []string{"L1H0"}, Accuracy: &low},
				PreviousToken: sweep.Joint{Heads: []string{"L0H0"}, Accuracy: &low}}
			r.Circuit = r.FormsCircuit()
		}
		out[r.ID()] = r
	}
	return out
}

func markdown(p Plan, byID map[sweep.RunID]*sweep.Record) string {
	var recs []sweep.Record
	for _, pr := range p.Pairs() {
		if r := byID[sweep.RunID{Key: pr.Key, Seed: pr.Config.Seed}]; r != nil {
			recs = append(recs, *r)
		}
	}
	var b strings.Builder
	Markdown(&b, Input{Plan: p, Reports: sweep.Summarize(recs), ByID: byID, Summary: sweep.Summary{Total: len(recs), Done: len(recs)}, Workers: 1, Out: "docs"})
	return b.String()
}

// published gives every configuration of the plan the published number.
func published(p Plan) func(c train.Config) float64 {
	return func(c train.Config) float64 {
		switch {
		case c.Task == "induction" && c.Layers == 1:
			return 0.3
		case c.Task == "induction":
			return pubIntact
		case c.Task == "reverse" && !c.Causal:
			return 0.2
		case c.Task == "reverse" && !c.Positions:
			return 0.73
		default:
			return 1
		}
	}
}

// summaryRow finds the summary table's row that starts with finding.
func summaryRow(t *testing.T, md, finding string) string {
	t.Helper()
	for _, line := range summaryRows(md) {
		if strings.HasPrefix(line, "| "+finding) {
			return line
		}
	}
	t.Fatalf("no summary row %q in\n%s", finding, md)
	return ""
}

// summaryRows are the summary table's rows without their last column
// (the first label rule's reading), so that each ends in its verdict.
func summaryRows(md string) []string {
	_, after, _ := strings.Cut(md, "## Summary\n")
	table, _, _ := strings.Cut(after, "\n## ")
	var rows []string
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "| ") {
			l = strings.TrimSuffix(l, "|")
			rows = append(rows, l[:strings.LastIndex(l, "|")+1])
		}
	}
	return rows
}

// publishedDiffers says whether a summary row of a published finding (not
// one of the claims, whose runs these tests do not make) differs.
func publishedDiffers(md string) bool {
	for _, l := range summaryRows(md) {
		if strings.HasSuffix(l, "| **differs** |") && !strings.HasPrefix(l, "| claim ") {
			return true
		}
	}
	return false
}

// TestMarkdownVerdicts writes the report from runs that measure the
// published numbers (every verdict agrees, nothing differs), then moves
// one number at a time past its rule and sees that verdict, and only it,
// differ, with its line under "Where we differ".
func TestMarkdownVerdicts(t *testing.T) {
	p := NewPlan(3, 2, 1, false, tasks.NextToken)
	md := markdown(p, records(p, published(p)))
	if publishedDiffers(md) {
		t.Fatalf("published numbers do not all agree:\n%s", md)
	}
	if !strings.Contains(md, "**1 of 3 seeds form the circuit") {
		t.Errorf("circuit count missing:\n%s", md)
	}
	for _, c := range []struct {
		name    string
		change  func(c train.Config, a float64) float64
		finding string
	}{
		{"one layer learns induction", func(c train.Config, a float64) float64 {
			if c.Layers == 1 {
				return 0.9
			}
			return a
		}, "induction needs two layers"},
		{"the mask changes nothing", func(c train.Config, a float64) float64 {
			if c.Task == "reverse" && !c.Causal {
				return 0.73
			}
			return a
		}, "reverse, no positions: removing the mask too"},
		{"majority at chance", func(c train.Config, a float64) float64 {
			if c.Task == "majority" {
				return 0.34
			}
			return a
		}, "majority, positions on"},
		{"intact model worse", func(c train.Config, a float64) float64 {
			if c.Task == "induction" && c.Layers == 2 {
				return 0.9
			}
			return a
		}, "default model (one run, seed 1), intact accuracy"},
	} {
		base := published(p)
		md := markdown(p, records(p, func(cf train.Config) float64 { return c.change(cf, base(cf)) }))
		if row := summaryRow(t, md, c.finding); !strings.HasSuffix(row, "| **differs** |") {
			t.Errorf("%s: row %q", c.name, row)
		}
		if !publishedDiffers(md) {
			t.Errorf("%s: the report says nothing of the published findings differs", c.name)
		}
	}
	// Single-head ablations that miss the circuit: one head of a half
	// costs less than 20 points alone (its twin covers for it).
	if !strings.Contains(md, "Of the 1 circuit seeds, 0 would be missed") {
		t.Errorf("hidden count with load-bearing single heads:\n%s", md)
	}
	for _, label := range []string{"induction", "previous-token"} {
		byID := records(p, published(p))
		r1 := byID[sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}]
		for i := range r1.Heads {
			if r1.Heads[i].Label == label {
				r1.Heads[i].AblatedAccuracy = r1.Accuracy - 0.19
			}
		}
		if md := markdown(p, byID); !strings.Contains(md, "Of the 1 circuit seeds, 1 would be missed") {
			t.Errorf("a %s head costing 19 points alone is not counted as missed", label)
		}
	}
	// Seed 1 failed: no table, and the report says why.
	byID := records(p, published(p))
	r1 := byID[sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}]
	r1.Status, r1.Error, r1.Heads = sweep.StatusFailed, "training diverged at step 4: the loss was not finite", nil
	md = markdown(p, byID)
	if !strings.Contains(md, "Seed 1 failed: training diverged at step 4") || !strings.HasSuffix(summaryRow(t, md, "default model (one run, seed 1), intact"), "| **differs** |") {
		t.Errorf("failed seed 1:\n%s", md)
	}
}

// TestMarkdownNamesTheLoss: at either loss, every section of the report
// names the loss its runs trained with; the regime grid has a row at
// each loss.
func TestMarkdownNamesTheLoss(t *testing.T) {
	for _, c := range []struct{ loss, other string }{{tasks.NextToken, tasks.Answers}, {tasks.Answers, tasks.NextToken}} {
		p := NewPlan(3, 2, 1, true, c.loss)
		md := markdown(p, records(p, published(p)))
		sections := 0
		for _, sec := range strings.Split(md, "\n## ")[1:] {
			title, _, _ := strings.Cut(sec, "\n")
			switch {
			case title[0] >= '1' && title[0] <= '9', strings.HasPrefix(title, "Claim "):
				sections++
				if !strings.Contains(sec, c.loss+" loss") {
					t.Errorf("%s: section %q does not name the loss:\n%s", c.loss, title, sec)
				}
			case strings.HasPrefix(title, "Which setting"):
				sections++
				if strings.Count(sec, "\n| "+c.loss+" |") != 11 || strings.Count(sec, "\n| "+c.other+" |") != 9 {
					t.Errorf("%s: the regime grid's rows by loss:\n%s", c.loss, sec)
				}
			}
		}
		if sections != 6+11+1 {
			t.Errorf("%s: %d sections, want 18", c.loss, sections)
		}
		n := 0 // outside the first label rule's quoted sections
		for _, l := range strings.Split(md, "\n") {
			if !strings.HasPrefix(l, ">") {
				n += strings.Count(l, "Runs: the "+c.loss+" loss.")
			}
		}
		if n != 11 {
			t.Errorf("%s: %d claim sections name their runs' loss, want 11", c.loss, n)
		}
	}
}

// TestMarkdownBothLabelRules: where the first label rule names seed 1's
// layer-0 head uniform (its entropy above its previous-token share) and
// the revised rule previous-token, the page judges by the revised rule
// and shows the first rule's reading beside it: in the summary's last
// column and after each section it changes, quoted and labelled.
func TestMarkdownBothLabelRules(t *testing.T) {
	p := NewPlan(2, 2, 1, false, tasks.NextToken)
	byID := records(p, published(p))
	r1 := byID[sweep.RunID{Key: sweep.Key(p.Induction), Seed: 1}]
	r1.Heads[0].Scores = map[string]float64{analysis.LabelPreviousToken: 0.47, analysis.LabelUniform: 0.55}
	r1.Heads[0].Score = 0.47
	first := sweep.RuleAblation{Induction: r1.Ablation.Induction, PreviousToken: sweep.Joint{Heads: []string{}}}
	r1.Ablation.LabelRule, r1.Ablation.FirstRule = analysis.CurrentRule, &first
	md := markdown(p, byID)
	row := summaryRow(t, md, "seeds forming the circuit")
	full := ""
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| seeds forming the circuit") {
			full = l
		}
	}
	if !strings.Contains(row, "50.0%") || !strings.Contains(full, "| 0.0%") {
		t.Errorf("circuit row %q: want 1 of 2 by the revised rule, 0 of 2 by the first", full)
	}
	sec1, _, _ := strings.Cut(md[strings.Index(md, "## 1. "):], "\n## 2. ")
	if !strings.Contains(sec1, "| L0H0 | previous-token 0.47 |") || !strings.Contains(sec1, firstRuleNote) || !strings.Contains(sec1, "> | L0H0 | uniform 0.55 (previous-token 0.47) |") {
		t.Errorf("section 1 does not show both rules:\n%s", sec1)
	}
	if sec2, _, _ := strings.Cut(md[strings.Index(md, "## 2. "):], "\n## 3. "); strings.Contains(sec2, firstRuleNote) {
		t.Errorf("section 2 depends on no label, yet repeats under the first rule:\n%s", sec2)
	}
}
