package findings

import (
	"testing"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/sweep"
)

// The claims' rules alone, on data made by hand: each at its threshold
// (inclusive, whatever the rounding) and a hair past it. The boundary
// tests (boundary_test.go) hold the same rules through the claims'
// sections.

func TestCountRule(t *testing.T) {
	for _, c := range []struct {
		ok     []bool
		of8, k int
		agrees bool
	}{
		{[]bool{true, true, true, true, true, true, false, false}, mostSeeds, 6, true},
		{[]bool{true, true, true, true, true, false, false, false}, mostSeeds, 5, false},
		{[]bool{true, true, true, true, true, true, true, false}, nearlyAll, 7, true},
		{[]bool{true, true, true, true, true, true, false, false}, nearlyAll, 6, false},
		{[]bool{true, true, true, false, false, false, false}, halfTheSeeds, 3, false}, // 3 of 7: under half
		{[]bool{true, true, true, true, false, false, false}, halfTheSeeds, 4, true},   // 4 of 7
		{[]bool{true, false}, halfTheSeeds, 1, true},                                   // exactly half
		{[]bool{true, true, true}, mostSeeds, 3, true},                                 // ceil(6*3/8) = 3
		{[]bool{true, true, false}, mostSeeds, 2, false},
		{nil, mostSeeds, 0, false}, // no seed never agrees
	} {
		if k, agrees := countRule(c.ok, c.of8); k != c.k || agrees != c.agrees {
			t.Errorf("countRule(%v, %d) = %d, %v; want %d, %v", c.ok, c.of8, k, agrees, c.k, c.agrees)
		}
	}
}

func TestSignatureRules(t *testing.T) {
	prev0, ind1 := head(0, 0, analysis.LabelPreviousToken, 0, nil), head(1, 0, analysis.LabelInduction, 0, nil)
	prev1, ind0 := head(1, 1, analysis.LabelPreviousToken, 0, nil), head(0, 1, analysis.LabelInduction, 0, nil)
	for _, c := range []struct {
		task  string
		heads []inspect.Head
		want  bool
	}{
		{taskReverse, []inspect.Head{head(0, 0, analysis.LabelMirror, 0, nil)}, true},
		{taskReverse, []inspect.Head{head(0, 0, analysis.LabelMirrorShifted, 0, nil)}, true},
		{taskReverse, []inspect.Head{head(0, 0, analysis.LabelUniform, 0, nil)}, false},
		{taskMajority, []inspect.Head{head(1, 1, analysis.LabelUniform, 0, nil)}, true},
		{taskMajority, []inspect.Head{head(1, 1, analysis.LabelMirror, 0, nil)}, false},
		{taskCopy, []inspect.Head{prev1, ind0}, true}, // any layers
		{taskCopy, []inspect.Head{prev0}, false},
		{taskInduction, []inspect.Head{prev0, ind1}, true},
		{taskInduction, []inspect.Head{prev1, ind0}, false}, // the layers matter
		{taskInduction, []inspect.Head{prev0, ind0}, false},
		{"majority without a signature", []inspect.Head{head(0, 0, analysis.LabelUniform, 0, nil)}, false},
	} {
		if got := hasSignature(c.task, c.heads); got != c.want {
			t.Errorf("hasSignature(%s, %v) = %v", c.task, c.heads, got)
		}
	}
	eight := map[string]int{taskReverse: 8, taskMajority: 8, taskCopy: 8, taskInduction: 8}
	for _, c := range []struct {
		with           map[string]int
		first, revised bool
	}{
		{map[string]int{taskReverse: 6, taskMajority: 6, taskCopy: 6, taskInduction: 6}, true, true},
		{map[string]int{taskReverse: 6, taskMajority: 6, taskCopy: 5, taskInduction: 6}, false, true},
		{map[string]int{taskReverse: 6, taskMajority: 6, taskCopy: 6, taskInduction: 5}, true, false},
		{map[string]int{taskReverse: 5, taskMajority: 8, taskCopy: 8, taskInduction: 8}, false, false},
	} {
		if first, revised := signaturesHold(c.with, eight); first != c.first || revised != c.revised {
			t.Errorf("signaturesHold(%v of 8) = %v, %v; want %v, %v", c.with, first, revised, c.first, c.revised)
		}
	}
	if first, revised := signaturesHold(map[string]int{}, map[string]int{}); first || revised {
		t.Error("claim 1 agrees with no seeds")
	}
}

