// Package glctx is the one home of the OpenGL platform: a Thread is an OS
// thread that owns one OpenGL core context and runs the GL work handed to it.
//
// The context comes from EGL (no X server needed: GPU servers, CI) or from a
// GLFW window (the viewer, which needs a display). Both the compute backend
// and the viewer borrow a Thread instead of making contexts of their own.
//
// Thread rules:
//   - A GL context is current on one OS thread at a time, so all GL calls go
//     through Call (wait for the result) or Go (queue and return at once).
//     Both run their functions in order on the Thread's own locked thread.
//   - Call may be used from inside a function running on the thread (it then
//     runs inline); Sync and Close may not, as they would wait for themselves.
//   - go-gl keeps its function pointers in package globals. Initialise the
//     go-gl version package you use once with gl.InitWithProcAddrFunc(
//     t.ProcAddr), inside Call. On Linux (glvnd) the pointers are dispatch
//     stubs that serve whichever context is current, so one initialisation
//     serves every Thread, EGL and GLFW alike.
//   - A GLFW window, and glfw.PollEvents, belong to the thread too: use
//     them only inside Call.
//   - GLFW wants its window and event calls on the process's main thread
//     (macOS demands it). A program that calls Main from main gives that
//     thread to every GLFW Thread made while Main serves: their work then
//     runs there, in turn, each with its context made current, and the
//     rules above hold as they do for a thread of its own. Without Main, a
//     GLFW Thread has an OS thread of its own, as an EGL Thread always has.
package glctx

