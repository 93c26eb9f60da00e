package interrupt

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncWriter is a strings.Builder that the signal goroutine may write.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestTwice: the first SIGINT cancels the context, the second closes
// abort, each saying so in a line; and while Twice holds the signals the
// process does not die of them.
func TestTwice(t *testing.T) {
	var w syncWriter
	ctx, abort, stop := Twice(&w, "sweep", "first", "second")
	if graceful.Load() != 1 {
		t.Fatalf("%d graceful commands, want 1", graceful.Load())
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first signal did not cancel the context")
	}
	select {
	case <-abort:
		t.Fatal("one signal closed abort")
	default:
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGINT)
	select {
	case <-abort:
	case <-time.After(10 * time.Second):
		t.Fatal("the second signal did not close abort")
	}
	if got := w.String(); got != "\nsweep: interrupt: first\n\nsweep: interrupt: second\n" {
		t.Errorf("said %q", got)
	}
	stop()
	if graceful.Load() != 0 {
		t.Errorf("%d graceful commands after stop, want 0", graceful.Load())
	}
}

// TestOnce: while Once holds the signals, a SIGTERM calls f once and
// fired says so; without a signal, fired is false, and stop gives the
// signals back.
func TestOnce(t *testing.T) {
	called := make(chan struct{}, 2)
	fired, stop := Once(func() { called <- struct{}{} })
	if fired() || graceful.Load() != 1 {
		t.Fatalf("fired %v before a signal, %d graceful commands", fired(), graceful.Load())
	}
	syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("the signal did not call f")
	}
	if !fired() {
		t.Error("fired is false after the signal")
	}
	stop()
	if graceful.Load() != 0 {
		t.Errorf("%d graceful commands after stop, want 0", graceful.Load())
	}
	fired, stop = Once(func() { called <- struct{}{} })
	stop()
	if fired() || len(called) != 0 {
		t.Errorf("no signal: fired %v, f called %d times", fired(), len(called))
	}
}
