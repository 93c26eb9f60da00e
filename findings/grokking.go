package findings

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"headlab/inspect"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// Grokking on modular addition (issue 38): one run, fixed here before it
// trains, small enough for 15 minutes on 2 cores (about 13 s of CPU at
// scale 1), whose held-out accuracy rises long after its training
// accuracy. Nothing of it is published at this size, so the report shows
// the delay and gives no verdict.

// GrokkingEvery is how often, in steps, the grokking run records its
// history (scaled with the steps).
const GrokkingEvery = 100

// GrokkingLevel is the accuracy at which a curve counts as learned: the
// delay is from the first record where training accuracy reaches it to
// the first where held-out accuracy does.
const GrokkingLevel = 0.99

// GrokkingFile is the grokking run's curves, in OUT/findings/.
const GrokkingFile = "grokking-modular-addition.png"

// grokking is the grokking run's configuration, its steps scaled: p = 59
// (vocabulary 61), one layer of four heads, d-model 64, d-ff 256, batch
// 256, lr 3e-3, weight decay 1, the answers loss, 3000 steps, seed 1.
func grokking(steps func(int) int) train.Config {
	c := train.Defaults("modular-addition")
	c.Vocab = 61
	c.Layers, c.Heads, c.DModel, c.DFF = 1, 4, 64, 256
	c.Batch, c.LR, c.WeightDecay = 256, 3e-3, 1
	c.Loss = tasks.Answers
	c.Steps = steps(3000)
	return c.Sized()
}

// grokkingEvery is GrokkingEvery scaled with the steps.
func (p Plan) grokkingEvery() int { return max(1, int(math.Round(GrokkingEvery*p.Scale))) }

// Grokking is the grokking run as reproduce trained it: its
// configuration, the interval of its history, its training time and its
// history (held-out and training accuracy at every record).
type Grokking struct {
	Config  train.Config    `json:"config"`
	Every   int             `json:"every"`
	Seconds float64         `json:"train_seconds"`
	History inspect.History `json:"history"`
}

// RunGrokking trains p.Grokking on dev, recording its history every
// grokkingEvery steps.
func (p Plan) RunGrokking(dev kernels.Device) (*Grokking, error) {
	g := &Grokking{Config: p.Grokking, Every: p.grokkingEvery()}
	var rec inspect.Recorder
	_, res, err := train.Run(g.Config, dev, 0, nil, rec.Hook(g.Every))
	if err != nil {
		return nil, err
	}
	g.Seconds, g.History = res.TrainSeconds, rec.History
	return g, nil
}

// GrokkingFor is the stored grokking run of p's setting, or nil when
// none is stored or it trained another setting.
func (m Measured) GrokkingFor(p Plan) *Grokking {
	if g := m.Grokking; g != nil && g.Config == p.Grokking && g.Every == p.grokkingEvery() && len(g.History) > 0 {
		return g
	}
	return nil
}

// Reach is where a curve first reaches GrokkingLevel: the step of the
// first record at or above it, and whether any is.
type Reach struct {
	Step    int
	Reached bool
}

// firstReach is the first record of s at or above level.
func firstReach(s inspect.Series, level float64) Reach {
	for i, v := range s.Values {
		if v >= level {
			return Reach{Step: s.Steps[i], Reached: true}
		}
	}
	return Reach{}
}

// Delay is where training and held-out accuracy first reach
// GrokkingLevel; the delay is held-out's step minus training's, when
// both do.
func (g *Grokking) Delay() (trained, heldOut Reach) {
	return firstReach(g.History.TrainAccuracy(), GrokkingLevel), firstReach(g.History.Accuracy(), GrokkingLevel)
}

