package analysis

import "testing"

// TestLabelRules holds both label rules to docs/head-patterns.md ("The
// label") on scores set by hand: the first rule ranks all eight; the
// revised one names uniform only near 1, after every cell pattern.
func TestLabelRules(t *testing.T) {
	const T = 18
	scores := func(kv ...any) HeadScore {
		s := HeadScore{Scores: map[string]float64{}, OffsetD: 3, PositionJ: 2, MirrorC: T - 1}
		for _, p := range Patterns {
			s.Scores[p] = 0
		}
		for i := 0; i < len(kv); i += 2 {
			s.Scores[kv[i].(string)] = kv[i+1].(float64)
		}
		return s
	}
	cases := []struct {
		name          string
		head          HeadScore
		first, second string
		score         float64 // the revised label's score
		runnerUp      string
	}{
		{"note's previous-token head", scores(LabelPreviousToken, 0.47, LabelUniform, 0.55), "uniform", "previous-token", 0.47, ""},
		{"uniform near 1 beside a cell pattern", scores(LabelPreviousToken, 0.42, LabelUniform, 0.95), "uniform", "previous-token", 0.42, ""},
		{"uniform near 1 alone", scores(LabelPreviousToken, 0.2, LabelUniform, 0.9), "uniform", "uniform", 0.9, ""},
		{"uniform below 0.9 alone", scores(LabelPreviousToken, 0.3, LabelUniform, 0.89), "uniform", NoClearPattern, 0.3, ""},
		{"nothing", scores(LabelInduction, 0.39), NoClearPattern, NoClearPattern, 0.39, ""},
		{"close runner-up", scores(LabelInduction, 0.8, LabelMatching, 0.7), "induction", "induction", 0.8, "matching"},
		{"runner-up too far", scores(LabelInduction, 0.8, LabelMatching, 0.69), "induction", "induction", 0.8, ""},
		{"runner-up below threshold", scores(LabelInduction, 0.45, LabelMatching, 0.39), "induction", "induction", 0.45, ""},
		{"tie to the earlier row", scores(PatternOffset, 0.6, LabelAttentionSink, 0.6), "attention-sink", "attention-sink", 0.6, "offset -3"},
		{"shifted mirror", func() HeadScore { s := scores(LabelMirror, 0.7); s.MirrorC = T - 2; return s }(), "mirror shifted", "mirror shifted", 0.7, ""},
		{"position", scores(PatternPosition, 0.5, LabelUniform, 0.92), "uniform", "position-2", 0.5, ""},
	}
	for _, c := range cases {
		if got := c.head.Labelled(FirstRule, T).Label; got != c.first {
			t.Errorf("%s: first rule %q, want %q", c.name, got, c.first)
		}
		got := c.head.Labelled(RevisedRule, T)
		if got.Label != c.second || got.Score != c.score || got.RunnerUp != c.runnerUp {
			t.Errorf("%s: revised rule %q %v runner-up %q, want %q %v %q", c.name, got.Label, got.Score, got.RunnerUp, c.second, c.score, c.runnerUp)
		}
	}
	// Relabel keeps a rest mass only where the label stands.
	rest := 0.3
	h := scores(LabelInduction, 0.5, LabelUniform, 0.6)
	h.Label, h.RestMass = "induction", &rest
	if got, changed := h.Relabel(FirstRule, T); !changed || got.RestMass != nil || got.Label != "uniform" {
		t.Errorf("relabelled to %q (changed %v), rest %v: want uniform, changed, no rest", got.Label, changed, got.RestMass)
	}
	if got, changed := h.Relabel(RevisedRule, T); changed || got.RestMass != &rest {
		t.Errorf("kept label: changed %v, rest %v", changed, got.RestMass)
	}
}
