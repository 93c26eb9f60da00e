package train

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"headlab/backend/cpu"
	"headlab/graph"
)

// TestLearnsEveryTask trains the default model for each task's default
// steps and asks for what the README promises: held-out accuracy >= 0.95.
func TestLearnsEveryTask(t *testing.T) {
	for _, task := range []string{"induction", "copy", "reverse", "majority"} {
		c := Defaults(task)
		_, res, err := Run(c, cpu.New(), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s after %d steps: accuracy %.4f (chance %.3f), %.2f ms/step", task, c.Steps, res.Accuracy, res.Chance, res.MsPerStep)
		if res.Accuracy < 0.95 {
			t.Errorf("%s: accuracy %.4f after %d steps, want >= 0.95 (chance %.3f)", task, res.Accuracy, c.Steps, res.Chance)
		}
		if res.Params < 15000 || res.Params > 22000 {
			t.Errorf("%s: %d parameters, want about 18,000", task, res.Params)
		}
	}
}

func TestDeterministic(t *testing.T) {
	c := Defaults("induction")
	c.Steps = 60
	a, ra, err := Run(c, cpu.New(), 20, func(Progress) {})
	if err != nil {
		t.Fatal(err)
	}
	b, rb, err := Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Weights.Params {
		if !slices.Equal(p.Data, b.Weights.Params[i].Data) {
			t.Fatalf("%s differs between identical runs", p.Name)
		}
	}
	if ra.Loss != rb.Loss || ra.Accuracy != rb.Accuracy || ra.TrainLoss != rb.TrainLoss {
		t.Fatalf("results differ: %+v vs %+v", ra, rb)
	}
	c.Seed = 2
	d, _, err := Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Weights.Params[0].Data, d.Weights.Params[0].Data) {
		t.Fatal("seeds 1 and 2 gave the same weights")
	}
}

func TestValidate(t *testing.T) {
	for _, bad := range []func(*Config){
		func(c *Config) { c.Task = "nope" },
		func(c *Config) { c.Heads = 3 },
		func(c *Config) { c.Layers = 0 },
		func(c *Config) { c.DModel = -4 },
		func(c *Config) { c.Batch = 0 },
		func(c *Config) { c.Steps = -1 },
		func(c *Config) { c.LR = 0 },
		func(c *Config) { c.LR = math.NaN() },
	} {
		c := Defaults("induction")
		bad(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	c := Defaults("majority")
	c.Steps = 5
	m, res, err := Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := Save(dir, m, &res); err != nil {
		t.Fatal(err)
	}
	// Saving again replaces the checkpoint and leaves no temporary behind.
	if err := Save(dir, m, &res); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Fatalf("save left %d entries beside the checkpoint", len(entries)-1)
	}
	got, gotRes, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Train != m.Train || got.Shape != m.Shape || *gotRes != res {
		t.Fatalf("config round trip: %+v vs %+v", got.Train, m.Train)
	}
	for i, p := range m.Weights.Params {
		if !slices.Equal(p.Data, got.Weights.Params[i].Data) {
			t.Fatalf("%s differs after load", p.Name)
		}
	}
	e1, err := NewEvaluator(m, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	acc, _, err := e1.Accuracy(HeldOut(got), nil)
	if err != nil || acc != res.Accuracy {
		t.Fatalf("loaded model accuracy %v (%v), saved %v", acc, err, res.Accuracy)
	}
}

func TestLoadRejectsBadCheckpoints(t *testing.T) {
	c := Defaults("copy")
	c.Steps = 1
	m, res, err := Run(c, cpu.New(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := Save(dir, m, &res); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
	weights, _ := os.ReadFile(filepath.Join(dir, WeightsFile))
	if _, _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing checkpoint loaded")
	}
	cases := map[string][2][]byte{
		"truncated weights": {cfg, weights[:len(weights)/2]},
		"empty weights":     {cfg, nil},
		"garbage config":    {[]byte("{not json"), weights},
		"other shape":       {[]byte(string(cfg[:len(cfg)-2]) + "\n"), weights},
	}
	for name, c := range cases {
		if _, _, err := Decode(c[0], c[1]); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	// A config that asks for 3 layers while the weights hold 2.
	m3 := *m
	m3.Train.Layers = 3
	m3.Shape.Layers = 3
	dir3 := filepath.Join(t.TempDir(), "run3")
	if err := Save(dir3, &m3, nil); err == nil {
		cfg3, _ := os.ReadFile(filepath.Join(dir3, ConfigFile))
		if _, _, err := Decode(cfg3, weights); err == nil {
			t.Error("weights of 2 layers loaded under a 3-layer config")
		}
	}
}

func FuzzDecode(f *testing.F) {
	c := Defaults("copy")
	c.Steps = 0
	c.DModel, c.DFF, c.Layers = 8, 8, 1
	m, res, err := Run(c, cpu.New(), 0, nil)
	if err != nil {
		f.Fatal(err)
	}
	dir := filepath.Join(f.TempDir(), "run")
	if err := Save(dir, m, &res); err != nil {
		f.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
	weights, _ := os.ReadFile(filepath.Join(dir, WeightsFile))
	f.Add(cfg, weights)
	f.Add(cfg, weights[:20])
	f.Add([]byte("{}"), []byte{})
	f.Fuzz(func(t *testing.T, cfg, weights []byte) {
		m, _, err := Decode(cfg, weights)
		if err == nil && m.Weights.Count() == 0 {
			t.Fatal("decoded a model without weights")
		}
	})
}

// TestGroupCarriesOnPastADivergedModel: a model whose loss stops being
// finite is recorded at that step and stops moving, and the other model
// of its group trains on exactly as it does alone.
func TestGroupCarriesOnPastADivergedModel(t *testing.T) {
	c := Defaults("majority")
	c.Steps, c.DModel, c.DFF = 5, 16, 16
	other := c
	other.Seed = 2
	g, err := NewGroup([]Config{c, other}, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	// Poison model 0's unembedding bias on the device: its loss is NaN.
	g.Models[0].Weights.Get("unembed.bias").Data[0] = float32(math.NaN())
	if err := g.Block().Upload([]*graph.Weights{g.Models[0].Weights, g.Models[1].Weights}); err != nil {
		t.Fatal(err)
	}
	for g.Step < c.Steps {
		if err := g.TrainStep(); err != nil {
			t.Fatal(err)
		}
	}
	d, err := g.Diverged()
	if err != nil || d[0] != 1 || d[1] != 0 {
		t.Fatalf("diverged at %v, %v; want [1 0]", d, err)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	alone, err := NewTrainer(other, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	for alone.Step < c.Steps {
		if _, err := alone.TrainStep(); err != nil {
			t.Fatal(err)
		}
	}
	if err := alone.Sync(); err != nil {
		t.Fatal(err)
	}
	for i, p := range alone.Model.Weights.Params {
		q := g.Models[1].Weights.Params[i]
		for j := range p.Data {
			if math.Float32bits(p.Data[j]) != math.Float32bits(q.Data[j]) {
				t.Fatalf("%s[%d]: %v alone, %v beside a diverged model", p.Name, j, p.Data[j], q.Data[j])
			}
		}
	}
	// The diverged model kept the weights it had before its first step.
	init := graph.InitWeights(g.Models[0].Shape, c.Seed)
	if w := g.Models[0].Weights.Get("tok_emb").Data; w[0] != init.Get("tok_emb").Data[0] {
		t.Errorf("the diverged model moved: %v, initially %v", w[0], init.Get("tok_emb").Data[0])
	}
}
