package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"headlab/backend/gl"
	"headlab/train"
)

// snapshot maps every path under dir to a digest of what it is, so that
// a test can say nothing was written, changed or left behind.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "dir"
			return nil
		}
		data, _ := os.ReadFile(p)
		out[p] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	})
	return out
}

func sameTree(t *testing.T, name string, before, after map[string]string) {
	t.Helper()
	for p, h := range after {
		if before[p] != h {
			t.Errorf("%s: %s was written or changed", name, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: %s was removed", name, p)
		}
	}
}

// TestOutputPathsRefusedBeforeWork gives every command an output path it
// cannot write: each is refused with one line and exit 2 before any work
// (no training: the default steps would take seconds and print a report),
// and nothing in the directory changes.
func TestOutputPathsRefusedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("keep me"), 0o644)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "notes.txt"), []byte("mine"), 0o644)
	// A directory with a figure's extension: the format is known, the kind wrong.
	pics := filepath.Join(dir, "pics.png")
	os.Mkdir(pics, 0o755)
	missing := filepath.Join(dir, "missing", "x.png")
	// export writes FILE.json beside a TransformerLens FILE.safetensors.
	weights := filepath.Join(dir, "w.safetensors")
	os.Mkdir(filepath.Join(dir, "w.json"), 0o755)
	dumpDir := filepath.Join(dir, "d.safetensors")
	os.Mkdir(dumpDir, 0o755)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"train", "--save", file}, "--save " + file + ": exists and is not a directory"},
		{[]string{"train", "--save", sub}, "is not a headlab checkpoint"},
		{[]string{"train", "--save", filepath.Join(file, "run")}, "is not a directory"},
		{[]string{"train", "--png", pics}, "--png " + pics + ": is a directory"},
		{[]string{"train", "--arcs", missing}, "does not exist"},
		{[]string{"heads", "--run", sub, "--dump-attention", sub}, "--dump-attention"},
		{[]string{"heads", "--run", sub, "--arcs", pics}, "--arcs"},
		{[]string{"score", "--attention", file, "--png", pics}, "--png"},
		{[]string{"curves", "--run", sub, "--png", pics}, "--png"},
		{[]string{"prune", "--run", sub, "--png", missing}, "--png"},
		{[]string{"sweep", "--db", sub}, "--db " + sub + ": is a directory"},
		{[]string{"report", "--db", file, "--png", file}, "--png " + file + ": is not a directory"},
		{[]string{"reproduce", "--out", file}, "--out"},
		{[]string{"view", "--screenshot", sub}, "--screenshot"},
		{[]string{"bench", "--profile", sub}, "--profile"},
		{[]string{"export", "--run", sub, "--out", dumpDir}, "--out " + dumpDir + ": is a directory"},
		{[]string{"export", "--run", sub, "--out", weights}, "--out " + filepath.Join(dir, "w.json") + ": is a directory"},
		{[]string{"export", "--run", sub, "--out", strings.Replace(missing, ".png", ".npz", 1)}, "does not exist"},
		{[]string{"dump", "--run", sub, "--out", dumpDir}, "--out " + dumpDir + ": is a directory"},
		{[]string{"merge", "--db", sub, file}, "--db " + sub + ": is a directory"},
		{[]string{"bench", "vs-pytorch", "--rounds", "0", "--profile", filepath.Join(dir, "p.prof")}, "--rounds"},
	}
	for _, c := range cases {
		name := strings.Join(c.args, " ")
		before := snapshot(t, dir)
		code, out, errs := headlab(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 || out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", name, code, errs, out, c.want)
		}
		sameTree(t, name, before, snapshot(t, dir))
	}
}

// TestTooLargeForMemoryIsRefused is the 12.9e9-parameter shape that used
// to kill the Go runtime: refused in one line, exit 2, from the estimate.
func TestTooLargeForMemoryIsRefused(t *testing.T) {
	huge := []string{"--layers", "64", "--d-model", "4096", "--d-ff", "16384", "--heads", "64"}
	db := filepath.Join(t.TempDir(), "s.db")
	for _, args := range [][]string{
		append([]string{"train"}, huge...),
		append([]string{"train", "--seeds", "1-4"}, huge...),
		append([]string{"sweep", "--db", db}, huge...),
	} {
		code, _, errs := headlab(t, args...)
		if code != 2 || !strings.Contains(errs, "this process may use") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a refused sweep created %s", db)
	}
}

