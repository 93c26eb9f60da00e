package train

import (
	"errors"
	"fmt"
	"math"
	"time"

	"headlab/kernels"
	"headlab/tasks"
)

// ErrAborted is Group.Train's error when its abort channel closed before
// the last step.
var ErrAborted = errors.New("run abandoned")

// GroupHook is called by Group.Train after every Every-th step and after
// the last (never when Every < 1) with the step just taken. An error
// stops training.
type GroupHook struct {
	Every int
	Fn    func(step int) error
}

// due says whether a hook called every every steps is called after step
// of a run of steps steps.
func due(every, step, steps int) bool {
	return every > 0 && (step%every == 0 || step == steps)
}

// Train is the training loop of every run, a lone model's (Run) and a
// group's (a sweep's): it takes the steps g's models have left, calling
// hooks in order after each step they are due, and copies the trained
// weights off the device (Sync). It stops with ErrAborted when abort (nil
// never does) closes before a step, and with the error of a step or a
// hook. A model that diverged does not stop the others: diverged[s] says
// why model s did (its loss stopped being finite, or its last update
// made weights that are not), nil for one that did not.
func (g *Group) Train(abort <-chan struct{}, hooks ...GroupHook) (diverged []error, err error) {
	steps := g.Models[0].Train.Steps
	for g.Step < steps {
		select {
		case <-abort:
			return nil, ErrAborted
		default:
		}
		if err := g.TrainStep(); err != nil {
			return nil, err
		}
		for _, h := range hooks {
			if due(h.Every, g.Step, steps) {
				if err := h.Fn(g.Step); err != nil {
					return nil, err
				}
			}
		}
	}
	at, err := g.Diverged()
	if err != nil {
		return nil, err
	}
	if err := g.Sync(); err != nil {
		return nil, err
	}
	diverged = make([]error, len(g.Models))
	for s, m := range g.Models {
		if at[s] > 0 {
			diverged[s] = fmt.Errorf("training diverged at step %d: the loss was not finite", at[s])
		} else if name := m.NonFinite(); name != "" {
			// The last update made weights that no loss has seen yet.
			diverged[s] = fmt.Errorf("training diverged at step %d: the weights are not finite (%s)", g.Step, name)
		}
	}
	return diverged, nil
}

// Hook is called before the first step and after every Every-th step (and
// the last) with the model as trained so far, the run's Evaluator of it
// (reading the weights on the device, as the run's own measurements do)
// and the last batch loss (NaN before the first step). An error stops
// training.
type Hook struct {
	Every int
	Fn    func(step int, m *Model, e *Evaluator, loss float64) error
}

// Run trains a model for c.Steps steps: Group.Train on a group of one,
// which reads its loss back after every step and stops at the first that
// is not finite. progress, if not nil, is called every reportEvery steps
// and at the end; hooks as Hook says.
func Run(c Config, dev kernels.Device, reportEvery int, progress func(Progress), hooks ...Hook) (*Model, Result, error) {
	g, err := NewGroup([]Config{c}, dev)
	if err != nil {
		return nil, Result{}, err
	}
	defer g.Close()
	m := g.Models[0]
	eval, err := g.Evaluator()
	if err != nil {
		return nil, Result{}, err
	}
	defer eval.Close()

	loss := math.NaN()
	var each []GroupHook
	for _, h := range hooks {
		each = append(each, GroupHook{Every: h.Every, Fn: func(step int) error {
			if err := g.Sync(); err != nil {
				return err
			}
			return h.Fn(step, m, eval, loss)
		}})
	}
	for _, h := range each {
		if due(h.Every, 0, c.Steps) {
			if err := h.Fn(0); err != nil {
				return nil, Result{}, err
			}
		}
	}
	start := time.Now()
	// The loss first: the hooks and the progress see it.
	each = append([]GroupHook{{Every: 1, Fn: func(int) (err error) {
		loss, err = g.loneLoss()
		return err
	}}}, each...)
	if progress != nil && reportEvery > 0 {
		quick := QuickHeldOut(m)
		each = append(each, GroupHook{Every: reportEvery, Fn: func(step int) error {
			acc, _, err := eval.Accuracy(quick, nil)
			if err != nil {
				return err
			}
			al, err := g.AnswerLosses()
			if err != nil {
				return err
			}
			progress(Progress{Step: step, Steps: c.Steps, Loss: loss, AnswerLoss: al[0], Accuracy: acc,
				StepsPerSec: float64(step) / time.Since(start).Seconds()})
			return nil
		}})
	}
	diverged, err := g.Train(nil, each...)
	secs := time.Since(start).Seconds()
	if err != nil {
		return nil, Result{}, err
	}
	if diverged[0] != nil {
		return nil, Result{}, diverged[0]
	}
	res, err := lonesResult(g, eval, c.Steps, loss, secs)
	if err != nil {
		return nil, Result{}, err
	}
	return m, res, nil
}

// lonesResult measures the lone model of g after its steps of training
// (loss, the last batch's; secs, the training's time): held-out accuracy
// and loss, the training losses, leakage and accuracy on unseen tokens.
func lonesResult(g *Group, eval *Evaluator, steps int, loss, secs float64) (Result, error) {
	m := g.Models[0]
	acc, heldLoss, err := eval.Accuracy(HeldOut(m), nil)
	if err != nil {
		return Result{}, err
	}
	res := Result{Params: m.Weights.Count(), Accuracy: acc, Chance: m.Task.Chance(), Loss: heldLoss, TrainSeconds: secs}
	if steps > 0 {
		al, err := g.AnswerLosses()
		if err != nil {
			return Result{}, err
		}
		res.TrainLoss, res.TrainAnswerLoss = loss, al[0]
		res.MsPerStep = 1000 * secs / float64(steps)
	}
	if d, ok := m.Task.(*tasks.Data); ok {
		n := d.Leakage()
		res.Leakage = &n
	}
	if tasks.HasUnseen(m.Task) {
		acc, err := UnseenAccuracy(eval, m)
		if err != nil {
			return Result{}, err
		}
		res.UnseenAccuracy = &acc
	}
	return res, nil
}

// UnseenAccuracy is m's accuracy on HeldOutExamples sequences made only of
// the tokens its task held back from training (e evaluates m).
func UnseenAccuracy(e *Evaluator, m *Model) (float64, error) {
	unseen := tasks.NewStream(m.Task, m.Train.Seed, tasks.Unseen).Next(HeldOutExamples)
	acc, _, err := e.Accuracy(unseen, nil)
	return acc, err
}
