package train

import "fmt"

// Objective says what a configuration trains on: its loss, its data and
// its weight decay ("next-token loss, fresh sequences, no weight decay").
func Objective(c Config) string {
	data, decay := "fresh sequences", "no weight decay"
	if c.TrainExamples > 0 {
		data = fmt.Sprintf("a set of %d sequences", c.TrainExamples)
	}
	if c.WeightDecay != 0 {
		decay = fmt.Sprintf("weight decay %g", c.WeightDecay)
	}
	return fmt.Sprintf("%s loss, %s, %s", c.Loss, data, decay)
}

// Title names a run in a figure's title: task, shape, seed and steps.
func Title(c Config) string {
	s := fmt.Sprintf("%s · %d layer%s × %d heads, d-model %d · seed %d · %d steps",
		c.Task, c.Layers, plural(c.Layers), c.Heads, c.DModel, c.Seed, c.Steps)
	if !c.Positions {
		s += " · no positions"
	}
	if !c.Causal {
		s += " · no causal mask"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
