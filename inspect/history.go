package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

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
	Loss     *float64 `json:"loss,omitempty"`
	Accuracy float64  `json:"accuracy"`
	// TrainAccuracy is accuracy on the training data (train.
	// TrainingSample); absent from histories recorded before it was.
	TrainAccuracy *float64             `json:"train_accuracy,omitempty"`
	Heads         []analysis.HeadScore `json:"heads"`
	// ICL is the in-context learning score on the scored examples
	// (analysis.ICLScore); absent from histories recorded before it was.
	ICL *float64 `json:"icl_score,omitempty"`
}

// History is a run's snapshots, oldest first.
type History []Snapshot

// Recorder takes a Snapshot every few steps of a training run: held-out
// accuracy on the first 1,000 held-out examples and every head's scores
// and the in-context learning score on the first ScoredExamples, all from
// one pass over them of the run's Evaluator, and training accuracy on the
// first 1,000 training examples (train.TrainingSample) from another. The
// zero value is ready to record.
type Recorder struct {
	History History
}

// Hook returns the train.Hook that records every `every` steps.
func (r *Recorder) Hook(every int) train.Hook {
	return train.Hook{Every: every, Fn: r.record}
}

// record appends the Snapshot of m, evaluated by e, at step.
func (r *Recorder) record(step int, m *train.Model, e *train.Evaluator, loss float64) error {
	// One pass: accuracy on the held-out set, attention on its first
	// ScoredExamples.
	sn, err := e.Snapshot([]*tasks.Batch{train.HeldOut(m)}, train.SnapshotOptions{Attention: ScoredExamples, Logits: true})
	if err != nil {
		return err
	}
	trainAcc, _, err := e.Accuracy(train.TrainingSample(m), nil)
	if err != nil {
		return err
	}
	a := sn[0].Attention
	s := Snapshot{Step: step, Accuracy: sn[0].Accuracy, TrainAccuracy: &trainAcc, Heads: analysis.ScoreAll(a)}
	if !math.IsNaN(loss) {
		s.Loss = &loss
	}
	if icl, err := analysis.ICLScore(a.Tokens, sn[0].Logits, a.N, a.T, m.Shape.Vocab); err == nil {
		s.ICL = &icl
	}
	r.History = append(r.History, s)
	return nil
}

// firstExamples is a view of the first n examples of b.
func firstExamples(b *tasks.Batch, n int) *tasks.Batch {
	n = min(n, b.N)
	return &tasks.Batch{N: n, T: b.T, Tokens: b.Tokens[:n*b.T], Targets: b.Targets[:n*b.T]}
}

// File is h as the checkpoint file that LoadHistory reads (HistoryFile),
// to save beside a model with train.Save.
func (h History) File() (train.File, error) {
	data, err := json.MarshalIndent(h, "", " ")
	if err != nil {
		return train.File{}, err
	}
	return train.File{Name: HistoryFile, Data: data}, nil
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
				ind[k] = max(ind[k], hs.Scores[analysis.LabelInduction])
			}
		}
	}
	return analysis.PhaseChange(steps, ind, acc)
}

// Series is one quantity of a history against step.
type Series struct {
	Name   string
	Steps  []int
	Values []float64
}

// Loss is the training loss ("loss") at every record that has one.
func (h History) Loss() Series {
	return h.series("loss", func(r *Snapshot) *float64 { return r.Loss })
}

// ICL is the in-context learning score ("in-context learning score") at
// every record that has one.
func (h History) ICL() Series {
	return h.series("in-context learning score", func(r *Snapshot) *float64 { return r.ICL })
}

// Accuracy is held-out accuracy ("accuracy") at every record.
func (h History) Accuracy() Series {
	return h.series("accuracy", func(r *Snapshot) *float64 { return &r.Accuracy })
}

// TrainAccuracy is training accuracy ("training accuracy") at every
// record that has one.
func (h History) TrainAccuracy() Series {
	return h.series("training accuracy", func(r *Snapshot) *float64 { return r.TrainAccuracy })
}

// series is the Series name of value at every record where it is not nil.
func (h History) series(name string, value func(*Snapshot) *float64) Series {
	s := Series{Name: name}
	for i := range h {
		if v := value(&h[i]); v != nil {
			s.Steps, s.Values = append(s.Steps, h[i].Step), append(s.Values, *v)
		}
	}
	return s
}

// HeadScores is every head's winning score at each record that scored it:
// one Series per head, named by the head, in the order heads first appear.
func (h History) HeadScores() []Series {
	var out []Series
	index := map[string]int{}
	for _, r := range h {
		for _, hs := range r.Heads {
			k, ok := index[hs.Name]
			if !ok {
				k = len(out)
				index[hs.Name] = k
				out = append(out, Series{Name: hs.Name})
			}
			out[k].Steps, out[k].Values = append(out[k].Steps, r.Step), append(out[k].Values, hs.Score)
		}
	}
	return out
}

// LabelChange is a record at which some heads' labels differ from their
// labels at the previous record.
type LabelChange struct {
	Step int
	// Heads are the heads that changed, each as its name and new label
	// ("L1H0 induction"), in the record's order.
	Heads []string
}

// Text is the change on one line: "L0H1 previous-token, L1H0 induction".
func (c LabelChange) Text() string { return strings.Join(c.Heads, ", ") }

// LabelChanges lists every record where some head's label differs from
// its label at the previous record (the first record changes nothing).
func (h History) LabelChanges() []LabelChange {
	var out []LabelChange
	last := map[string]string{}
	for k, r := range h {
		var changed []string
		for _, hs := range r.Heads {
			if k > 0 && last[hs.Name] != hs.Label {
				changed = append(changed, hs.Name+" "+hs.Label)
			}
			last[hs.Name] = hs.Label
		}
		if len(changed) > 0 {
			out = append(out, LabelChange{Step: r.Step, Heads: changed})
		}
	}
	return out
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

// HistoryReport is what headlab curves reports of a history: its phase
// change, how many records it holds, and (in the text) its label
// changes.
type HistoryReport struct {
	Phase   analysis.Phase `json:"phase_change"`
	Records int            `json:"records"`
	changes []LabelChange
}

// Report is h's report.
func (h History) Report() HistoryReport {
	return HistoryReport{Phase: h.Phase(), Records: len(h), changes: h.LabelChanges()}
}

// Write is the report's text: the phase change, then each label change.
func (r HistoryReport) Write(w io.Writer) {
	WritePhase(w, r.Phase)
	for _, c := range r.changes {
		fmt.Fprintf(w, "step %5d  %s\n", c.Step, c.Text())
	}
}
