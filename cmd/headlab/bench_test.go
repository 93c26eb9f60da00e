package main

import (
	"encoding/json"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"headlab/backend/cpu"
	"headlab/bench"
	"headlab/graph"
	"headlab/tasks"
	"headlab/train"
)

// groupKeys are the keys of one row of the groups curve, exactly.
var groupKeys = []string{"backend", "dispatches_per_step", "gb_per_s", "gflop_per_s", "group",
	"model_bytes_per_seed_step", "model_flop_per_seed_step", "model_h200_seed_steps_per_s",
	"ms_per_step", "readback_bytes_per_step", "seed_steps_per_s", "upload_bytes_per_step"}

// defaultKernels is the kernel launches of one Run of the default
// model's training Net at batch 64, counted on a Net built here.
func defaultKernels(t *testing.T) int {
	t.Helper()
	c := train.Defaults("induction")
	tk, _ := tasks.New(c.Task)
	b, err := graph.NewBlock(cpu.New(), c.Model(tk), 1)
	if err != nil {
		t.Fatal(err)
	}
	n, err := graph.BuildTrain(b, 64, tasks.LossPositions(tk, c.Loss))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	_, k := n.Traffic()
	return k
}

// groupRows decodes the JSON report's curve, checking every row's keys,
// and the figures every backend must meet: nothing read back, each model's
// tokens (64 x 16 float32s), and under the default next-token loss the
// targets and the answers of every row (64 x 16 each), uploaded, positive
// rates that agree with ms per step.
func groupRows(t *testing.T, out string) (map[string]json.RawMessage, []map[string]float64, []string) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var raw []map[string]any
	if err := json.Unmarshal(top["steps"], &raw); err != nil {
		t.Fatalf("steps: %v", err)
	}
	var rows []map[string]float64
	var backends []string
	for _, r := range raw {
		var keys []string
		row := map[string]float64{}
		for k, v := range r {
			keys = append(keys, k)
			if f, ok := v.(float64); ok {
				row[k] = f
			}
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == "dispatches" }) // with HEADLAB_GL_PROFILE
		slices.Sort(keys)
		if !slices.Equal(keys, groupKeys) {
			t.Errorf("row keys %v, want %v", keys, groupKeys)
		}
		S := row["group"]
		if row["readback_bytes_per_step"] != 0 {
			t.Errorf("%v: read back %v bytes per step", r, row["readback_bytes_per_step"])
		}
		if want := (64*16 + 2*64*16) * 4 * S; row["upload_bytes_per_step"] != want {
			t.Errorf("%v: uploaded %v bytes per step, want %v", r, row["upload_bytes_per_step"], want)
		}
		for _, k := range []string{"seed_steps_per_s", "ms_per_step", "gflop_per_s", "gb_per_s", "dispatches_per_step"} {
			if !(row[k] > 0) {
				t.Errorf("%v: %s not positive", r, k)
			}
		}
		if got := row["seed_steps_per_s"] * row["ms_per_step"] / 1000; math.Abs(got-S) > 1e-6*S {
			t.Errorf("%v: seed-steps/s x s/step = %v, want S", r, got)
		}
		// 120.6 MFLOP per seed-step at batch 64 on every row (bench.StepFlops).
		if f := row["gflop_per_s"] * 1e9 / row["seed_steps_per_s"]; f < 120e6 || f > 121e6 {
			t.Errorf("%v: %v FLOP per seed-step", r, f)
		}
		rows = append(rows, row)
		backends = append(backends, r["backend"].(string))
	}
	return top, rows, backends
}

