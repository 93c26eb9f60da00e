package glctx

// The main thread: under Main it runs a plain queue of the functions GLFW
// wants there (window creation and destruction, event polling), and never
// holds a GL context.

/*
#include <stdint.h>
#include <pthread.h>
static uint64_t hl_self(void) { return (uint64_t)(uintptr_t)pthread_self(); }
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

// self identifies the calling OS thread.
func self() uint64 { return uint64(C.hl_self()) }

var (
	mainTid  uint64
	mainJobs = make(chan func())
	mainMu   sync.Mutex
	mainStop chan struct{} // closed when Main stops serving; nil when it does not serve
)

func init() {
	// Go runs every init on the main thread, and only a LockOSThread made
	// during init keeps the main goroutine (and so main, or a test
	// binary's TestMain) on that thread for good. Everything else in the
	// program runs on other threads, so this costs nothing until Main.
	runtime.LockOSThread()
	mainTid = self()
}

// onMainThread reports whether the caller runs on the main thread.
func onMainThread() bool { return self() == mainTid }

// Main gives the calling goroutine's thread, which must be the process's
// main thread (call it from main, or from a test binary's TestMain), to
// the functions OnMain hands it: it runs run on another goroutine and,
// until run returns, runs them there. Called off the main thread, or from
// inside run, Main just calls run.
//
// A function that calls runtime.Goexit on the main thread ends the main
// goroutine, so Main cannot return: it serves on until run returns and then
// exits the process with status 1.
func Main(run func()) {
	mainMu.Lock()
	if !onMainThread() || mainStop != nil {
		mainMu.Unlock()
		run()
		return
	}
	stop := make(chan struct{})
	mainStop = stop
	mainMu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		run()
	}()
	exiting := true
	defer func() {
		if exiting { // runtime.Goexit: the main goroutine is ending
			fmt.Fprintln(os.Stderr, "glctx: a function called runtime.Goexit on the main thread; glctx.Main exits the process when its run returns")
			serveMain(done, stop)
			os.Exit(1)
		}
	}()
	serveMain(done, stop)
	exiting = false
}

// serveMain runs OnMain's functions until done is closed, then stops.
func serveMain(done, stop chan struct{}) {
	for {
		select {
		case f := <-mainJobs:
			f()
		case <-done:
			mainMu.Lock()
			close(stop)
			mainStop = nil
			mainMu.Unlock()
			return
		}
	}
}

// OnMain runs f on the main thread while Main serves, else at once on the
// caller's thread, and waits for it. GLFW wants its window and event calls
// there (macOS demands it). A panic in f is re-raised in the caller.
func OnMain(f func()) {
	mainMu.Lock()
	stop := mainStop
	mainMu.Unlock()
	if stop == nil || onMainThread() {
		f()
		return
	}
	var p any
	panicked, returned := false, false
	done := make(chan struct{})
	select {
	case mainJobs <- func() {
		defer close(done) // after a runtime.Goexit too
		p, panicked = protect(f)
		returned = true
	}:
		<-done
	case <-stop:
		f()
	}
	if returned && panicked {
		panic(p)
	}
}
