package glctx

// The loop: one OS thread that runs GL work, as Ebitengine's
// internal/thread. An EGL Thread has a loop of its own. Under Main, the
// process's main thread is one loop shared by the GLFW Threads made while
// it serves (GLFW wants its window and event calls there): it runs each
// Thread's queued work in turn, with that Thread's context current.

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
	"slices"
	"sync"
)

// self identifies the calling OS thread.
func self() uint64 { return uint64(C.hl_self()) }

// loop is an OS thread running the work of its Threads.
type loop struct {
	tid  uint64        // the OS thread's pthread_self
	wake chan struct{} // capacity 1: a Thread has work, or is closing

	// The main loop's: whether Main serves, and the Threads waiting to
	// open there.
	mu      sync.Mutex
	serving bool
	starts  []func(*loop)

	// Loop only.
	threads []*Thread // the open Threads it serves
	pass    []*Thread // the Threads of one pass over them
	cur     *Thread   // whose context is current
	egl     bool      // EGL was used here: release its thread state at the end
}

// mainLoop is the main thread's loop, serving while Main runs.
var mainLoop = loop{wake: make(chan struct{}, 1)}

func init() {
	// Go runs every init on the main thread, and only a LockOSThread made
	// during init keeps the main goroutine (and so main, or a test
	// binary's TestMain) on that thread for good. Everything else in the
	// program runs on other threads, so this costs nothing until Main.
	runtime.LockOSThread()
	mainLoop.tid = self()
}

// onMainThread reports whether the caller runs on the main thread.
func onMainThread() bool { return self() == mainLoop.tid }

// Main gives the calling goroutine's thread, which must be the process's
// main thread (call it from main, or from a test binary's TestMain), to GL
// work: it runs run on another goroutine and, until run returns, runs on
// the main thread the work of every Thread made with a GLFW context
// (Options.Window, or Context "glfw") meanwhile. EGL Threads, and GLFW
// Threads made when Main is not serving, have an OS thread of their own.
//
// When run returns, Main stops serving: the Threads run left open there
// are closed (their queued work runs first, later calls get ErrClosed).
// Called off the main thread, or from inside run, Main just calls run.
//
// A function that calls runtime.Goexit on the main thread (t.FailNow in a
// Call, say) ends its Thread as it would on a thread of its own, but it
// also ends the main goroutine, so Main cannot return: it serves on until
// run returns and then exits the process with status 1.
func Main(run func()) {
	if !onMainThread() || !mainLoop.begin() {
		run()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		run()
	}()
	exiting := true
	defer func() {
		if exiting { // runtime.Goexit: the main goroutine is ending
			fmt.Fprintln(os.Stderr, "glctx: a function called runtime.Goexit on the main thread; glctx.Main exits the process when its run returns")
			mainLoop.serve(done)
			mainLoop.shutdown()
			os.Exit(1)
		}
	}()
	mainLoop.serve(done)
	mainLoop.shutdown()
	exiting = false
}

func (l *loop) begin() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.serving {
		return false
	}
	l.serving = true
	return true
}

// servingHere reports whether the caller is work running on the main
// loop, which cannot wait for that loop.
func (l *loop) servingHere() bool {
	if !onMainThread() {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.serving
}

// place hands start to the main loop, and reports false when Main is not
// serving.
func (l *loop) place(start func(*loop)) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.serving {
		l.starts = append(l.starts, start)
		l.notify()
	}
	return l.serving
}

// ownLoop runs start and then the one Thread it opened on an OS thread of
// its own, until that Thread ends. The thread is never unlocked, so it
// ends with the goroutine.
func ownLoop(start func(*loop)) {
	runtime.LockOSThread()
	l := &loop{tid: self(), wake: make(chan struct{}, 1)}
	defer func() {
		if l.egl {
			eglReleaseThread()
		}
	}()
	start(l)
	for len(l.threads) > 0 {
		<-l.wake
		l.runPass()
	}
}

