package trainrun

import (
	"fmt"
	"io"
	"sync"

	"headlab/analysis"
	"headlab/inspect"
	"headlab/internal/progress"
	"headlab/tasks"
	"headlab/train"
)

// Config is the run's configuration and where it computed.
type Config struct {
	train.Config
	Backend string `json:"backend"`
	// SIMD is the CPU's vector path that ran (internal/simd.Path).
	SIMD string `json:"simd"`
}

// Report is what train prints, as JSON or text.
type Report struct {
	Config Config `json:"config"`
	train.Result
	Heads []inspect.Head `json:"heads"`
	// ByKind is accuracy by kind of example (agreement: with and without
	// an attractor), intact and with the relation's best head off.
	ByKind *inspect.ByKind `json:"by_kind,omitempty"`
	// UnseenHeads scores the heads on sequences of never-trained tokens.
	UnseenHeads []analysis.HeadScore `json:"unseen_heads,omitempty"`
	History     inspect.History      `json:"history,omitempty"`
	Phase       *analysis.Phase      `json:"phase_change,omitempty"`
}

// Write is train's text of m's run: the summary (WriteSummary), then
// its heads (inspect.WriteReport) and, with a history, the phase change.
func (r *Report) Write(w io.Writer, m *train.Model, heads *inspect.Report) {
	r.WriteSummary(w, m)
	fmt.Fprintln(w)
	inspect.WriteReport(w, heads)
	if r.Phase != nil {
		fmt.Fprintln(w)
		inspect.WritePhase(w, *r.Phase)
	}
}

// WriteSummary writes the report's summary of m's run as text.
func (r *Report) WriteSummary(w io.Writer, m *train.Model) {
	fmt.Fprintf(w, "task        %s: %s\n", m.Task.Name(), m.Task.Describe())
	mlp := fmt.Sprintf("d-ff %d", m.Shape.DFF)
	if m.Shape.NoMLP {
		mlp = "no MLP"
	}
	fmt.Fprintf(w, "model       %d layers, %d heads, d-model %d, %s, positions %v, causal %v, tied embeddings %v\n",
		m.Shape.Layers, m.Shape.Heads, m.Shape.DModel, mlp, m.Shape.Positions, m.Shape.Causal, m.Shape.TiedEmbeddings)
	fmt.Fprintf(w, "parameters  %d\n", r.Params)
	fmt.Fprintf(w, "training    %s\n", trainingLine(r.Config.Config))
	fmt.Fprintf(w, "accuracy    %.4f on %d held-out examples (chance %.4f)\n", r.Accuracy, train.HeldOutExamples, r.Chance)
	fmt.Fprintf(w, "loss        %.4f held-out on the answers; last training batch %s\n", r.Loss, lossPair(r.Config.Loss, r.TrainLoss, r.TrainAnswerLoss))
	if r.UnseenAccuracy != nil {
		fmt.Fprintf(w, "unseen      %.4f on %d held-out examples made only of tokens training never showed\n", *r.UnseenAccuracy, train.HeldOutExamples)
		fmt.Fprint(w, "            heads on those sequences:")
		for _, h := range r.UnseenHeads {
			fmt.Fprintf(w, " %s %s;", h.Name, h.Title())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "time        %.1f s for %d steps (%.2f ms/step, backend %s, simd %s)\n", r.TrainSeconds, r.Config.Steps, r.MsPerStep, r.Config.Backend, r.Config.SIMD)
}

// trainingLine says how c trains: the loss, the data and the optimiser.
func trainingLine(c train.Config) string {
	return fmt.Sprintf("%s; %d steps of batch %d, Adam lr %g", train.Objective(c), c.Steps, c.Batch, c.LR)
}

// lossPair is a training loss, with its answers' loss beside it when the
// loss counts more than the answers.
func lossPair(loss string, l, answers float64) string {
	if loss == tasks.Answers {
		return fmt.Sprintf("%.4f (answers)", l)
	}
	return fmt.Sprintf("%.4f (%s), %.4f on its answers", l, loss, answers)
}

// Progress is train's progress on stderr: a line every reportEvery steps
// (train.Run's progress) with the loss and the held-out accuracy of a
// quick check, and on a terminal a bar redrawn about every hundredth of
// the run between them (the hooks); finish ends it.
func Progress(stderr io.Writer, steps int, loss string) (report func(train.Progress), hooks []train.Hook, finish func()) {
	bar := progress.New(stderr, "train", "steps", steps)
	var mu sync.Mutex
	note := ""
	report = func(p train.Progress) {
		mu.Lock()
		note = fmt.Sprintf("loss %.4f", p.Loss)
		if loss != tasks.Answers {
			note += fmt.Sprintf(" (answers %.4f)", p.AnswerLoss)
		}
		note += fmt.Sprintf(", held-out acc %.3f", p.Accuracy)
		mu.Unlock()
		bar.Update(p.Step, note)
	}
	if bar.OnTerminal() {
		// A hook copies the weights off the device first: a hundred small
		// copies a run, while every step already reads its loss back.
		hooks = append(hooks, train.Hook{Every: max(1, steps/100), Fn: func(step int, _ *train.Model, _ *train.Evaluator, _ float64) error {
			mu.Lock()
			n := note
			mu.Unlock()
			bar.Update(step, n)
			return nil
		}})
	}
	return report, hooks, bar.Finish
}
