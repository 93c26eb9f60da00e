package findings

import (
	"math"

	"headlab/analysis"
	"headlab/sweep"
	"headlab/tasks"
	"headlab/train"
)

// The regime grid (--regime): the default induction model with one
// setting moved at a time, read as cells against the published model's
// heads (the rule, RegimeCell.Published, is in rules.go; the section's
// text in markdown.go).

// Regime grid settings around the default beside the loss: a finite
// training set and weight decay.
const (
	regimeTrainExamples = 2000
	regimeWeightDecay   = 0.1
)

// RegimeGrid is the --regime grid: at loss and then at the other loss,
// the default induction model and each of d-model, learning rate, batch
// and steps moved alone to a smaller and a larger value; then, at loss,
// the default on a finite training set and with weight decay.
func RegimeGrid(steps func(int) int, loss string) []train.Config {
	var out []train.Config
	other := tasks.Answers
	if loss == tasks.Answers {
		other = tasks.NextToken
	}
	for _, l := range []string{loss, other} {
		base := defaults("induction", l)
		base.Steps = steps(2500)
		out = append(out, base)
		for _, d := range []int{16, 64} {
			c := base
			c.DModel, c.DFF = d, 2*d
			out = append(out, c)
		}
		for _, lr := range []float64{1e-3, 1e-2} {
			c := base
			c.LR = lr
			out = append(out, c)
		}
		for _, b := range []int{8, 128} {
			c := base
			c.Batch = b
			out = append(out, c)
		}
		for _, s := range []int{1000, 5000} {
			c := base
			c.Steps = steps(s)
			out = append(out, c)
		}
	}
	set, decay := out[0], out[0]
	set.TrainExamples = regimeTrainExamples
	decay.WeightDecay = regimeWeightDecay
	return append(out, set, decay)
}

// RegimeCell is one cell of the regime grid.
type RegimeCell struct {
	Config  train.Config
	Seeds   int
	Circuit sweep.Proportion
	// SingleCost is the median over seeds of the largest single-head
	// ablation cost; LoadBearing the fraction of seeds with a single head
	// costing at least analysis.CircuitDrop; Sinks the fraction of seeds with
	// an attention-sink head.
	SingleCost, LoadBearing, Sinks float64
	// Distance from the published model: |circuit - 1/3| + (1 -
	// LoadBearing) + (1 - Sinks).
	Distance float64
}

// RegimeCells evaluates the regime grid.
func (in *Input) RegimeCells() []RegimeCell {
	var out []RegimeCell
	for _, cfg := range in.Plan.Regime {
		rs := in.records(cfg, in.Plan.CircuitSeeds)
		cell := RegimeCell{Config: cfg, Seeds: len(rs)}
		var costs []float64
		circ, load, sinks := 0, 0, 0
		for _, r := range rs {
			m := largestCost(r)
			costs = append(costs, m)
			if r.Circuit {
				circ++
			}
			if analysis.DropsEnough(m) {
				load++
			}
			if hasLabel(r.Heads, analysis.LabelAttentionSink) {
				sinks++
			}
		}
		cell.Circuit = sweep.NewProportion(circ, len(rs))
		if len(rs) > 0 {
			cell.SingleCost = sweep.Describe(costs).Median
			cell.LoadBearing, cell.Sinks = float64(load)/float64(len(rs)), float64(sinks)/float64(len(rs))
		}
		cell.Distance = math.Abs(cell.Circuit.Fraction-pubCircuit) + (1 - cell.LoadBearing) + (1 - cell.Sinks)
		out = append(out, cell)
	}
	return out
}
