package gl

import (
	"embed"
	"fmt"
	"strings"

	ogl "github.com/go-gl/gl/v4.3-core/gl"
)

// The kernels' GLSL sources; common.glsl is their shared prologue.
//
//go:embed shaders/*.comp shaders/common.glsl
var shaderFS embed.FS

// Program indices, one per compute shader.
const (
	progProbs = iota
	progMix
	progMixGradP
	progMixGradV
	progRowsum
	progProbsGradQ
	progProbsGradK
	numProgs
)

var progFiles = [numProgs]string{
	progProbs:      "probs.comp",
	progMix:        "mix.comp",
	progMixGradP:   "mixgradp.comp",
	progMixGradV:   "mixgradv.comp",
	progRowsum:     "rowsum.comp",
	progProbsGradQ: "probsgradq.comp",
	progProbsGradK: "probsgradk.comp",
}

// Uniforms every kernel may use (from common.glsl); unused ones are
// optimised away and get location -1, which glUniform ignores.
const (
	uB = iota
	uT
	uH
	uDh
	uCausal
	uScale
	uTotal
	numUniforms
)

var uniformNames = [numUniforms]string{"B", "T", "H", "Dh", "causal", "scale", "total"}

// program is a linked compute program and its uniform locations.
type program struct {
	id  uint32
	loc [numUniforms]int32
}

// source builds a kernel's full source: version, shared prologue, then the
// file itself starting again at line 1 so that logs point into the file.
func source(file string) (string, error) {
	common, err := shaderFS.ReadFile("shaders/common.glsl")
	if err != nil {
		return "", err
	}
	body, err := shaderFS.ReadFile("shaders/" + file)
	if err != nil {
		return "", err
	}
	return "#version 430 core\n" + string(common) + "\n#line 1\n" + string(body), nil
}

// compileAll compiles and links every kernel program.
func (b *Backend) compileAll() error {
	for i, file := range progFiles {
		src, err := source(file)
		if err != nil {
			return fmt.Errorf("gl: %s: %v", file, err)
		}
		id, err := compileCompute(file, src)
		if err != nil {
			return err
		}
		b.progs[i].id = id
		for u, name := range uniformNames {
			b.progs[i].loc[u] = ogl.GetUniformLocation(id, ogl.Str(name+"\x00"))
		}
	}
	return nil
}

// compileCompute compiles and links one compute shader from src. On failure
// the error names the file and holds the driver's info log. It runs on the
// GL thread.
func compileCompute(name, src string) (uint32, error) {
	return Program(name, Stage{Kind: ogl.COMPUTE_SHADER, Source: src})
}

// Stage is one shader of a program: its kind (ogl.VERTEX_SHADER,
// ogl.FRAGMENT_SHADER, ogl.COMPUTE_SHADER) and its GLSL source.
type Stage struct {
	Kind   uint32
	Source string
}

// Program compiles stages and links them into a program. On failure the
// error names the program and holds the driver's info log. It must run on
// the GL thread (inside Call); the viewer builds its drawing programs with
// it too.
func Program(name string, stages ...Stage) (uint32, error) {
	prog := ogl.CreateProgram()
	var shaders []uint32
	// The program keeps the compiled code; the shader objects can go.
	release := func() {
		for _, sh := range shaders {
			ogl.DetachShader(prog, sh)
			ogl.DeleteShader(sh)
		}
	}
	for _, st := range stages {
		sh := ogl.CreateShader(st.Kind)
		csrc, free := ogl.Strs(st.Source + "\x00")
		length := int32(len(st.Source))
		ogl.ShaderSource(sh, 1, csrc, &length)
		free()
		ogl.CompileShader(sh)
		var ok int32
		ogl.GetShaderiv(sh, ogl.COMPILE_STATUS, &ok)
		if ok == ogl.FALSE {
			msg := infoLog(sh, ogl.GetShaderiv, ogl.GetShaderInfoLog)
			ogl.DeleteShader(sh)
			release()
			ogl.DeleteProgram(prog)
			return 0, fmt.Errorf("gl: compiling %s: %s", name, msg)
		}
		ogl.AttachShader(prog, sh)
		shaders = append(shaders, sh)
	}
	ogl.LinkProgram(prog)
	release()
	var ok int32
	ogl.GetProgramiv(prog, ogl.LINK_STATUS, &ok)
	if ok == ogl.FALSE {
		msg := infoLog(prog, ogl.GetProgramiv, ogl.GetProgramInfoLog)
		ogl.DeleteProgram(prog)
		return 0, fmt.Errorf("gl: linking %s: %s", name, msg)
	}
	return prog, nil
}

// infoLog reads a shader's or program's info log.
func infoLog(obj uint32, getiv func(uint32, uint32, *int32), getLog func(uint32, int32, *int32, *uint8)) string {
	var n int32
	getiv(obj, ogl.INFO_LOG_LENGTH, &n)
	if n <= 1 {
		return "(driver gave no log)"
	}
	buf := make([]byte, n)
	getLog(obj, n, nil, &buf[0])
	return strings.TrimSpace(strings.TrimRight(string(buf), "\x00"))
}
