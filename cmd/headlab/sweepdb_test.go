package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"headlab/sweep"
)

// helper is a command running this test binary as headlab (see
// TestSweepHelperProcess).
func helper(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"-test.run=^TestSweepHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "HEADLAB_HELPER=1")
	return cmd
}

// TestTwoSweepsShareADatabase runs two sweep processes of the same pairs
// on one database at once: both finish, every pair is stored once, and
// the two together trained each pair once.
func TestTwoSweepsShareADatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shared.db")
	sweepArgs := args("--seeds", "1-8", "--workers", "1", "--db", db, "--steps", "150")
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for range 2 {
		cmd := helper(os.Args[0], sweepArgs...)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	ran := 0
	summary := regexp.MustCompile(`sweep: 8 pairs: (\d+) already in .*, (\d+) run now \(0 failed\)`)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("sweep %d: %v: %s", i, err, outs[i])
		}
		m := summary.FindStringSubmatch(outs[i].String())
		if m == nil {
			t.Fatalf("sweep %d said: %s", i, outs[i])
		}
		n, _ := strconv.Atoi(m[2])
		t.Logf("sweep %d: %s already in, %s run here", i, m[1], m[2])
		ran += n
	}
	recs := readRecords(t, db)
	seeds := map[uint64]int{}
	for _, r := range recs {
		seeds[r.Config.Seed]++
		if r.Status != sweep.StatusOK {
			t.Errorf("seed %d: %s", r.Config.Seed, r.Error)
		}
	}
	if len(recs) != 8 || len(seeds) != 8 {
		t.Errorf("%d rows for %d seeds, want 8 once each", len(recs), len(seeds))
	}
	if ran != 8 {
		t.Errorf("the two sweeps ran %d pairs between them, want 8: %s\n%s", ran, outs[0], outs[1])
	}
	// The last one out left one file, in rollback-journal mode.
	if _, err := os.Stat(db + "-wal"); err == nil {
		t.Error("a -wal file is left beside the database")
	}
}

