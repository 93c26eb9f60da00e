// Package train runs the training loop: batches from a task, Adam steps on
// the graph, held-out evaluation, and checkpoints.
package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
)

// Config is everything that determines a training run. Two runs with the
// same Config give the same weights, bit for bit.
type Config struct {
	Task  string  `json:"task"`
	Seed  uint64  `json:"seed"`
	Steps int     `json:"steps"`
	Batch int     `json:"batch"`
	LR    float64 `json:"lr"`
	// Loss is the training objective, tasks.NextToken or tasks.Answers.
	Loss string `json:"loss"`
	// TrainExamples, when positive, is the size of a finite training set
	// drawn once and sampled with replacement (tasks.NewTrainingSet); 0
	// trains on a fresh stream.
	TrainExamples int `json:"train_examples"`
	// WeightDecay is AdamW's decoupled weight decay (0: none).
	WeightDecay float64 `json:"weight_decay"`
	// SeqLen and Vocab are the task's sequence length and vocabulary
	// (--seq-len, --vocab; tasks.Make); 0 is the task's default, which
	// Sized writes in.
	SeqLen int `json:"seq_len"`
	Vocab  int `json:"vocab"`
	// Data is the content hash of a task read from a folder (--task
	// file:PATH; tasks.Data.Hash), which Sized writes in: the data, not
	// its path, is part of what determines the run.
	Data string `json:"data,omitempty"`
	// Arch is the model's architecture (layers, heads, widths, positions,
	// the causal mask, tied embeddings); its fields are Config's own, in
	// Go and in JSON.
	graph.Arch
}

// UnmarshalJSON reads a configuration, refusing unknown fields. One
// written before the loss was recorded, when headlab trained on the
// answer positions alone, reads as that loss; one written before the
// sizes were, at its task's default sizes.
func (c *Config) UnmarshalJSON(data []byte) error {
	type fields Config // Config's fields without this method
	f := fields{Loss: tasks.Answers}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return err
	}
	*c = Config(f).Sized()
	return nil
}

// NewTask is c's task at c's sizes.
func (c Config) NewTask() (tasks.Task, error) {
	return tasks.Make(c.Task, tasks.Sizes{SeqLen: c.SeqLen, Vocab: c.Vocab})
}

// Sized is c with the sizes its task takes by default written in where
// c leaves them 0; c itself when its task or sizes are unknown.
func (c Config) Sized() Config {
	if t, err := c.NewTask(); err == nil {
		c.SeqLen, c.Vocab = t.SeqLen(), t.Vocab()
		if d, ok := t.(*tasks.Data); ok && c.Data == "" {
			c.Data = d.Hash()
		}
	}
	return c
}

// Defaults returns the default configuration for a task (Steps = the
// task's default).
func Defaults(task string) Config {
	c := Config{Task: task, Seed: 1, Batch: 32, LR: 3e-3, Loss: tasks.NextToken,
		Arch: graph.Arch{Layers: 2, Heads: 2, DModel: 32, DFF: 64, Positions: true, Causal: true}}
	if t, err := tasks.New(task); err == nil {
		c.Steps = t.DefaultSteps()
	}
	return c.Sized()
}

// HeldOutExamples is the size of the held-out set the final accuracy is
// measured on.
const HeldOutExamples = 1000

// Validate names the first problem with c, as a user would fix it.
func (c Config) Validate() error {
	t, err := c.NewTask()
	if err != nil {
		return err
	}
	switch {
	case c.Steps < 0:
		return fmt.Errorf("--steps must be >= 0, got %d", c.Steps)
	case c.Batch <= 0 || c.Batch > 4096:
		return fmt.Errorf("--batch must be in 1..4096, got %d", c.Batch)
	case !(c.LR > 0 && c.LR < 1):
		return fmt.Errorf("--lr must be in (0, 1), got %g", c.LR)
	case c.TrainExamples < 0 || c.TrainExamples > tasks.MaxTrainingSet:
		return fmt.Errorf("--train-examples must be in 0..%d, got %d", tasks.MaxTrainingSet, c.TrainExamples)
	case c.TrainExamples > 0 && c.TrainExamples < c.Batch:
		return fmt.Errorf("--train-examples %d is fewer sequences than one batch (--batch %d)", c.TrainExamples, c.Batch)
	case !(c.WeightDecay >= 0 && c.WeightDecay*c.LR < 1):
		return fmt.Errorf("--weight-decay must be >= 0 and below 1/lr (%g), got %g", 1/c.LR, c.WeightDecay)
	}
	if err := tasks.CheckLoss(c.Loss); err != nil {
		return err
	}
	if d, ok := t.(*tasks.Data); ok && c.Data != "" && c.Data != d.Hash() {
		return fmt.Errorf("the data of --task %s has changed: it hashes to %s, the configuration's to %s", c.Task, d.Hash(), c.Data)
	}
	return c.Model(t).Validate()
}

