package findings

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"headlab/analysis"
	"headlab/sweep"
)

// The label rule was revised (docs/head-patterns.md, "The label") after
// the runs of earlier reports had been judged by the rule first fixed.
// Every verdict that depends on labels is shown under both: the page is
// written from the runs as labelled by the revised rule, and again from
// the same runs as labelled by the first rule (each record's scores
// named again, with the joint ablations measured for those labels);
// where a section or a summary row differs, the first rule's is shown
// beside it, labelled.

// under is in as the given label rule reads it: every record's heads
// labelled by rule with its circuit under rule (sweep.Record.Under), the
// configurations summarized again, and the circuit seeds' other
// measures taken for rule's labels.
func (in Input) under(rule analysis.LabelRule) Input {
	if rule == analysis.CurrentRule {
		return in
	}
	out := in
	out.ByID = make(map[sweep.RunID]*sweep.Record, len(in.ByID))
	for id, r := range in.ByID {
		c := *r
		var ra sweep.RuleAblation
		c.Heads, ra = r.Under(rule)
		c.Ablation.Induction, c.Ablation.PreviousToken, c.Circuit = ra.Induction, ra.PreviousToken, ra.Circuit
		c.Ablation.Single = slices.Clone(r.Ablation.Single)
		for i := range c.Ablation.Single {
			for _, h := range c.Heads {
				if h.Name == c.Ablation.Single[i].Head {
					c.Ablation.Single[i].Label = h.Label
				}
			}
		}
		out.ByID[id] = &c
	}
	ids := slices.SortedFunc(maps.Keys(out.ByID), func(a, b sweep.RunID) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), cmp.Compare(a.Seed, b.Seed))
	})
	recs := make([]sweep.Record, len(ids))
	for i, id := range ids {
		recs[i] = *out.ByID[id]
	}
	out.Reports = sweep.Summarize(in.Plan.Reported(recs)) // as reproduce summarises: the atlas's extra seeds apart
	out.Extras = make(map[sweep.RunID]*Extra, len(in.Extras))
	for id, x := range in.Extras {
		if x != nil && x.Circuit != nil {
			c, m := *x, *x.Circuit
			m.Joint = x.Circuit.JointUnder(rule)
			c.Circuit = &m
			x = &c
		}
		out.Extras[id] = x
	}
	return out
}

// firstRuleNote introduces a section as the first label rule reads it.
const firstRuleNote = "**Under the first label rule** (a head named after the best of all eight scores, uniform's entropy included; docs/head-patterns.md), the same runs read:"

// withFirstRule appends to each section of body (split at its "## "
// headings) the same section of first, the page under the first label
// rule, where the two differ.
func withFirstRule(body, first string) string {
	firsts := map[string]string{}
	for _, s := range sections(first) {
		firsts[heading(s)] = s
	}
	var b strings.Builder
	for _, s := range sections(body) {
		b.WriteString(s)
		f, ok := firsts[heading(s)]
		if !ok || f == s {
			continue
		}
		fmt.Fprintf(&b, "%s\n\n", firstRuleNote)
		for _, line := range strings.Split(strings.TrimRight(strings.TrimPrefix(f, heading(f)), "\n"), "\n") {
			if strings.HasPrefix(line, "#") {
				line = "#" + line // a level below the section's own
			}
			b.WriteString(strings.TrimSpace("> "+line) + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// sections splits a page body at its "## " headings; each part keeps
// its heading line.
func sections(body string) []string {
	var out []string
	lines := strings.SplitAfter(body, "\n")
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "## ") && i > start {
			out = append(out, strings.Join(lines[start:i], ""))
			start = i
		}
	}
	if rest := strings.Join(lines[start:], ""); rest != "" {
		out = append(out, rest)
	}
	return out
}

// heading is a section's first line.
func heading(section string) string {
	h, _, _ := strings.Cut(section, "\n")
	return h + "\n"
}

// firstRuleColumn is, for each row of t, what the first label rule
// measures and its verdict where they differ from the row's ("" where
// they agree), from tf, the tally under the first rule (matched by the
// finding's name).
func firstRuleColumn(t, tf *tally) []string {
	byName := map[string][4]string{}
	for _, r := range tf.rows {
		byName[r[0]] = r
	}
	out := make([]string, len(t.rows))
	for i, r := range t.rows {
		f, ok := byName[r[0]]
		switch {
		case !ok:
			out[i] = "no such row: it labels the head otherwise"
		case f[2] != r[2] || f[3] != r[3]:
			out[i] = f[2] + ": " + f[3]
		}
	}
	return out
}
