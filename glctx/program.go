package glctx

import (
	"fmt"
	"strings"

	gl "github.com/go-gl/gl/v4.1-core/gl"
)

// Stage is one shader of a program: its kind (GL_VERTEX_SHADER,
// GL_FRAGMENT_SHADER, GL_COMPUTE_SHADER: any go-gl version package's
// constant) and its GLSL source.
type Stage struct {
	Kind   uint32
	Source string
}

// Program compiles stages and links them into a program in the context
// current on the calling thread: run it inside Call. It uses OpenGL 2.0's
// entry points (through the v4.1-core package glctx loads for every
// context), so the compute device and the viewer share it whatever version
// package they draw with. On failure the error, one line, names the
// program and holds the driver's info log.
func Program(name string, stages ...Stage) (uint32, error) {
	prog := gl.CreateProgram()
	var shaders []uint32
	// The program keeps the compiled code; the shader objects can go.
	release := func() {
		for _, sh := range shaders {
			gl.DetachShader(prog, sh)
			gl.DeleteShader(sh)
		}
	}
	for _, st := range stages {
		sh := gl.CreateShader(st.Kind)
		csrc, free := gl.Strs(st.Source + "\x00")
		length := int32(len(st.Source))
		gl.ShaderSource(sh, 1, csrc, &length)
		free()
		gl.CompileShader(sh)
		var ok int32
		gl.GetShaderiv(sh, gl.COMPILE_STATUS, &ok)
		if ok == gl.FALSE {
			msg := infoLog(sh, gl.GetShaderiv, gl.GetShaderInfoLog)
			gl.DeleteShader(sh)
			release()
			gl.DeleteProgram(prog)
			return 0, fmt.Errorf("compiling %s: %s", name, msg)
		}
		gl.AttachShader(prog, sh)
		shaders = append(shaders, sh)
	}
	gl.LinkProgram(prog)
	release()
	var ok int32
	gl.GetProgramiv(prog, gl.LINK_STATUS, &ok)
	if ok == gl.FALSE {
		msg := infoLog(prog, gl.GetProgramiv, gl.GetProgramInfoLog)
		gl.DeleteProgram(prog)
		return 0, fmt.Errorf("linking %s: %s", name, msg)
	}
	return prog, nil
}

// infoLog reads a shader's or program's info log as one line, its lines
// joined by "; ".
func infoLog(obj uint32, getiv func(uint32, uint32, *int32), getLog func(uint32, int32, *int32, *uint8)) string {
	var n int32
	getiv(obj, gl.INFO_LOG_LENGTH, &n)
	if n <= 1 {
		return "(driver gave no log)"
	}
	buf := make([]byte, n)
	getLog(obj, n, nil, &buf[0])
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(buf), "\x00"), "\n") {
		if l = oneLine(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}
