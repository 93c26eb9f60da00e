package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"headlab/tasks"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 4}, 4}, {[]float64{9, 1, 2, 4}, 3}, {[]float64{2, 100, 1, 3, 2}, 2}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median %v = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestCompareStepsPicksFasterBLAS runs CompareSteps against a stand-in
// interpreter whose speed depends on OPENBLAS_CORETYPE: the comparison
// keeps both medians, names the faster BLAS and divides by it, and the
// stand-in sees no OPENBLAS_CORETYPE inherited from the caller on the
// default side.
func TestCompareStepsPicksFasterBLAS(t *testing.T) {
	t.Setenv("OPENBLAS_CORETYPE", "Zen")
	p := standInPython(t, `#!/bin/sh
case "$OPENBLAS_CORETYPE" in
Haswell) ms=10 ;;
"") ms=20 ;;
*) ms=999 ;;
esac
echo "{\"torch\": \"stand-in\", \"ms_per_step\": $ms, \"steps_per_s\": 1}"
`)
	got, err := CompareSteps(p, BenchConfig(8, tasks.NextToken), []int{8}, 2, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := got[0]
	if c.Rounds != 3 || c.PyTorchDefaultMs != 20 || c.PyTorchHaswellMs != 10 || c.FasterBLAS != BLASHaswell || c.PyTorchMsPerStep != 10 {
		t.Fatalf("%+v", c)
	}
	if c.HeadlabMsPerStep <= 0 || c.Ratio != c.HeadlabMsPerStep/10 {
		t.Errorf("ratio %v for headlab %v ms", c.Ratio, c.HeadlabMsPerStep)
	}
}

// TestPyTorchGetsTheShape: the reference script is run with the model's
// shape flags, so that PyTorch builds the model headlab times.
func TestPyTorchGetsTheShape(t *testing.T) {
	p := standInPython(t, `#!/bin/sh
shift
echo "{\"torch\": \"$*\", \"ms_per_step\": 1, \"steps_per_s\": 1}"
`)
	c := BenchConfig(32, tasks.Answers)
	c.Layers, c.Heads, c.DModel, c.DFF, c.SeqLen, c.Vocab, c.NoMLP = 4, 8, 256, 1024, 64, 64, true
	r, err := p.run(context.Background(), BLASDefault, c, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "--loss answers --batch 32 --steps 3 --layers 4 --heads 8 --d-model 256 --d-ff 1024 --seq-len 64 --vocab 64 --no-mlp --answer-rows"
	if r.Torch != want {
		t.Errorf("script flags %q, want %q", r.Torch, want)
	}
}

// standInPython is a PyTorch whose interpreter is script, closed when the
// test ends.
func standInPython(t *testing.T, script string) *PyTorch {
	py := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := NewPyTorch(py)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}
