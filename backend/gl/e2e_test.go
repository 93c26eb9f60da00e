package gl

import (
	"math"
	"testing"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// firstStep runs the whole model's forward and backward once for three
// models on dev and reads the losses and gradient blocks back.
func firstStep(t *testing.T, dev kernels.Device, c train.Config, seeds []uint64) ([]float32, []float32, int) {
	t.Helper()
	task, _ := tasks.New(c.Task)
	shape := c.Model(task)
	var ws []*graph.Weights
	for _, s := range seeds {
		ws = append(ws, graph.InitWeights(shape, s))
	}
	b, err := graph.BlockOf(dev, shape, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	net, err := graph.Build(b, c.Batch, true)
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	for i, s := range seeds {
		batch := tasks.NewStream(task, s, tasks.Train).Next(c.Batch)
		if err := net.SetInputs(i, batch.Tokens, batch.Targets); err != nil {
			t.Fatal(err)
		}
	}
	if err := net.Run(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Losses()
	if err != nil {
		t.Fatal(err)
	}
	losses := append([]float32(nil), l...)
	grads := make([]float32, len(seeds)*b.P)
	if err := dev.Download(grads, net.Grads(), len(seeds)); err != nil {
		t.Fatal(err)
	}
	return losses, grads, b.P
}

// TestFirstStepParity runs the whole model's first step on both devices,
// three models at once: every loss and every gradient agrees within 1e-5
// (or 1e-4 relative), with and without the causal mask and positions, and
// with tied embeddings.
func TestFirstStepParity(t *testing.T) {
	g := needGL(t)
	for _, v := range []struct{ causal, positions, tied bool }{{true, true, false}, {false, true, false}, {true, false, false}, {true, true, true}} {
		c := train.Defaults("induction")
		c.Causal, c.Positions, c.TiedEmbeddings = v.causal, v.positions, v.tied
		seeds := []uint64{1, 2, 3}
		cl, cg, P := firstStep(t, cpu.New(), c, seeds)
		gl, gg, _ := firstStep(t, g, c, seeds)
		for s := range seeds {
			if !near(gl[s], cl[s]) {
				t.Errorf("%+v seed %d: loss gl %v cpu %v", v, seeds[s], gl[s], cl[s])
			}
		}
		bad := 0
		for i := range cg {
			if !near(gg[i], cg[i]) {
				if bad++; bad <= 3 {
					t.Errorf("%+v seed %d: gradient %d: gl %v cpu %v", v, seeds[i/P], i%P, gg[i], cg[i])
				}
			}
		}
		if math.IsNaN(float64(gl[0])) || cl[0] == cl[1] {
			t.Fatalf("%+v: losses %v", v, gl)
		}
	}
}

// TestTrainerBatchInvariantOnGL trains seed 2 for a few steps alone and
// in a group of three: its weights are the same bits.
func TestTrainerBatchInvariantOnGL(t *testing.T) {
	g := needGL(t)
	c := train.Defaults("majority")
	c.Steps, c.DModel, c.DFF = 4, 16, 16
	weights := func(seeds ...uint64) []float32 {
		var cs []train.Config
		for _, s := range seeds {
			cc := c
			cc.Seed = s
			cs = append(cs, cc)
		}
		gr, err := train.NewGroup(cs, g)
		if err != nil {
			t.Fatal(err)
		}
		defer gr.Close()
		for gr.Step < c.Steps {
			if err := gr.TrainStep(); err != nil {
				t.Fatal(err)
			}
		}
		if err := gr.Sync(); err != nil {
			t.Fatal(err)
		}
		var out []float32
		for _, p := range gr.Models[len(seeds)/2].Weights.Params {
			out = append(out, p.Data...)
		}
		return out
	}
	alone, grouped := weights(2), weights(1, 2, 3)
	for i := range alone {
		if math.Float32bits(alone[i]) != math.Float32bits(grouped[i]) {
			t.Fatalf("weight %d: %v alone, %v in a group", i, alone[i], grouped[i])
		}
	}
}
