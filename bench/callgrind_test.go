package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"headlab/tasks"
	"headlab/train"
)

// TestCountInstructions builds headlab and counts a step's instructions
// under callgrind (few steps, to keep it short): the count is of a path
// valgrind runs (never avx512) and plausible: at least the step's FLOPs
// over 16 (an AVX2 fused multiply-add does 16), at most 100 instructions
// per FLOP.
func TestCountInstructions(t *testing.T) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set, but valgrind is not installed (scripts/setup.sh installs it)")
		}
		t.Skip("valgrind is not installed")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to build headlab: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "headlab")
	if out, err := exec.CommandContext(t.Context(), goTool, "build", "-o", bin, "headlab/cmd/headlab").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c, err := CountInstructions(bin, tasks.NextToken, 32, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", c)
	if c.SIMD == "" || c.SIMD == "avx512" || c.Batch != 32 {
		t.Errorf("count %+v: want the avx2 or go path at batch 32", c)
	}
	c0 := train.Defaults("induction")
	tk, err := tasks.New(c0.Task)
	if err != nil {
		t.Fatal(err)
	}
	flops := StepFlops(c0.Model(tk), 32, tasks.LossPositions(tk, c0.Loss))
	if c.PerStep < flops/16 || c.PerStep > 100*flops {
		t.Errorf("%.3g instructions per step for %.3g FLOPs", c.PerStep, flops)
	}
}
