package main

import (
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
// view closes its window): while one runs, exitOnSignal leaves the
// signal to it.
var graceful atomic.Int32

// stopsGracefully delivers SIGINT and SIGTERM to c, for a command that
// handles them itself, until the returned function is called.
func stopsGracefully(c chan<- os.Signal) func() {
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	graceful.Add(1)
	return func() {
		signal.Stop(c)
		graceful.Add(-1)
	}
}

// exitOnSignal ends any other command on SIGINT or SIGTERM at once with
// exitInterrupted, as exitTable says (SIGTERM's default action would give
// 143), after removing the temporary files and directories of writes in
// progress, so that nothing half-written is left. A signal the process
// was started ignoring (a shell's background job) stays ignored.
func exitOnSignal(stderr io.Writer) {
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
			os.Exit(exitInterrupted)
		}
	}()
}
