package gl

import (
	"math"
	"slices"
	"sync"
	"testing"

	"headlab/backend/cpu"
	"headlab/graph"
	"headlab/internal/faultdev"
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

// TestDivergenceMatchesCPU: a model whose weights turn non-finite mid-run
// is marked failed at the same step on GL as on the CPU, and the models
// beside it in its group are not: with an infinite gradient at Adam's
// second step (internal/faultdev: NaN in one token's embedding), and with
// NaN in one weight of the unembedding after the second step. The second
// makes one column of every row's logits NaN, which reaches the loss only
// through the row's maximum and exponentials, where a max that drops NaN
// would give a finite loss: so also on a device whose GLSL max drops NaN
// as NVIDIA's does (NV_MAX).
func TestDivergenceMatchesCPU(t *testing.T) {
	g := needGL(t)
	nv := nvMaxDevice(t)
	const steps, sick = 6, 1
	for _, task := range []string{"induction", "majority"} {
		c := train.Defaults(task)
		c.Steps, c.Batch = steps, 8
		cs := make([]train.Config, 3)
		for i := range cs {
			cs[i] = c
			cs[i].Seed = uint64(i + 1)
		}
		for _, fault := range []string{"gradient", "unembedding"} {
			run := func(dev kernels.Device) []int {
				if fault == "gradient" {
					dev = &faultdev.Device{Device: dev, Seed: sick, At: 2}
				}
				grp, err := train.NewGroup(cs, dev)
				if err != nil {
					t.Fatal(err)
				}
				defer grp.Close()
				for k := range steps {
					if err := grp.TrainStep(); err != nil {
						t.Fatal(err)
					}
					if fault == "unembedding" && k == 1 {
						poisonWeight(t, dev, grp.Block(), "unembed.weight", sick)
					}
				}
				d, err := grp.Diverged()
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			want := run(cpu.New())
			if want[0] != 0 || want[sick] == 0 || want[2] != 0 {
				t.Fatalf("%s, %s: the CPU marks %v failed; want model %d alone", task, fault, want, sick)
			}
			for _, dev := range []struct {
				name string
				d    *Device
			}{{"gl", g}, {"gl with NVIDIA's max", nv}} {
				got := run(dev.d)
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s, %s: model %d failed at step %d on %s, %d on the CPU", task, fault, i, got[i], dev.name, want[i])
					}
				}
			}
		}
	}
}

// poisonWeight sets the second weight of parameter name of model s to NaN.
func poisonWeight(t *testing.T, dev kernels.Device, b *graph.Block, name string, s int) {
	t.Helper()
	i := slices.IndexFunc(graph.ParamShapes(b.Config), func(p graph.Param) bool { return p.Name == name })
	w := b.Param(i)
	host := make([]float32, b.S*w.Len)
	if err := dev.Download(host, w, b.S); err != nil {
		t.Fatal(err)
	}
	host[s*w.Len+1] = float32(math.NaN())
	if err := dev.Upload(w, b.S, host); err != nil {
		t.Fatal(err)
	}
}

// nvMax is a second device whose kernels' GLSL max drops NaN, as NVIDIA's
// does (NV_MAX in common.glsl), made once; TestMain closes it.
var (
	nvOnce sync.Once
	nvDev  *Device
	nvErr  error
)

func nvMaxDevice(t *testing.T) *Device {
	t.Helper()
	nvOnce.Do(func() { nvDev, nvErr = New(Options{defines: "#define NV_MAX\n"}) })
	if nvErr != nil {
		t.Fatal(nvErr)
	}
	return nvDev
}

// TestNonFiniteUnderNVIDIAMax: every kernel fed NaN and infinities gives
// the CPU's results also where GLSL's max drops NaN.
func TestNonFiniteUnderNVIDIAMax(t *testing.T) {
	needGL(t)
	nv := nvMaxDevice(t)
	c := cpu.New()
	for _, kc := range nonFiniteCases() {
		t.Run(kc.name, func(t *testing.T) {
			ids := []int{0, 1, 2}
			want := kc.runOn(t, c, ids, dense)
			got := kc.runOn(t, nv, ids, dense)
			for i, what := range kc.outNames(dense) {
				compare(t, kc.kernel, kc.name+" "+what, got[i], want[i])
			}
		})
	}
}
