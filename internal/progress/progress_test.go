package progress

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBar is a bar on buf with a clock the test moves.
func fakeBar(buf *bytes.Buffer, tty bool, total int) (*Bar, *time.Time) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	b := New(buf, "train", "steps", total)
	b.tty, b.now, b.start = tty, func() time.Time { return clock }, t0
	return b, &clock
}

func TestPlainLines(t *testing.T) {
	var buf bytes.Buffer
	b, clock := fakeBar(&buf, false, 1000)
	b.Update(0, "")
	*clock = clock.Add(2 * time.Second)
	b.Update(250, "loss 0.5000")
	*clock = clock.Add(6 * time.Second)
	b.Update(1000, "")
	b.Finish()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		"train:   0% 0/1000 steps, -- steps/s, ETA --",
		"train:  25% 250/1000 steps, 125 steps/s, ETA 6s, loss 0.5000",
		"train: 100% 1000/1000 steps, 125 steps/s, ETA 0s",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), strings.Join(want, "\n"))
	}
	if strings.ContainsAny(buf.String(), "\r\033") {
		t.Errorf("a log got terminal control codes: %q", buf.String())
	}
}

func TestTerminalRedrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	b, clock := fakeBar(&buf, true, 100)
	b.Update(0, "")
	*clock = clock.Add(time.Second)
	b.Update(50, "")
	*clock = clock.Add(10 * time.Millisecond)
	b.Update(51, "") // throttled: too soon after the last redraw
	b.Printf("saved %s\n", "x")
	*clock = clock.Add(time.Second)
	b.Update(100, "") // done: always drawn
	b.Finish()
	out := buf.String()
	if strings.Count(out, "\n") != 2 {
		t.Errorf("want two newlines (the message and Finish), got %q", out)
	}
	if strings.Contains(out, "51/100") {
		t.Errorf("throttled update was drawn: %q", out)
	}
	for _, s := range []string{"\r\033[K[............" + "............]   0% 0/100", "\r\033[K[############............]  50% 50/100 steps, 50 steps/s, ETA 1s",
		"\r\033[Ksaved x\n", "[########################] 100% 100/100"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%q", s, out)
		}
	}
}

func TestResumedWorkIsNotRate(t *testing.T) {
	var buf bytes.Buffer
	b, clock := fakeBar(&buf, false, 100)
	b.Resume(60) // 60 runs were in the database already
	b.Update(60, "")
	*clock = clock.Add(10 * time.Second)
	b.Update(80, "")
	if got := buf.String(); !strings.Contains(got, "80/100 steps, 2.0 steps/s, ETA 10s") {
		t.Errorf("rate should count only this process's work: %q", got)
	}
}

func TestHumanUnits(t *testing.T) {
	for d, want := range map[time.Duration]string{
		48 * time.Second: "48s", 185 * time.Second: "3m05s", 130 * time.Minute: "2h10m",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
	for r, want := range map[float64]string{0.05: "3.0 runs/min", 2.5: "2.5 runs/s", 412: "412 runs/s", 0: "-- runs/s"} {
		if got := Rate(r, "runs"); got != want {
			t.Errorf("Rate(%v) = %q, want %q", r, got, want)
		}
	}
}

// TestTerminalIsNotAnyDevice: /dev/null is a character device, not a
// terminal, and a log file is neither; cmd/headlab's
// TestTrainBarOnATerminal covers a real pseudo-terminal.
func TestTerminalIsNotAnyDevice(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	log, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, f := range []*os.File{null, log} {
		if Terminal(f) {
			t.Errorf("%s counted as a terminal", f.Name())
		}
	}
}

func TestReporterTenthsInALog(t *testing.T) {
	for _, tenths := range []bool{false, true} {
		var buf bytes.Buffer
		report, finish := Reporter(&buf, "patch", "runs", tenths)
		for done := 1; done <= 40; done++ {
			report(done, 40)
		}
		finish()
		lines := strings.Count(buf.String(), "\n")
		want := 40
		if tenths {
			want = 10 // 4, 8, ..., 40
		}
		if lines != want || !strings.HasPrefix(buf.String(), "patch: ") || !strings.Contains(buf.String(), "40/40 runs") {
			t.Errorf("tenths %v: %d lines, want %d:\n%s", tenths, lines, want, buf.String())
		}
	}
	_, finish := Reporter(io.Discard, "x", "y", true)
	finish() // no report made: nothing to finish
}