// TestLoaderChecksTheWeightsSizeFirst gives heads a checkpoint whose
// model.safetensors is a 6 GiB sparse file, and one whose file is cut in
// half: both refused from the size, the first without reading 6 GiB.
func TestLoaderChecksTheWeightsSizeFirst(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if code, _, errs := headlab(t, "train", "--task", "majority", "--steps", "1", "--quiet", "--save", run); code != 0 {
		t.Fatalf("train: %d %s", code, errs)
	}
	w := filepath.Join(run, train.WeightsFile)
	good, _ := os.ReadFile(w)
	for _, size := range []int64{6 << 30, int64(len(good)) / 2} {
		if err := os.Truncate(w, size); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		code, _, errs := headlab(t, "heads", "--run", run)
		if code != 2 || !strings.Contains(errs, fmt.Sprintf("is %d bytes", size)) {
			t.Errorf("size %d: exit %d, stderr %q", size, code, errs)
		}
		if size > 1<<30 && time.Since(start) > 20*time.Second {
			t.Errorf("size %d: took %v: the file was read", size, time.Since(start))
		}
	}
}

// TestExitStatusTable: the one rule is in headlab --help and the README.
func TestExitStatusTable(t *testing.T) {
	code, out, _ := headlab(t, "--help")
	if code != 0 || !strings.Contains(out, exitTable) {
		t.Fatalf("--help (exit %d) lacks the exit table:\n%s", code, out)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| 0 |", "| 1 |", "| 2 |", "| 130 |"} {
		if !strings.Contains(string(readme), row) {
			t.Errorf("README's exit table lacks the row %q", row)
		}
	}
}

// TestSweepInterruptExits130 sends SIGINT to a real sweep process once
// its first run has landed: it stops, keeps what it stored, exits 130.
func TestSweepInterruptExits130(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	sweepArgs := args("--seeds", "1-6", "--workers", "1", "--db", db, "--steps", "400")
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSweepHelperProcess$", "--"}, sweepArgs...)...)
	cmd.Env = append(os.Environ(), "HEADLAB_HELPER=1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline) && landedRuns(db) == 0; time.Sleep(20 * time.Millisecond) {
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130; it said %q", code, out.String())
	}
	if n := len(readRecords(t, db)); n < 1 || n >= 6 {
		t.Fatalf("%d runs stored after the interrupt, want 1..5", n)
	}
}

// TestGLSaysItCannotCheckMemory: llvmpipe has neither memory query, and
// a GL run says so in one line and goes on.
func TestGLSaysItCannotCheckMemory(t *testing.T) {
	needGL(t)
	code, _, errs := headlab(t, "train", "--backend", "gl", "--task", "majority", "--steps", "2", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	d, err := gl.New(gl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, known := d.MemoryBytes()
	d.Close()
	if said := strings.Contains(errs, "reports no memory size"); said == known {
		t.Fatalf("driver tells its memory: %v; stderr %q", known, errs)
	}
}

// TestSignalsExit130: SIGINT and SIGTERM end a command that does not
// stop gracefully (train, here mid-training) with exit 130 and one
// line, as the exit table says; SIGTERM's default would be 143.
func TestSignalsExit130(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSweepHelperProcess$", "--",
			"train", "--task", "majority", "--steps", "1000000", "--progress-every", "10")
		cmd.Env = append(os.Environ(), "HEADLAB_HELPER=1")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A process the signal did not end is killed, and the test fails.
		defer time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() }).Stop()
		// The first progress line says training has started.
		buf := make([]byte, 4096)
		n, _ := stderr.Read(buf)
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(stderr)
		cmd.Wait()
		lines := strings.Split(strings.TrimSpace(string(buf[:n])+string(rest)), "\n")
		last := lines[len(lines)-1]
		if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.HasPrefix(last, "headlab: stopped by SIG") || strings.HasPrefix(lines[0], "headlab") {
			t.Errorf("%v: exit %d, stderr %q; want 130 and one line after the progress", sig, code, lines)
		}
	}
}