// Model is the model shape c asks for on task t (c.NewTask()).
func (c Config) Model(t tasks.Task) graph.Config {
	return graph.Config{Vocab: t.Vocab(), SeqLen: t.SeqLen(), Arch: c.Arch}
}

// Model is a trained (or loaded) model with the configuration that made it.
type Model struct {
	Train   Config
	Shape   graph.Config
	Task    tasks.Task
	Weights *graph.Weights
}

// NonFinite names the first of m's weight tensors that holds NaN or an
// infinity, or is "" when every weight is finite.
func (m *Model) NonFinite() string {
	for _, p := range m.Weights.Params {
		for _, v := range p.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return p.Name
			}
		}
	}
	return ""
}

// Progress is one progress report during training.
type Progress struct {
	Step, Steps int
	// Loss is the last batch's training loss; AnswerLoss the same
	// batch's loss on its answer positions alone.
	Loss, AnswerLoss float64
	Accuracy         float64 // on QuickHeldOut
	StepsPerSec      float64
}

// Result is what a finished run reports. Accuracy and Loss are on the
// held-out answer positions, whatever the training loss; TrainLoss is
// the last batch's training loss and TrainAnswerLoss that batch's loss on
// its answer positions alone.
type Result struct {
	Params          int     `json:"params"`
	Accuracy        float64 `json:"accuracy"`
	Chance          float64 `json:"chance"`
	Loss            float64 `json:"loss"`
	TrainLoss       float64 `json:"train_loss"`
	TrainAnswerLoss float64 `json:"train_answer_loss"`
	TrainSeconds    float64 `json:"train_seconds"`
	MsPerStep       float64 `json:"ms_per_step"`
	// UnseenAccuracy is held-out accuracy on sequences made only of
	// vocabulary that training never showed, for tasks that hold some back.
	UnseenAccuracy *float64 `json:"unseen_accuracy,omitempty"`
	// Leakage is how many held-out sequences of a task read from a
	// folder also occur in its training file.
	Leakage *int `json:"leakage,omitempty"`
}

// Trainer trains one model: a Group of one, which reads its loss back
// after every step.
type Trainer struct {
	Model *Model
	Step  int // steps taken

	g *Group
}

// NewTrainer initialises a model from c.Seed on dev, ready to train.
func NewTrainer(c Config, dev kernels.Device) (*Trainer, error) {
	g, err := NewGroup([]Config{c}, dev)
	if err != nil {
		return nil, err
	}
	return &Trainer{Model: g.Models[0], g: g}, nil
}

// TrainStep draws the next batch, runs forward and backward and takes one
// Adam step. It returns the batch's loss, and an error when the loss is not
// finite (the run diverged).
func (tr *Trainer) TrainStep() (float64, error) {
	if err := tr.g.TrainStep(); err != nil {
		return 0, err
	}
	tr.Step = tr.g.Step
	return tr.g.loneLoss()
}

// loneLoss reads the last batch loss of a group of one, an error when it
// is not finite (the run diverged).
func (g *Group) loneLoss() (float64, error) {
	l, err := g.Losses()
	if err != nil {
		return 0, err
	}
	if math.IsNaN(l[0]) || math.IsInf(l[0], 0) {
		return l[0], fmt.Errorf("training diverged at step %d: loss is %v", g.Step, l[0])
	}
	return l[0], nil
}

// Sync copies the trained weights from the device into Model.Weights.
func (tr *Trainer) Sync() error { return tr.g.Sync() }

// Close releases the model's tensors on the device.
func (tr *Trainer) Close() error { return tr.g.Close() }

// TrainingSample is the examples training accuracy is measured on: the
// first HeldOutExamples of m's training stream, which are the first of
// its finite training set when it has one (at most the whole set).
func TrainingSample(m *Model) *tasks.Batch {
	n := HeldOutExamples
	if m.Train.TrainExamples > 0 {
		n = min(n, m.Train.TrainExamples)
	}
	return tasks.NewStream(m.Task, m.Train.Seed, tasks.Train).Next(n)
}

// HeldOut is the fixed held-out set of a model's task and seed.
func HeldOut(m *Model) *tasks.Batch {
	return tasks.NewStream(m.Task, m.Train.Seed, tasks.HeldOut).Next(HeldOutExamples)
}
