package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestBenchReportsBothBackends(t *testing.T) {
	code, out, errs := headlab(t, "bench", "--json", "--budget", "2ms", "--steps", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, k := range rep.Kernels {
		count[k.Backend]++
		if k.MicrosPerOp <= 0 || k.GFLOPs <= 0 || k.RatioToCPU <= 0 {
			t.Errorf("%+v", k)
		}
	}
	if count["cpu"] != 18 {
		t.Errorf("%d cpu kernel rows, want 6 kernels x 3 shapes", count["cpu"])
	}
	if rep.GLError != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and the GL backend failed: %s", rep.GLError)
		}
		t.Logf("GL not benchmarked: %s", rep.GLError)
	} else if count["gl"] != 18 {
		t.Errorf("%d gl kernel rows", count["gl"])
	}
	for _, s := range rep.Steps {
		if s.MsPerStep <= 0 || s.StepsPerSec <= 0 {
			t.Errorf("%+v", s)
		}
	}
	if code, _, _ := headlab(t, "bench", "--backends", "tpu"); code != 2 {
		t.Errorf("--backends tpu: exit %d", code)
	}
}

// TestBenchVsPyTorchWithoutTorch: an interpreter that is not there makes
// --vs-pytorch say so (one line) and report headlab alone.
func TestBenchVsPyTorchWithoutTorch(t *testing.T) {
	code, out, errs := headlab(t, "bench", "--vs-pytorch", "--json", "--python", "/nonexistent/python3",
		"--steps", "2", "--rss-steps", "2", "--rounds", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.PyTorch == nil || !strings.Contains(rep.PyTorch.Error, "PyTorch is not installed") {
		t.Fatalf("no 'not installed' error in %+v", rep.PyTorch)
	}
	if !strings.Contains(errs, "PyTorch is not installed") || strings.Count(strings.TrimSpace(errs), "\n") > 3 {
		t.Errorf("stderr: %q", errs)
	}
	if len(rep.Steps) != 2 || rep.Peak == nil || rep.Peak.GFLOPs <= 0 || rep.PyTorch.TrainRSSMB <= 0 {
		t.Errorf("report: %+v", rep)
	}
	for _, s := range rep.Steps {
		if s.MsPerStep <= 0 || s.GFLOPs <= 0 || s.MFLOP <= 0 {
			t.Errorf("%+v", s)
		}
	}
	code, out, _ = headlab(t, "bench", "--vs-pytorch", "--python", "/nonexistent/python3", "--steps", "2", "--rss-steps", "2")
	if code != 0 || !strings.Contains(out, "PyTorch: not installed") {
		t.Errorf("exit %d, text report %q", code, out)
	}
}
