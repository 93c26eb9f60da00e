package analysis

import (
	"fmt"
)

// RelationMargin is how far a head's argmax fraction on a relation must
// beat the relation's baseline for the head to be named after it
// (docs/head-patterns.md, "Relations").
const RelationMargin = 0.2

// Relation is one declared relation on a batch: for each query of each
// example, the key it points to.
type Relation struct {
	Name string
	// Keys holds N*T key positions, example-major like Tokens: Keys[n*T+i]
	// is the key relation Name points to from query i of example n, or -1
	// where i is no query of it.
	Keys []int
}

// RelationScore is how one head lines up with one relation, beside the
// best fixed competitor on the same queries.
type RelationScore struct {
	Relation string `json:"relation"`
	// Mass is the mean attention on the target key.
	Mass float64 `json:"mass"`
	// Argmax is the fraction of queries whose most-attended key is the
	// target (Clark et al. 2019).
	Argmax float64 `json:"argmax"`
	// Baseline is the best fixed offset, fixed position or the sink: the
	// fraction of the same queries whose target it names. Such a pattern
	// puts all its weight on one key, so this is both its mass and its
	// argmax fraction.
	Baseline float64 `json:"baseline"`
	// BaselineBy names the winner: "offset -3", "position-2" or
	// "attention-sink".
	BaselineBy string `json:"baseline_by"`
}

// Beats reports whether the head's argmax fraction beats the baseline by
// RelationMargin.
func (r RelationScore) Beats() bool { return r.Argmax-r.Baseline >= RelationMargin }

// checkRelations validates a's relations: unique non-empty names, N*T keys
// each -1 or a position.
func (a *Attention) checkRelations() error {
	seen := map[string]bool{}
	for _, r := range a.Relations {
		if r.Name == "" {
			return fmt.Errorf("a relation has no name")
		}
		if seen[r.Name] {
			return fmt.Errorf("relation %q is given twice", r.Name)
		}
		seen[r.Name] = true
		if len(r.Keys) != a.N*a.T {
			return fmt.Errorf("relation %q: have %d keys, want N*T = %d", r.Name, len(r.Keys), a.N*a.T)
		}
		for k, j := range r.Keys {
			if j < -1 || j >= a.T {
				return fmt.Errorf("relation %q: keys[%d][%d] = %d is neither -1 nor a position", r.Name, k/a.T, k%a.T, j)
			}
		}
	}
	return nil
}

// relationValue is batchMean over a relation's eligible queries: the key
// exists and is visible, and the query sees more than one key (the rule
// of the canonical patterns).
func relationValue(a *Attention, keys []int, value func(n, i, key int) float64) float64 {
	return batchMean(a, func(n, i int) (float64, bool) {
		key := keys[n*a.T+i]
		if key < 0 || !a.visible(i, key) || a.numVisible(i) < 2 {
			return 0, false
		}
		return value(n, i, key), true
	})
}

// RelationBaseline is the best fixed competitor on a relation's queries:
// each offset d >= 1 (key i-d), each position j >= 1, then the sink (key
// 0), scored by the fraction of queries whose target it names; the best
// wins, ties to the earlier in that order.
func RelationBaseline(a *Attention, keys []int) (float64, string) {
	hit := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	best, by := -1.0, ""
	try := func(name string, s float64) {
		if s > best {
			best, by = s, name
		}
	}
	for d := 1; d < a.T; d++ {
		try(fmt.Sprintf("offset -%d", d), relationValue(a, keys, func(_, i, key int) float64 { return hit(key == i-d) }))
	}
	for j := 1; j < a.T; j++ {
		try(fmt.Sprintf("position-%d", j), relationValue(a, keys, func(_, _, key int) float64 { return hit(key == j) }))
	}
	try(LabelAttentionSink, relationValue(a, keys, func(_, _, key int) float64 { return hit(key == 0) }))
	return best, by
}

// argmaxKey is the most-attended visible key of query i, the first on a
// tie (key 0 is visible to every query).
func (a *Attention) argmaxKey(n, l, h, i int) int {
	best := 0
	row := a.row(n, l, h, i)
	for j, p := range row {
		if a.visible(i, j) && p > row[best] {
			best = j
		}
	}
	return best
}

// ScoreRelations scores head (l, h) on every relation of a, in order.
func ScoreRelations(a *Attention, l, h int) []RelationScore {
	out := make([]RelationScore, 0, len(a.Relations))
	for _, r := range a.Relations {
		base, by := RelationBaseline(a, r.Keys)
		out = append(out, RelationScore{
			Relation: r.Name,
			Mass:     relationValue(a, r.Keys, func(n, i, key int) float64 { return float64(a.At(n, l, h, i, key)) }),
			Argmax: relationValue(a, r.Keys, func(n, i, key int) float64 {
				if a.argmaxKey(n, l, h, i) == key {
					return 1
				}
				return 0
			}),
			Baseline: base, BaselineBy: by,
		})
	}
	return out
}

// SyntaxName names a head after a relation: among the relations whose
// argmax fraction beats the baseline by RelationMargin, the one with the
// highest argmax fraction (ties to the earlier relation), as
// "syntax verb->subject 0.83"; "" when none does.
func SyntaxName(rs []RelationScore) string {
	best := -1
	for k, r := range rs {
		if r.Beats() && (best < 0 || r.Argmax > rs[best].Argmax) {
			best = k
		}
	}
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("syntax %s %.2f", rs[best].Relation, rs[best].Argmax)
}
