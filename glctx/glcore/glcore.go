// Package glcore is glctx's own OpenGL: the few GL 2.0 functions it calls
// itself (errors, version, KHR_debug output, shader programs), bound
// through the context's function look-up rather than through a go-gl
// version package, so that go-gl is imported only by the packages that
// draw or compute with it, one per version (docs/architecture.md).
package glcore

/*
#include <stdlib.h>
#include <stdint.h>
#include <GL/glcorearb.h>

enum {
	HL_GETERROR, HL_GETINTEGERV, HL_GETSTRING, HL_ENABLE,
	HL_CREATEPROGRAM, HL_CREATESHADER, HL_SHADERSOURCE, HL_COMPILESHADER,
	HL_GETSHADERIV, HL_GETSHADERINFOLOG, HL_ATTACHSHADER, HL_DETACHSHADER,
	HL_DELETESHADER, HL_LINKPROGRAM, HL_GETPROGRAMIV, HL_GETPROGRAMINFOLOG,
	HL_DELETEPROGRAM, HL_NUMGL
};
static void *hl_gl[HL_NUMGL];
static void hl_set_gl(int i, void *p) { hl_gl[i] = p; }
#define GL(name) ((PFNGL##name##PROC)hl_gl[HL_##name])

static GLenum hl_get_error(void) { return GL(GETERROR)(); }
static GLint hl_get_integer(GLenum p) { GLint v = 0; GL(GETINTEGERV)(p, &v); return v; }
static const char *hl_get_string(GLenum n) { return (const char *)GL(GETSTRING)(n); }
static GLuint hl_create_program(void) { return GL(CREATEPROGRAM)(); }
static GLuint hl_create_shader(GLenum kind) { return GL(CREATESHADER)(kind); }
static void hl_shader_source(GLuint sh, const char *src, GLint n) { GL(SHADERSOURCE)(sh, 1, &src, &n); }
static void hl_compile_shader(GLuint sh) { GL(COMPILESHADER)(sh); }
static void hl_attach_shader(GLuint prog, GLuint sh) { GL(ATTACHSHADER)(prog, sh); }
static void hl_detach_shader(GLuint prog, GLuint sh) { GL(DETACHSHADER)(prog, sh); }
static void hl_delete_shader(GLuint sh) { GL(DELETESHADER)(sh); }
static void hl_link_program(GLuint prog) { GL(LINKPROGRAM)(prog); }
static void hl_delete_program(GLuint prog) { GL(DELETEPROGRAM)(prog); }

// hl_param reads a parameter of a program (prog 1) or shader (prog 0).
static GLint hl_param(int prog, GLuint obj, GLenum p) {
	GLint v = 0;
	if (prog) GL(GETPROGRAMIV)(obj, p, &v); else GL(GETSHADERIV)(obj, p, &v);
	return v;
}
static void hl_info_log(int prog, GLuint obj, GLsizei n, char *buf) {
	if (prog) GL(GETPROGRAMINFOLOG)(obj, n, NULL, buf); else GL(GETSHADERINFOLOG)(obj, n, NULL, buf);
}

// The KHR_debug callback hands messages to Go (debug.go) with the handle
// of the context's Debug, which the context keeps as the callback's user
// parameter.
extern void hlDebugMessage(unsigned int, unsigned int, unsigned int, int, char *, uintptr_t);
static void APIENTRY hl_debug_cb(GLenum source, GLenum type, GLuint id, GLenum severity,
		GLsizei length, const GLchar *message, const void *user) {
	(void)source;
	hlDebugMessage(type, severity, id, length, (char *)message, (uintptr_t)user);
}
static void hl_debug_output(void *dmc, uintptr_t user) {
	GL(ENABLE)(GL_DEBUG_OUTPUT);
	GL(ENABLE)(GL_DEBUG_OUTPUT_SYNCHRONOUS);
	((PFNGLDEBUGMESSAGECALLBACKPROC)dmc)(hl_debug_cb, (const void *)user);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// glNames are the functions of hl_gl, by index.
var glNames = [C.HL_NUMGL]string{
	C.HL_GETERROR: "glGetError", C.HL_GETINTEGERV: "glGetIntegerv", C.HL_GETSTRING: "glGetString",
	C.HL_ENABLE: "glEnable", C.HL_CREATEPROGRAM: "glCreateProgram", C.HL_CREATESHADER: "glCreateShader",
	C.HL_SHADERSOURCE: "glShaderSource", C.HL_COMPILESHADER: "glCompileShader", C.HL_GETSHADERIV: "glGetShaderiv",
	C.HL_GETSHADERINFOLOG: "glGetShaderInfoLog", C.HL_ATTACHSHADER: "glAttachShader", C.HL_DETACHSHADER: "glDetachShader",
	C.HL_DELETESHADER: "glDeleteShader", C.HL_LINKPROGRAM: "glLinkProgram", C.HL_GETPROGRAMIV: "glGetProgramiv",
	C.HL_GETPROGRAMINFOLOG: "glGetProgramInfoLog", C.HL_DELETEPROGRAM: "glDeleteProgram",
}

// The GL enums glctx reads.
const (
	MajorVersion  = C.GL_MAJOR_VERSION
	MinorVersion  = C.GL_MINOR_VERSION
	Renderer      = C.GL_RENDERER
	VersionString = C.GL_VERSION
)

// Init binds glcore's functions through proc, the look-up of a context
// current on this thread; the error names the functions missing. On Linux
// (glvnd) they are dispatch stubs that serve whichever context is current,
// so one Init serves every context.
func Init(proc func(string) unsafe.Pointer) error {
	var missing []string
	for i, name := range glNames {
		p := proc(name)
		if p == nil {
			missing = append(missing, name)
		}
		C.hl_set_gl(C.int(i), p)
	}
	if len(missing) > 0 {
		return errors.New(strings.Join(missing, ", "))
	}
	return nil
}

// GetError, Integer and String are glGetError, glGetIntegerv and
// glGetString.
func GetError() uint32          { return uint32(C.hl_get_error()) }
func Integer(name uint32) int   { return int(C.hl_get_integer(C.GLenum(name))) }
func String(name uint32) string { return C.GoString(C.hl_get_string(C.GLenum(name))) }

// debugOutput turns on synchronous KHR_debug output with dmc, the
// context's glDebugMessageCallback, handing messages to the Debug whose
// handle is user.
func debugOutput(dmc unsafe.Pointer, user uintptr) { C.hl_debug_output(dmc, C.uintptr_t(user)) }

// Stage is one shader of a program: its kind (GL_VERTEX_SHADER,
// GL_FRAGMENT_SHADER, GL_COMPUTE_SHADER: any go-gl version package's
// constant) and its GLSL source.
type Stage struct {
	Kind   uint32
	Source string
}

// Program compiles stages and links them into a program in the context
// current on the calling thread: run it inside glctx's Call. It uses OpenGL 2.0's
// entry points, so the compute device and the viewer share it whatever
// version package they draw with. On failure the error, one line, names
// the program and holds the driver's info log.
func Program(name string, stages ...Stage) (uint32, error) {
	prog := C.hl_create_program()
	var shaders []C.GLuint
	// The program keeps the compiled code; the shader objects can go.
	release := func() {
		for _, sh := range shaders {
			C.hl_detach_shader(prog, sh)
			C.hl_delete_shader(sh)
		}
	}
	for _, st := range stages {
		sh := C.hl_create_shader(C.GLenum(st.Kind))
		src := C.CString(st.Source)
		C.hl_shader_source(sh, src, C.GLint(len(st.Source)))
		C.free(unsafe.Pointer(src))
		C.hl_compile_shader(sh)
		if C.hl_param(0, sh, C.GL_COMPILE_STATUS) == C.GL_FALSE {
			msg := infoLog(0, sh)
			C.hl_delete_shader(sh)
			release()
			C.hl_delete_program(prog)
			return 0, fmt.Errorf("compiling %s: %s", name, msg)
		}
		C.hl_attach_shader(prog, sh)
		shaders = append(shaders, sh)
	}
	C.hl_link_program(prog)
	release()
	if C.hl_param(1, prog, C.GL_LINK_STATUS) == C.GL_FALSE {
		msg := infoLog(1, prog)
		C.hl_delete_program(prog)
		return 0, fmt.Errorf("linking %s: %s", name, msg)
	}
	return uint32(prog), nil
}

// infoLog reads a shader's (isProg 0) or program's (1) info log as one
// line, its lines joined by "; ".
func infoLog(isProg C.int, obj C.GLuint) string {
	n := C.hl_param(isProg, obj, C.GL_INFO_LOG_LENGTH)
	if n <= 1 {
		return "(driver gave no log)"
	}
	buf := make([]byte, n)
	C.hl_info_log(isProg, obj, C.GLsizei(n), (*C.char)(unsafe.Pointer(&buf[0])))
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(buf), "\x00"), "\n") {
		if l = OneLine(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// OneLine keeps errors from drivers to one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
