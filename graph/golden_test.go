package graph

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nlpodyssey/safetensors"

	"headlab/backend/cpu"
	"headlab/kernels"
	"headlab/tasks"
)

// goldenConfig is the model bench/pytorch/golden.py built.
var goldenConfig = Config{Vocab: 16, SeqLen: 16, Arch: Arch{Layers: 2, Heads: 2, DModel: 16, DFF: 32, Positions: true, Causal: true}}

// goldenModels are the golden models, each with the folder of
// testdata/golden its weights and values are in: the default model, and
// an attention-only one (tools/torch_ref.py golden --no-mlp).
var goldenModels = []struct {
	name, dir string
	cfg       Config
}{
	{"mlp", ".", goldenConfig},
	{"no-mlp", "no-mlp", Config{Vocab: 16, SeqLen: 16, Arch: Arch{Layers: 2, Heads: 2, DModel: 16, Positions: true, Causal: true, NoMLP: true}}},
}

func readTensors(t *testing.T, name string) map[string][]float32 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	st, err := safetensors.Deserialize(data)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for _, n := range st.Names() {
		tv, _ := st.Tensor(n)
		raw := tv.Data()
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		out[n] = v
	}
	return out
}

// TestGolden is llm.c's test_gpt2 for headlab: a checked-in model and
// batch, and the loss, logits and every parameter's gradient PyTorch
// computed for them (bench/pytorch/golden.py, float64), under each loss,
// for the default model and an attention-only one (--no-mlp;
// tools/torch_ref.py, on the same batch). One training forward and
// backward pass on the CPU device must match each value within 1e-5
// absolute plus 1e-4 relative.
func TestGolden(t *testing.T) { golden(t, cpu.New()) }

func golden(t *testing.T, dev kernels.Device) {
	var batch struct {
		Tokens, Targets  [][]int
		NextTokenTargets [][]int `json:"next_token_targets"`
	}
	data, err := os.ReadFile(filepath.Join("testdata", "golden", "batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &batch); err != nil {
		t.Fatal(err)
	}
	// PyTorch's next-token targets are tasks.LossTargets' (an
	// independent writing of the rule).
	b := &tasks.Batch{N: len(batch.Tokens), T: goldenConfig.SeqLen}
	for i := range batch.Tokens {
		b.Tokens, b.Targets = append(b.Tokens, batch.Tokens[i]...), append(b.Targets, batch.Targets[i]...)
	}
	nt := make([]int, len(b.Targets))
	tasks.LossTargets(tasks.NextToken, b, nt)
	if want := slices.Concat(batch.NextTokenTargets...); !slices.Equal(nt, want) {
		t.Fatalf("next-token targets %v, PyTorch's %v", nt, want)
	}
	for _, m := range goldenModels {
		for _, loss := range []struct {
			name     string
			expected string
			targets  []int
		}{
			{tasks.Answers, "expected.safetensors", b.Targets},
			{tasks.NextToken, "expected-next-token.safetensors", nt},
		} {
			t.Run(m.name+"/"+loss.name, func(t *testing.T) {
				goldenPass(t, dev, m.cfg, b.Tokens, loss.targets, len(batch.Tokens), filepath.Join(m.dir, "model.safetensors"), filepath.Join(m.dir, loss.expected))
			})
		}
	}
}

// goldenPass runs one training pass of the golden model of shape cfg
// and weights model on tokens and targets and holds it to PyTorch's
// values in the file expected.
func goldenPass(t *testing.T, dev kernels.Device, cfg Config, tokens, targets []int, batch int, model, expected string) {
	weights, want := readTensors(t, model), readTensors(t, expected)
	if len(weights) != len(ParamShapes(cfg)) {
		t.Fatalf("%s: %d tensors, the model has %d", model, len(weights), len(ParamShapes(cfg)))
	}
	w := NewWeights(cfg)
	for _, p := range w.Params {
		v, ok := weights[p.Name]
		if !ok || len(v) != len(p.Data) {
			t.Fatalf("model.safetensors: %s has %d values, want %d", p.Name, len(v), len(p.Data))
		}
		copy(p.Data, v)
	}
	block, err := BlockOf(dev, cfg, []*Weights{w})
	if err != nil {
		t.Fatal(err)
	}
	defer block.Free()
	net, err := Build(block, batch, true)
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	if err := net.SetInputs(0, tokens, targets); err != nil {
		t.Fatal(err)
	}
	if err := net.Run(); err != nil {
		t.Fatal(err)
	}
	loss, err := net.Losses()
	if err != nil {
		t.Fatal(err)
	}
	logits, err := net.Logits()
	if err != nil {
		t.Fatal(err)
	}
	grads := make([]float32, block.P)
	if err := dev.Download(grads, net.Grads(), 1); err != nil {
		t.Fatal(err)
	}
	bad := 0
	compare := func(what string, got, want []float32) {
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); !(d <= 1e-5+1e-4*math.Abs(float64(want[i]))) {
				if bad++; bad <= 10 {
					t.Errorf("%s[%d] = %.8g, PyTorch %.8g (off by %.3g)", what, i, got[i], want[i], d)
				}
			}
		}
	}
	compare("loss", loss, want["loss"])
	compare("logits", logits, want["logits"])
	at := grads
	for _, p := range w.Params {
		n := len(p.Data)
		compare(fmt.Sprintf("grad %s", p.Name), at[:n], want["grad."+p.Name])
		at = at[n:]
	}
	if bad > 0 {
		t.Fatalf("%d values differ from PyTorch's", bad)
	}
}
