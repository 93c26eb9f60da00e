// Package glctx is the one home of the OpenGL platform: a Thread is an OS
// thread that owns one OpenGL core context and runs the GL work handed to
// it, as Ebitengine's internal/thread does.
//
// The context comes from EGL (no X server needed: GPU servers, CI) or from a
// GLFW window (the viewer, which needs a display). Both the compute backend
// and the viewer borrow a Thread instead of making contexts of their own.
//
// Thread rules:
//   - A GL context is current on one OS thread at a time, so all GL calls go
//     through Call (wait for the result) or Go (queue and return at once).
//     Both run their functions in order on the Thread's loop, its OS thread.
//   - Call may be used from inside a function running on the loop (it then
//     runs at once); Sync and Close may not, as they would wait for
//     themselves.
//   - glctx imports no go-gl version package: it binds the few GL functions
//     it calls itself. Code that draws or computes with go-gl loads its
//     version package through a Profile, once per process, inside Call.
//   - A GLFW window, and glfw.PollEvents, belong to the loop too: use them
//     only inside Call.
//   - GLFW wants its window and event calls on the process's main thread
//     (macOS demands it). A program that calls Main from main lends that
//     thread to every GLFW Thread made while Main serves: one loop there
//     runs their work in turn, each function with its own Thread's context
//     current, and the rules above hold as they do on a loop of its own.
//     Without Main, a GLFW Thread has an OS thread of its own, as an EGL
//     Thread always has.
package glctx

import (
	"errors"
	"fmt"
	"os"
	"runtime/cgo"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

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

	// For the tests.
	timeout   time.Duration                 // New's limit; 0 means 30 s
	hold      func(*Thread)                 // runs on the loop before the context is made
	ownThread bool                          // a GLFW Thread gets its own thread, as when Main is not serving
	eglConfig bool                          // EGL uses a chosen config and a pbuffer, as on drivers without no-config contexts
	devices   func([]eglDevice) []eglDevice // edits EGL's device list before the choice
}

// ErrClosed is returned by Call and Sync once the Thread is closed.
var ErrClosed = errors.New("glctx: GL thread is closed")

// errAbandoned ends a Thread whose New gave up waiting for it.
var errAbandoned = errors.New("abandoned")

// errGoexit is the error of a Call whose function ended the loop's
// goroutine (t.FailNow in a test), and of the Thread's Close.
var errGoexit = errors.New("glctx: a function called runtime.Goexit on the GL thread, which has ended")

// The kinds of context; Kind reports one of them.
const (
	kindDevice      = "egl-device"
	kindSurfaceless = "egl-surfaceless"
	kindGLFW        = "glfw"
)

// Thread is a GL context and the loop that runs the work queued to it.
// Its methods may be called from any goroutine.
type Thread struct {
	l *loop

	// Set on the loop before New returns, read-only afterwards.
	kind         string
	renderer     string
	fallback     string // the NVIDIA device's failure that Context auto went past
	major, minor int
	debug        bool
	win          *glfw.Window
	egl          *eglState
	dbg          cgo.Handle // this Thread, for the KHR_debug callback; 0 without

	mu      sync.Mutex
	queue   []job
	spare   []job // the other queue buffer, so batches do not allocate
	closing bool  // Close was called (or the Thread died): no new jobs

	done      chan struct{} // closed when the context is freed
	closeOnce sync.Once
	closeErr  error // set on the loop before done is closed

	// Loop only.
	running int      // t's functions running on the loop, nested ones counted
	pending error    // first error of Go work not yet reported
	dbgErrs []string // KHR_debug error messages since the last check
	dbgMore int      // messages dropped beyond maxDebugErrs
}

// job is a function queued with Go (res nil) or Call (res receives the
// result; f is nil for Sync).
type job struct {
	f   func()
	res chan result
}

// result is what the loop hands back to a waiting Call or Sync.
type result struct {
	err      error
	p        any
	panicked bool
}

// resPool recycles the one-slot channels Call and Sync wait on, so a Call
// costs no allocation beyond its closure.
var resPool = sync.Pool{New: func() any { return make(chan result, 1) }}

