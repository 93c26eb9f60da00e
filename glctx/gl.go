package glctx

import (
	"fmt"
	"sync"
	"unsafe"

	"headlab/glctx/glcore"
)

// A Profile is one go-gl version package: v4.3-core for the compute
// device, v4.1-core for the viewer (and glctx's own functions, core). go-gl
// keeps its function pointers in package globals, so Load fills them once
// per process,
// through the first context that asks: on Linux (glvnd) they are dispatch
// stubs that serve whichever context is current, so one load serves every
// Thread, EGL and GLFW alike. A failed load is tried again at the next
// Load.
type Profile struct {
	// Init is the package's InitWithProcAddrFunc.
	Init func(getProcAddr func(name string) unsafe.Pointer) error

	mu     sync.Mutex
	loaded bool
}

// Load loads p's functions through t's context unless they are loaded.
// Call it inside t.Call; the error names what is missing.
func (p *Profile) Load(t *Thread) error { return p.load(t.procAddr) }

func (p *Profile) load(proc func(string) unsafe.Pointer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loaded {
		return nil
	}
	if err := p.Init(proc); err != nil {
		return err
	}
	p.loaded = true
	return nil
}

// core is glctx's own functions (glcore), loaded with the first context.
var core = Profile{Init: glcore.Init}

// currentVersion parses GL_VERSION of the context current on this thread
// (GL_MAJOR_VERSION does not exist before 3.0, so a probe cannot use it).
func currentVersion(proc func(string) unsafe.Pointer) (major, minor int, ok bool) {
	if core.load(proc) != nil {
		return 0, 0, false
	}
	_, err := fmt.Sscanf(glcore.String(glcore.VersionString), "%d.%d", &major, &minor)
	return major, minor, err == nil
}

// Stage is one shader of a program: its kind (GL_VERTEX_SHADER,
// GL_FRAGMENT_SHADER, GL_COMPUTE_SHADER: any go-gl version package's
// constant) and its GLSL source.
type Stage = glcore.Stage

// Program compiles stages and links them into a program in the context
// current on the calling thread: run it inside Call. It uses OpenGL 2.0's
// entry points, so the compute device and the viewer share it whatever
// version package they draw with. On failure the error, one line, names
// the program and holds the driver's info log.
func Program(name string, stages ...Stage) (uint32, error) { return glcore.Program(name, stages...) }
