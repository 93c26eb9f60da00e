package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"headlab/backend"
	"headlab/sweep"
)

// TestGLSweepAgreesWithCPU runs the same sweeps on both backends and
// compares them as docs/model.md says whole runs compare: each seed's
// held-out accuracy within 1 point for at least 90% of seeds, and each
// layer the same multiset of confidently labelled heads. The causal
// measures are left out (--measure none): what is compared needs only the
// zero-ablation table, and the measures' GL agreement has tests of its own.
// Four seeds of 200 steps: the rule's 90% asks every one of them to
// agree, as it did of six and of eight (3 of 4 is under 90%), at under
// half the llvmpipe time of six seeds of 300 steps (the longest test of
// the suite before).
func TestGLSweepAgreesWithCPU(t *testing.T) {
	needGL(t)
	for _, task := range [][]string{{"--task", "induction"}, {"--task", "reverse", "--no-positions"}} {
		t.Run(task[1], func(t *testing.T) {
			dir := t.TempDir()
			recs := map[string][]sweep.Record{}
			for _, be := range []string{"cpu", "gl"} {
				db := filepath.Join(dir, be+".db")
				argv := append([]string{"sweep", "--backend", be, "--seeds", "1-4", "--steps", "200", "--db", db, "--quiet", "--measure", "none"}, task...)
				if code, _, errs := headlab(t, argv...); code != 0 {
					t.Fatalf("%s sweep: exit %d: %s", be, code, errs)
				}
				recs[be] = readRecords(t, db)
			}
			cpu, gl := recs["cpu"], recs["gl"]
			if len(cpu) != 4 || len(gl) != 4 {
				t.Fatalf("%d cpu and %d gl runs, want 4 each", len(cpu), len(gl))
			}
			for i := range cpu {
				c, g := cpu[i], gl[i]
				if c.ID() != g.ID() || g.Backend != "gl" || g.Group != 4 || g.Renderer == "" || c.Backend != "cpu" {
					t.Fatalf("row %d: %v on %s (group %d, renderer %q) against %v on %s", i, g.ID(), g.Backend, g.Group, g.Renderer, c.ID(), c.Backend)
				}
			}
			// What report --against checks, on the command's own output.
			code, out, errs := headlab(t, "report", "--db", filepath.Join(dir, "gl.db"), "--against", filepath.Join(dir, "cpu.db"), "--json")
			var rep sweepReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("report --against: exit %d, %v: %s", code, err, errs)
			}
			if len(rep.Agreement) != 1 || rep.Agreement[0].Seeds != 4 {
				t.Fatalf("agreement %+v", rep.Agreement)
			}
			g := rep.Agreement[0]
			if !g.Agree || code != 0 {
				t.Errorf("exit %d: %d of 4 seeds within 1 point, %d with the same labels, circuit overlap %v: %v", code, g.AccuracyWithin, g.LabelsAgree, g.CircuitOverlap, g.Differences)
			}
		})
	}
}

// TestGLGroupSizeChangesNothing: a seed's results on GL do not depend on
// how many seeds share its group.
func TestGLGroupSizeChangesNothing(t *testing.T) {
	needGL(t)
	dir := t.TempDir()
	var recs [][]sweep.Record
	for _, group := range []string{"1", "8"} {
		db := filepath.Join(dir, group+".db")
		if code, _, errs := headlab(t, args("--backend", "gl", "--group", group, "--seeds", "1-3", "--db", db)...); code != 0 {
			t.Fatalf("--group %s: exit %d: %s", group, code, errs)
		}
		recs = append(recs, readRecords(t, db))
	}
	for i, r := range recs[1] {
		if r.Group != 3 || recs[0][i].Group != 1 {
			t.Errorf("seed %d: group sizes %d and %d stored, want 1 and 3", r.Config.Seed, recs[0][i].Group, r.Group)
		}
	}
	sameRows(t, recs[0], recs[1])
}

