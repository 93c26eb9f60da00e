package bench

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"headlab/backend/cpu"
	"headlab/kernels"
	"headlab/tasks"
)

// TestParseFlags: bench's list flags read lists and refuse, in one line
// naming the flag, empty items, repeats, unknown names and sizes out of
// range.
func TestParseFlags(t *testing.T) {
	if got, err := ParseSizes("groups", "group size", "1, 4,16", 64); err != nil || !slices.Equal(got, []int{1, 4, 16}) {
		t.Errorf("ParseSizes: %v %v", got, err)
	}
	if names, optional, err := ParseBackends("all"); err != nil || !optional || !slices.Equal(names, []string{"cpu", "gl"}) {
		t.Errorf("all: %v %v %v", names, optional, err)
	}
	if names, optional, err := ParseBackends("gl"); err != nil || optional || !slices.Equal(names, []string{"gl"}) {
		t.Errorf("gl: %v %v %v", names, optional, err)
	}
	if parts, err := ParseParts("all"); err != nil || len(parts) != len(Parts) {
		t.Errorf("all parts: %v %v", parts, err)
	}
	if parts, err := ParseParts("model,steps"); err != nil || len(parts) != 2 || !parts["model"] || !parts["steps"] {
		t.Errorf("model,steps: %v %v", parts, err)
	}
	for _, c := range []struct {
		err  func() error
		want string
	}{
		{func() error { _, err := ParseList("parts", "model,,steps"); return err }, `--parts "model,,steps": an empty item`},
		{func() error { _, err := ParseList("groups", "1,1"); return err }, `--groups "1,1": 1 is listed twice`},
		{func() error { _, err := ParseSizes("batches", "batch", "0", 4096); return err }, `--batches "0": "0" is not a batch in 1..4096`},
		{func() error { _, err := ParseSizes("batches", "batch", "5000", 4096); return err }, `"5000" is not a batch in 1..4096`},
		{func() error { _, _, err := ParseBackends("cpu,tpu"); return err }, `unknown backend "tpu" in --backends "cpu,tpu"`},
		{func() error { _, err := ParseParts("flops"); return err }, `unknown part "flops" in --parts "flops" (want all, or a list of kernels, steps, groups, model)`},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// tinyOptions are a run of the steps and model parts of a small model on
// the CPU, one timed step each.
func tinyOptions(log *bytes.Buffer, open func(string) (kernels.Device, func(), error)) Options {
	m := BenchConfig(8, tasks.NextToken)
	m.Layers, m.DModel, m.DFF = 1, 16, 32
	return Options{Backends: []string{"cpu", "gl"}, GLOptional: true, Parts: map[string]bool{"steps": true, "model": true},
		Groups: []int{1, 4}, Batch: 8, Loss: tasks.NextToken, StepBatches: []int{4, 8}, Timing: Timing{Steps: 1},
		Model: m.Sized(), Open: open, Log: log}
}

// TestRunParts: Run measures the parts asked for on each backend that
// opens, goes on without one that returns a SkipError (saying why, on
// the log and in the report), and stops at any other error.
func TestRunParts(t *testing.T) {
	var log bytes.Buffer
	opened := map[string]int{}
	open := func(name string) (kernels.Device, func(), error) {
		opened[name]++
		if name == "gl" {
			return nil, nil, &SkipError{Reason: "no context"}
		}
		return cpu.New(), func() {}, nil
	}
	rep, err := Run(tinyOptions(&log, open))
	if err != nil {
		t.Fatal(err)
	}
	if rep.GLError != "no context" || !strings.Contains(log.String(), "headlab: benchmarking the cpu backend only: no context\n") {
		t.Errorf("GLError %q, log:\n%s", rep.GLError, log.String())
	}
	if len(rep.TrainSteps) != 2 || rep.TrainSteps[0].Batch != 4 || rep.TrainSteps[1].Batch != 8 || len(rep.Steps) != 0 || len(rep.Kernels) != 0 {
		t.Errorf("steps part: %+v", rep.TrainSteps)
	}
	if len(rep.Model) != 2 || rep.Model[1].Group != 4 || rep.ModelBatch != 8 || rep.Shape.DModel != 16 || rep.Loss != tasks.NextToken {
		t.Errorf("model part: %+v", rep.Model)
	}
	if opened["cpu"] != 1 || opened["gl"] != 1 {
		t.Errorf("opened %v", opened)
	}
	for _, line := range []string{"timing training steps on cpu at batch 4...", "recording one training step of the 1 x "} {
		if !strings.Contains(log.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, log.String())
		}
	}

	// The model part alone opens no device.
	o := tinyOptions(&log, func(string) (kernels.Device, func(), error) { t.Fatal("opened a device"); return nil, nil, nil })
	o.Parts = map[string]bool{"model": true}
	if rep, err := Run(o); err != nil || len(rep.Model) != 2 || len(rep.TrainSteps) != 0 {
		t.Errorf("model alone: %v, %+v", err, rep)
	}

	// Any other error stops the run, the devices opened released.
	released := 0
	bad := errors.New("--backends gl: no such device")
	o = tinyOptions(&log, func(name string) (kernels.Device, func(), error) {
		if name == "gl" {
			return nil, nil, bad
		}
		return cpu.New(), func() { released++ }, nil
	})
	if _, err := Run(o); err != bad || released != 1 {
		t.Errorf("got %v, %d released", err, released)
	}
}

// TestRunVsPyTorchWithoutTorch: without PyTorch, vs-pytorch times
// headlab alone at each batch, says so once, and reports the memory and
// the sgemm peak; --callgrind on another shape counts nothing and says
// why.
func TestRunVsPyTorchWithoutTorch(t *testing.T) {
	var log bytes.Buffer
	m := BenchConfig(32, tasks.NextToken)
	m.Layers = 1
	rep, err := RunVsPyTorch(VsOptions{Python: "/nonexistent/python3", Steps: 1, Rounds: 1, Workers: 1, RSSSteps: 2,
		Batches: []int{4, 8}, Window: time.Second, Callgrind: true, Loss: tasks.NextToken, Model: m.Sized(), Dev: cpu.New(), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	vs := rep.PyTorch
	if vs == nil || !strings.Contains(vs.Error, "PyTorch is not installed") || vs.TrainRSSMB <= 0 || rep.Peak == nil || rep.Peak.GFLOPs <= 0 {
		t.Fatalf("report: %+v %+v", rep, vs)
	}
	if len(rep.TrainSteps) != 2 || rep.TrainSteps[0].Batch != 4 || rep.TrainSteps[1].Batch != 8 || vs.Steps != nil || vs.Sweep != nil {
		t.Errorf("steps: %+v", rep.TrainSteps)
	}
	if vs.Instructions != nil || vs.InstructionsError != "instructions are counted for the default model only" || vs.Shape.Layers != 1 {
		t.Errorf("instructions: %q, shape %+v", vs.InstructionsError, vs.Shape)
	}
	if got := log.String(); strings.Count(got, "PyTorch is not installed") != 1 || !strings.Contains(got, "one default training run of 2 steps") ||
		!strings.Contains(got, "headlab: no instruction counts: the model flags ask for another shape") {
		t.Errorf("log:\n%s", got)
	}
}
