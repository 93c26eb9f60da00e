// Package gl is the OpenGL 4.3 compute backend: the six attention kernels
// as GLSL compute shaders over shader storage buffers, one dispatch grid per
// call covering every sequence, head and row.
//
// An OpenGL context is current on one OS thread at a time, and Gorgonia's
// TapeMachine calls kernels from goroutines of its own, so a Backend owns
// one goroutine locked to its OS thread for its whole life. That thread
// creates the context (a hidden GLFW window) and runs all GL work handed to
// it; every method, and Call, queue their work there and wait for it.
//
// Each output element (or row, for Probs) is computed by one invocation that
// sums serially in the order backend/cpu does, so results are deterministic
// and need no float atomics; dK and dV are gathers over keys.
package gl

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	ogl "github.com/go-gl/gl/v4.3-core/gl"
	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/kernels"
)

// Options configures New.
type Options struct {
	// Debug asks for a debug context, routes KHR_debug messages through
	// DebugMessageCallback (synchronous, so they arrive on the GL thread
	// during the call that caused them) and checks glGetError after every
	// GL call. The environment variable HEADLAB_GL_DEBUG=1 sets it too.
	Debug bool
}

// ErrClosed is returned by calls on a Backend after Close.
var ErrClosed = errors.New("gl: backend is closed")

// newTimeout bounds New: a display that accepts a connection and never
// answers must not hang the caller.
const newTimeout = 30 * time.Second

// Backend implements kernels.Backend with OpenGL compute shaders.
type Backend struct {
	work chan job
	done chan struct{} // closed when the GL thread has exited
	once sync.Once

	renderer string
	debug    bool

	// Fields below belong to the GL thread.
	win    *glfw.Window
	progs  [numProgs]program
	bufs   [numSlots]buffer
	shadow [numSlots][]float32 // host copy of each buffer's contents, nil when unknown
	// shadowStore is the storage behind shadow, kept when a shadow is dropped.
	shadowStore [numSlots][]float32
	stats       TransferStats
	pending     error    // first glGetError failure seen by ck in debug mode
	dbgErrs     []string // KHR_debug error messages since the last check

	mu         sync.Mutex // guards probsShape, read from any goroutine
	probsShape kernels.Shape
}

// job is one closure for the GL thread; done receives the value of a panic
// in f (nil if none) so that the caller can re-raise it.
type job struct {
	f    func()
	done chan any
}

var _ kernels.Backend = (*Backend)(nil)

// glfwMu serialises GLFW's global state (Init/Terminate and window
// creation) between Backends, which may live on different threads.
var (
	glfwMu   sync.Mutex
	glfwRefs int
)

// displayCheck fails fast when GLFW could not reach an X server, because
// glfw.Init without a display only reports it through the error callback.
func displayCheck() error {
	if os.Getenv("DISPLAY") == "" {
		return errors.New("gl: no display: DISPLAY is not set (run under xvfb-run)")
	}
	return nil
}

// New creates the GL thread, an OpenGL 4.3 core context in a hidden window
// on it, the compute programs and the storage buffers. It returns a one-line
// error, never panics, when no display or no 4.3 context is available.
func New(opts Options) (*Backend, error) {
	if os.Getenv("HEADLAB_GL_DEBUG") == "1" {
		opts.Debug = true
	}
	if err := displayCheck(); err != nil {
		return nil, err
	}
	b := &Backend{
		work:  make(chan job),
		done:  make(chan struct{}),
		debug: opts.Debug,
	}
	ready := make(chan error, 1)
	go b.loop(ready)
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
		return b, nil
	case <-time.After(newTimeout):
		// The thread is stuck in the driver or X server; it is leaked.
		return nil, fmt.Errorf("gl: no context after %v (display %q not answering?)", newTimeout, os.Getenv("DISPLAY"))
	}
}

// loop is the GL thread. It never unlocks the OS thread, so the thread
// that held the context is ended with the goroutine.
func (b *Backend) loop(ready chan<- error) {
	runtime.LockOSThread()
	defer close(b.done)
	if err := b.init(); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for j := range b.work {
		j.done <- runJob(j.f)
		if j.f == nil {
			return
		}
	}
}

