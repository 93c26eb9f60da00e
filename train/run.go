package train

import (
	"fmt"
	"math"
	"time"

	"headlab/kernels"
	"headlab/tasks"
)

// Hook is called before the first step and after every Every-th step (and
// the last) with the model as trained so far, the run's Evaluator of it
// (reading the weights on the device, as the run's own measurements do)
// and the last batch loss (NaN before the first step). An error stops
// training.
type Hook struct {
	Every int
	Fn    func(step int, m *Model, e *Evaluator, loss float64) error
}

// Run trains a model for c.Steps steps. progress, if not nil, is called
// every reportEvery steps and at the end; hooks as Hook says.
func Run(c Config, dev kernels.Device, reportEvery int, progress func(Progress), hooks ...Hook) (*Model, Result, error) {
	tr, err := NewTrainer(c, dev)
	if err != nil {
		return nil, Result{}, err
	}
	defer tr.Close()
	m := tr.Model
	eval, err := tr.Evaluator()
	if err != nil {
		return nil, Result{}, err
	}
	defer eval.Close()
	quick := QuickHeldOut(m)

	runHooks := func(loss float64) error {
		for _, h := range hooks {
			if h.Every > 0 && (tr.Step%h.Every == 0 || tr.Step == c.Steps) {
				if err := tr.Sync(); err != nil {
					return err
				}
				if err := h.Fn(tr.Step, m, eval, loss); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := runHooks(math.NaN()); err != nil {
		return nil, Result{}, err
	}
	start := time.Now()
	var loss float64
	for tr.Step < c.Steps {
		if loss, err = tr.TrainStep(); err != nil {
			return nil, Result{}, err
		}
		if err := runHooks(loss); err != nil {
			return nil, Result{}, err
		}
		if progress != nil && reportEvery > 0 && (tr.Step%reportEvery == 0 || tr.Step == c.Steps) {
			acc, _, err := eval.Accuracy(quick, nil)
			if err != nil {
				return nil, Result{}, err
			}
			al, err := tr.g.AnswerLosses()
			if err != nil {
				return nil, Result{}, err
			}
			progress(Progress{Step: tr.Step, Steps: c.Steps, Loss: loss, AnswerLoss: al[0], Accuracy: acc,
				StepsPerSec: float64(tr.Step) / time.Since(start).Seconds()})
		}
	}
	secs := time.Since(start).Seconds()
	if err := tr.Sync(); err != nil {
		return nil, Result{}, err
	}
	// The last step's loss was finite, but its update may not be.
	if name := m.NonFinite(); name != "" {
		return nil, Result{}, fmt.Errorf("training diverged at step %d: the weights are not finite (%s)", tr.Step, name)
	}
	acc, heldLoss, err := eval.Accuracy(HeldOut(m), nil)
	if err != nil {
		return nil, Result{}, err
	}
	res := Result{Params: m.Weights.Count(), Accuracy: acc, Chance: m.Task.Chance(), Loss: heldLoss,
		TrainLoss: loss, TrainSeconds: secs}
	if c.Steps > 0 {
		al, err := tr.g.AnswerLosses()
		if err != nil {
			return nil, Result{}, err
		}
		res.TrainAnswerLoss = al[0]
	}
	if tasks.HasUnseen(m.Task) {
		acc, err := UnseenAccuracy(eval, m)
		if err != nil {
			return nil, Result{}, err
		}
		res.UnseenAccuracy = &acc
	}
	if c.Steps > 0 {
		res.MsPerStep = 1000 * secs / float64(c.Steps)
	}
	return m, res, nil
}

// UnseenAccuracy is m's accuracy on HeldOutExamples sequences made only of
// the tokens its task held back from training (e evaluates m).
func UnseenAccuracy(e *Evaluator, m *Model) (float64, error) {
	unseen := tasks.NewStream(m.Task, m.Train.Seed, tasks.Unseen).Next(HeldOutExamples)
	acc, _, err := e.Accuracy(unseen, nil)
	return acc, err
}
