package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the side a terminal emulator reads, and
// the terminal a program writes to.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminals here: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, tty
}

// TestTrainBarOnATerminal: with stderr a terminal, train draws one bar
// redrawn in place with percentage, rate and ETA, and ends its line.
func TestTrainBarOnATerminal(t *testing.T) {
	master, tty := openPTY(t)
	defer master.Close()
	got := make(chan string)
	go func() {
		var buf bytes.Buffer
		io.Copy(&buf, master) // ends with EIO once the terminal is closed
		got <- buf.String()
	}()
	var out bytes.Buffer
	code := run([]string{"train", "--task", "majority", "--steps", "200", "--d-model", "16", "--d-ff", "16"}, &out, tty)
	tty.Close()
	screen := <-got
	if code != 0 {
		t.Fatalf("exit %d: %q", code, screen)
	}
	for _, want := range []string{"\r\033[K[", "] 100% 200/200 steps, ", " steps/s, ETA ", "held-out acc "} {
		if !strings.Contains(screen, want) {
			t.Errorf("the terminal lacks %q:\n%q", want, screen)
		}
	}
	if strings.Contains(screen, "train: ") {
		t.Errorf("plain log lines on a terminal:\n%q", screen)
	}
	// The terminal turns the bar's last newline into \r\n.
	if !strings.HasSuffix(screen, "\r\n") {
		t.Errorf("the bar's line is not ended: %q", screen[max(0, len(screen)-40):])
	}
	if !strings.Contains(out.String(), "accuracy") {
		t.Errorf("the report left stdout: %q", out.String())
	}
}
