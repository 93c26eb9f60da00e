// Package train runs the training loop: batches from a task, Adam steps on
// the graph, held-out evaluation, and checkpoints.
package train

import (
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
	// Arch is the model's architecture (layers, heads, widths, positions,
	// the causal mask, tied embeddings); its fields are Config's own, in
	// Go and in JSON.
	graph.Arch
}

// Defaults returns the default configuration for a task (Steps = the
// task's default).
func Defaults(task string) Config {
	c := Config{Task: task, Seed: 1, Batch: 32, LR: 3e-3, Arch: graph.Arch{Layers: 2, Heads: 2, DModel: 32, DFF: 64, Positions: true, Causal: true}}
	if t, err := tasks.New(task); err == nil {
		c.Steps = t.DefaultSteps()
	}
	return c
}

// HeldOutExamples is the size of the held-out set the final accuracy is
// measured on.
const HeldOutExamples = 1000

// Validate names the first problem with c, as a user would fix it.
func (c Config) Validate() error {
	t, err := tasks.New(c.Task)
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
	}
	return c.Model(t).Validate()
}

// Model is the model shape c asks for on task t.
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
	Loss        float64
	Accuracy    float64 // on QuickHeldOut
	StepsPerSec float64
}

// Result is what a finished run reports.
type Result struct {
	Params       int     `json:"params"`
	Accuracy     float64 `json:"accuracy"`
	Chance       float64 `json:"chance"`
	Loss         float64 `json:"loss"`
	TrainLoss    float64 `json:"train_loss"`
	TrainSeconds float64 `json:"train_seconds"`
	MsPerStep    float64 `json:"ms_per_step"`
	// UnseenAccuracy is held-out accuracy on sequences made only of
	// vocabulary that training never showed, for tasks that hold some back.
	UnseenAccuracy *float64 `json:"unseen_accuracy,omitempty"`
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
	l, err := tr.g.Losses()
	if err != nil {
		return 0, err
	}
	if math.IsNaN(l[0]) || math.IsInf(l[0], 0) {
		return l[0], fmt.Errorf("training diverged at step %d: loss is %v", tr.Step, l[0])
	}
	return l[0], nil
}

// Sync copies the trained weights from the device into Model.Weights.
func (tr *Trainer) Sync() error { return tr.g.Sync() }

// Close releases the model's tensors on the device.
func (tr *Trainer) Close() error { return tr.g.Close() }

// HeldOut is the fixed held-out set of a model's task and seed.
func HeldOut(m *Model) *tasks.Batch {
	return tasks.NewStream(m.Task, m.Train.Seed, tasks.HeldOut).Next(HeldOutExamples)
}
