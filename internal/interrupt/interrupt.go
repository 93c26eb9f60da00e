// Package interrupt is how headlab stops on SIGINT and SIGTERM: at once,
// with temporaries removed and one line said (ExitOn), unless a command
// that stops gracefully has asked for the signals itself (Graceful,
// Twice).
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"headlab/internal/atomicfile"
	"headlab/internal/progress"
)

// graceful counts the commands running now that stop on SIGINT or
// SIGTERM themselves (sweep and reproduce finish or abandon their runs,
// view closes its window): while one runs, ExitOn leaves the signal to
// it.
var graceful atomic.Int32

// Graceful delivers SIGINT and SIGTERM to c, for a command that handles
// them itself, until the returned function is called.
func Graceful(c chan<- os.Signal) func() {
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	graceful.Add(1)
	return func() {
		signal.Stop(c)
		graceful.Add(-1)
	}
}

// ExitOn ends the process on SIGINT or SIGTERM at once with status code
// (SIGTERM's default action would give 143), after removing the
// temporary files and directories of writes in progress, so that
// nothing half-written is left, unless a Graceful command runs. A signal
// the process was started ignoring (a shell's background job) stays
// ignored.
func ExitOn(stderr io.Writer, code int) {
	var sigs []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) == 0 {
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, sigs...)
	go func() {
		for s := range c {
			if graceful.Load() > 0 {
				continue
			}
			atomicfile.RemoveTemporaries()
			nl := ""
			if progress.Terminal(stderr) {
				nl = "\n" // end the progress bar's line
			}
			name := "SIGINT"
			if s == syscall.SIGTERM {
				name = "SIGTERM"
			}
			fmt.Fprintf(stderr, "%sheadlab: stopped by %s\n", nl, name)
			os.Exit(code)
		}
	}()
}

// Twice takes SIGINT and SIGTERM (Graceful) until stop is called: the
// first cancels ctx, saying first on stderr, and the second closes
// abort, saying second; each line starts with the signal's name after
// prefix.
func Twice(stderr io.Writer, prefix, first, second string) (ctx context.Context, abort <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ab := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	release := Graceful(sigs)
	over := make(chan struct{})
	go func() {
		for n := 0; ; {
			select {
			case <-over:
				return
			case s := <-sigs:
				n++
				if n == 1 {
					fmt.Fprintf(stderr, "\n%s: %v: %s\n", prefix, s, first)
					cancel()
				} else {
					fmt.Fprintf(stderr, "\n%s: %v: %s\n", prefix, s, second)
					close(ab)
					return
				}
			}
		}
	}()
	return ctx, ab, func() {
		close(over)
		release()
		cancel()
	}
}

// Once takes SIGINT and SIGTERM (Graceful) until stop is called: the
// first calls f (a viewer closes its window as Esc does), and fired says
// whether one came.
func Once(f func()) (fired func() bool, stop func()) {
	sigs := make(chan os.Signal, 1)
	release := Graceful(sigs)
	var came atomic.Bool
	over := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			came.Store(true)
			f()
		case <-over:
		}
	}()
	return came.Load, func() {
		release()
		close(over)
	}
}
