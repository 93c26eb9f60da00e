package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsWhereNothingCanBeMade: an output in /proc is refused with
// exit 2 before any work, for each kind of output (a checkpoint, a figure,
// a database, a directory to create), whoever runs the test: root passes
// access() there, so the check has to try.
func TestOutputsWhereNothingCanBeMade(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, args := range [][]string{
		{"train", "--steps", "1000", "--save", "/proc/headlab-run"},
		{"train", "--steps", "1000", "--png", "/proc/heads.png"},
		{"sweep", "--seeds", "1", "--db", "/proc/sweep.db"},
		{"reproduce", "--out", "/proc/headlab/findings"},
	} {
		code, out, errs := headlab(t, args...)
		if code != 2 || !strings.Contains(errs, "cannot write in /proc") || strings.Count(strings.TrimSpace(errs), "\n") != 0 || out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 2 and one line saying /proc cannot be written", strings.Join(args, " "), code, errs, out)
		}
	}
}

// TestReadOnlyOutputsAsUnprivilegedUser: an unprivileged user (nobody,
// through setpriv, when the test runs as root, as CI does) is refused
// outputs in a read-only directory and a read-only database, with exit 2
// before any work, and nothing there changes.
func TestReadOnlyOutputsAsUnprivilegedUser(t *testing.T) {
	var prefix []string
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set, the test runs as root and setpriv (util-linux) is missing: %v", err)
			}
			t.Skipf("running as root without setpriv: %v", err)
		}
		prefix = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
	}
	mk := func(mode os.FileMode) string { return modeDir(t, mode) }
	bin := filepath.Join(mk(0o755), "headlab.test")
	copyFile(t, os.Args[0], bin, 0o755)
	ro := mk(0o755)
	if err := os.WriteFile(filepath.Join(ro, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	open := mk(0o777)
	roDB := filepath.Join(open, "sweep.db")
	if err := os.WriteFile(roDB, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"train", "--steps", "1000", "--save", filepath.Join(ro, "run")}, "--save " + filepath.Join(ro, "run") + ": cannot write in " + ro + ": permission denied"},
		{[]string{"train", "--steps", "1000", "--png", filepath.Join(ro, "heads.png")}, "cannot write in " + ro + ": permission denied"},
		{[]string{"reproduce", "--out", filepath.Join(ro, "new", "findings")}, "cannot write in " + ro + ": permission denied"},
		{[]string{"sweep", "--seeds", "1", "--db", roDB}, "--db " + roDB + ": cannot write it: permission denied"},
	}
	for _, c := range cases {
		name := strings.Join(c.args, " ")
		beforeRO, beforeOpen := snapshot(t, ro), snapshot(t, open)
		cmd := helper(bin, c.args...)
		cmd.Args = append(prefix, cmd.Args...)
		cmd.Path = cmd.Args[0]
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		errs := stderr.String()
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 || stdout.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", name, code, errs, stdout.String(), c.want)
		}
		sameTree(t, name, beforeRO, snapshot(t, ro))
		sameTree(t, name, beforeOpen, snapshot(t, open))
	}
}
