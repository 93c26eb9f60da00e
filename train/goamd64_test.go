package train

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	xcpu "golang.org/x/sys/cpu"
)

// TestSameBitsOnEveryGOAMD64 builds testdata/goamd64 (50 steps of the
// default induction run on the CPU device, printing every loss's bits and a
// SHA-256 of every weight's) with GOAMD64=v1 and with GOAMD64=v3, runs each
// on all CPUs and on one, and wants the same bytes every time: a v3 build
// may fuse a*b+c into one rounding unless the code converts the product
// explicitly, and the CPU device promises separately rounded arithmetic.
func TestSameBitsOnEveryGOAMD64(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("GOAMD64 is an amd64 setting; this is %s", runtime.GOARCH)
	}
	// A v3 binary exits at start-up on a CPU without these (and a few more
	// that every CPU with them has).
	if !(xcpu.X86.HasAVX2 && xcpu.X86.HasFMA && xcpu.X86.HasBMI1 && xcpu.X86.HasBMI2 && xcpu.X86.HasOSXSAVE) {
		if os.Getenv("CI") == "" {
			t.Skip("this CPU cannot run GOAMD64=v3 binaries (no AVX2, FMA or BMI2)")
		}
		t.Fatal("CI is set, but this CPU cannot run GOAMD64=v3 binaries (no AVX2, FMA or BMI2)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to build testdata/goamd64: %v", err)
	}
	dir := t.TempDir()
	type run struct{ level, procs string }
	runs := []run{{"v1", ""}, {"v1", "1"}, {"v3", ""}, {"v3", "1"}}
	outs := make([][]byte, len(runs))
	for _, level := range []string{"v1", "v3"} {
		bin := filepath.Join(dir, "goamd64-"+level)
		cmd := exec.CommandContext(t.Context(), goTool, "build", "-o", bin, "./testdata/goamd64")
		cmd.Env = append(os.Environ(), "GOAMD64="+level)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GOAMD64=%s go build ./testdata/goamd64: %v\n%s", level, err, out)
		}
	}
	for i, r := range runs {
		cmd := exec.CommandContext(t.Context(), filepath.Join(dir, "goamd64-"+r.level), "50")
		cmd.Env = os.Environ()
		if r.procs != "" {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+r.procs)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOAMD64=%s GOMAXPROCS=%q run: %v\n%s", r.level, r.procs, err, stderr.Bytes())
		}
		if n := bytes.Count(out, []byte("\nstep ")) + 1; !bytes.HasPrefix(out, []byte("step 1 ")) || n != 50 || !bytes.Contains(out, []byte("\nweights ")) {
			t.Fatalf("GOAMD64=%s GOMAXPROCS=%q: unexpected output (%d step lines):\n%s", r.level, r.procs, n, out)
		}
		outs[i] = out
	}
	for i := 1; i < len(runs); i++ {
		if !bytes.Equal(outs[i], outs[0]) {
			t.Errorf("GOAMD64=%s GOMAXPROCS=%q differs from GOAMD64=%s GOMAXPROCS=%q: %s",
				runs[i].level, runs[i].procs, runs[0].level, runs[0].procs, firstDiff(outs[0], outs[i]))
		}
	}
}

// firstDiff names the first line where a and b differ, and how many do.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	first, n := -1, 0
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if first < 0 {
		return "no line differs"
	}
	at := func(l []string) string {
		if first < len(l) {
			return l[first]
		}
		return "(end of output)"
	}
	return fmt.Sprintf("%d lines differ; the first, line %d:\n  %s\n  %s", n, first+1, at(la), at(lb))
}
