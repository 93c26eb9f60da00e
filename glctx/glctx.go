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
//   - Every Thread, EGL or GLFW, has an OS thread of its own. GLFW wants
//     its window and event calls on the process's main thread (macOS
//     demands it): a program that calls Main from main lends that thread
//     to OnMain's functions, which glctx uses to make and destroy windows
//     and the viewer to poll events; it never holds a context. Without
//     Main, OnMain runs its function on the caller's thread.
package glctx

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/glctx/egl"
	"headlab/glctx/glcore"
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
	// Window asks for a GLFW window (created hidden, 1x1) that the caller
	// may title, show, resize and draw to; it requires GLFW and so a
	// display.
	Window bool
	// Debug asks for a debug context and a synchronous KHR_debug callback,
	// whose error messages join the errors Call and Sync return; queued work
	// is then checked after every function instead of at the next Call or
	// Sync. HEADLAB_GL_DEBUG=1 in the environment sets it too.
	Debug bool

	// For the tests.
	timeout   time.Duration                   // New's limit; 0 means 30 s
	hold      func(*Thread)                   // runs on the loop before the context is made
	eglConfig bool                            // EGL uses a chosen config and a pbuffer, as on drivers without no-config contexts
	devices   func([]egl.Device) []egl.Device // edits EGL's device list before the choice
}

// ErrDeviceChoice marks New's failure when HEADLAB_EGL_DEVICE names no
// device, or one that does not work: bad input rather than a missing GPU,
// which a caller that falls back on failure (--backend auto) refuses.
var ErrDeviceChoice = egl.ErrDeviceChoice

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
	// Set on the loop before New returns, read-only afterwards.
	tid          uint64 // the loop's OS thread (pthread_self)
	kind         string
	renderer     string
	fallback     string // the NVIDIA device's failure that Context auto went past
	major, minor int
	debug        bool
	win          *glfw.Window
	egl          *egl.Context
	dbg          *glcore.Debug // KHR_debug's messages in debug mode; nil without

	mu      sync.Mutex
	wake    sync.Cond // signalled when jobs are queued
	jobs    []job
	closing bool // Close was called (or the Thread died): no new jobs

	done      chan struct{} // closed when the context is freed
	closeOnce sync.Once
	closeErr  error // set on the loop before done is closed

	// Loop only.
	batch   []job // the jobs taken from the queue at once
	next    int   // batch[next] runs next
	usedEGL bool  // EGL was used here: release its thread state at the end
	pending error // first error of Go work not yet reported
}

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
	t.wake.L = &t.mu
	ready, abandon := make(chan error), make(chan struct{})
	go t.loop(o, kinds, ready, abandon)
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

// start makes t's context on the loop and hands New the result; if New
// gave up waiting, it frees the context. It reports whether t is open.
func (t *Thread) start(o Options, kinds []string, ready chan<- error, abandon <-chan struct{}) bool {
	if o.hold != nil {
		o.hold(t)
	}
	err := t.open(o, kinds)
	select {
	case ready <- err:
	case <-abandon:
		if err == nil {
			_ = t.release()
		}
		err = errAbandoned
	}
	if err != nil {
		close(t.done)
	}
	return err == nil
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
				t.fallback = glcore.OneLine(passed.Error())
			}
			return nil
		}
		errs = append(errs, k+": "+err.Error())
		noDriver = noDriver || errors.Is(err, egl.ErrNoDriver)
		choice = choice || errors.Is(err, ErrDeviceChoice)
		if errors.Is(err, egl.ErrNoFallback) {
			break
		}
	}
	msg := strings.Join(errs, "; ")
	if len(errs) > 1 {
		msg = fmt.Sprintf("no OpenGL %d.%d core context: %s", o.Major, o.Minor, msg)
	}
	if noDriver {
		msg += "; " + egl.VendorHint()
	}
	err := errors.New("glctx: " + msg)
	if choice {
		err = egl.Mark(err, ErrDeviceChoice)
	}
	return err
}

// openKind tries one kind; on failure it has released what it made.
func (t *Thread) openKind(o Options, kind string) (passed, err error) {
	defer func() {
		// go-gl/glfw panics on errors it classes as programmer errors; New
		// promises an error instead.
		if p := recover(); p != nil {
			err = fmt.Errorf("context creation panicked: %v", glcore.OneLine(fmt.Sprint(p)))
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
		t.usedEGL = true
		t.egl, passed, err = egl.Open(kind == kindDevice, egl.Options{
			Major: o.Major, Minor: o.Minor, Debug: o.Debug, Fallback: o.Context == "auto",
			Version: func() (int, int, bool) { return currentVersion(egl.ProcAddr) }, Config: o.eglConfig, Devices: o.devices,
		})
	}
	if err != nil {
		return passed, err
	}
	if err := core.Load(t); err != nil {
		return passed, fmt.Errorf("loading OpenGL functions: missing %v", err)
	}
	t.major, t.minor = glcore.Integer(glcore.MajorVersion), glcore.Integer(glcore.MinorVersion)
	t.renderer = glcore.String(glcore.Renderer) + ", OpenGL " + glcore.String(glcore.VersionString)
	if !egl.AtLeast(t.major, t.minor, o.Major, o.Minor) {
		return passed, egl.VersionError(o.Major, o.Minor, fmt.Sprintf("%d.%d", t.major, t.minor))
	}
	if t.debug {
		t.dbg = glcore.EnableDebug(t.procAddr)
	}
	// Errors left by context set-up are not the first Call's.
	for glcore.GetError() != 0 {
	}
	return passed, nil
}

// procAddr looks up the GL function name in t's context, current on the
// calling thread (inside Call); nil for an unknown function.
func (t *Thread) procAddr(name string) unsafe.Pointer {
	if t.win != nil {
		return glfw.GetProcAddress(name)
	}
	return egl.ProcAddr(name)
}

// Window returns the GLFW window whose context the Thread holds, nil for
// EGL contexts. It is hidden and 1x1; the viewer titles, shows and resizes
// it. GLFW wants its window calls on the main thread: use it inside OnMain.
// Close destroys it.
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
		err = t.egl.Release()
	}
	if t.win != nil {
		releaseGLFW(t.win)
	}
	t.dbg.Close()
	t.dbg = nil
	return err
}
