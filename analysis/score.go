// Package analysis scores and names attention heads from their attention
// matrices and the token sequences they were computed on.
//
// The scores, the eligibility rules and the labels follow the contract in
// docs/head-patterns.md ("Reading a head: the canonical patterns") exactly;
// comments here cite it rather than restate it. The package is pure Go on the
// standard library: it works on numbers read from files or handed over by the
// model code and never builds a model.
package analysis

import (
	"fmt"
	"math"
	"strings"
)

// The canonical patterns' names (docs/head-patterns.md). Each is the key
// of its score in HeadScore.Scores and the label of a head it names, but
// for offset and position, whose labels carry their offset and position
// ("offset -3", "position-5"), and a mirror on the anti-diagonal c = T-2,
// labelled LabelMirrorShifted.
const (
	LabelPreviousToken = "previous-token"
	LabelInduction     = "induction"
	LabelMatching      = "matching"
	LabelMirror        = "mirror"
	LabelAttentionSink = "attention-sink"
	PatternOffset      = "offset"
	PatternPosition    = "position"
	LabelUniform       = "uniform"
	LabelMirrorShifted = "mirror shifted"
)

// Patterns lists the canonical pattern names in the order of the table in
// head-patterns.md; that order breaks ties between equal scores.
var Patterns = []string{LabelPreviousToken, LabelInduction, LabelMatching, LabelMirror, LabelAttentionSink, PatternOffset, PatternPosition, LabelUniform}

// Threshold is the lowest score that names a head after a cell pattern
// (every pattern but uniform under RevisedRule; every one under FirstRule).
const Threshold = 0.4

// NoClearPattern is the label of a head whose best score is below Threshold.
const NoClearPattern = "no clear pattern"

// HeadScore is the verdict on one head. Marshalled to JSON it reads
// {"name","layer","head","label","score","scores","offset_d","position_j","mirror_c"}.
type HeadScore struct {
	// Name is HeadName(Layer, Head), e.g. "L0H1".
	Name string `json:"name"`
	// Layer and Head locate the head, both from 0.
	Layer int `json:"layer"`
	Head  int `json:"head"`
	// Label is the winning pattern ("induction", "offset -3", "position-5",
	// "mirror shifted") or NoClearPattern.
	Label string `json:"label"`
	// Score is the label's score, or, when Label is NoClearPattern, the
	// best cell pattern's score that fell short of Threshold.
	Score float64 `json:"score"`
	// RunnerUp is the label of the second-best cell pattern when it
	// reaches Threshold and scores within RunnerUpMargin of Score ("" when
	// none does), and RunnerUpScore its score: a close call is shown.
	RunnerUp      string  `json:"runner_up,omitempty"`
	RunnerUpScore float64 `json:"runner_up_score,omitempty"`
	// Scores holds the batch score of every name in Patterns; offset,
	// position and mirror hold the score of the best d, j and c.
	Scores map[string]float64 `json:"scores"`
	// OffsetD and PositionJ are the best offset d and position j, 0 when
	// there is no candidate (the score is then 0 too).
	OffsetD   int `json:"offset_d"`
	PositionJ int `json:"position_j"`
	// MirrorC is the better mirror anti-diagonal, T-1 or T-2 (ties to T-1).
	MirrorC int `json:"mirror_c"`
	// Sink is the head's attention-sink score, Scores["attention-sink"]:
	// its mean mass on key 0, shown beside the label.
	Sink float64 `json:"sink"`
	// RestMass is the head's mean mass on key 0 over the queries where
	// its label's pattern has no cell to read (an induction head's
	// queries with no earlier copy of their token): where it rests when
	// it has nothing to do. nil for a head with no clear pattern, or
	// whose pattern has a cell for every query (previous-token,
	// attention-sink, uniform).
	RestMass *float64 `json:"rest_mass"`
	// Relations scores the head on every relation the task declares, in
	// its order (none for tasks without relations).
	Relations []RelationScore `json:"relations,omitempty"`
	// Syntax names the head after a relation it follows ("syntax
	// verb->subject 0.83", SyntaxName), "" when it follows none.
	Syntax string `json:"syntax,omitempty"`
}

// Title is the label with its score to two decimals, "induction 0.81" or
// "offset -3 0.55", and a close runner-up after it, "induction 0.81
// (matching 0.75)". A head with no clear pattern still shows its best
// score, "no clear pattern 0.23", so a near miss can be told from an
// empty head.
func (s HeadScore) Title() string {
	t := fmt.Sprintf("%s %.2f", s.Label, s.Score)
	if s.RunnerUp != "" {
		t += fmt.Sprintf(" (%s %.2f)", s.RunnerUp, s.RunnerUpScore)
	}
	return t
}

