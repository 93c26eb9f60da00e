package main

import (
	"encoding/json"
	"errors"
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

// TestSIMDPath: HEADLAB_SIMD picks the vector path, train --json and bench
// name it, and a path that does not exist or cannot run here is one line
// and exit 2.
func TestSIMDPath(t *testing.T) {
	paths := []string{"go"}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		paths = append(paths, "avx2")
	}
	if cpu.X86.HasAVX512F {
		paths = append(paths, "avx512")
	}
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