// runJob runs f, turning a panic into its value; a nil f is the stop
// request from Close.
func runJob(f func()) (p any) {
	if f == nil {
		return nil
	}
	defer func() { p = recover() }()
	f()
	return nil
}

// init makes the context current on the calling (GL) thread and creates
// the GL objects. On failure it releases what it made.
func (b *Backend) init() (err error) {
	defer func() {
		// go-gl/glfw panics on errors it classes as programmer errors;
		// New promises an error instead.
		if p := recover(); p != nil {
			err = fmt.Errorf("gl: context creation failed: %v", p)
		}
		if err != nil {
			b.release()
		}
	}()
	if err := b.makeContext(); err != nil {
		return err
	}
	if err := ogl.Init(); err != nil {
		return fmt.Errorf("gl: loading OpenGL 4.3 functions: missing %v", err)
	}
	var major, minor int32
	ogl.GetIntegerv(ogl.MAJOR_VERSION, &major)
	ogl.GetIntegerv(ogl.MINOR_VERSION, &minor)
	if major < 4 || major == 4 && minor < 3 {
		return fmt.Errorf("gl: OpenGL 4.3 needed, driver gives %d.%d", major, minor)
	}
	b.renderer = ogl.GoStr(ogl.GetString(ogl.RENDERER)) + ", OpenGL " + ogl.GoStr(ogl.GetString(ogl.VERSION))
	if b.debug {
		b.enableDebug()
	}
	if err := b.compileAll(); err != nil {
		return err
	}
	b.createBuffers()
	return b.takeErr("init")
}

// makeContext initialises GLFW (counted across Backends) and opens a hidden
// 1x1 window with a 4.3 core context, current on this thread.
func (b *Backend) makeContext() error {
	glfwMu.Lock()
	defer glfwMu.Unlock()
	if glfwRefs == 0 {
		if err := initGLFW(); err != nil {
			return fmt.Errorf("gl: no display: GLFW cannot start: %v", oneLine(err.Error()))
		}
	}
	glfwRefs++
	glfw.DefaultWindowHints()
	glfw.WindowHint(glfw.Visible, glfw.False)
	glfw.WindowHint(glfw.ContextVersionMajor, 4)
	glfw.WindowHint(glfw.ContextVersionMinor, 3)
	glfw.WindowHint(glfw.OpenGLProfile, glfw.OpenGLCoreProfile)
	glfw.WindowHint(glfw.OpenGLForwardCompatible, glfw.True)
	if b.debug {
		glfw.WindowHint(glfw.OpenGLDebugContext, glfw.True)
	}
	win, err := glfw.CreateWindow(1, 1, "headlab-gl", nil, nil)
	if err != nil {
		return fmt.Errorf("gl: OpenGL 4.3 needed, driver gives %s (%v)", probeVersion(), oneLine(err.Error()))
	}
	b.win = win
	win.MakeContextCurrent()
	return nil
}

// probeVersion opens a context with default hints to report what the
// driver offers when 4.3 core was refused. glfwMu is held.
func probeVersion() string {
	glfw.DefaultWindowHints()
	glfw.WindowHint(glfw.Visible, glfw.False)
	w, err := glfw.CreateWindow(1, 1, "headlab-gl-probe", nil, nil)
	if err != nil {
		return "no context at all"
	}
	defer w.Destroy()
	return fmt.Sprintf("%d.%d", w.GetAttrib(glfw.ContextVersionMajor), w.GetAttrib(glfw.ContextVersionMinor))
}