func TestBenchGroupsCPUJSON(t *testing.T) {
	code, out, errs := headlab(t, "bench", "--groups", "1,2", "--backends", "cpu", "--json", "--steps", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	top, rows, backends := groupRows(t, out)
	if len(rows) != 2 || rows[0]["group"] != 1 || rows[1]["group"] != 2 || backends[0] != "cpu" || backends[1] != "cpu" {
		t.Fatalf("rows %v %v", backends, rows)
	}
	// The CPU's figures: min(S, cores) groups, each the Net's kernels,
	// MarkDiverged and Adam per step (the device counts kernel calls;
	// uploads and downloads are not dispatches).
	k := defaultKernels(t)
	for _, r := range rows {
		groups := min(int(r["group"]), runtime.GOMAXPROCS(0))
		if want := float64(groups * (k + 2)); r["dispatches_per_step"] != want {
			t.Errorf("S=%v: %v dispatches per step, want %d x (%d + 2)", r["group"], r["dispatches_per_step"], groups, k)
		}
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Batch != 64 || rep.CPUWorkers != runtime.GOMAXPROCS(0) || rep.GPUPaysFrom != nil || rep.GLError != "" {
		t.Errorf("report: batch %d, workers %d, gpu from %v, gl error %q", rep.Batch, rep.CPUWorkers, rep.GPUPaysFrom, rep.GLError)
	}
	if _, ok := top["gpu_pays_from"]; ok {
		t.Errorf("gpu_pays_from without gl")
	}
	// The other parts are still there: 6 kernels x 3 shapes, and one
	// model's steps at batch 32 and 64.
	if len(rep.Kernels) != 18 || len(rep.TrainSteps) != 2 {
		t.Errorf("%d kernel rows, %d train-step rows", len(rep.Kernels), len(rep.TrainSteps))
	}
	for _, k := range rep.Kernels {
		if k.Backend != "cpu" || k.MicrosPerOp <= 0 || k.GFLOPs <= 0 || k.RatioToCPU <= 0 {
			t.Errorf("%+v", k)
		}
	}
	for _, s := range rep.TrainSteps {
		if s.Backend != "cpu" || s.MsPerStep <= 0 || s.StepsPerSec <= 0 {
			t.Errorf("%+v", s)
		}
	}
}

// requireGL skips a GL command test when exit status 2 says there is no
// context, unless CI is set (then it fails).
func requireGL(t *testing.T, code int, errs string) {
	t.Helper()
	if code == 2 && strings.Contains(errs, "--backends gl") {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and GL failed: %s", errs)
		}
		t.Skipf("no GL context: %s", errs)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestBenchGroupsGLJSON(t *testing.T) {
	code, out, errs := headlab(t, "bench", "--backends", "gl", "--groups", "1,2", "--steps", "1", "--json", "--budget", "1ms", "--dispatch-group", "2")
	requireGL(t, code, errs)
	_, rows, backends := groupRows(t, out)
	if len(rows) != 2 || backends[0] != "gl" || backends[1] != "gl" || rows[0]["group"] != 1 || rows[1]["group"] != 2 {
		t.Fatalf("rows %v %v", backends, rows)
	}
	// One group of S on one device: the same dispatches whatever S, the
	// cost model's.
	calls, err := bench.StepCalls(bench.BenchConfig(64, tasks.NextToken))
	if err != nil {
		t.Fatal(err)
	}
	m, err := bench.ModelStep(calls, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := rows[0]["dispatches_per_step"]; d != rows[1]["dispatches_per_step"] || d != float64(len(m.Dispatches)) {
		t.Errorf("dispatches per step %v at S=1, %v at S=2, the model's %d", d, rows[1]["dispatches_per_step"], len(m.Dispatches))
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Renderer == "" || rep.GLContext == "" || len(rep.Kernels) != 18 || len(rep.TrainSteps) != 2 {
		t.Errorf("renderer %q, context %q, %d kernel rows, %d step rows", rep.Renderer, rep.GLContext, len(rep.Kernels), len(rep.TrainSteps))
	}
	for _, k := range rep.Kernels {
		if k.Backend != "gl" || k.MicrosPerOp <= 0 {
			t.Errorf("%+v", k)
		}
	}
	// The kernels part also times every dispatch of one step of
	// --dispatch-group models; the groups part does not without
	// HEADLAB_GL_PROFILE.
	if rep.DispatchGroup != 2 || float64(len(rep.Dispatches)) != rows[0]["dispatches_per_step"] {
		t.Errorf("%d dispatches timed for a group of %d, %v per step", len(rep.Dispatches), rep.DispatchGroup, rows[0]["dispatches_per_step"])
	}
	for _, d := range rep.Dispatches {
		if d.Micros <= 0 || d.Bytes <= 0 {
			t.Errorf("%+v", d)
		}
	}
	for _, s := range rep.Steps {
		if len(s.Dispatches) != 0 {
			t.Errorf("S=%d: dispatches without HEADLAB_GL_PROFILE", s.Group)
		}
	}
}

// TestBenchProfile: with HEADLAB_GL_PROFILE=1 every gl row carries every
// dispatch of a step, timed, with the model's FLOPs and bytes, in the
// JSON and as a table; the cpu backend says in one line that it runs
// untimed, and the run goes on.
func TestBenchProfile(t *testing.T) {
	t.Setenv("HEADLAB_GL_PROFILE", "1")
	code, out, errs := headlab(t, "bench", "--parts", "groups", "--groups", "2", "--backends", "cpu", "--steps", "1")
	if code != 0 || strings.Count(errs, "HEADLAB_GL_PROFILE") != 1 || !strings.Contains(out, "seed-steps/s") {
		t.Errorf("cpu: exit %d, stderr %q", code, errs)
	}
	code, out, errs = headlab(t, "bench", "--parts", "groups", "--groups", "2", "--backends", "gl", "--steps", "1", "--json")
	requireGL(t, code, errs)
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 1 || len(rep.Steps[0].Dispatches) == 0 || float64(len(rep.Steps[0].Dispatches)) != rep.Steps[0].DispatchesPerStep {
		t.Fatalf("%+v", rep.Steps)
	}
	var top struct {
		Steps []struct {
			Dispatches []map[string]any `json:"dispatches"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kernel", "program", "workgroups", "group_size", "invocations", "us", "model_flop", "model_bytes", "model_h200_us"} {
		if _, ok := top.Steps[0].Dispatches[0][k]; !ok {
			t.Errorf("no %q in a dispatch", k)
		}
	}
	code, out, errs = headlab(t, "bench", "--parts", "groups", "--groups", "2", "--backends", "gl", "--steps", "1")
	requireGL(t, code, errs)
	if !strings.Contains(out, "every dispatch of one more gl step of 2 models") || !strings.Contains(out, "H200 us") {
		t.Errorf("no profile table in\n%s", out)
	}
}

// TestBenchModel: the model part needs no device and prints the step's
// dispatches and the predicted H200 rate at each S.
func TestBenchModel(t *testing.T) {
	code, out, errs := headlab(t, "bench", "--parts", "model", "--groups", "1,1024", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Model) != 2 || rep.Model[1].Group != 1024 || len(rep.Model[1].Dispatches) != len(rep.Model[0].Dispatches) ||
		rep.Model[1].SeedStepsPerS[0] < rep.Model[1].SeedStepsPerS[1] || rep.Model[1].SeedStepsPerS[1] < 10*rep.Model[0].SeedStepsPerS[1] ||
		rep.Renderer != "" || len(rep.Steps) != 0 {
		t.Errorf("%+v", rep.Model)
	}
	code, out, _ = headlab(t, "bench", "--parts", "model", "--groups", "1024")
	if code != 0 || !strings.Contains(out, "the cost model's gl training step of 1024 models") || !strings.Contains(out, "seed-steps/s") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if code, _, errs := headlab(t, "bench", "--dispatch-group", "0"); code != 2 || strings.Count(errs, "\n") != 1 {
		t.Errorf("--dispatch-group 0: exit %d, %q", code, errs)
	}
}

// TestBenchBothText: the text report has both curves and one line on
// whether, and from which S, GL beat the CPU.
func TestBenchBothText(t *testing.T) {
	code, out, errs := headlab(t, "bench", "--backends", "cpu,gl", "--groups", "1,2", "--steps", "1", "--parts", "groups")
	requireGL(t, code, errs)
	for _, want := range []string{"GL renderer: ", "seed-steps/s", "dispatches/step", "readback B/step"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	lines := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 9 && (f[0] == "cpu" || f[0] == "gl") && (f[1] == "1" || f[1] == "2") {
			lines++
		}
	}
	if lines != 4 {
		t.Errorf("%d curve rows, want 4:\n%s", lines, out)
	}
	if n := strings.Count(out, "gl beats the cpu from S = ") + strings.Count(out, "gl never beat the cpu"); n != 1 {
		t.Errorf("%d verdict lines:\n%s", n, out)
	}
	if strings.Contains(out, "kernel") || strings.Contains(out, "allocs/step") {
		t.Errorf("--parts groups printed other parts:\n%s", out)
	}
}

func TestBenchBadInput(t *testing.T) {
	for name, args := range map[string][]string{
		"zero group":         {"--groups", "0"},
		"not a number":       {"--groups", "x"},
		"negative group":     {"--groups", "-4"},
		"empty item":         {"--groups", "1,,2"},
		"repeated group":     {"--groups", "2,2"},
		"unknown backend":    {"--backends", "tpu"},
		"one unknown":        {"--backends", "cpu,tpu"},
		"unknown part":       {"--parts", "flops"},
		"negative steps":     {"--steps", "-1"},
		"zero batch":         {"--batch", "0"},
		"negative max-step":  {"--max-step", "-1s"},
		"arguments":          {"extra"},
		"steps not a number": {"--steps", "many"},
	} {
		code, out, errs := headlab(t, append([]string{"bench"}, args...)...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.HasPrefix(errs, "headlab: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errs)
		}
	}
	// GL asked for when no context can be made (here: an unknown kind of
	// context, which fails before any driver is touched): one line, exit
	// 2; with all, one line and the CPU alone.
	t.Setenv("HEADLAB_GL_CONTEXT", "no-such-context")
	code, out, errs := headlab(t, "bench", "--backends", "gl", "--groups", "1", "--parts", "groups")
	if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.HasPrefix(errs, "headlab: --backends gl: ") {
		t.Errorf("gl without a context: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = headlab(t, "bench", "--groups", "1", "--parts", "groups", "--steps", "1", "--json")
	if code != 0 {
		t.Fatalf("all without a context: exit %d: %s", code, errs)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.GLError == "" || len(rep.Steps) != 1 || rep.Steps[0].Backend != "cpu" || strings.Count(errs, "benchmarking the cpu backend only") != 1 {
		t.Errorf("all without a context: %+v, stderr %q", rep, errs)
	}
}

// TestBenchVsPyTorchWithoutTorch: an interpreter that is not there makes
// bench vs-pytorch say so (one line) and report headlab alone.
func TestBenchVsPyTorchWithoutTorch(t *testing.T) {
	code, out, errs := headlab(t, "bench", "vs-pytorch", "--json", "--python", "/nonexistent/python3",
		"--steps", "2", "--rss-steps", "2", "--rounds", "1", "--callgrind=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.PyTorch == nil || !strings.Contains(rep.PyTorch.Error, "PyTorch is not installed") {
		t.Fatalf("no 'not installed' error in %+v", rep.PyTorch)
	}
	if !strings.Contains(errs, "PyTorch is not installed") || strings.Count(strings.TrimSpace(errs), "\n") > 3 {
		t.Errorf("stderr: %q", errs)
	}
	if len(rep.TrainSteps) != 2 || rep.Peak == nil || rep.Peak.GFLOPs <= 0 || rep.PyTorch.TrainRSSMB <= 0 || len(rep.Steps) != 0 {
		t.Errorf("report: %+v", rep)
	}
	for _, s := range rep.TrainSteps {
		if s.MsPerStep <= 0 || s.GFLOPs <= 0 || s.MFLOP <= 0 {
			t.Errorf("%+v", s)
		}
	}
	code, out, _ = headlab(t, "bench", "vs-pytorch", "--python", "/nonexistent/python3", "--steps", "2", "--rss-steps", "2", "--callgrind=false")
	if code != 0 || !strings.Contains(out, "PyTorch: not installed") {
		t.Errorf("exit %d, text report %q", code, out)
	}
}