func TestSeedRules(t *testing.T) {
	one, p98, p979 := 1.0, 0.98, 0.979 // variables: Go folds constant arithmetic exactly
	if !redundant(redundancySeed{LargestCost: one - p98}) || redundant(redundancySeed{LargestCost: one - p979}) {
		t.Error("claim 2: a largest cost of exactly 2 points is redundant, 2.1 is not")
	}
	p83, p73, p731 := 0.83, 0.73, 0.731
	for _, c := range []struct {
		s              uniformSeed
		first, revised bool
	}{
		{uniformSeed{Head: "L0H0", Score: 0.97, Cost: p83 - p73}, true, true},
		{uniformSeed{Head: "L0H0", Score: 0.969, Cost: p83 - p73}, false, false},
		{uniformSeed{Head: "L0H0", Score: 0.97, Cost: p83 - p731}, false, false},
		{uniformSeed{Head: "L0H0", Score: 0.97, Cost: 0.3, OtherCost: 0.2}, true, true},
		{uniformSeed{Head: "L0H0", Score: 0.97, Cost: 0.3, OtherCost: 0.201}, false, true},
		{uniformSeed{Score: 1, Cost: 1}, false, false}, // no layer-0 head
	} {
		if first, revised := pinnedAndUsed(c.s); first != c.first || revised != c.revised {
			t.Errorf("pinnedAndUsed(%+v) = %v, %v; want %v, %v", c.s, first, revised, c.first, c.revised)
		}
	}
	if !isSinkHead(gridHead{Label: analysis.LabelAttentionSink}) || isSinkHead(gridHead{Label: analysis.LabelUniform, Sink: 1}) {
		t.Error("claim 4: a sink head is one labelled attention-sink")
	}
	if !sinkScored(gridHead{Sink: 0.4}) || sinkScored(gridHead{Sink: 0.399}) {
		t.Error("claim 4: a sink score of 0.4 is reported apart, 0.399 not")
	}
	for _, c := range []struct {
		sinks, others    []float64
		agrees, untested bool
	}{
		{[]float64{0, 0.01, 0.02}, []float64{0.05}, true, false}, // median exactly 1 point
		{[]float64{0.011}, []float64{0.05}, false, false},
		{[]float64{0.005}, []float64{0.005}, false, false}, // not below the others
		{nil, []float64{0.05}, false, true},
	} {
		if agrees, untested := sinksAreNoOps(c.sinks, c.others); agrees != c.agrees || untested != c.untested {
			t.Errorf("sinksAreNoOps(%v, %v) = %v, %v", c.sinks, c.others, agrees, untested)
		}
	}
	if !shortcutWins(leakSeed{Fixed: 0.5, Induction: 0.4}) || shortcutWins(leakSeed{Fixed: 0.5, Induction: 0.5}) {
		t.Error("claim 5: the shortcut wins when strictly higher")
	}
	if !leaks(6, 8, 6, 8) || leaks(5, 8, 8, 8) || leaks(8, 8, 5, 8) || leaks(0, 0, 8, 8) {
		t.Error("claim 5: both tasks need 6 of 8")
	}
	if !learned(readableSeed{Accuracy: 0.99}) || learned(readableSeed{Accuracy: 0.989}) {
		t.Error("claim 6: 99% has learned, 98.9% not")
	}
	for _, c := range []struct {
		n, labelled    int
		readable       sweep.Proportion
		first, revised bool
	}{
		{8, 7, sweep.NewProportion(3, 8), true, true},
		{8, 8, sweep.NewProportion(8, 8), false, false}, // the interval reaches 1
		{0, 0, sweep.NewProportion(0, 0), false, false},
	} {
		if first, revised := variesBySeed(c.n, c.labelled, c.readable); first != c.first || revised != c.revised {
			t.Errorf("variesBySeed(%d, %d, %+v) = %v, %v", c.n, c.labelled, c.readable, first, revised)
		}
	}
	ph := analysis.Phase{InductionFrom: 100, InductionTo: 350, AccuracyFrom: 120, AccuracyTo: 300, Together: true}
	if span, within, holds := burst(ph, 2500); span != 0.1 || !within || !holds {
		t.Errorf("claim 7: a rise of 250 of 2500 steps: span %v, within %v, holds %v", span, within, holds)
	}
	if _, within, _ := burst(ph, 2499); within {
		t.Error("claim 7: a rise of 250 of 2499 steps is within 10%")
	}
	if _, within, holds := burst(analysis.Phase{InductionTo: 10, AccuracyTo: 10}, 2500); !within || holds {
		t.Error("claim 7: rises apart do not hold")
	}
	if !prunes(pruneSeed{Greedy: 0.5}) || prunes(pruneSeed{Greedy: 0.49}) {
		t.Error("claim 8: half the heads go")
	}
	off, p84, p741 := 0.74, 0.84, 0.741
	for _, c := range []struct {
		s              syntaxSeed
		first, revised bool
	}{
		{syntaxSeed{AttractorIntact: p84, Heads: []SyntaxHead{{AttractorOff: 0.8}, {AttractorOff: off}}, AllOff: &off}, true, true},
		{syntaxSeed{AttractorIntact: p84, Heads: []SyntaxHead{{AttractorOff: 0.8}}, AllOff: &off}, false, true},
		{syntaxSeed{AttractorIntact: p84, Heads: []SyntaxHead{{AttractorOff: p741}}, AllOff: &p741}, false, false},
		{syntaxSeed{AttractorIntact: p84, Heads: []SyntaxHead{{AttractorOff: off}}}, true, false}, // all off not measured
		{syntaxSeed{AttractorIntact: p84, AllOff: &off}, false, false},                            // no syntax head
	} {
		if first, revised := syntaxHeadsMatter(c.s); first != c.first || revised != c.revised {
			t.Errorf("syntaxHeadsMatter(%+v) = %v, %v; want %v, %v", c.s, first, revised, c.first, c.revised)
		}
	}
	chance, at, below := 0.1, 0.3, 0.299
	if !aboveChance(at, chance) || aboveChance(below, chance) {
		t.Error("claim 10: 20 points above chance")
	}
	if !oneHeadMatters(harmSeed{Left: 0.3}) || oneHeadMatters(harmSeed{Left: 0.301}) {
		t.Error("claim 11: 30% left is within")
	}
	cell := RegimeCell{Circuit: sweep.NewProportion(1, 3), LoadBearing: 0.5, Sinks: 0.1}
	if !cell.Published() {
		t.Errorf("regime: %+v has the published heads", cell)
	}
	for _, c := range []RegimeCell{
		{Circuit: sweep.NewProportion(1, 3), LoadBearing: 0.49, Sinks: 0.1},
		{Circuit: sweep.NewProportion(1, 3), LoadBearing: 1},
		{Circuit: sweep.NewProportion(10, 10), LoadBearing: 1, Sinks: 1},
	} {
		if c.Published() {
			t.Errorf("regime: %+v has not the published heads", c)
		}
	}
}