// oneLine keeps errors from the driver to one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// enableDebug turns on synchronous KHR_debug output: errors are kept for
// the current call's error, other high and medium messages are logged.
func (b *Backend) enableDebug() {
	ogl.Enable(ogl.DEBUG_OUTPUT)
	ogl.Enable(ogl.DEBUG_OUTPUT_SYNCHRONOUS)
	ogl.DebugMessageCallback(func(source, gltype, id, severity uint32, length int32, message string, _ unsafe.Pointer) {
		msg := oneLine(message)
		switch {
		case gltype == ogl.DEBUG_TYPE_ERROR:
			b.dbgErrs = append(b.dbgErrs, msg)
		case severity == ogl.DEBUG_SEVERITY_HIGH || severity == ogl.DEBUG_SEVERITY_MEDIUM:
			log.Printf("gl debug: %s", msg)
		}
	}, nil)
}

// release frees every GL object and the window, and drops this Backend's
// hold on GLFW. It runs on the GL thread.
func (b *Backend) release() {
	if b.win != nil {
		for i := range b.progs {
			if b.progs[i].id != 0 {
				ogl.DeleteProgram(b.progs[i].id)
			}
		}
		for i := range b.bufs {
			if b.bufs[i].id != 0 {
				ogl.DeleteBuffers(1, &b.bufs[i].id)
			}
		}
		glfw.DetachCurrentContext()
	}
	glfwMu.Lock()
	defer glfwMu.Unlock()
	if b.win != nil {
		b.win.Destroy()
		b.win = nil
	}
	if glfwRefs > 0 {
		glfwRefs--
		if glfwRefs == 0 {
			glfw.Terminate()
		}
	}
}

// call runs f on the GL thread and waits. A panic in f is re-raised in the
// caller. It must not be called from the GL thread itself (it would wait
// for itself).
func (b *Backend) call(f func()) error {
	j := job{f: f, done: make(chan any, 1)}
	select {
	case b.work <- j:
	case <-b.done:
		return ErrClosed
	}
	if p := <-j.done; p != nil {
		panic(p)
	}
	return nil
}

// Call runs f on the GL thread, with the Backend's context current, and
// waits for it. Other packages (the viewer) use it for their own GL work.
// It returns the GL errors f left behind (glGetError, and in debug mode the
// KHR_debug messages), so that they are not blamed on the next kernel, or
// ErrClosed after Close. A panic in f is re-raised in the caller. f must
// not call the Backend's methods: they would wait for the thread f runs on.
func (b *Backend) Call(f func()) error {
	var err error
	if cerr := b.call(func() {
		f()
		err = b.takeErr("Call")
	}); cerr != nil {
		return cerr
	}
	return err
}

// Close frees the buffers, programs, window and context and ends the GL
// thread. Later calls return ErrClosed. It is safe to call more than once.
func (b *Backend) Close() error {
	b.once.Do(func() {
		_ = b.call(b.release)
		// The stop request: loop returns after a nil job.
		j := job{done: make(chan any, 1)}
		select {
		case b.work <- j:
			<-j.done
		case <-b.done:
		}
		<-b.done
	})
	return nil
}

// Name implements kernels.Backend.
func (*Backend) Name() string { return "gl" }

// Renderer reports GL_RENDERER and GL_VERSION, e.g. "llvmpipe (LLVM 15.0.6,
// 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6", for reports.
func (b *Backend) Renderer() string { return b.renderer }

// ProbsBuffer returns the SSBO holding the last Probs result, valid on the
// GL thread (use it inside Call), and the shape it was computed for (zero
// before the first Probs). The buffer is [B, H, T, T] float32 and may be
// larger than the result; its id stays the same for the Backend's life.
func (b *Backend) ProbsBuffer() (id uint32, s kernels.Shape) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bufs[slotProbs].id, b.probsShape
}

// initGLFW runs glfw.Init. go-gl/glfw logs platform errors through the log
// package instead of returning them; an X display that cannot be opened is
// one, and must become this error rather than a stray line on stderr.
func initGLFW() error {
	var logged bytes.Buffer
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(&logged)
	log.SetFlags(0)
	err := glfw.Init()
	log.SetOutput(out)
	log.SetFlags(flags)
	msg := strings.TrimSpace(logged.String())
	switch {
	case err != nil:
		return err
	case strings.Contains(msg, "open display"):
		return errors.New(msg)
	case msg != "":
		log.Print(msg) // not fatal: pass it on as glfw would have
	}
	return nil
}
