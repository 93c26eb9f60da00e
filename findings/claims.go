package findings

import (
	"math"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// The claims of the sources headlab follows (issue 13), each with a rule
// fixed before the runs. Issue 24 revised the rules of claims 1, 3, 4, 6,
// 7 and 9 from the note's own words, before the runs they judge, and
// added claim 11; a revised claim shows its verdict under the rule first
// fixed beside the revised one (Claim.First). A count rule "k of 8" is
// scaled to the seeds there are: at least ceil(k*n/8) of n.
//
// A claim is read in three steps: this file reads what the claim looks
// at from the runs into data of its own, named; its rule is a pure
// function of that data (rules.go); claimtext.go writes its section
// from both.

// Claim is one claim's section and summary row.
type Claim struct {
	N                int
	Title, Published string
	Rule             string // the verdict rule, fixed before the runs
	Body             []string
	Measured         string
	Agrees           bool
	// Untested says that no run could test the rule (claim 4 with no sink
	// head): the claim neither agrees nor differs.
	Untested bool
	Differs  string // a sentence for the list of differences
	// First is the verdict under the rule first fixed, for a claim whose
	// rule issue 24 revised before the runs; Rule and Agrees are then the
	// revised rule's, which the summary carries.
	First *Verdict
}

// Verdict is a claim's verdict under one rule.
type Verdict struct {
	Rule, Measured   string
	Agrees, Untested bool
}

// Claims evaluates claims 1-11 on the runs.
func (in *Input) Claims() []Claim {
	return []Claim{in.claim1(), in.claim2(), in.claim3(), in.claim4(), in.claim5(),
		in.claim6(), in.claim7(), in.claim8(), in.claim9(), in.claim10(), in.claim11()}
}

// cost is what switching head h off alone costs run r.
func cost(r *sweep.Record, h inspect.Head) float64 { return r.Accuracy - h.AblatedAccuracy }

// largestCost is the most that switching one head of r off alone costs
// (-Inf for a run without heads).
func largestCost(r *sweep.Record) float64 {
	m := math.Inf(-1)
	for _, h := range r.Heads {
		m = max(m, cost(r, h))
	}
	return m
}

// bestScore is the highest score of r's heads by score (-Inf for a run
// without heads).
func bestScore(r *sweep.Record, score func(h inspect.Head) float64) float64 {
	b := math.Inf(-1)
	for _, h := range r.Heads {
		b = max(b, score(h))
	}
	return b
}

// signatureTask is one task of claim 1 and its seeds' heads.
type signatureTask struct {
	Task  string // taskReverse, taskMajority, taskCopy or taskInduction
	Seeds []labelledSeed
}

// labelledSeed is one seed's heads.
type labelledSeed struct {
	Seed  uint64
	Heads []inspect.Head
}

// with counts t's seeds whose heads carry its signature.
func (t signatureTask) with() int {
	k := 0
	for _, s := range t.Seeds {
		if hasSignature(t.Task, s.Heads) {
			k++
		}
	}
	return k
}

// signatureTasks reads claim 1's tasks: reverse and majority with
// positions, copy, and the default induction model, over the small seeds.
func (in *Input) signatureTasks() []signatureTask {
	p := in.Plan
	var out []signatureTask
	for _, t := range []struct {
		task string
		c    train.Config
	}{{taskReverse, p.Reverse}, {taskMajority, p.Majority}, {taskCopy, p.Copy}, {taskInduction, p.Induction}} {
		st := signatureTask{Task: t.task}
		for _, r := range in.records(t.c, p.SmallSet) {
			st.Seeds = append(st.Seeds, labelledSeed{Seed: r.Config.Seed, Heads: r.Heads})
		}
		out = append(out, st)
	}
	return out
}

// redundancySeed is a majority seed as claim 2 reads it.
type redundancySeed struct {
	Seed        uint64
	Intact      float64
	LargestCost float64 // the most switching one head off alone costs
}

// redundancySeeds reads claim 2's seeds: majority with positions.
func (in *Input) redundancySeeds() []redundancySeed {
	var out []redundancySeed
	for _, r := range in.records(in.Plan.Majority, in.Plan.SmallSet) {
		out = append(out, redundancySeed{Seed: r.Config.Seed, Intact: r.Accuracy, LargestCost: largestCost(r)})
	}
	return out
}

// uniformSeed is a reverse seed without positions as claim 3 reads it:
// its most uniform layer-0 head ("" when the run has none), that head's
// uniform score and cost, and the largest cost of any other layer-0
// head (0 when none costs more).
type uniformSeed struct {
	Seed            uint64
	Head            string
	Score           float64
	Cost, OtherCost float64
}

// uniformSeeds reads claim 3's seeds: reverse without positions.
func (in *Input) uniformSeeds() []uniformSeed {
	var out []uniformSeed
	for _, r := range in.records(in.Plan.ReverseNoPositions, in.Plan.SmallSet) {
		s := uniformSeed{Seed: r.Config.Seed}
		var u *inspect.Head
		for i := range r.Heads {
			h := &r.Heads[i]
			if h.Layer == 0 && (u == nil || h.Scores[analysis.LabelUniform] > u.Scores[analysis.LabelUniform]) {
				u = h
			}
		}
		if u != nil {
			s.Head, s.Score, s.Cost = u.Name, u.Scores[analysis.LabelUniform], cost(r, *u)
			for _, h := range r.Heads {
				if h.Layer == 0 && h.Name != u.Name {
					s.OtherCost = max(s.OtherCost, cost(r, h))
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// gridHead is one head of any finished run, as claim 4 reads it: the
// run's configuration, the head's label, sink score and cost.
type gridHead struct {
	Config     string // sweep.ConfigName
	Label      string
	Sink, Cost float64
}

// gridHeads reads claim 4's heads: every head of every finished run, in
// no order (the claim reads medians, counts and bins of them).
func (in *Input) gridHeads() []gridHead {
	var out []gridHead
	for _, r := range in.ByID {
		if r.Status != sweep.StatusOK {
			continue
		}
		for _, h := range r.Heads {
			out = append(out, gridHead{Config: sweep.ConfigName(r.Config), Label: h.Label, Sink: h.Sink, Cost: cost(r, h)})
		}
	}
	return out
}

// leakSeed is a seed as claim 5 reads it: its best offset or position
// score (a fixed shortcut) and its best induction score.
type leakSeed struct {
	Seed             uint64
	Fixed, Induction float64
}

// leakSeeds reads claim 5's seeds of c.
func (in *Input) leakSeeds(c train.Config) []leakSeed {
	var out []leakSeed
	for _, r := range in.records(c, in.Plan.SmallSet) {
		out = append(out, leakSeed{Seed: r.Config.Seed,
			Fixed: bestScore(r, func(h inspect.Head) float64 {
				return max(h.Scores[analysis.PatternOffset], h.Scores[analysis.PatternPosition])
			}),
			Induction: bestScore(r, func(h inspect.Head) float64 { return h.Scores[analysis.LabelInduction] })})
	}
	return out
}

// readableSeed is a default-model seed as claim 6 reads it: its
// accuracy, whether every head carries a label, and whether it forms
// the circuit.
type readableSeed struct {
	Seed              uint64
	Accuracy          float64
	Labelled, Circuit bool
}

// readableSeeds reads claim 6's seeds: the default model's circuit seeds.
func (in *Input) readableSeeds() []readableSeed {
	var out []readableSeed
	for _, r := range in.records(in.Plan.Induction, in.Plan.CircuitSeeds) {
		out = append(out, readableSeed{Seed: r.Config.Seed, Accuracy: r.Accuracy, Labelled: !hasLabel(r.Heads, analysis.NoClearPattern), Circuit: r.Circuit})
	}
	return out
}

// pruneSeed is a wide seed as claim 8 reads it: its intact accuracy and
// the fraction of heads each order removes within a point (NaN where
// the order was not measured).
type pruneSeed struct {
	Seed                    uint64
	Intact                  float64
	Greedy, OneShot, Random float64
}

// pruneSeeds reads claim 8's seeds: the wide model's, with pruning.
func (in *Input) pruneSeeds() []pruneSeed {
	p := in.Plan
	var out []pruneSeed
	for _, s := range p.SmallSet {
		x := in.Extras[sweep.RunID{Key: sweep.Key(p.Wide), Seed: s}]
		if x == nil || x.Prune == nil {
			continue
		}
		pr := x.Prune
		frac := func(o string) float64 {
			if cv := pr.Curve(o); cv != nil {
				return cv.RemovableFraction
			}
			return math.NaN()
		}
		out = append(out, pruneSeed{Seed: s, Intact: pr.Intact,
			Greedy: frac(inspect.OrderGreedy), OneShot: frac(inspect.OrderOneShot), Random: frac(inspect.OrderRandom)})
	}
	return out
}

// syntaxSeed is an agreement seed as claim 9 reads it: its held-out
// accuracy, its accuracy on attractor examples, its heads named after
// verb->subject (each with that accuracy when it alone is off), and that
// accuracy with all of them off (nil: not measured).
type syntaxSeed struct {
	Seed                    uint64
	Intact, AttractorIntact float64
	Heads                   []SyntaxHead
	AllOff                  *float64
}

// syntaxSeeds reads claim 9's seeds: agreement, with its extra
// measurements.
func (in *Input) syntaxSeeds() []syntaxSeed {
	p := in.Plan
	var out []syntaxSeed
	for _, s := range p.SmallSet {
		id := sweep.RunID{Key: sweep.Key(p.Agreement), Seed: s}
		x, r := in.Extras[id], in.ByID[id]
		if x == nil || x.AttractorIntact == nil || r == nil {
			continue
		}
		out = append(out, syntaxSeed{Seed: s, Intact: r.Accuracy, AttractorIntact: *x.AttractorIntact, Heads: x.Syntax, AllOff: x.SyntaxOff})
	}
	return out
}

// unseenSeed is a seed as claim 10 reads it: held-out accuracy and
// accuracy on unseen tokens, tied and untied (Untied says whether the
// untied run was measured; its pair is NaN when not).
type unseenSeed struct {
	Seed                        uint64
	TiedHeldOut, TiedUnseen     float64
	Untied                      bool
	UntiedHeldOut, UntiedUnseen float64
}

// unseenSeeds reads claim 10's seeds, those whose tied run has its
// unseen accuracy, and the task's chance.
func (in *Input) unseenSeeds() (seeds []unseenSeed, chance float64) {
	p := in.Plan
	if t, err := tasks.New(p.Unseen.Task); err == nil {
		chance = t.Chance()
	}
	for _, s := range p.SmallSet {
		ui, ti := sweep.RunID{Key: sweep.Key(p.Unseen), Seed: s}, sweep.RunID{Key: sweep.Key(p.UnseenTied), Seed: s}
		ux, tx := in.Extras[ui], in.Extras[ti]
		ur, tr := in.ByID[ui], in.ByID[ti]
		if tx == nil || tx.Unseen == nil || tr == nil {
			continue
		}
		u := unseenSeed{Seed: s, UntiedHeldOut: math.NaN(), UntiedUnseen: math.NaN(), TiedHeldOut: tr.Accuracy, TiedUnseen: *tx.Unseen}
		if ux != nil && ux.Unseen != nil && ur != nil {
			u.Untied, u.UntiedHeldOut, u.UntiedUnseen = true, ur.Accuracy, *ux.Unseen
		}
		seeds = append(seeds, u)
	}
	return seeds, chance
}

// harmSeed is a default-model seed as claim 11 reads it: its intact
// accuracy, its most harmful single head, and what is left with it off.
type harmSeed struct {
	Seed   uint64
	Intact float64
	Worst  inspect.Head
	Left   float64
}

// harmSeeds reads claim 11's seeds: the default model's circuit seeds
// that have heads.
func (in *Input) harmSeeds() []harmSeed {
	var out []harmSeed
	for _, r := range in.records(in.Plan.Induction, in.Plan.CircuitSeeds) {
		var worst *inspect.Head
		for i := range r.Heads {
			if worst == nil || r.Heads[i].AblatedAccuracy < worst.AblatedAccuracy {
				worst = &r.Heads[i]
			}
		}
		if worst != nil {
			out = append(out, harmSeed{Seed: r.Config.Seed, Intact: r.Accuracy, Worst: *worst, Left: worst.AblatedAccuracy})
		}
	}
	return out
}
