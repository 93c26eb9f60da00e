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
	Task      string  `json:"task"`
	Seed      uint64  `json:"seed"`
	Steps     int     `json:"steps"`
	Batch     int     `json:"batch"`
	LR        float64 `json:"lr"`
	Layers    int     `json:"layers"`
	Heads     int     `json:"heads"`
	DModel    int     `json:"d_model"`
	DFF       int     `json:"d_ff"`
	Positions bool    `json:"positions"`
	Causal    bool    `json:"causal"`
}

// Defaults returns the default configuration for a task (Steps = the
// task's default).
func Defaults(task string) Config {
	c := Config{Task: task, Seed: 1, Batch: 32, LR: 3e-3, Layers: 2, Heads: 2, DModel: 32, DFF: 64, Positions: true, Causal: true}
	if t, err := tasks.New(task); err == nil {
		c.Steps = t.DefaultSteps()
	}
	return c
}

// HeldOutExamples is the size of the held-out set the final accuracy is
// measured on.
const HeldOutExamples = 1000

// evalChunk is the batch size of evaluation graphs.
const evalChunk = 250

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
	return graph.Config{Vocab: t.Vocab(), SeqLen: t.SeqLen(), Layers: c.Layers, Heads: c.Heads,
		DModel: c.DModel, DFF: c.DFF, Positions: c.Positions, Causal: c.Causal}
}

// Model is a trained (or loaded) model with the configuration that made it.
type Model struct {
	Train   Config
	Shape   graph.Config
	Task    tasks.Task
	Weights *graph.Weights
}

// Progress is one progress report during training.
type Progress struct {
	Step, Steps int
	Loss        float64
	Accuracy    float64 // on the first evalChunk held-out examples
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

// Trainer owns a model being trained and steps it one batch at a time.
type Trainer struct {
	Model *Model
	Step  int // steps taken

	net     *graph.Net
	opt     *adam
	weights [][]float32 // the parameters' storage, in Params order
	grads   [][]float32 // the net's gradient buffers, the same order
	stream  *tasks.Stream
	batch   *tasks.Batch
}

// NewTrainer initialises a model from c.Seed, ready to train.
func NewTrainer(c Config, be kernels.Backend) (*Trainer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t, _ := tasks.New(c.Task)
	m := &Model{Train: c, Shape: c.Model(t), Task: t, Weights: graph.InitWeights(c.Model(t), c.Seed)}
	net, err := graph.Build(m.Shape, m.Weights, be, c.Batch, true)
	if err != nil {
		return nil, err
	}
	grads, err := net.Grads()
	if err != nil {
		return nil, err
	}
	var weights [][]float32
	var sizes []int
	for _, n := range net.Params() {
		p := m.Weights.Get(n.Name())
		weights, sizes = append(weights, p.Data), append(sizes, len(p.Data))
	}
	stream := tasks.NewStream(t, c.Seed, tasks.Train)
	return &Trainer{Model: m, net: net, opt: newAdam(c.LR, sizes), weights: weights, grads: grads,
		stream: stream, batch: stream.Next(c.Batch)}, nil
}

// TrainStep draws the next batch, runs forward and backward and takes one
// Adam step. It returns the batch's loss, and an error when the loss is not
// finite (the run diverged).
func (tr *Trainer) TrainStep() (float64, error) {
	tr.Step++
	tr.stream.Fill(tr.batch)
	if err := tr.net.SetInputs(tr.batch.Tokens, tr.batch.Targets); err != nil {
		return 0, err
	}
	if err := tr.net.Run(); err != nil {
		return 0, fmt.Errorf("step %d: %w", tr.Step, err)
	}
	loss := float64(tr.net.Loss())
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("training diverged at step %d: loss is %v", tr.Step, loss)
	}
	tr.opt.step(tr.weights, tr.grads)
	return loss, nil
}

// Close releases the training graph.
func (tr *Trainer) Close() error { return tr.net.Close() }

// HeldOut is the fixed held-out set of a model's task and seed.
func HeldOut(m *Model) *tasks.Batch {
	return tasks.NewStream(m.Task, m.Train.Seed, tasks.HeldOut).Next(HeldOutExamples)
}