// ScoreAll scores every head of a, layer-major: L0H0, L0H1, ..., L1H0, ...
// a must be valid (see Attention.Validate).
func ScoreAll(a *Attention) []HeadScore {
	out := make([]HeadScore, 0, a.L*a.H)
	for l := 0; l < a.L; l++ {
		for h := 0; h < a.H; h++ {
			out = append(out, ScoreHead(a, l, h))
		}
	}
	return out
}

// cellFunc names the key cell a pattern reads for query i of example n, or
// ok = false when the pattern has no cell for that query.
type cellFunc func(n, i int) (j int, ok bool)

// ScoreHead scores head h of layer l on every pattern and labels it, as
// head-patterns.md prescribes. a must be valid (see Attention.Validate) and
// l, h in range; it panics otherwise.
func ScoreHead(a *Attention, l, h int) HeadScore {
	if l < 0 || l >= a.L || h < 0 || h >= a.H {
		panic(fmt.Sprintf("analysis: head %s out of range (L=%d, H=%d)", HeadName(l, h), a.L, a.H))
	}
	T := a.T
	prevSame := prevSameToken(a)
	// cells is each cell-reading pattern's cell (the best c, d and j's).
	cells := map[string]cellFunc{
		LabelPreviousToken: func(_, i int) (int, bool) { return i - 1, i >= 1 },
		LabelInduction: func(n, i int) (int, bool) {
			m := prevSame[n*T+i]
			return m + 1, m >= 0
		},
		LabelMatching: func(n, i int) (int, bool) {
			m := prevSame[n*T+i]
			return m, m >= 0
		},
		LabelAttentionSink: func(_, i int) (int, bool) { return 0, i >= 1 },
	}
	scores := make(map[string]float64, len(Patterns))
	for _, p := range []string{LabelPreviousToken, LabelInduction, LabelMatching, LabelAttentionSink} {
		scores[p] = batchScore(a, l, h, cells[p])
	}
	bestC, bestMirror, cell := mirrorScore(a, l, h)
	scores[LabelMirror], cells[LabelMirror] = bestMirror, cell

	// Offset and position: only candidates that at least half of the T
	// queries are eligible for.
	bestD, bestOff, cell := bestCandidate(a, l, h, 2, func(d int) cellFunc {
		return func(_, i int) (int, bool) { return i - d, i >= d }
	})
	scores[PatternOffset] = bestOff
	if cell != nil {
		cells[PatternOffset] = cell
	}
	bestJ, bestPos, cell := bestCandidate(a, l, h, 1, func(j int) cellFunc {
		return func(_, i int) (int, bool) { return j, j != i }
	})
	scores[PatternPosition] = bestPos
	if cell != nil {
		cells[PatternPosition] = cell
	}
	scores[LabelUniform] = uniformScore(a, l, h)

	hs := HeadScore{
		Name: HeadName(l, h), Layer: l, Head: h,
		Scores: scores, OffsetD: bestD, PositionJ: bestJ, MirrorC: bestC, Sink: scores[LabelAttentionSink],
	}
	if len(a.Relations) > 0 {
		hs.Relations = ScoreRelations(a, l, h)
		hs.Syntax = SyntaxName(hs.Relations)
	}
	hs = hs.Labelled(CurrentRule, T)
	if cell, ok := cells[hs.pattern()]; ok {
		hs.RestMass = restMass(a, l, h, cell)
	}
	return hs
}

// prevSameToken is, at n*T+i, m: the last position < i of example n with
// the same token as i, or -1. Induction and matching both read it.
func prevSameToken(a *Attention) []int {
	T := a.T
	prevSame := make([]int, a.N*T)
	for n := 0; n < a.N; n++ {
		last := make(map[int]int)
		for i := 0; i < T; i++ {
			tok := a.Tokens[n*T+i]
			if m, ok := last[tok]; ok {
				prevSame[n*T+i] = m
			} else {
				prevSame[n*T+i] = -1
			}
			last[tok] = i
		}
	}
	return prevSame
}

// mirrorScore is the mirror pattern's best anti-diagonal c, its score and
// its cell. Both c = T-1 and c = T-2 are always candidates; the better on
// the batch score, ties to T-1.
func mirrorScore(a *Attention, l, h int) (int, float64, cellFunc) {
	T := a.T
	bestC, best := T-1, 0.0
	var bestCell cellFunc
	for c := T - 1; c >= T-2; c-- {
		cell := func(_, i int) (int, bool) { return c - i, c-i >= 0 && c-i != i }
		s := batchScore(a, l, h, cell)
		if c == T-1 || s > best {
			bestC, best, bestCell = c, s, cell
		}
	}
	return bestC, best, bestCell
}

