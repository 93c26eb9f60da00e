package glctx

// The main-thread server: GLFW's window and event calls must run on the
// process's main thread (macOS enforces it; GLFW documents it for every
// platform). A program gives its main thread to GL work with Main; window
// Threads made while Main serves then run their work there, one batch per
// Thread in turn, each with its own context made current.

/*
#include <stdint.h>
uint64_t hl_self(void);
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
)

// mainTid is the pthread id of the process's main thread, recorded in init.
var mainTid uint64

func init() {
	// Go runs every init on the main thread, and only a LockOSThread made
	// during init keeps the main goroutine (and so main, or a test
	// binary's TestMain) on that thread for good. Everything else in the
	// program runs on other threads, so this costs nothing until Main.
	runtime.LockOSThread()
	mainTid = uint64(C.hl_self())
}

// onMainThread reports whether the caller runs on the main thread.
func onMainThread() bool { return uint64(C.hl_self()) == mainTid }

// mainOff, set by tests, keeps new Threads off the main thread as if Main
// were not serving.
var mainOff bool

// Main gives the calling goroutine's thread, which must be the process's
// main thread (call it from main, or from a test binary's TestMain), to GL
// work: it runs run on another goroutine and, until run returns, serves on
// the main thread every Thread made with a GLFW context (Options.Window, or
// Context "glfw") while it serves. EGL Threads, and GLFW Threads made when
// Main is not serving, keep an OS thread of their own, as before.
//
// When run returns, Main stops serving: Threads that run left open on the
// main thread are closed (their queued work runs first, later calls get
// ErrClosed), and Threads made afterwards get threads of their own. Called
// off the main thread, or from inside run, Main just calls run.
//
// A function that calls runtime.Goexit on the main thread (t.FailNow in a
// Call, say) ends its Thread as it would on a thread of its own, but it
// also ends the main goroutine, so Main cannot return: it serves on until
// run returns and then exits the process with status 1.
func Main(run func()) {
	if !onMainThread() || !mainSrv.begin() {
		run()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		run()
	}()
	mainSrv.serve(done)
}

// mainServer is Main's state.
type mainServer struct {
	mu      sync.Mutex
	serving bool
	starts  []opening     // Threads to open on the main thread
	wake    chan struct{} // work for the main thread; capacity 1

	// Main thread only.
	threads []*Thread // open Threads on the main thread
	pass    []*Thread // the Threads served in one pass
	stack   []frame   // Threads whose work is running, innermost last
	current *Thread   // whose context is current on the main thread
}

var mainSrv = mainServer{wake: make(chan struct{}, 1)}

// opening is what a Thread needs to open its context.
type opening struct {
	t       *Thread
	o       Options
	kinds   []string
	ready   chan<- error
	abandon <-chan struct{}
	inline  bool // New runs on the main thread itself; ready is buffered
}

// frame is a Thread's work in progress on the main thread: a batch of jobs
// and the one running, or (batch nil) a context switch for a nested Call
// or the opening of a context.
type frame struct {
	t     *Thread
	batch []job
	cur   int
}

func (s *mainServer) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serving {
		return false
	}
	s.serving = true
	return true
}

// notify wakes the main thread; it never blocks, so it may be called
// under a Thread's mutex.
func (s *mainServer) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// place hands r to the main thread when Main is serving, and reports
// whether it did. Called on the main thread itself (from inside work
// there), it opens r at once and reports inline with the result.
func (s *mainServer) place(r opening) (placed, inline bool, err error) {
	if mainOff {
		return false, false, nil
	}
	here := onMainThread()
	s.mu.Lock()
	serving := s.serving
	if serving && !here {
		s.starts = append(s.starts, r)
		s.notify()
	}
	s.mu.Unlock()
	if !serving || !here {
		return serving, false, nil
	}
	c := make(chan error, 1)
	r.ready, r.inline = c, true
	s.open(r)
	return true, true, <-c
}

// serve runs the main thread's work until done is closed.
func (s *mainServer) serve(done <-chan struct{}) {
	clean := false
	defer func() {
		if clean {
			return
		}
		// runtime.Goexit inside a job: the main goroutine is ending.
		s.goexit()
		fmt.Fprintln(os.Stderr, "glctx: a function called runtime.Goexit on the main thread; glctx.Main exits the process when its run returns")
		s.serve(done)
		os.Exit(1)
	}()
	for {
		select {
		case <-s.wake:
		case <-done:
		}
		s.mu.Lock()
		starts := s.starts
		s.starts = nil
		s.mu.Unlock()
		for _, r := range starts {
			s.open(r)
		}
		// A copy: work may open or close Threads meanwhile.
		s.pass = append(s.pass[:0], s.threads...)
		for _, t := range s.pass {
			s.step(t)
		}
		clear(s.pass)
		select {
		case <-done:
			s.shutdown()
			clean = true
			return
		default:
		}
	}
}

// shutdown ends serving: openings still queued get threads of their own,
// and the Threads left open on the main thread are closed.
func (s *mainServer) shutdown() {
	s.mu.Lock()
	s.serving = false
	starts := s.starts
	s.starts = nil
	s.mu.Unlock()
	for _, r := range starts {
		go r.t.loop(r.o, r.kinds, r.ready, r.abandon)
	}
	for _, t := range slices.Clone(s.threads) {
		t.mu.Lock()
		t.closing = true
		t.mu.Unlock()
		s.step(t)
	}
}

// open makes r's context on the main thread and, if it works and New
// still waits, adds the Thread to those served.
func (s *mainServer) open(r opening) {
	t := r.t
	t.onMain, t.tid = true, mainTid
	s.stack = append(s.stack, frame{t: t})
	if beforeOpen != nil {
		beforeOpen(t)
	}
	err := t.open(r.o, r.kinds)
	s.stack = s.stack[:len(s.stack)-1]
	t.win = t.glfwWin
	s.current = nil
	if err == nil {
		s.current = t // openGLFW made it current
	}
	if r.inline {
		r.ready <- err
	} else {
		select {
		case r.ready <- err:
		case <-r.abandon:
			if err == nil {
				_ = t.release()
				s.current = nil
			}
			err = errAbandoned
		}
	}
	if err != nil {
		t.finishThread()
		close(t.done)
	} else {
		s.threads = append(s.threads, t)
	}
	s.restore()
}

// step runs the work queued for t and, once t is closing and its queue is
// empty, frees it.
func (s *mainServer) step(t *Thread) {
	for !t.finished() {
		t.mu.Lock()
		batch, closing := t.queue, t.closing
		if len(batch) == 0 {
			t.mu.Unlock()
			if closing {
				s.finish(t)
			}
			return
		}
		t.queue, t.spare = t.spare[:0], nil
		t.mu.Unlock()
		s.runBatch(t, batch)
		if !closing {
			return
		}
	}
}

// runBatch runs batch, taken from t's queue, with t's context current.
func (s *mainServer) runBatch(t *Thread, batch []job) {
	k := len(s.stack)
	s.stack = append(s.stack, frame{t: t, batch: batch})
	s.switchTo(t)
	for i := range batch {
		s.stack[k].cur = i
		t.run(&batch[i])
		batch[i] = job{}
	}
	s.stack = s.stack[:k]
	t.mu.Lock()
	t.spare = batch[:0]
	t.mu.Unlock()
	s.restore()
}

// visit runs, from inside other work on the main thread, what is queued
// for t (not running) and then j: t's work in order, without a wait that
// could never end.
func (s *mainServer) visit(t *Thread, j job) error {
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		return ErrClosed
	}
	batch := append(t.queue, j)
	t.queue, t.spare = t.spare[:0], nil
	t.mu.Unlock()
	s.runBatch(t, batch)
	return nil
}

// inline runs f with t's context current, for a Call from inside t's own
// work (t is in the stack, perhaps under another Thread's work).
func (s *mainServer) inline(t *Thread, f func()) {
	s.stack = append(s.stack, frame{t: t})
	s.switchTo(t)
	defer func() {
		s.stack = s.stack[:len(s.stack)-1]
		s.restore()
	}()
	f()
}

// closeHere closes t (not running) from inside other work on the main
// thread.
func (s *mainServer) closeHere(t *Thread) {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
	s.step(t)
}

// finish frees a closing Thread whose queue is empty.
func (s *mainServer) finish(t *Thread) {
	s.switchTo(t)
	t.closeErr = t.takePending()
	if err := t.release(); t.closeErr == nil {
		t.closeErr = err
	}
	s.current = nil // release detached the context
	t.finishThread()
	s.remove(t)
	close(t.done)
	s.restore()
}

// goexit ends every Thread whose work was running when a function called
// runtime.Goexit: the caller of the job running gets an error, the rest
// ErrClosed.
func (s *mainServer) goexit() {
	for i := len(s.stack) - 1; i >= 0; i-- {
		f := s.stack[i]
		if f.batch != nil && !f.t.finished() {
			f.t.die(f.batch[f.cur], f.batch[f.cur+1:])
			s.remove(f.t)
		}
	}
	s.stack = nil
	s.current = nil
}

func (s *mainServer) remove(t *Thread) {
	s.threads = slices.DeleteFunc(s.threads, func(u *Thread) bool { return u == t })
}

// running reports whether t's work is running on the main thread (t is in
// the stack); main thread only.
func (s *mainServer) running(t *Thread) bool {
	return slices.ContainsFunc(s.stack, func(f frame) bool { return f.t == t })
}

// top is the Thread whose work runs innermost, nil when none; main thread
// only.
func (s *mainServer) top() *Thread {
	if len(s.stack) == 0 {
		return nil
	}
	return s.stack[len(s.stack)-1].t
}

// switchTo makes t's context current on the main thread.
func (s *mainServer) switchTo(t *Thread) {
	if s.current != t && t.glfwWin != nil {
		t.glfwWin.MakeContextCurrent()
		s.current = t
	}
}

// restore makes the innermost running Thread's context current again.
func (s *mainServer) restore() {
	if t := s.top(); t != nil {
		s.switchTo(t)
	}
}
