package sweep

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"headlab/backend/cpu"
	"headlab/internal/preflight"
	"headlab/kernels"
	"headlab/train"
)

// lockedBuffer is a buffer that goroutines may write at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tinyDB is a sweep of seeds 1..n of a tiny model into path on the CPU.
func tinyDB(path string, n int, stderr *lockedBuffer) DB {
	var seeds []uint64
	for s := range n {
		seeds = append(seeds, uint64(s+1))
	}
	pairs := Pairs([]train.Config{tiny("majority", 6)}, seeds)
	dev := cpu.New()
	return DB{Path: path, Pairs: pairs, Shard: All, SweepID: SweepID(pairs), Ask: Ask{Workers: 1, Group: 1},
		Device: dev, NewPlatform: Platforms(dev, func() (kernels.Device, error) { return cpu.New(), nil }), Stderr: stderr}
}

// TestRunDB: RunDB stores every pair and says so in one line; run again
// it finds them all stored; a file that is no sweep database is refused
// (preflight.Refusal) and left as it was.
func TestRunDB(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "runs.db")
	var stderr lockedBuffer
	if err := RunDB(tinyDB(path, 2, &stderr)); err != nil {
		t.Fatal(err)
	}
	if want := "sweep: 2 pairs: 0 already in " + path + ", 2 run now (0 failed)\n"; !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to end %q", stderr.String(), want)
	}
	st, err := OpenExisting(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records()
	st.Close()
	if err != nil || len(recs) != 2 || recs[0].Status != StatusOK {
		t.Fatalf("stored %d records (%v), want 2 that trained", len(recs), err)
	}
	var again lockedBuffer
	if err := RunDB(tinyDB(path, 2, &again)); err != nil || !strings.Contains(again.String(), "2 already in "+path+", 0 run now") {
		t.Errorf("rerun: %v, stderr %q", err, again.String())
	}

	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var r *preflight.Refusal
	if err := RunDB(tinyDB(text, 1, &lockedBuffer{})); !errors.As(err, &r) {
		t.Errorf("a text file: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(text); string(b) != "not a database\n" {
		t.Errorf("the refused file now holds %q", b)
	}
}

// TestRunInterruptible: a SIGINT stops new runs, saying so; what ran is
// stored, and the summary says the sweep was interrupted.
func TestRunInterruptible(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	st, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var stderr lockedBuffer
	const said = "sweep: interrupt: starting no new runs"
	d := tinyDB(path, 6, &stderr)
	opt := Options{Workers: 1, Group: 1, NewPlatform: d.NewPlatform}
	opt.Progress = func(p Progress) {
		if p.Last != nil {
			return
		}
		self, _ := os.FindProcess(os.Getpid())
		if err := self.Signal(os.Interrupt); err != nil {
			t.Error(err)
		}
		// Until the signal is taken, so that few pairs start.
		for end := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), said) && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
	}
	sum, err := RunInterruptible(&stderr, st, d.Pairs, opt, false)
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.Count()
	if err != nil || !sum.Interrupted || sum.Done >= sum.Total || n != sum.Done || !strings.Contains(stderr.String(), said) {
		t.Errorf("summary %+v, %d stored (%v), stderr %q", sum, n, err, stderr.String())
	}
}

// TestInterruptedError: the message says how many pairs are stored,
// where, and how many were abandoned.
func TestInterruptedError(t *testing.T) {
	err := &InterruptedError{Summary: Summary{Total: 10, Skipped: 3, Done: 4, Abandoned: 2}, Path: "s.db"}
	want := "interrupted: 7 of 10 pairs are in s.db (2 abandoned in flight); rerun the same command to finish"
	if err.Error() != want {
		t.Errorf("%q, want %q", err.Error(), want)
	}
}

// TestSeedsResultWrite: train --seeds' text is a line per seed, in the
// order asked for, and one line on stderr saying what trained where.
func TestSeedsResultWrite(t *testing.T) {
	var out, stderr bytes.Buffer
	s := Seeds{Config: tiny("majority", 6), Seeds: []uint64{2, 1}, Group: 2, Stderr: &stderr}
	dev := cpu.New()
	res, err := TrainSeeds(s, PlatformOf(dev))
	if err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	res.Write(&out, &stderr, dev.Name())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "seed 2  accuracy ") || !strings.HasPrefix(lines[1], "seed 1  accuracy ") {
		t.Errorf("text:\n%s", out.String())
	}
	line := strings.TrimSpace(stderr.String())
	if !strings.HasPrefix(line, "trained 2 seeds in ") || !strings.HasSuffix(line, " s on cpu, groups of up to 2") || strings.Contains(line, "\n") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestMergeResultWrite: notes and a mix of backends go to stderr, the
// counts to stdout.
func TestMergeResultWrite(t *testing.T) {
	res := MergeResult{Added: 5, Duplicates: 2, Total: 9, Backends: []string{"cpu", "gl"}, Notes: []string{"a.db: 1 run relabelled"}}
	var out, errs bytes.Buffer
	res.Write(&out, &errs, "all.db", 3)
	if want := "merged 3 databases into all.db: 5 runs added, 2 duplicates skipped, 9 runs in all\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	want := "merge: a.db: 1 run relabelled\n" +
		"merge: all.db now holds runs of backends cpu, gl: they agree as distributions over seeds, not bit for bit\n"
	if errs.String() != want {
		t.Errorf("stderr %q, want %q", errs.String(), want)
	}
	errs.Reset()
	res.Backends, res.Notes = []string{"cpu"}, nil
	if res.Write(&out, &errs, "all.db", 3); errs.String() != "" {
		t.Errorf("one backend, no notes: stderr %q", errs.String())
	}
}