// bestCandidate is, of the cells cellAt(k) for k from first to T-1 that
// are candidates (isCandidate), the k with the best batch score, that
// score and its cell: ties to the smaller k, since only a strictly greater
// score replaces it. k is 0 and the cell nil when none is a candidate.
func bestCandidate(a *Attention, l, h, first int, cellAt func(k int) cellFunc) (int, float64, cellFunc) {
	bestK, best := 0, 0.0
	var bestCell cellFunc
	for k := first; k < a.T; k++ {
		cell := cellAt(k)
		if !isCandidate(a, cell) {
			continue
		}
		if s := batchScore(a, l, h, cell); bestK == 0 || s > best {
			bestK, best, bestCell = k, s, cell
		}
	}
	return bestK, best, bestCell
}

// LabelRule is a rule that names a head after its scores (docs/head-patterns.md, "The label").
type LabelRule int

const (
	// FirstRule is the rule first fixed: the best of the eight scores,
	// when it reaches Threshold. It ranks the uniform score, an entropy,
	// against shares of mass, so a head with half its mass on one key
	// and the rest spread was called uniform.
	FirstRule LabelRule = 1
	// RevisedRule (the rule since the note's words were read closely:
	// uniform is "normalised entropy near 1"): the best of the seven
	// cell patterns when it reaches Threshold; otherwise uniform when
	// its score reaches UniformThreshold; otherwise no clear pattern.
	RevisedRule LabelRule = 2
	// CurrentRule is the rule every label headlab prints follows.
	CurrentRule = RevisedRule
)

// UniformThreshold is the lowest uniform score that names a head uniform
// under RevisedRule: the note's "near 1".
const UniformThreshold = 0.9

// RunnerUpMargin is how close (at most) the second-best cell pattern's
// score must be to the label's for it to be shown beside the label.
const RunnerUpMargin = 0.1

// String names the rule as docs and findings do.
func (r LabelRule) String() string {
	if r == FirstRule {
		return "first rule (best of eight)"
	}
	return "revised rule (uniform only near 1)"
}

// Labelled returns s named under rule from its scores (Scores, OffsetD,
// PositionJ, MirrorC; T is the sequence length, which tells the shifted
// mirror): Label, Score and the runner-up are set, everything else is
// kept. RestMass belongs to the label's pattern, so a caller that changes
// a label without the attention must drop it (see Relabel).
func (s HeadScore) Labelled(rule LabelRule, T int) HeadScore {
	best := pickPattern(s.Scores, rule)
	s.Score = s.Scores[best]
	s.RunnerUp, s.RunnerUpScore = "", 0
	switch {
	case best == "":
		s.Label = NoClearPattern
		s.Score = bestCellScore(s.Scores)
		if rule == FirstRule {
			s.Score = max(s.Score, s.Scores[LabelUniform])
		}
	default:
		s.Label = s.patternLabel(best, T)
		if ru := runnerUp(s.Scores, best); ru != "" && s.Scores[ru] >= s.Score-RunnerUpMargin-Slack {
			s.RunnerUp, s.RunnerUpScore = s.patternLabel(ru, T), s.Scores[ru]
		}
	}
	return s
}

// Relabel names s under rule from its scores, as Labelled, and drops its
// rest mass when the label changed (the rest mass is read off the
// attention for the label's pattern, which a stored head no longer has).
// changed reports whether the label changed.
func (s HeadScore) Relabel(rule LabelRule, T int) (out HeadScore, changed bool) {
	out = s.Labelled(rule, T)
	if out.Label != s.Label {
		out.RestMass = nil
		return out, true
	}
	return out, false
}

// pickPattern is the pattern that names a head under rule, "" for no
// clear pattern. Strictly greater replaces, so ties keep the earlier row
// of the table.
func pickPattern(scores map[string]float64, rule LabelRule) string {
	best := ""
	for _, p := range Patterns {
		if rule == RevisedRule && p == LabelUniform {
			continue
		}
		if best == "" || scores[p] > scores[best] {
			best = p
		}
	}
	switch {
	case scores[best] >= Threshold:
		return best
	case rule == RevisedRule && scores[LabelUniform] >= UniformThreshold:
		return LabelUniform
	}
	return ""
}