// serve runs the main loop until stop is closed.
func (l *loop) serve(stop <-chan struct{}) {
	for {
		select {
		case <-l.wake:
		case <-stop:
			return
		}
		l.mu.Lock()
		starts := l.starts
		l.starts = nil
		l.mu.Unlock()
		for _, start := range starts {
			start(l)
		}
		l.runPass()
	}
}

// shutdown ends serving: Threads still waiting to open get threads of
// their own, and those open on the main loop are closed.
func (l *loop) shutdown() {
	l.mu.Lock()
	l.serving = false
	starts := l.starts
	l.starts = nil
	l.mu.Unlock()
	for _, start := range starts {
		go ownLoop(start)
	}
	for _, t := range slices.Clone(l.threads) {
		t.mu.Lock()
		t.closing = true
		t.mu.Unlock()
		l.step(t)
	}
}

// notify wakes the loop; it never blocks.
func (l *loop) notify() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// runPass runs the queued work of each Thread in turn.
func (l *loop) runPass() {
	l.pass = append(l.pass[:0], l.threads...) // work may open or close Threads
	for _, t := range l.pass {
		l.step(t)
	}
	clear(l.pass)
}

// step runs the work queued for t and, once t is closing and its queue is
// empty, frees it.
func (l *loop) step(t *Thread) {
	for !t.finished() {
		t.mu.Lock()
		batch, closing := t.queue, t.closing
		if len(batch) == 0 {
			t.mu.Unlock()
			if closing {
				l.finish(t)
			}
			return
		}
		t.queue, t.spare = t.spare[:0], nil
		t.mu.Unlock()
		l.run(t, batch)
		if !closing {
			return
		}
	}
}

// run runs batch, taken from t's queue, with t's context current.
func (l *loop) run(t *Thread, batch []job) {
	prev := l.enter(t)
	i := 0
	defer func() {
		if i < len(batch) { // batch[i] called runtime.Goexit
			t.die(&batch[i], batch[i+1:])
		}
		l.leave(t, prev)
	}()
	for ; i < len(batch); i++ {
		t.do(batch[i])
		batch[i] = job{}
	}
	t.mu.Lock()
	t.spare = batch[:0]
	t.mu.Unlock()
}

// nested runs f for t from inside work running on t's loop, which cannot
// wait for itself: at once when t's own work is running (a Call from
// inside it), else after t's queued work (work of another Thread on the
// main loop calling t). f runs with t's context current; the context of
// the work around it is restored after.
func (l *loop) nested(t *Thread, f func()) error {
	if t.running == 0 {
		l.step(t)
		if t.finished() {
			return ErrClosed
		}
	}
	prev := l.enter(t)
	ok := false
	defer func() {
		if !ok { // f called runtime.Goexit
			t.die(nil, nil)
		}
		l.leave(t, prev)
	}()
	f()
	ok = true
	return nil
}

// enter makes t's context current for its work and returns whose was.
func (l *loop) enter(t *Thread) (prev *Thread) {
	prev = l.cur
	l.makeCurrent(t)
	t.running++
	return prev
}

// leave ends t's work and makes prev's context current again.
func (l *loop) leave(t, prev *Thread) {
	t.running--
	l.restore(prev)
}

func (l *loop) makeCurrent(t *Thread) {
	if l.cur != t {
		if t.win != nil {
			t.win.MakeContextCurrent()
		}
		l.cur = t
	}
}

// restore makes prev's context current again, if prev is alive.
func (l *loop) restore(prev *Thread) {
	if prev != nil && !prev.finished() {
		l.makeCurrent(prev)
	}
}

// finish frees t, which is closing with an empty queue, with the errors
// of its work not yet reported as Close's.
func (l *loop) finish(t *Thread) {
	prev := l.cur
	l.makeCurrent(t)
	t.closeErr = t.takePending()
	l.free(t)
	l.restore(prev)
}

// free releases t's context and ends t.
func (l *loop) free(t *Thread) {
	l.makeCurrent(t)
	if err := t.release(); t.closeErr == nil {
		t.closeErr = err
	}
	l.cur = nil // release left no context current
	l.threads = slices.DeleteFunc(l.threads, func(u *Thread) bool { return u == t })
	close(t.done)
}
