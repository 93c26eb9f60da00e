package gl

import (
	"math"
	"testing"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/inspect"
	"headlab/kernels"
	"headlab/tasks"
	"headlab/train"
)

// TestTrainingParity runs the whole model on both backends from the same
// seed: the first step's loss and every gradient agree within 1e-5 (or
// 1e-4 relative), for causal and bidirectional attention.
func TestTrainingParity(t *testing.T) {
	g := needGL(t)
	for _, causal := range []bool{true, false} {
		c := train.Defaults("induction")
		c.Causal = causal
		task, _ := tasks.New(c.Task)
		shape := c.Model(task)
		b := tasks.NewStream(task, c.Seed, tasks.Train).Next(c.Batch)
		grads := map[string]map[string][]float32{}
		losses := map[string]float32{}
		for _, be := range []kernels.Backend{cpu.New(), g} {
			w := graph.InitWeights(shape, c.Seed)
			net, err := graph.Build(shape, w, be, c.Batch, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := net.SetInputs(b.Tokens, b.Targets); err != nil {
				t.Fatal(err)
			}
			if err := net.Run(); err != nil {
				t.Fatalf("%s: %v", be.Name(), err)
			}
			losses[be.Name()] = net.Loss()
			grads[be.Name()] = map[string][]float32{}
			for _, n := range net.Params() {
				gv, err := n.Grad()
				if err != nil {
					t.Fatal(err)
				}
				grads[be.Name()][n.Name()] = append([]float32(nil), gv.Data().([]float32)...)
			}
			net.Close()
		}
		if d := math.Abs(float64(losses["gl"] - losses["cpu"])); d > 1e-5 {
			t.Errorf("causal=%v: first loss gl %v cpu %v", causal, losses["gl"], losses["cpu"])
		}
		for name, want := range grads["cpu"] {
			got := grads["gl"][name]
			for i := range want {
				if !near(got[i], want[i]) {
					t.Errorf("causal=%v: d loss/d %s[%d]: gl %v cpu %v", causal, name, i, got[i], want[i])
					break
				}
			}
		}
	}
}

// TestTrainedModelsAgree trains 300 steps on each backend: held-out
// accuracy within 1 point, and every head whose winning score leads the
// runner-up by more than 0.05 gets the same label.
func TestTrainedModelsAgree(t *testing.T) {
	g := needGL(t)
	c := train.Defaults("induction")
	c.Steps = 300
	reports := map[string]*inspect.Report{}
	accs := map[string]float64{}
	for _, be := range []kernels.Backend{cpu.New(), g} {
		m, res, err := train.Run(c, be, 0, nil)
		if err != nil {
			t.Fatalf("%s: %v", be.Name(), err)
		}
		rep, _, err := inspect.Analyze(m, be, nil)
		if err != nil {
			t.Fatal(err)
		}
		reports[be.Name()], accs[be.Name()] = rep, res.Accuracy
	}
	t.Logf("accuracy cpu %.4f gl %.4f", accs["cpu"], accs["gl"])
	if math.Abs(accs["cpu"]-accs["gl"]) > 0.01 {
		t.Errorf("accuracy cpu %.4f gl %.4f", accs["cpu"], accs["gl"])
	}
	for i, h := range reports["cpu"].Heads {
		other := reports["gl"].Heads[i]
		runnerUp := 0.0
		for _, s := range h.Scores {
			if s < h.Score && s > runnerUp {
				runnerUp = s
			}
		}
		if h.Score-runnerUp > 0.05 && h.Label != other.Label {
			t.Errorf("%s: cpu %s, gl %s", h.Name, h.Title(), other.Title())
		}
	}
}
