// Package progress draws the progress of a long command on stderr: on a
// terminal one bar redrawn in place, with percentage, rate and ETA; in a
// log (stderr not a terminal) plain lines, one per report.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Bar is one job's progress: done of total units. Safe for concurrent use.
type Bar struct {
	w     io.Writer
	tty   bool
	name  string // prefix of plain lines, e.g. "train"
	unit  string // what is counted, plural, e.g. "steps"
	total int

	mu       sync.Mutex
	start    time.Time
	base     int       // units done before this process started (not in the rate)
	drawn    bool      // a bar is on the terminal's current line
	lastDraw time.Time // redraws are throttled
	now      func() time.Time
}

// New is a bar for total units on w, drawn in place when w is a terminal.
func New(w io.Writer, name, unit string, total int) *Bar {
	return &Bar{w: w, tty: Terminal(w), name: name, unit: unit, total: total, now: time.Now, start: time.Now()}
}

// Terminal says whether w is a terminal. A character device is not
// enough: /dev/null is one, and a bar drawn there is wasted work.
func Terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// OnTerminal says whether the bar redraws in place; callers may report
// more often then, since nothing piles up in a log.
func (b *Bar) OnTerminal() bool { return b.tty }

// Resume says that done units were finished before this process started
// (a resumed sweep): the rate and ETA count only the work from now on.
func (b *Bar) Resume(done int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.base, b.start = done, b.now()
}

// Update reports done units, with note (loss, accuracy, the last run)
// after the numbers. On a terminal it redraws the bar, at most ten times
// a second unless the job is done; in a log it prints one line.
func (b *Bar) Update(done int, note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.tty {
		if b.drawn && done < b.total && now.Sub(b.lastDraw) < 100*time.Millisecond {
			return
		}
		b.lastDraw, b.drawn = now, true
		fmt.Fprintf(b.w, "\r\033[K%s %s", bar(done, b.total, 24), b.status(done, now, note))
		return
	}
	fmt.Fprintf(b.w, "%s: %s\n", b.name, b.status(done, now, note))
}

// Printf writes one message line without tearing the bar: on a terminal
// the bar is cleared first and redrawn by the next Update.
func (b *Bar) Printf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty && b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
		b.drawn = false
	}
	fmt.Fprintf(b.w, format, args...)
}

// Finish ends the bar's line on a terminal; nothing in a log.
func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty && b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}

// status is "42% 1050/2500 steps, 412 steps/s, ETA 4s, note".
func (b *Bar) status(done int, now time.Time, note string) string {
	pct := 100.0
	if b.total > 0 {
		pct = 100 * float64(done) / float64(b.total)
	}
	s := fmt.Sprintf("%3.0f%% %d/%d %s", pct, done, b.total, b.unit)
	elapsed := now.Sub(b.start)
	rate := 0.0
	if secs := elapsed.Seconds(); secs > 0 {
		rate = float64(done-b.base) / secs
	}
	s += ", " + Rate(rate, b.unit)
	eta := "--"
	switch {
	case done >= b.total:
		eta = "0s"
	case rate > 0:
		eta = Duration(time.Duration(float64(b.total-done) / rate * float64(time.Second)))
	}
	s += ", ETA " + eta
	if note != "" {
		s += ", " + note
	}
	return s
}

// bar is "[#####.....]" filled done/total of width.
func bar(done, total, width int) string {
	fill := width
	if total > 0 {
		fill = min(max(done*width/total, 0), width)
	}
	return "[" + strings.Repeat("#", fill) + strings.Repeat(".", width-fill) + "]"
}

// Rate is "412 steps/s", or per minute below one a second ("3.2 runs/min").
func Rate(perSec float64, unit string) string {
	switch {
	case perSec <= 0:
		return "-- " + unit + "/s"
	case perSec < 1:
		return fmt.Sprintf("%.1f %s/min", 60*perSec, unit)
	case perSec < 10:
		return fmt.Sprintf("%.1f %s/s", perSec, unit)
	}
	return fmt.Sprintf("%.0f %s/s", perSec, unit)
}

// Duration rounds d for people: "48s", "3m05s", "2h10m".
func Duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Reporter is a progress report on w as a bar, made at the first report
// (when the total is known); with tenths, a log (not a terminal) gets a
// line each tenth of the work only. finish ends the bar.
func Reporter(w io.Writer, name, unit string, tenths bool) (report func(done, total int), finish func()) {
	var b *Bar
	report = func(done, total int) {
		if b == nil {
			b = New(w, name, unit, total)
		}
		if !tenths || b.OnTerminal() || done*10/total != (done-1)*10/total {
			b.Update(done, "")
		}
	}
	return report, func() {
		if b != nil {
			b.Finish()
		}
	}
}
