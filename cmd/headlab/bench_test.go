package main

import (
	"encoding/json"
	"os"
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