// TestGLSweepKilledAndResumed kills a GL sweep with SIGKILL at random
// moments: every stored group is whole, nothing is stored twice, and the
// resumed sweep finishes.
func TestGLSweepKilledAndResumed(t *testing.T) {
	needGL(t)
	db := filepath.Join(t.TempDir(), "s.db")
	sweepArgs := args("--backend", "gl", "--group", "2", "--seeds", "1-6", "--db", db, "--steps", "60")
	for kill := 0; kill < 2; kill++ {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSweepHelperProcess$", "--"}, sweepArgs...)...)
		cmd.Env = append(os.Environ(), "HEADLAB_HELPER=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill -9 a random while after the next group lands.
		start := landedRuns(db)
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline) && landedRuns(db) <= start; time.Sleep(20 * time.Millisecond) {
		}
		time.Sleep(time.Duration(time.Now().UnixNano()%300) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		recs := readRecords(t, db) // also runs the integrity check
		if len(recs)%2 != 0 || len(recs) == 0 {
			t.Fatalf("kill %d: %d runs stored, want whole groups of 2", kill, len(recs))
		}
	}
	if code, _, errs := headlab(t, sweepArgs...); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	recs := readRecords(t, db)
	seen := map[uint64]int{}
	for _, r := range recs {
		seen[r.Config.Seed]++
		if r.Status != sweep.StatusOK || r.Backend != "gl" {
			t.Errorf("seed %d: %s %s on %s", r.Config.Seed, r.Status, r.Error, r.Backend)
		}
	}
	if len(recs) != 6 || len(seen) != 6 {
		t.Fatalf("%d rows for %d seeds after resuming, want 6 once each: %v", len(recs), len(seen), seen)
	}
}

// TestGLBadInput: flags a GL sweep cannot honour exit 2 with one line,
// before any database is made.
func TestGLBadInput(t *testing.T) {
	needGL(t)
	dir := t.TempDir()
	for name, argv := range map[string][]string{
		"group 0":        args("--backend", "gl", "--group", "0", "--db", filepath.Join(dir, "a.db")),
		"negative group": args("--backend", "gl", "--group", "-3", "--db", filepath.Join(dir, "b.db")),
		"group too big":  args("--backend", "gl", "--group", "100000", "--db", filepath.Join(dir, "c.db")),
		"train group 0":  {"train", "--seeds", "1-2", "--group", "0"},
		"seeds and save": {"train", "--seeds", "1-2", "--save", filepath.Join(dir, "m")},
	} {
		code, _, errs := headlab(t, argv...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line", name, code, errs)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("refused sweeps left %v", left)
	}
}

// TestGLNeedsAContext: with no display and no usable EGL, --backend gl
// says why in one line and exits 2; a HEADLAB_EGL_DEVICE that names no
// device is refused so even where GL is optional (auto, bench's all).
func TestGLNeedsAContext(t *testing.T) {
	refused := func(env []string, argv ...string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSweepHelperProcess$", "--"}, argv...)...)
		cmd.Env = append(append(os.Environ(), "HEADLAB_HELPER=1", "DISPLAY="), env...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("%v %v: exit %v, output %q; want 2 and one line", env, argv, err, out)
		}
	}
	refused([]string{"HEADLAB_GL_CONTEXT=egl-device", "HEADLAB_EGL_DEVICE=99"}, "train", "--backend", "gl", "--steps", "1")
	// Where GL works, auto would otherwise run it or fall back to the CPU.
	needGL(t)
	for _, dev := range []string{"99", "x", "-1"} {
		env := []string{"HEADLAB_GL_CONTEXT=", "HEADLAB_EGL_DEVICE=" + dev}
		refused(env, "train", "--backend", "auto", "--steps", "1")
		refused(env, "bench", "--parts", "groups", "--groups", "1", "--steps", "1")
	}
}

// The line --backend auto prints when it runs GL past a failed NVIDIA
// device names the renderer it got and why, on one line.
func TestFallbackLine(t *testing.T) {
	l := backend.FallbackLine("EGL device 0 (NVIDIA CUDA 0): eglInitialize failed: EGL_NOT_INITIALIZED", "llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5")
	if !strings.HasPrefix(l, "headlab: ") || !strings.Contains(l, "runs on llvmpipe") || !strings.Contains(l, "NVIDIA CUDA 0") || strings.Contains(l, "\n") {
		t.Fatalf("backend.FallbackLine = %q", l)
	}
}

// TestGLAgreementTiedAndMirror: the agreement task with tied embeddings
// trains on GL as on the CPU (relation scores and accuracy by kind in the
// JSON, accuracies within 2 points), and a GL reverse model's heads are
// labelled mirror shifted.
func TestGLAgreementTiedAndMirror(t *testing.T) {
	needGL(t)
	type report struct {
		Accuracy float64
		ByKind   *struct {
			Kinds []struct {
				Kind     string
				Examples int
				Accuracy float64
				HeadOff  float64 `json:"head_off_accuracy"`
			}
		} `json:"by_kind"`
		Heads []struct {
			Label     string
			MirrorC   int `json:"mirror_c"`
			Relations []struct{ Argmax, Baseline float64 }
		}
	}
	runs := map[string]report{}
	for _, be := range []string{"cpu", "gl"} {
		code, out, errs := headlab(t, "train", "--task", "agreement", "--tied-embeddings", "--steps", "300", "--backend", be, "--quiet", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", be, code, errs)
		}
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if r.ByKind == nil || len(r.ByKind.Kinds) != 2 || len(r.Heads) != 4 || len(r.Heads[0].Relations) != 2 {
			t.Fatalf("%s: by_kind %+v, heads %+v", be, r.ByKind, r.Heads)
		}
		runs[be] = r
	}
	c, g := runs["cpu"], runs["gl"]
	near := func(a, b float64) bool { return a-b <= 0.02 && b-a <= 0.02 }
	if !near(c.Accuracy, g.Accuracy) {
		t.Errorf("accuracy cpu %v gl %v", c.Accuracy, g.Accuracy)
	}
	for k := range c.ByKind.Kinds {
		ck, gk := c.ByKind.Kinds[k], g.ByKind.Kinds[k]
		if ck.Kind != gk.Kind || ck.Examples != gk.Examples || !near(ck.Accuracy, gk.Accuracy) {
			t.Errorf("kind cpu %+v gl %+v", ck, gk)
		}
	}
	code, out, errs := headlab(t, "train", "--task", "reverse", "--steps", "600", "--backend", "gl", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("gl reverse: %s", errs)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	shifted := 0
	for _, h := range r.Heads {
		if h.Label == "mirror shifted" && h.MirrorC == 14 {
			shifted++
		}
	}
	if shifted == 0 {
		t.Errorf("gl reverse: no head labelled mirror shifted: %+v", r.Heads)
	}
}
