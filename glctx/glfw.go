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
)

// glfwMu serialises GLFW's global state (Init/Terminate, window hints and
// creation) between Threads, which live on different OS threads; glfwRefs
// counts the windows alive so that GLFW terminates with the last.
var (
	glfwMu   sync.Mutex
	glfwRefs int
)

// openGLFW initialises GLFW (counted across Threads) and opens a hidden
// window with a core context of the version asked, current on this thread.
func openGLFW(o Options) (*glfw.Window, error) {
	if os.Getenv("DISPLAY") == "" {
		return nil, errors.New("no display: DISPLAY is not set (run under xvfb-run, or use an EGL context)")
	}
	glfwMu.Lock()
	defer glfwMu.Unlock()
	if glfwRefs == 0 {
		if err := initGLFW(); err != nil {
			return nil, fmt.Errorf("no display: GLFW cannot start: %v", oneLine(err.Error()))
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
	w, h, title := 1, 1, "headlab-gl"
	if o.Window {
		w, h, title = o.Width, o.Height, o.Title
	}
	win, err := glfw.CreateWindow(w, h, title, nil, nil)
	if err != nil {
		if gives, found := probeGLFW(); found && !gives.atLeast(o.Major, o.Minor) {
			return nil, versionError(o.Major, o.Minor, gives.String())
		}
		return nil, fmt.Errorf("no OpenGL %d.%d core window: %v", o.Major, o.Minor, oneLine(err.Error()))
	}
	win.MakeContextCurrent()
	ok = true
	return win, nil
}

// probeGLFW opens a context of the best core version (else with default
// hints) to report what the driver offers when the version asked for was
// refused. glfwMu is held.
func probeGLFW() (v glVersion, ok bool) {
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
		v = glVersion{w.GetAttrib(glfw.ContextVersionMajor), w.GetAttrib(glfw.ContextVersionMinor)}
		w.Destroy()
		return v, true
	}
	return v, false
}

// releaseGLFW destroys win, current on this thread, and drops its hold on
// GLFW.
func releaseGLFW(win *glfw.Window) {
	glfw.DetachCurrentContext()
	glfwMu.Lock()
	defer glfwMu.Unlock()
	win.Destroy()
	unrefGLFW()
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
