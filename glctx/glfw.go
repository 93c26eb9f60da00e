package glctx

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"

	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/glctx/egl"
	"headlab/glctx/glcore"
)

// glfwMu serialises GLFW's global state (Init/Terminate, window hints and
// creation) between Threads, which live on different OS threads; glfwRefs
// counts the windows alive so that GLFW terminates with the last.
var (
	glfwMu   sync.Mutex
	glfwRefs int
)

// openGLFW opens a hidden window with a core context of the version asked
// on the main thread (OnMain) and makes its context current on this one.
func openGLFW(o Options) (win *glfw.Window, err error) {
	if os.Getenv("DISPLAY") == "" {
		return nil, errors.New("no display: DISPLAY is not set (run under xvfb-run, or use an EGL context)")
	}
	OnMain(func() { win, err = createGLFW(o) })
	if err != nil {
		return nil, err
	}
	win.MakeContextCurrent()
	return win, nil
}

// createGLFW initialises GLFW (counted across Threads) and creates the
// window; its context is current nowhere.
func createGLFW(o Options) (*glfw.Window, error) {
	glfwMu.Lock()
	defer glfwMu.Unlock()
	if glfwRefs == 0 {
		if err := initGLFW(); err != nil {
			return nil, fmt.Errorf("no display: GLFW cannot start: %v", glcore.OneLine(err.Error()))
		}
	}
	glfwRefs++
	ok := false
	defer func() {
		if !ok {
			unrefGLFW()
		}
	}()
	glfw.DefaultWindowHints()
	glfw.WindowHint(glfw.Visible, glfw.False)
	glfw.WindowHint(glfw.ContextVersionMajor, o.Major)
	glfw.WindowHint(glfw.ContextVersionMinor, o.Minor)
	glfw.WindowHint(glfw.OpenGLProfile, glfw.OpenGLCoreProfile)
	glfw.WindowHint(glfw.OpenGLForwardCompatible, glfw.True)
	if o.Debug {
		glfw.WindowHint(glfw.OpenGLDebugContext, glfw.True)
	}
	win, err := glfw.CreateWindow(1, 1, "headlab-gl", nil, nil)
	if err != nil {
		if major, minor, found := probeGLFW(); found && !egl.AtLeast(major, minor, o.Major, o.Minor) {
			return nil, egl.VersionError(o.Major, o.Minor, fmt.Sprintf("%d.%d", major, minor))
		}
		return nil, fmt.Errorf("no OpenGL %d.%d core window: %v", o.Major, o.Minor, glcore.OneLine(err.Error()))
	}
	ok = true
	return win, nil
}

// probeGLFW opens a context of the best core version (else with default
// hints) to report what the driver offers when the version asked for was
// refused. glfwMu is held.
func probeGLFW() (major, minor int, ok bool) {
	for _, core := range []bool{true, false} {
		glfw.DefaultWindowHints()
		glfw.WindowHint(glfw.Visible, glfw.False)
		if core {
			glfw.WindowHint(glfw.ContextVersionMajor, 3)
			glfw.WindowHint(glfw.ContextVersionMinor, 2)
			glfw.WindowHint(glfw.OpenGLProfile, glfw.OpenGLCoreProfile)
			glfw.WindowHint(glfw.OpenGLForwardCompatible, glfw.True)
		}
		w, err := glfw.CreateWindow(1, 1, "headlab-gl-probe", nil, nil)
		if err != nil {
			continue
		}
		major, minor = w.GetAttrib(glfw.ContextVersionMajor), w.GetAttrib(glfw.ContextVersionMinor)
		w.Destroy()
		return major, minor, true
	}
	return 0, 0, false
}

// releaseGLFW detaches win's context from this thread, destroys win on the
// main thread and drops its hold on GLFW.
func releaseGLFW(win *glfw.Window) {
	glfw.DetachCurrentContext()
	OnMain(func() {
		glfwMu.Lock()
		defer glfwMu.Unlock()
		win.Destroy()
		unrefGLFW()
	})
}

// unrefGLFW terminates GLFW with its last user. glfwMu is held.
func unrefGLFW() {
	if glfwRefs > 0 {
		glfwRefs--
		if glfwRefs == 0 {
			glfw.Terminate()
		}
	}
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
		// GLFW stays uninitialised; nothing to terminate.
		return errors.New(msg)
	case msg != "":
		log.Print(msg) // not fatal: pass it on as glfw would have
	}
	return nil
}