func sum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "absent"
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestForeignDatabasesRefused: sweep, report and merge refuse a file
// that is not a headlab sweep database with one line and exit 2, and the
// file is the same byte for byte; a refused merge leaves OUT as it was.
func TestForeignDatabasesRefused(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	if code, _, errs := headlab(t, args("--seeds", "1", "--db", good)...); code != 0 {
		t.Fatalf("sweep: %s", errs)
	}
	raw := func(name string, stmts ...string) string {
		p := filepath.Join(dir, name)
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("not a database\n"), 0o644)
	files := []string{
		text,
		raw("other.db", "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('keep me')"),
		raw("shape.db", "CREATE TABLE runs (id INTEGER)", "PRAGMA user_version = 2"),
		raw("newer.db", "CREATE TABLE runs (id INTEGER)", "PRAGMA user_version = 99"),
	}
	out := filepath.Join(dir, "out.db")
	if code, _, errs := headlab(t, "merge", "--db", out, good); code != 0 {
		t.Fatalf("merge: %s", errs)
	}
	for _, f := range files {
		before, outBefore := sum(t, f), sum(t, out)
		for name, a := range map[string][]string{
			"sweep":        args("--seeds", "1", "--db", f),
			"report":       {"report", "--db", f},
			"merge input":  {"merge", "--db", out, good, f},
			"merge output": {"merge", "--db", f, good},
		} {
			code, stdout, errs := headlab(t, a...)
			if code != 2 || stdout != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("%s on %s: exit %d, stdout %q, stderr %q", name, filepath.Base(f), code, stdout, errs)
			}
			if sum(t, f) != before || sum(t, out) != outBefore {
				t.Errorf("%s on %s changed a file", name, filepath.Base(f))
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range left {
		if strings.HasSuffix(f, "-wal") || strings.HasSuffix(f, "-shm") || strings.HasSuffix(f, "-journal") || strings.Contains(f, ".tmp") {
			t.Errorf("left behind: %s", f)
		}
	}
}

// TestReportReadOnlyAsUnprivilegedUser: an unprivileged user reports on
// a read-only copy of docs/findings/findings.db (in rollback-journal mode,
// as sweeps leave it), on the same file in WAL mode with no log (as a
// database copied out of a running sweep is shipped), both in a read-only
// directory, and on a copy with its log beside it, writing CSV elsewhere;
// nothing in the read-only directory changes.
func TestReportReadOnlyAsUnprivilegedUser(t *testing.T) {
	mk := func(mode os.FileMode) string { return modeDir(t, mode) }
	bin := filepath.Join(mk(0o755), "headlab.test")
	copyFile(t, os.Args[0], bin, 0o755)
	ro := mk(0o755)
	shipped := filepath.Join(ro, "findings.db")
	copyFile(t, filepath.Join("..", "..", "docs", "findings", "findings.db"), shipped, 0o444)
	// Bytes 18 and 19 of the header are the file format's read and write
	// versions: 2 is WAL mode, which SQLite keeps in the file itself.
	walMode := filepath.Join(ro, "wal-mode.db")
	b, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	b[18], b[19] = 2, 2
	if err := os.WriteFile(walMode, b, 0o444); err != nil {
		t.Fatal(err)
	}

	// A database whose newest runs are still in its log, copied while
	// the sweep that wrote them has it open.
	live := filepath.Join(t.TempDir(), "live.db")
	if code, _, errs := headlab(t, args("--seeds", "1", "--db", live)...); code != 0 {
		t.Fatalf("sweep: %s", errs)
	}
	more := readRecords(t, live)[0]
	more.Config.Seed = 99
	st, err := sweep.Create(live)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(&more); err != nil {
		t.Fatal(err)
	}
	logged := filepath.Join(ro, "logged.db")
	copyFile(t, live, logged, 0o444)
	copyFile(t, live+"-wal", logged+"-wal", 0o444)
	st.Close()
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	csvDir := mk(0o777)
	before := map[string]string{}
	names, _ := filepath.Glob(filepath.Join(ro, "*"))
	for _, n := range names {
		before[n] = sum(t, n)
	}
	asUser := func(a ...string) (int, string) {
		cmd := helper(bin, a...)
		if os.Geteuid() == 0 {
			// Root ignores permission bits: run as nobody.
			cmd = exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, cmd.Args[1:]...)...)
			cmd.Env = append(os.Environ(), "HEADLAB_HELPER=1")
		}
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		return code, string(out)
	}
	code, out := asUser("report", "--db", shipped, "--csv", csvDir)
	if code != 0 || !strings.Contains(out, "runs,") || !strings.Contains(out, "circuit") {
		t.Fatalf("report on the shipped copy: exit %d: %s", code, out)
	}
	f, err := os.Open(filepath.Join(csvDir, "heads.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 2 || rows[0][0] != "config_key" || !slices.Contains(rows[0], "score_induction") {
		t.Errorf("heads.csv: %d rows, %v", len(rows), err)
	}
	code, out = asUser("report", "--db", walMode)
	if code != 0 || !strings.Contains(out, "runs,") || !strings.Contains(out, "circuit") {
		t.Errorf("report on the copy in WAL mode: exit %d: %s", code, out)
	}
	code, out = asUser("report", "--db", logged)
	if code != 0 || !strings.Contains(out, "logged.db-wal cannot be read from here") || !strings.Contains(out, "1 runs") {
		t.Errorf("report on the copy with a log: exit %d: %s", code, out)
	}
	now, _ := filepath.Glob(filepath.Join(ro, "*"))
	if len(now) != len(names) {
		t.Errorf("the read-only directory holds %v, was %v", now, names)
	}
	for n, s := range before {
		if sum(t, n) != s {
			t.Errorf("%s changed", n)
		}
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, mode); err != nil {
		t.Fatal(fmt.Errorf("chmod %s: %v", to, err))
	}
}

// modeDir is a new temporary folder of the given mode (outside the test's
// own, so that another user can reach it), made writable again and
// removed when t ends.
func modeDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	d, err := os.MkdirTemp("", "headlab-mode-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(d, 0o755); os.RemoveAll(d) })
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
	return d
}