/*
#include <stdint.h>
#include <pthread.h>
// hl_self identifies the calling OS thread (declared again in debug.go).
uint64_t hl_self(void) { return (uint64_t)(uintptr_t)pthread_self(); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	gl "github.com/go-gl/gl/v4.1-core/gl"
	"github.com/go-gl/glfw/v3.3/glfw"
)

// Options says what context New makes.
type Options struct {
	// Context picks how the context is made: "" or "auto" (GLFW when Window
	// is set; otherwise EGL, device platform first then surfaceless, and
	// GLFW's hidden window as a last resort only when DISPLAY is set),
	// "egl" (device then surfaceless), "egl-device", "egl-surfaceless",
	// "glfw". HEADLAB_GL_CONTEXT in the environment overrides it (CI uses it
	// to run the compute tests once per path), except for Window threads,
	// which only GLFW can give: there it would only break the viewer.
	//
	// Where EGL lists an NVIDIA (CUDA) device, the device platform uses
	// that one (CUDA's device 0, or HEADLAB_EGL_DEVICE's number, as CUDA
	// numbers devices under CUDA_VISIBLE_DEVICES), and if it fails New
	// fails: no other device or platform is tried, lest a GPU server train
	// on a software renderer. Only "auto" spelt out (or
	// "egl-surfaceless", which never tries a device) goes on to the next
	// device or platform; Fallback then says what failed.
	Context string
	// Major and Minor are the core profile version wanted; 0,0 means 4.3.
	// The driver may give a later, compatible version.
	Major, Minor int
	// Window asks for a GLFW window (created hidden) that the caller may
	// show, resize and draw to; it requires GLFW and so a display.
	Window bool
	// Width and Height size the window (default 640x480); only with Window.
	Width, Height int
	// Title is the window's title (default "headlab"); only with Window.
	Title string
	// Debug asks for a debug context and a synchronous KHR_debug callback,
	// whose error messages join the errors Call and Sync return; queued work
	// is then checked after every function instead of at the next Call or
	// Sync. HEADLAB_GL_DEBUG=1 in the environment sets it too.
	Debug bool
}

// ErrClosed is returned by Call and Sync once the Thread is closed.
var ErrClosed = errors.New("glctx: GL thread is closed")

// errAbandoned ends a thread whose New gave up waiting for it.
var errAbandoned = errors.New("abandoned")

// The kinds of context; Kind reports one of the first three.
const (
	kindDevice      = "egl-device"
	kindSurfaceless = "egl-surfaceless"
	kindGLFW        = "glfw"
)

// newTimeout bounds New: a display that accepts a connection and never
// answers, or a driver stuck in initialisation, must not hang the caller.
// A variable so that the test can shorten it.
var newTimeout = 30 * time.Second

// beforeOpen, when set, runs on the GL thread before any context is made;
// the test uses it to simulate a driver that hangs.
var beforeOpen func(*Thread)

// Thread is an OS thread holding an OpenGL context and running the work
// queued to it. Its methods may be called from any goroutine.
type Thread struct {
	// Set on the GL thread before New returns, read-only afterwards.
	kind         string
	renderer     string
	fallback     string // the NVIDIA device's failure that Context auto went past
	major, minor int
	debug        bool
	tid          uint64       // pthread_self of the GL thread
	win          *glfw.Window // published copy of glfwWin, never changed after New
	onMain       bool         // served on the main thread by Main

	mu      sync.Mutex
	cond    *sync.Cond // signalled when queue grows or closing is set
	queue   []job
	spare   []job // the other queue buffer, so batches do not allocate
	closing bool  // Close was called (or the thread died): no new jobs

	done      chan struct{} // closed when the GL thread has finished
	closeOnce sync.Once
	closeErr  error // set on the GL thread before done is closed

	// GL thread only.
	pending  error    // first error of Go work not yet reported
	dbgErrs  []string // KHR_debug error messages since the last check
	dbgMore  int      // messages dropped beyond maxDebugErrs
	eglTried bool     // EGL was used on this thread: release it at the end
	passed   error    // an NVIDIA device's failure that fallback went past
	glfwWin  *glfw.Window
	egl      *eglState
}

type jobKind uint8

const (
	jobGo jobKind = iota
	jobCall
	jobSync
)

// job is one unit of work for the GL thread. res is nil for Go.
type job struct {
	f    func()
	kind jobKind
	res  chan result
}

// result is what the GL thread hands back to a waiting Call or Sync.
type result struct {
	err      error
	p        any
	panicked bool
}

// resPool recycles the one-slot channels Call and Sync wait on, so a Call
// costs no allocation beyond its closure.
var resPool = sync.Pool{New: func() any { return make(chan result, 1) }}

// New starts the GL thread and makes a context on it as o asks. It never
// panics: when no context can be made it returns a one-line error that says
// why, and it gives up after a timeout rather than hang on a dead display.
func New(o Options) (*Thread, error) {
	fromEnv := false
	if env := os.Getenv("HEADLAB_GL_CONTEXT"); env != "" && !o.Window {
		o.Context, fromEnv = env, true
	}
	if os.Getenv("HEADLAB_GL_DEBUG") == "1" {
		o.Debug = true
	}
	kinds, err := plan(&o, fromEnv)
	if err != nil {
		return nil, err
	}
	t := &Thread{done: make(chan struct{}), debug: o.Debug}
	t.cond = sync.NewCond(&t.mu)
	ready := make(chan error)
	abandon := make(chan struct{})
	// A GLFW context goes to the main thread while Main serves there.
	placed := false
	if kinds[0] == kindGLFW {
		var inline bool
		placed, inline, err = mainSrv.place(opening{t: t, o: o, kinds: kinds, ready: ready, abandon: abandon})
		if inline { // New runs on the main thread: opened already
			if err != nil {
				return nil, err
			}
			return t, nil
		}
	}
	if !placed {
		go t.loop(o, kinds, ready, abandon)
	}
	timer := time.NewTimer(newTimeout)
	defer timer.Stop()
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
		return t, nil
	case <-timer.C:
		// The thread frees what it made if it ever gets there.
		close(abandon)
		what := "the EGL driver not answering?"
		if slices.Contains(kinds, kindGLFW) {
			what = fmt.Sprintf("display %q or the driver not answering?", os.Getenv("DISPLAY"))
		}
		return nil, fmt.Errorf("glctx: no OpenGL context after %v (%s)", newTimeout, what)
	}
}

// plan validates o, fills in defaults and returns the kinds of context to
// try, in order.
func plan(o *Options, fromEnv bool) ([]string, error) {
	switch {
	case o.Major < 0 || o.Minor < 0:
		return nil, fmt.Errorf("glctx: bad OpenGL version %d.%d", o.Major, o.Minor)
	case o.Major == 0 && o.Minor == 0:
		o.Major, o.Minor = 4, 3
	case o.Major < 3 || o.Major == 3 && o.Minor < 2:
		return nil, fmt.Errorf("glctx: OpenGL %d.%d has no core profile (3.2 or later needed)", o.Major, o.Minor)
	}
	if o.Window {
		if o.Width < 0 || o.Height < 0 {
			return nil, fmt.Errorf("glctx: bad window size %dx%d", o.Width, o.Height)
		}
		if o.Width == 0 {
			o.Width = 640
		}
		if o.Height == 0 {
			o.Height = 480
		}
		if o.Title == "" {
			o.Title = "headlab"
		}
	}
	src := "Options.Context"
	if fromEnv {
		src = "HEADLAB_GL_CONTEXT"
	}
	var kinds []string
	switch o.Context {
	case "", "auto":
		if o.Window {
			return []string{kindGLFW}, nil
		}
		kinds = []string{kindDevice, kindSurfaceless}
		if os.Getenv("DISPLAY") != "" {
			kinds = append(kinds, kindGLFW)
		}
	case "egl":
		kinds = []string{kindDevice, kindSurfaceless}
	case kindDevice, kindSurfaceless, kindGLFW:
		kinds = []string{o.Context}
	default:
		return nil, fmt.Errorf("glctx: unknown context kind %q in %s (want auto, egl, egl-device, egl-surfaceless or glfw)", o.Context, src)
	}
	if o.Window && kinds[0] != kindGLFW {
		return nil, fmt.Errorf("glctx: a window needs a GLFW context, but %s asks for %q", src, o.Context)
	}
	return kinds, nil
}

// loop is the GL thread. It never unlocks the OS thread, so the thread that
// held the context ends with the goroutine.
func (t *Thread) loop(o Options, kinds []string, ready chan<- error, abandon <-chan struct{}) {
	runtime.LockOSThread()
	t.tid = uint64(C.hl_self())
	if beforeOpen != nil {
		beforeOpen(t)
	}
	err := t.open(o, kinds)
	t.win = t.glfwWin
	select {
	case ready <- err:
	case <-abandon:
		if err == nil {
			_ = t.release()
		}
		err = errAbandoned
	}
	if err != nil {
		t.finishThread()
		close(t.done)
		return
	}
	t.serve()
}

// open makes the first context of kinds that works current on this thread,
// and checks its version. The error names every kind tried.
func (t *Thread) open(o Options, kinds []string) error {
	var errs []string
	noDriver, choice := false, false
	for _, k := range kinds {
		err := t.openKind(o, k)
		if err == nil {
			if t.passed != nil {
				t.fallback = oneLine(t.passed.Error())
			}
			return nil
		}
		errs = append(errs, k+": "+err.Error())
		noDriver = noDriver || errors.Is(err, errNoDriver)
		choice = choice || errors.Is(err, ErrDeviceChoice)
		if errors.Is(err, errNoFallback) {
			break
		}
	}
	msg := strings.Join(errs, "; ")
	if len(errs) > 1 {
		msg = fmt.Sprintf("no OpenGL %d.%d core context: %s", o.Major, o.Minor, msg)
	}
	if noDriver {
		msg += "; " + vendorHint()
	}
	err := errors.New("glctx: " + msg)
	if choice {
		err = marked{err, []error{ErrDeviceChoice}}
	}
	return err
}

// openKind tries one kind; on failure it has released what it made.
func (t *Thread) openKind(o Options, kind string) (err error) {
	defer func() {
		// go-gl/glfw panics on errors it classes as programmer errors; New
		// promises an error instead.
		if p := recover(); p != nil {
			err = fmt.Errorf("context creation panicked: %v", oneLine(fmt.Sprint(p)))
		}
		if err != nil {
			_ = t.release()
		}
	}()
	t.kind = kind
	switch kind {
	case kindGLFW:
		t.glfwWin, err = openGLFW(o)
	default:
		t.eglTried = true
		var passed error
		t.egl, passed, err = openEGL(kind, o)
		if t.passed == nil {
			t.passed = passed
		}
	}
	if err != nil {
		return err
	}
	if err := initGL(t.procAddrHere); err != nil {
		return err
	}
	var major, minor int32
	gl.GetIntegerv(gl.MAJOR_VERSION, &major)
	gl.GetIntegerv(gl.MINOR_VERSION, &minor)
	t.major, t.minor = int(major), int(minor)
	t.renderer = gl.GoStr(gl.GetString(gl.RENDERER)) + ", OpenGL " + gl.GoStr(gl.GetString(gl.VERSION))
	if !atLeast(t.major, t.minor, o.Major, o.Minor) {
		return versionError(o.Major, o.Minor, fmt.Sprintf("%d.%d", major, minor))
	}
	if t.debug {
		t.enableDebug()
	}
	// Errors left by context set-up are not the first Call's.
	for gl.GetError() != gl.NO_ERROR {
	}
	return nil
}

func atLeast(major, minor, wantMajor, wantMinor int) bool {
	return major > wantMajor || major == wantMajor && minor >= wantMinor
}

// glVersion is a GL version read from a probe context.
type glVersion struct{ major, minor int }

func (v glVersion) atLeast(major, minor int) bool { return atLeast(v.major, v.minor, major, minor) }
func (v glVersion) String() string                { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// currentVersion parses GL_VERSION of the context current on this thread
// (GL_MAJOR_VERSION does not exist before 3.0, so a probe cannot use it).
func currentVersion(proc func(string) unsafe.Pointer) (v glVersion, ok bool) {
	if initGL(proc) != nil {
		return v, false
	}
	p := gl.GetString(gl.VERSION)
	if p == nil {
		return v, false
	}
	_, err := fmt.Sscanf(gl.GoStr(p), "%d.%d", &v.major, &v.minor)
	return v, err == nil
}

// versionError is the one-line error for a driver that offers too old a GL.
func versionError(major, minor int, gives string) error {
	return fmt.Errorf("OpenGL %d.%d needed, driver gives %s", major, minor, gives)
}

// glMu guards the one-time initialisation of glctx's own go-gl functions.
var (
	glMu     sync.Mutex
	glInited bool
)

// initGL loads glctx's go-gl (4.1 core) functions once per process: go-gl
// keeps them in globals, and under glvnd they serve every context.
func initGL(proc func(string) unsafe.Pointer) error {
	glMu.Lock()
	defer glMu.Unlock()
	if glInited {
		return nil
	}
	if err := gl.InitWithProcAddrFunc(proc); err != nil {
		return fmt.Errorf("loading OpenGL functions: missing %v", err)
	}
	glInited = true
	return nil
}

// InitGL41 makes sure go-gl's v4.1-core package
// (github.com/go-gl/gl/v4.1-core/gl) has its functions loaded, for drawing
// code that uses it (the viewer). glctx uses that package itself and loads
// it with the first context it makes, once per process; a user must not
// call its InitWithProcAddrFunc again, since its function table is package
// globals that other Threads read meanwhile. For a Thread that New
// returned this does nothing and returns nil.
func (t *Thread) InitGL41() error { return initGL(t.ProcAddr) }

// serve runs queued work until Close, then frees the context.
func (t *Thread) serve() {
	var batch []job // the jobs taken from the queue
	cur := -1       // the one running
	clean := false
	defer func() {
		if !clean {
			// A function called runtime.Goexit (t.FailNow in a test, say):
			// the goroutine, and with it the locked thread, is ending.
			t.die(batch[cur], batch[cur+1:])
		}
	}()
	for {
		t.mu.Lock()
		for len(t.queue) == 0 && !t.closing {
			t.cond.Wait()
		}
		if len(t.queue) == 0 {
			t.mu.Unlock()
			break
		}
		batch = t.queue
		t.queue, t.spare = t.spare[:0], nil
		t.mu.Unlock()
		for cur = range batch {
			t.run(&batch[cur])
			batch[cur] = job{}
		}
		t.mu.Lock()
		t.spare = batch[:0]
		t.mu.Unlock()
	}
	clean = true
	t.closeErr = t.takePending()
	if err := t.release(); t.closeErr == nil {
		t.closeErr = err
	}
	t.finishThread()
	close(t.done)
}

// die ends a thread whose goroutine is exiting under it while running cur:
// its caller gets an error, the jobs after it (rest, then the queue)
// ErrClosed, later calls ErrClosed too, and the context is freed.
func (t *Thread) die(cur job, rest []job) {
	t.mu.Lock()
	t.closing = true
	rest = append(rest, t.queue...)
	t.queue = nil
	t.mu.Unlock()
	exitErr := errors.New("glctx: a function called runtime.Goexit on the GL thread, which has ended")
	if cur.res != nil {
		cur.res <- result{err: exitErr}
	}
	for _, j := range rest {
		if j.res != nil {
			j.res <- result{err: ErrClosed}
		}
	}
	t.closeErr = exitErr
	_ = t.release()
	t.finishThread()
	close(t.done)
}

// run runs one job on the GL thread.
func (t *Thread) run(j *job) {
	switch j.kind {
	case jobGo:
		p, panicked := protect(j.f)
		switch {
		case panicked:
			// GL errors before the panic came first.
			t.keep(t.takeErr("in work queued with Go"))
			t.keep(fmt.Errorf("glctx: panic in work queued with Go: %v", p))
		case t.debug:
			t.keep(t.takeErr("in work queued with Go"))
		}
	case jobCall:
		j.res <- t.runCall(j.f)
	case jobSync:
		j.res <- result{err: t.takePending()}
	}
}

// runCall runs f for Call on the GL thread. Errors of earlier Go work come
// first; after a panic they stay kept for the next Call or Sync.
func (t *Thread) runCall(f func()) result {
	before := t.takePending()
	p, panicked := protect(f)
	if panicked {
		_ = t.takeErr("") // the panic is the report
		t.pending = before
		return result{p: p, panicked: true}
	}
	err := t.takeErr("in Call")
	if before != nil {
		err = before
	}
	return result{err: err}
}

// keep records err as the pending error unless one is already kept.
func (t *Thread) keep(err error) {
	if t.pending == nil {
		t.pending = err
	}
}

// takePending returns and clears the first error of Go work, checking GL's
// error flags first: outside debug mode Go work is not checked one by one,
// because glGetError can be a round trip to the driver on some GPUs.
func (t *Thread) takePending() error {
	t.keep(t.takeErr("in work queued with Go"))
	err := t.pending
	t.pending = nil
	return err
}

// protect runs f and reports a panic's value instead of unwinding.
func protect(f func()) (p any, panicked bool) {
	panicked = true
	defer func() {
		if panicked {
			p = recover()
		}
	}()
	f()
	panicked = false
	return nil, false
}

// enqueue adds j for the GL thread, or reports ErrClosed.
func (t *Thread) enqueue(j job) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return ErrClosed
	}
	t.queue = append(t.queue, j)
	t.signal()
	return nil
}

// signal wakes whichever thread serves t; t.mu is held.
func (t *Thread) signal() {
	if t.onMain {
		mainSrv.notify()
	} else {
		t.cond.Signal()
	}
}

// finished reports whether the thread has ended.
func (t *Thread) finished() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// visiting reports whether the caller is other work on the main thread
// that t, a Thread served there, must not wait for: its queue then runs
// inline (mainServer.visit).
func (t *Thread) visiting() bool { return t.onMain && onMainThread() }

// onThread reports whether the caller runs on this Thread's GL thread. The
// thread id is read before done is checked: a live GL thread's id belongs
// to nobody else, while a finished one's may be reused.
func (t *Thread) onThread() bool {
	self := uint64(C.hl_self())
	if t.finished() || self != t.tid {
		return false
	}
	// The main thread serves several Threads: t's own work must be running.
	return !t.onMain || mainSrv.running(t)
}

// wait queues a job of kind k and waits for its result.
func (t *Thread) wait(k jobKind, f func()) result {
	res := resPool.Get().(chan result)
	j := job{f: f, kind: k, res: res}
	var err error
	if t.visiting() {
		err = mainSrv.visit(t, j) // runs it now: the main thread is the caller's
	} else {
		err = t.enqueue(j)
	}
	if err != nil {
		resPool.Put(res)
		return result{err: err}
	}
	r := <-res
	resPool.Put(res)
	return r
}

// Call runs f on the GL thread with the context current and waits for it.
// It returns the first error since the last Call or Sync: one of work queued
// with Go, or the GL errors f left (glGetError drained, and in debug mode
// the KHR_debug error messages), so that they are not blamed on later work;
// or ErrClosed. A panic in f is re-raised in the caller. Called from the GL
// thread itself (inside f), it runs f at once.
func (t *Thread) Call(f func()) error {
	var r result
	switch {
	case t.onThread() && t.onMain:
		mainSrv.inline(t, func() { r = t.runCall(f) })
	case t.onThread():
		r = t.runCall(f)
	default:
		r = t.wait(jobCall, f)
	}
	if r.panicked {
		panic(r.p)
	}
	return r.err
}

// Go queues f for the GL thread and returns at once, so that a caller can
// queue many dispatches without waiting for each. A panic or GL error in f
// is kept and returned by the next Call or Sync. After Close, f is dropped.
func (t *Thread) Go(f func()) {
	if f != nil {
		_ = t.enqueue(job{f: f, kind: jobGo})
	}
}

// Sync waits until everything queued before it has run and returns the
// first error since the last Sync or Call, or ErrClosed. It must not be
// called on the GL thread, where it would wait for itself.
func (t *Thread) Sync() error {
	if t.onThread() {
		return errors.New("glctx: Sync called on the GL thread (inside Call or Go) would wait for itself")
	}
	return t.wait(jobSync, nil).err
}

// ProcAddr returns the address of the GL function name, for
// gl.InitWithProcAddrFunc of whichever go-gl version package the caller
// uses. Call it on the GL thread (inside Call): GLFW looks functions up in
// the context current there. Off the thread it hands the look-up to the
// thread. It returns nil for an unknown function or a closed Thread.
func (t *Thread) ProcAddr(name string) unsafe.Pointer {
	if t.win == nil {
		return eglProcAddr(name)
	}
	var p unsafe.Pointer
	if t.onThread() {
		if t.onMain {
			mainSrv.inline(t, func() { p = t.procAddrHere(name) })
			return p
		}
		return t.procAddrHere(name)
	}
	if t.wait(jobCall, func() { p = t.procAddrHere(name) }).err != nil {
		return nil
	}
	return p
}

// procAddrHere looks name up on the GL thread.
func (t *Thread) procAddrHere(name string) unsafe.Pointer {
	if t.glfwWin != nil {
		return glfw.GetProcAddress(name)
	}
	return eglProcAddr(name)
}

// Window returns the GLFW window whose context the thread holds, nil for EGL
// contexts. It is hidden (1x1 unless Options.Window sized it); the viewer
// shows and resizes it. Like the context it belongs to the GL thread: use
// it only inside Call. Close destroys it.
func (t *Thread) Window() *glfw.Window { return t.win }

// Renderer reports GL_RENDERER and GL_VERSION, e.g. "llvmpipe (LLVM 15.0.6,
// 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6", for reports.
func (t *Thread) Renderer() string { return t.renderer }

// Fallback is empty unless an NVIDIA (CUDA) EGL device failed and, as
// Context "auto" allows, another device or platform gave the context;
// it then says, in one line, what failed. Renderer names what was got.
func (t *Thread) Fallback() string { return t.fallback }

// Kind reports how the context was made: "egl-device", "egl-surfaceless" or
// "glfw".
func (t *Thread) Kind() string { return t.kind }

// Version reports the OpenGL version the context gives, which may be later
// than the one asked for.
func (t *Thread) Version() (major, minor int) { return t.major, t.minor }

// Close runs the work already queued, frees the context (and window) and
// ends the thread. It returns an error of that work not yet reported, or
// one from freeing the context. Later calls do nothing and return nil; Call
// and Sync then return ErrClosed and Go drops its function.
func (t *Thread) Close() error {
	if t.onThread() {
		return errors.New("glctx: Close called on the GL thread (inside Call or Go) would wait for itself")
	}
	err := error(nil)
	t.closeOnce.Do(func() {
		if t.visiting() {
			mainSrv.closeHere(t)
		} else {
			t.mu.Lock()
			t.closing = true
			t.signal()
			t.mu.Unlock()
		}
		<-t.done
		err = t.closeErr
	})
	return err
}

// release frees the context and window on the GL thread; safe to call
// when nothing was made.
func (t *Thread) release() error {
	if t.debug && !t.onMain {
		dbgThreads.Delete(t.tid)
	}
	var err error
	if t.egl != nil {
		err = t.egl.release()
		t.egl = nil
	}
	if t.glfwWin != nil {
		releaseGLFW(t.glfwWin)
		t.glfwWin = nil
	}
	return err
}

// finishThread drops the thread's EGL state; the OS thread ends next.
func (t *Thread) finishThread() {
	if t.eglTried {
		eglReleaseThread()
	}
}

// oneLine keeps errors from drivers to one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
