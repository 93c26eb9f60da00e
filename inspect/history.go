package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"headlab/analysis"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// HistoryFile is the name of the recorded history inside a checkpoint.
const HistoryFile = "history.json"

// Snapshot is the model as it was at one step of training: one entry of
// a History, read from a train.Snapshot of the held-out set.
type Snapshot struct {
	Step int `json:"step"`
	// Loss is the last training batch's loss; absent before the first step.
	Loss     *float64             `json:"loss,omitempty"`
	Accuracy float64              `json:"accuracy"`
	Heads    []analysis.HeadScore `json:"heads"`
}

// History is a run's snapshots, oldest first.
type History []Snapshot

// Recorder takes a Snapshot every few steps of a training run: held-out
// accuracy on the first 1,000 held-out examples and every head's scores on
// the first ScoredExamples, both from one pass over them.
type Recorder struct {
	History History

	dev  kernels.Device
	eval *train.Evaluator
}

// NewRecorder records on device dev.
func NewRecorder(dev kernels.Device) *Recorder { return &Recorder{dev: dev} }

// Hook returns the train.Hook that records every `every` steps.
func (r *Recorder) Hook(every int) train.Hook {
	return train.Hook{Every: every, Fn: r.record}
}

func (r *Recorder) record(step int, m *train.Model, loss float64) error {
	if r.eval == nil {
		e, err := train.NewEvaluator(m, r.dev)
		if err != nil {
			return err
		}
		r.eval = e
	} else if err := r.eval.Reload(); err != nil {
		return err
	}
	// One pass: accuracy on the held-out set, attention on its first
	// ScoredExamples.
	sn, err := r.eval.Snapshot([]*tasks.Batch{train.HeldOut(m)}, train.SnapshotOptions{Attention: ScoredExamples})
	if err != nil {
		return err
	}
	s := Snapshot{Step: step, Accuracy: sn[0].Accuracy, Heads: analysis.ScoreAll(sn[0].Attention)}
	if !math.IsNaN(loss) {
		s.Loss = &loss
	}
	r.History = append(r.History, s)
	return nil
}

// Close releases the recorder's evaluator.
func (r *Recorder) Close() {
	if r.eval != nil {
		r.eval.Close()
	}
}

// firstExamples is a view of the first n examples of b.
func firstExamples(b *tasks.Batch, n int) *tasks.Batch {
	n = min(n, b.N)
	return &tasks.Batch{N: n, T: b.T, Tokens: b.Tokens[:n*b.T], Targets: b.Targets[:n*b.T]}
}

// LoadHistory reads the history saved in checkpoint dir.
func LoadHistory(dir string) (History, error) {
	data, err := os.ReadFile(filepath.Join(dir, HistoryFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s: train it with --record-every K --save DIR", dir, HistoryFile)
	}
	if err != nil {
		return nil, err
	}
	var h History
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, HistoryFile), err)
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("%s: empty history", filepath.Join(dir, HistoryFile))
	}
	return h, nil
}

// Phase finds the phase change in h: where the best induction score of any
// head in a layer after the first, and the accuracy, make most of their rise.
func (h History) Phase() analysis.Phase {
	steps := make([]int, len(h))
	ind := make([]float64, len(h))
	acc := make([]float64, len(h))
	for k, s := range h {
		steps[k], acc[k] = s.Step, s.Accuracy
		for _, hs := range s.Heads {
			if hs.Layer > 0 || s.Heads[len(s.Heads)-1].Layer == 0 {
				ind[k] = max(ind[k], hs.Scores["induction"])
			}
		}
	}
	return analysis.PhaseChange(steps, ind, acc)
}

// UnseenScores scores m's heads on sequences made only of the tokens its
// task held back from training: an induction head that matches by content
// keeps its pattern there even if the readout cannot name the token.
func UnseenScores(m *train.Model, dev kernels.Device) ([]analysis.HeadScore, error) {
	e, err := train.NewEvaluator(m, dev)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	b := tasks.NewStream(m.Task, m.Train.Seed, tasks.Unseen).Next(ScoredExamples)
	sn, err := e.Snapshot([]*tasks.Batch{b}, train.SnapshotOptions{Attention: b.N})
	if err != nil {
		return nil, err
	}
	return analysis.ScoreAll(sn[0].Attention), nil
}