// tableSteps are the records the section's table shows: the first at or
// after each tenth of the run, and the two where the curves first reach
// GrokkingLevel.
func (g *Grokking) tableSteps() []int {
	var out []int
	for k := 0; k <= 10; k++ {
		at := k * g.Config.Steps / 10
		if i := slices.IndexFunc(g.History, func(s inspect.Snapshot) bool { return s.Step >= at }); i >= 0 {
			out = append(out, g.History[i].Step)
		}
	}
	tr, ho := g.Delay()
	for _, r := range []Reach{tr, ho} {
		if r.Reached {
			out = append(out, r.Step)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TrainCommand is the headlab train command line that trains c and
// records its history every `every` steps into DIR: every setting of the
// run as a flag.
func TrainCommand(c train.Config, every int, dir string) string {
	f := []string{"headlab train", "--task " + c.Task}
	if d := train.Defaults(c.Task); c.SeqLen != d.SeqLen {
		f = append(f, fmt.Sprint("--seq-len ", c.SeqLen))
	}
	f = append(f, fmt.Sprint("--vocab ", c.Vocab), fmt.Sprint("--layers ", c.Layers), fmt.Sprint("--heads ", c.Heads),
		fmt.Sprint("--d-model ", c.DModel))
	if c.NoMLP {
		f = append(f, "--no-mlp")
	} else {
		f = append(f, fmt.Sprint("--d-ff ", c.DFF))
	}
	for _, b := range []struct {
		off  bool
		flag string
	}{{!c.Positions, "--no-positions"}, {!c.Causal, "--no-causal"}, {c.TiedEmbeddings, "--tied-embeddings"}} {
		if b.off {
			f = append(f, b.flag)
		}
	}
	f = append(f, fmt.Sprint("--batch ", c.Batch), fmt.Sprintf("--lr %g", c.LR), fmt.Sprintf("--weight-decay %g", c.WeightDecay),
		"--loss "+c.Loss)
	if c.TrainExamples > 0 {
		f = append(f, fmt.Sprint("--train-examples ", c.TrainExamples))
	}
	f = append(f, fmt.Sprint("--steps ", c.Steps), fmt.Sprint("--seed ", c.Seed), fmt.Sprint("--record-every ", every), "--save "+dir)
	return strings.Join(f, " ")
}

// grokkingSection writes the grokking run: its setting, training and
// held-out accuracy at a few steps, the delay between the steps where
// each first reaches GrokkingLevel, and its curves. It gives no verdict.
func (in *Input) grokkingSection(b *strings.Builder, _ *tally) {
	g := in.Grokking
	fmt.Fprintf(b, "## Grokking on modular addition\n\n")
	if g == nil || len(g.History) == 0 {
		fmt.Fprintf(b, "No grokking run in this report.\n\n")
		return
	}
	c := g.Config
	task, err := c.NewTask()
	if err != nil {
		fmt.Fprintf(b, "The grokking run's task cannot be made: %v.\n\n", err)
		return
	}
	full := grokking(func(n int) int { return n })
	fmt.Fprintf(b, "One run of the %s task (Power et al. 2022; Nanda et al. 2023; docs/tasks.md): %s. `headlab reproduce` trains it outside the sweep with a history every %d steps, training accuracy on training pairs beside held-out accuracy on pairs training never shows. The setting, at %d steps with a record every %d, is chosen so that it fits in 15 minutes on a 2-core machine; this run trained in %.0f s. This run, every setting a flag:\n\n",
		task.Name(), task.Describe(), g.Every, full.Steps, GrokkingEvery, g.Seconds)
	fmt.Fprintf(b, "```\n%s\n```\n\n", TrainCommand(c, g.Every, "grok"))
	if in.Plan.Scale != 1 {
		fmt.Fprintf(b, "> **Scaled:** this run's steps are scaled by %g (`--steps-scale`): %d steps recorded every %d, where the setting is %d recorded every %d (`headlab reproduce` without `--steps-scale`). The delay below is the scaled run's.\n\n",
			in.Plan.Scale, c.Steps, g.Every, full.Steps, GrokkingEvery)
	}
	tr, ho := g.Delay()
	trainAcc := g.History.TrainAccuracy()
	fmt.Fprintln(b, "| Step | Training accuracy | Held-out accuracy | |")
	fmt.Fprintln(b, "|---|---|---|---|")
	for _, step := range g.tableSteps() {
		i := slices.IndexFunc(g.History, func(s inspect.Snapshot) bool { return s.Step == step })
		s := g.History[i]
		trained := "-"
		if s.TrainAccuracy != nil {
			trained = pc(*s.TrainAccuracy)
		}
		var notes []string
		if tr.Reached && tr.Step == step {
			notes = append(notes, fmt.Sprintf("training accuracy first at %.0f%%", 100*GrokkingLevel))
		}
		if ho.Reached && ho.Step == step {
			notes = append(notes, fmt.Sprintf("held-out accuracy first at %.0f%%", 100*GrokkingLevel))
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s |\n", step, trained, pc(s.Accuracy), strings.Join(notes, "; "))
	}
	fmt.Fprintf(b, "\nChance is %s. %s\n\n", pc(task.Chance()), delayText(tr, ho, g.History, trainAcc))
	fmt.Fprintf(b, "![Loss, training and held-out accuracy and every head's score over the grokking run](findings/%s)\n\n", GrokkingFile)
	fmt.Fprintf(b, "No verdict: nothing of this run is published (Power et al. saw grokking at other sizes and training fractions), so it counts nowhere in the summary; it shows the delay that `headlab curves` draws.\n\n")
}

// delayText says where each curve first reaches GrokkingLevel and the
// delay between them, or which does not reach it and its best.
func delayText(tr, ho Reach, h inspect.History, trainAcc inspect.Series) string {
	level := fmt.Sprintf("%.0f%%", 100*GrokkingLevel)
	best := func(s inspect.Series) string {
		if len(s.Values) == 0 {
			return "no records"
		}
		i := 0
		for k, v := range s.Values {
			if v > s.Values[i] {
				i = k
			}
		}
		return fmt.Sprintf("best %s at step %d", pc(s.Values[i]), s.Steps[i])
	}
	last := h[len(h)-1].Step
	switch {
	case !tr.Reached:
		return fmt.Sprintf("Training accuracy does not reach %s in the run's %d steps (%s), so there is no delay to measure.", level, last, best(trainAcc))
	case !ho.Reached:
		return fmt.Sprintf("Training accuracy first reaches %s at step %d; held-out accuracy does not within the run's %d steps (%s), so the delay is more than %d steps.",
			level, tr.Step, last, best(h.Accuracy()), last-tr.Step)
	default:
		return fmt.Sprintf("Training accuracy first reaches %s at step %d, held-out accuracy at step %d: a delay of %d steps.", level, tr.Step, ho.Step, ho.Step-tr.Step)
	}
}