// runnerUp is the best cell pattern other than best ("" if none reaches
// Threshold): uniform, an entropy on another scale, is never a runner-up.
func runnerUp(scores map[string]float64, best string) string {
	ru := ""
	for _, p := range Patterns {
		if p == best || p == LabelUniform {
			continue
		}
		if ru == "" || scores[p] > scores[ru] {
			ru = p
		}
	}
	if scores[ru] < Threshold {
		return ""
	}
	return ru
}

// bestCellScore is the highest score of the seven cell patterns.
func bestCellScore(scores map[string]float64) float64 {
	m := 0.0
	for _, p := range Patterns {
		if p != LabelUniform {
			m = max(m, scores[p])
		}
	}
	return m
}

// patternLabel is pattern p's label for this head: offset and position
// carry their d and j, the mirror on c = T-2 is the shifted one.
func (s HeadScore) patternLabel(p string, T int) string {
	switch {
	case p == PatternOffset:
		return fmt.Sprintf("%s -%d", PatternOffset, s.OffsetD)
	case p == PatternPosition:
		return fmt.Sprintf("%s-%d", PatternPosition, s.PositionJ)
	case p == LabelMirror && s.MirrorC == T-2:
		return LabelMirrorShifted
	}
	return p
}

// pattern is the pattern the label names ("" for no clear pattern).
func (s HeadScore) pattern() string {
	switch {
	case s.Label == NoClearPattern:
		return ""
	case s.Label == LabelMirrorShifted:
		return LabelMirror
	case strings.HasPrefix(s.Label, PatternOffset+" "):
		return PatternOffset
	case strings.HasPrefix(s.Label, PatternPosition+"-"):
		return PatternPosition
	}
	return s.Label
}

// restMass is the mean over examples of the mean mass on key 0 over the
// queries that see more than one key and are not eligible for cell; nil
// when no query of the batch is such.
func restMass(a *Attention, l, h int, cell cellFunc) *float64 {
	found := false
	m := batchMean(a, func(n, i int) (float64, bool) {
		if _, ok := eligible(a, cell, n, i); ok || a.numVisible(i) < 2 {
			return 0, false
		}
		found = true
		return float64(a.At(n, l, h, i, 0)), true
	})
	if !found {
		return nil
	}
	return &m
}

// eligible applies the contract's rule for a cell-reading pattern: the cell
// exists and is visible, and the query sees more than one key.
func eligible(a *Attention, cell cellFunc, n, i int) (int, bool) {
	j, ok := cell(n, i)
	if !ok || !a.visible(i, j) || a.numVisible(i) < 2 {
		return 0, false
	}
	return j, true
}

// isCandidate reports whether at least half of the T queries are eligible
// for a token-independent cell (an offset d or a position j): 2*count >= T.
func isCandidate(a *Attention, cell cellFunc) bool {
	count := 0
	for i := 0; i < a.T; i++ {
		if _, ok := eligible(a, cell, 0, i); ok {
			count++
		}
	}
	return 2*count >= a.T
}

// batchScore is the mean over examples of the mean over eligible queries of
// the attention on the pattern's cell; examples with no eligible query are
// skipped and a batch with none scores 0.
func batchScore(a *Attention, l, h int, cell cellFunc) float64 {
	return batchMean(a, func(n, i int) (float64, bool) {
		j, ok := eligible(a, cell, n, i)
		if !ok {
			return 0, false
		}
		return float64(a.At(n, l, h, i, j)), true
	})
}

// uniformScore is the batch score of the uniform pattern: each eligible
// row's entropy over its n_i visible keys divided by ln(n_i).
func uniformScore(a *Attention, l, h int) float64 {
	return batchMean(a, func(n, i int) (float64, bool) {
		nv := a.numVisible(i)
		if nv < 2 {
			return 0, false
		}
		ent := 0.0
		for j, p := range a.row(n, l, h, i) {
			// 0·ln 0 = 0; masked cells are not among the n_i keys.
			if p > 0 && a.visible(i, j) {
				ent -= float64(p) * math.Log(float64(p))
			}
		}
		return ent / math.Log(float64(nv)), true
	})
}

// batchMean averages value per example over the queries it accepts, then
// over the examples that had at least one; 0 when none had any.
func batchMean(a *Attention, value func(n, i int) (float64, bool)) float64 {
	sum, examples := 0.0, 0
	for n := 0; n < a.N; n++ {
		s, c := 0.0, 0
		for i := 0; i < a.T; i++ {
			if v, ok := value(n, i); ok {
				s += v
				c++
			}
		}
		if c > 0 {
			sum += s / float64(c)
			examples++
		}
	}
	if examples == 0 {
		return 0
	}
	return sum / float64(examples)
}
