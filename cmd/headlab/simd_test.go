package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// headlabEnv runs headlab in a child process with extra environment (the
// vector path is chosen once, when the process starts).
func headlabEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSweepHelperProcess$", "--"}, args...)...)
	cmd.Env = append(append(os.Environ(), "HEADLAB_HELPER=1"), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// vectorPaths are the HEADLAB_SIMD paths this CPU runs.
func vectorPaths() []string {
	paths := []string{"go"}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		paths = append(paths, "avx2")
	}
	if cpu.X86.HasAVX512F {
		paths = append(paths, "avx512")
	}
	return paths
}

// TestSIMDPath: HEADLAB_SIMD picks the vector path, train --json and bench
// name it, and a path that does not exist or cannot run here is one line
// and exit 2.
func TestSIMDPath(t *testing.T) {
	paths := vectorPaths()
	for _, p := range paths {
		code, out, errs := headlabEnv(t, []string{"HEADLAB_SIMD=" + p}, "train", "--task", "majority", "--steps", "20", "--d-model", "16", "--d-ff", "16", "--json", "--quiet")
		var rep struct {
			Config struct {
				SIMD string `json:"simd"`
			} `json:"config"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Config.SIMD != p {
			t.Errorf("HEADLAB_SIMD=%s: exit %d, simd %q: %s", p, code, rep.Config.SIMD, errs)
		}
	}
	for _, bad := range []string{"bogus", "neon"} {
		code, out, errs := headlabEnv(t, []string{"HEADLAB_SIMD=" + bad}, "train", "--steps", "1")
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "HEADLAB_SIMD") {
			t.Errorf("HEADLAB_SIMD=%s: exit %d, stdout %q, stderr %q", bad, code, out, errs)
		}
	}
}

// TestPathsAgreeOnATrainingRun: a short default training run on every
// vector path this CPU runs ends with the same accuracy and a held-out
// loss, training loss and history within the tolerance docs/model.md
// states (1e-4 relative over 200 steps); the assembly paths agree bit for
// bit.
func TestPathsAgreeOnATrainingRun(t *testing.T) {
	paths := vectorPaths()
	type run struct {
		Accuracy  float64 `json:"accuracy"`
		Loss      float64 `json:"loss"`
		TrainLoss float64 `json:"train_loss"`
		History   []struct {
			Loss float64 `json:"loss"`
		} `json:"history"`
	}
	runs := map[string]run{}
	for _, p := range paths {
		code, out, errs := headlabEnv(t, []string{"HEADLAB_SIMD=" + p}, "train", "--task", "induction", "--steps", "200", "--record-every", "20", "--json", "--quiet")
		var r run
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.History) == 0 {
			t.Fatalf("HEADLAB_SIMD=%s: exit %d: %s", p, code, errs)
		}
		runs[p] = r
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Max(math.Abs(a), math.Abs(b)) }
	want := runs["go"]
	for p, r := range runs {
		if r.Accuracy != want.Accuracy || !near(r.Loss, want.Loss) || !near(r.TrainLoss, want.TrainLoss) || len(r.History) != len(want.History) {
			t.Fatalf("%s: %+v, go path %+v", p, r, want)
		}
		for i, h := range r.History {
			if !near(h.Loss, want.History[i].Loss) {
				t.Errorf("%s: history[%d] loss %v, go path %v", p, i, h.Loss, want.History[i].Loss)
			}
		}
	}
	if a, b := runs["avx2"], runs["avx512"]; len(paths) == 3 && (a.Loss != b.Loss || a.TrainLoss != b.TrainLoss) {
		t.Errorf("avx2 and avx512 differ: %v/%v against %v/%v", a.Loss, a.TrainLoss, b.Loss, b.TrainLoss)
	}
}