// New starts a loop and makes a context on it as o asks. It never panics:
// when no context can be made it returns a one-line error that says why,
// and it gives up after a timeout rather than hang on a dead display.
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
	onMain := kinds[0] == kindGLFW && !o.ownThread
	if onMain && mainLoop.servingHere() {
		// Work on the main loop cannot wait for it: open here.
		ready := make(chan error, 1)
		t.start(&mainLoop, o, kinds, ready, nil)
		if err := <-ready; err != nil {
			return nil, err
		}
		return t, nil
	}
	ready, abandon := make(chan error), make(chan struct{})
	start := func(l *loop) { t.start(l, o, kinds, ready, abandon) }
	if !onMain || !mainLoop.place(start) {
		go ownLoop(start)
	}
	limit := o.timeout
	if limit == 0 {
		limit = 30 * time.Second
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
		return t, nil
	case <-timer.C:
		// The loop frees what it made if it ever gets there.
		close(abandon)
		what := "the EGL driver not answering?"
		if slices.Contains(kinds, kindGLFW) {
			what = fmt.Sprintf("display %q or the driver not answering?", os.Getenv("DISPLAY"))
		}
		return nil, fmt.Errorf("glctx: no OpenGL context after %v (%s)", limit, what)
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

// start makes t's context on loop l, whose OS thread is the caller's, and
// hands New the result; if New gave up waiting, it frees the context.
func (t *Thread) start(l *loop, o Options, kinds []string, ready chan<- error, abandon <-chan struct{}) {
	t.l = l
	if o.hold != nil {
		o.hold(t)
	}
	prev := l.cur
	err := t.open(o, kinds)
	l.cur = nil
	if err == nil {
		l.cur = t
	}
	select {
	case ready <- err:
	case <-abandon:
		if err == nil {
			_ = t.release()
			l.cur = nil
		}
		err = errAbandoned
	}
	if err != nil {
		close(t.done)
	} else {
		l.threads = append(l.threads, t)
	}
	l.restore(prev)
}

// open makes the first context of kinds that works current on this thread,
// and checks its version. The error names every kind tried.
func (t *Thread) open(o Options, kinds []string) error {
	var errs []string
	var passed error // an NVIDIA device's failure that fallback went past
	noDriver, choice := false, false
	for _, k := range kinds {
		p, err := t.openKind(o, k)
		if passed == nil {
			passed = p
		}
		if err == nil {
			if passed != nil {
				t.fallback = oneLine(passed.Error())
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
func (t *Thread) openKind(o Options, kind string) (passed, err error) {
	defer func() {
		// go-gl/glfw panics on errors it classes as programmer errors; New
		// promises an error instead.
		if p := recover(); p != nil {
			err = fmt.Errorf("context creation panicked: %v", oneLine(fmt.Sprint(p)))
		}
		if err != nil {
			_ = t.release()
			t.win, t.egl = nil, nil
		}
	}()
	t.kind = kind
	if kind == kindGLFW {
		t.win, err = openGLFW(o)
	} else {
		t.l.egl = true
		t.egl, passed, err = openEGL(kind, o)
	}
	if err != nil {
		return passed, err
	}
	if err := core.Load(t); err != nil {
		return passed, fmt.Errorf("loading OpenGL functions: missing %v", err)
	}
	t.major, t.minor = glInteger(glMajorVersion), glInteger(glMinorVersion)
	t.renderer = glString(glRenderer) + ", OpenGL " + glString(glVersionString)
	if !atLeast(t.major, t.minor, o.Major, o.Minor) {
		return passed, versionError(o.Major, o.Minor, fmt.Sprintf("%d.%d", t.major, t.minor))
	}
	if t.debug {
		t.enableDebug()
	}
	// Errors left by context set-up are not the first Call's.
	for glGetError() != 0 {
	}
	return passed, nil
}

func atLeast(major, minor, wantMajor, wantMinor int) bool {
	return major > wantMajor || major == wantMajor && minor >= wantMinor
}

// glVersion is a GL version read from a probe context.
type glVersion struct{ major, minor int }

func (v glVersion) atLeast(major, minor int) bool { return atLeast(v.major, v.minor, major, minor) }
func (v glVersion) String() string                { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// versionError is the one-line error for a driver that offers too old a GL.
func versionError(major, minor int, gives string) error {
	return fmt.Errorf("OpenGL %d.%d needed, driver gives %s", major, minor, gives)
}

// do runs one queued job on the loop.
func (t *Thread) do(j job) {
	if j.res != nil {
		j.res <- t.runCall(j.f)
		return
	}
	p, panicked := protect(j.f)
	switch {
	case panicked:
		// GL errors before the panic came first.
		t.keep(t.takeErr("in work queued with Go"))
		t.keep(fmt.Errorf("glctx: panic in work queued with Go: %v", p))
	case t.debug:
		t.keep(t.takeErr("in work queued with Go"))
	}
}

// runCall runs f (nil for Sync) for Call on the loop. Errors of earlier Go
// work come first; after a panic they stay kept for the next Call or Sync.
func (t *Thread) runCall(f func()) result {
	before := t.takePending()
	if f == nil {
		return result{err: before}
	}
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
	return nil, false
}

// die ends t when a function running for it called runtime.Goexit, which
// ends the loop's goroutine: cur's caller gets errGoexit, the jobs after it
// (rest, then the queue) ErrClosed, later calls ErrClosed too, and the
// context is freed. Nested frames of t's work each call it; the first
// frees t.
func (t *Thread) die(cur *job, rest []job) {
	t.mu.Lock()
	t.closing = true
	rest = slices.Concat(rest, t.queue)
	t.queue = nil
	t.mu.Unlock()
	if cur != nil && cur.res != nil {
		cur.res <- result{err: errGoexit}
	}
	for _, j := range rest {
		if j.res != nil {
			j.res <- result{err: ErrClosed}
		}
	}
	if !t.finished() {
		t.closeErr = errGoexit
		t.l.free(t)
	}
}

// enqueue adds j to t's queue, or reports ErrClosed.
func (t *Thread) enqueue(j job) error {
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		return ErrClosed
	}
	t.queue = append(t.queue, j)
	t.mu.Unlock()
	t.l.notify()
	return nil
}

// finished reports whether t has ended.
func (t *Thread) finished() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// onLoop reports whether the caller runs on t's loop (inside work running
// there). The thread id is read before done is checked: a live loop's id
// belongs to nobody else, while a finished one's may be reused.
func (t *Thread) onLoop() bool {
	id := self()
	return !t.finished() && id == t.l.tid
}

// call runs f (nil for Sync) on the loop after the work queued before it,
// and waits for its result.
func (t *Thread) call(f func()) result {
	if t.onLoop() {
		var r result
		if err := t.l.nested(t, func() { r = t.runCall(f) }); err != nil {
			return result{err: err}
		}
		return r
	}
	res := resPool.Get().(chan result)
	defer resPool.Put(res)
	if err := t.enqueue(job{f: f, res: res}); err != nil {
		return result{err: err}
	}
	return <-res
}

// Call runs f on the loop with the context current and waits for it.
// It returns the first error since the last Call or Sync: one of work queued
// with Go, or the GL errors f left (glGetError drained, and in debug mode
// the KHR_debug error messages), so that they are not blamed on later work;
// or ErrClosed. A panic in f is re-raised in the caller. Called from the
// loop itself (inside f), it runs f at once.
func (t *Thread) Call(f func()) error {
	r := t.call(f)
	if r.panicked {
		panic(r.p)
	}
	return r.err
}

// Go queues f for the loop and returns at once, so that a caller can queue
// many dispatches without waiting for each. A panic or GL error in f is
// kept and returned by the next Call or Sync. After Close, f is dropped.
func (t *Thread) Go(f func()) {
	if f != nil {
		_ = t.enqueue(job{f: f})
	}
}

// Sync waits until everything queued before it has run and returns the
// first error since the last Sync or Call, or ErrClosed. It must not be
// called inside t's own work, where it would wait for itself.
func (t *Thread) Sync() error {
	if t.onLoop() && t.running > 0 {
		return errors.New("glctx: Sync called on the GL thread (inside Call or Go) would wait for itself")
	}
	return t.call(nil).err
}

// Close runs the work already queued, frees the context (and window) and
// ends the Thread. It returns an error of that work not yet reported, or
// one from freeing the context. Later calls do nothing and return nil; Call
// and Sync then return ErrClosed and Go drops its function.
func (t *Thread) Close() error {
	if t.onLoop() && t.running > 0 {
		return errors.New("glctx: Close called on the GL thread (inside Call or Go) would wait for itself")
	}
	var err error
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closing = true
		t.mu.Unlock()
		if t.onLoop() {
			t.l.step(t) // from other work on the main loop
		} else {
			t.l.notify()
		}
		<-t.done
		err = t.closeErr
	})
	return err
}

// procAddr looks up the GL function name in t's context, current on the
// calling thread (inside Call); nil for an unknown function.
func (t *Thread) procAddr(name string) unsafe.Pointer {
	if t.win != nil {
		return glfw.GetProcAddress(name)
	}
	return eglProcAddr(name)
}

// Window returns the GLFW window whose context the Thread holds, nil for
// EGL contexts. It is hidden (1x1 unless Options.Window sized it); the
// viewer shows and resizes it. Like the context it belongs to the loop: use
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

// release frees the context and window, current on the loop, and the
// debug callback's handle; safe to call when nothing was made.
func (t *Thread) release() error {
	var err error
	if t.egl != nil {
		err = t.egl.release()
	}
	if t.win != nil {
		releaseGLFW(t.win)
	}
	if t.dbg != 0 {
		t.dbg.Delete()
		t.dbg = 0
	}
	return err
}

// oneLine keeps errors from drivers to one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
