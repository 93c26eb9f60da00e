package gl

import (
	"embed"
	"fmt"
	"strings"

	ogl "github.com/go-gl/gl/v4.3-core/gl"

	"headlab/glctx"
)

// The kernels' GLSL sources: one .comp file per program, common.glsl the
// prologue of every one, and .glsl pieces a kernel takes in with
// `#include "name.glsl"` (expanded here; GLSL has no includes).
//
//go:embed shaders/*.comp shaders/*.glsl
var shaderFS embed.FS

// Program indices, one per compute shader.
const (
	progMatMul = iota
	progColSum
	progColDot
	progLayerNorm
	progLayerNormGradX
	progLayerNormGrad
	progGELU
	progMul
	progAdd
	progColScale
	progEmbed
	progEmbedAdd
	progEmbedIndex
	progEmbedGrad
	progProbs
	progMix
	progMixGradP
	progMixGradV
	progProbsGradQ
	progProbsGradK
	progAttend
	progAttendGrad
	progSoftmaxXent
	progSoftmaxXentGrad
	progCountCorrect
	progAdam
	progMarkDiverged
	numProgs
)

// progSpec names a program's file and its own uniforms, in the order the
// Go side passes their values (ints, then floats). Every program also has
// common.glsl's S, work, off[] and stride[].
type progSpec struct {
	file   string
	ints   []string
	floats []string
	// wg is the workgroup size when it is not common.glsl's 64.
	wg int
}

// attnInts and attnFloats are attn.glsl's uniforms.
var (
	attnInts   = []string{"B", "T", "H", "Dh", "causal"}
	attnFloats = []string{"scale"}
)

var progSpecs = [numProgs]progSpec{
	progMatMul:          {file: "matmul.comp", ints: []string{"M", "N", "K", "tA", "tB", "hasBias", "act", "then", "sumB", "keepY"}, wg: 32},
	progColSum:          {file: "colsum.comp", ints: []string{"R", "D"}},
	progColDot:          {file: "coldot.comp", ints: []string{"R", "D", "sumA"}},
	progLayerNorm:       {file: "layernorm.comp", ints: []string{"R", "D"}, floats: []string{"eps"}},
	progLayerNormGradX:  {file: "layernormgradx.comp", ints: []string{"R", "D"}},
	progLayerNormGrad:   {file: "layernormgrad.comp", ints: []string{"R", "D", "hasRes"}, wg: 32},
	progGELU:            {file: "gelu.comp"},
	progMul:             {file: "mul.comp"},
	progAdd:             {file: "add.comp"},
	progColScale:        {file: "colscale.comp", ints: []string{"D"}},
	progEmbed:           {file: "embed.comp", ints: []string{"D", "V", "bit"}},
	progEmbedAdd:        {file: "embedadd.comp", ints: []string{"N", "D", "V", "V2", "stepR", "stepJ", "bit"}},
	progEmbedIndex:      {file: "embedindex.comp", ints: []string{"R", "V", "bit"}},
	progEmbedGrad:       {file: "embedgrad.comp", ints: []string{"R", "D", "V"}},
	progProbs:           {file: "probs.comp", ints: attnInts, floats: attnFloats},
	progMix:             {file: "mix.comp", ints: attnInts, floats: attnFloats},
	progMixGradP:        {file: "mixgradp.comp", ints: attnInts, floats: attnFloats},
	progMixGradV:        {file: "mixgradv.comp", ints: attnInts, floats: attnFloats},
	progProbsGradQ:      {file: "probsgradq.comp", ints: attnInts, floats: attnFloats},
	progProbsGradK:      {file: "probsgradk.comp", ints: attnInts, floats: attnFloats},
	progAttend:          {file: "attend.comp", ints: append(attnInts[:len(attnInts):len(attnInts)], "hasO", "hasOg"), floats: attnFloats},
	progAttendGrad:      {file: "attendgrad.comp", ints: attnInts, floats: attnFloats},
	progSoftmaxXent:     {file: "softmaxxent.comp", ints: []string{"R", "V", "bit"}},
	progSoftmaxXentGrad: {file: "softmaxxentgrad.comp", ints: []string{"R", "V", "bit"}},
	progCountCorrect:    {file: "countcorrect.comp", ints: []string{"R", "V"}},
	progAdam:            {file: "adam.comp", floats: []string{"c1", "c2", "b1", "b2", "omb1", "omb2", "eps"}},
	progMarkDiverged:    {file: "markdiverged.comp", floats: []string{"atStep"}},
}

// maxUniforms bounds a program's own int and float uniforms.
const maxUniforms = 10

// program is a linked compute program and its uniform locations
// (-1 where the linker optimised a uniform away; glUniform ignores it).
type program struct {
	id                 uint32
	locS, locWork      int32
	locOff, locStride  int32
	locInts, locFloats [maxUniforms]int32
	numInts, numFloats int
	name               string
	// size is the program's local_size_x (its other sizes are 1).
	size int
}

// The source strings of a kernel, numbered in #line directives so that a
// driver's log says which file a line is in: 0 the kernel, 1 common.glsl,
// 2 and up its includes in order.
//
// source builds a kernel's full source: version, defines, common.glsl,
// then the file, its includes expanded. It also returns the legend of its
// source numbers for error messages.
func source(file, body, defines string) (src, legend string, err error) {
	common, err := shaderFS.ReadFile("shaders/common.glsl")
	if err != nil {
		return "", "", err
	}
	names := []string{file, "common.glsl"}
	var b strings.Builder
	b.WriteString("#version 430 core\n")
	b.WriteString(defines)
	b.WriteString("#line 1 1\n")
	b.Write(common)
	b.WriteString("\n#line 1 0\n")
	for i, line := range strings.Split(body, "\n") {
		inc, ok := strings.CutPrefix(strings.TrimSpace(line), "#include ")
		if !ok {
			b.WriteString(line)
			b.WriteByte('\n')
			continue
		}
		name := strings.Trim(inc, `" `)
		text, err := shaderFS.ReadFile("shaders/" + name)
		if err != nil {
			return "", "", fmt.Errorf("%s:%d: include %q: %v", file, i+1, name, err)
		}
		fmt.Fprintf(&b, "#line 1 %d\n%s\n#line %d 0\n", len(names), text, i+2)
		names = append(names, name)
	}
	for i, n := range names {
		if i > 0 {
			legend += ", "
		}
		legend += fmt.Sprintf("%d %s", i, n)
	}
	return b.String(), legend, nil
}

// compileKernel compiles and links the compute program of file with
// source body, looking up its uniforms; staged defines STAGED (common.glsl),
// and defines goes before common.glsl as it is. It runs on the GL thread.
func compileKernel(file, body string, spec progSpec, staged bool, defines string) (program, error) {
	if spec.wg > 0 {
		defines += fmt.Sprintf("#define WG %d\n", spec.wg)
	}
	if staged {
		defines += "#define STAGED\n"
	}
	src, legend, err := source(file, body, defines)
	if err != nil {
		return program{}, fmt.Errorf("gl: %v", err)
	}
	id, err := glctx.Program(file, glctx.Stage{Kind: ogl.COMPUTE_SHADER, Source: src})
	if err != nil {
		return program{}, fmt.Errorf("gl: %v (source numbers: %s)", err, legend)
	}
	if len(spec.ints) > maxUniforms || len(spec.floats) > maxUniforms {
		ogl.DeleteProgram(id)
		return program{}, fmt.Errorf("gl: %s: more than %d uniforms of one kind", file, maxUniforms)
	}
	loc := func(name string) int32 { return ogl.GetUniformLocation(id, ogl.Str(name+"\x00")) }
	p := program{id: id, name: strings.TrimSuffix(file, ".comp"), numInts: len(spec.ints), numFloats: len(spec.floats)}
	var size [3]int32
	ogl.GetProgramiv(id, ogl.COMPUTE_WORK_GROUP_SIZE, &size[0])
	if size[1] != 1 || size[2] != 1 || size[0] <= 0 {
		ogl.DeleteProgram(id)
		return program{}, fmt.Errorf("gl: %s: workgroup %v, want local_size_x only", file, size)
	}
	p.size = int(size[0])
	p.locS, p.locWork, p.locOff, p.locStride = loc("S"), loc("work"), loc("off"), loc("stride")
	for i, n := range spec.ints {
		p.locInts[i] = loc(n)
	}
	for i, n := range spec.floats {
		p.locFloats[i] = loc(n)
	}
	return p, nil
}

// compileAll compiles every kernel program, staged or not, with defines;
// on failure it deletes those it made.
func compileAll(progs *[numProgs]program, staged bool, defines string) error {
	for i, spec := range progSpecs {
		body, err := shaderFS.ReadFile("shaders/" + spec.file)
		if err == nil {
			progs[i], err = compileKernel(spec.file, string(body), spec, staged, defines)
		}
		if err != nil {
			deletePrograms(progs)
			return err
		}
	}
	return nil
}

// deletePrograms deletes the programs made so far.
func deletePrograms(progs *[numProgs]program) {
	for i := range progs {
		if progs[i].id != 0 {
			ogl.DeleteProgram(progs[i].id)
			progs[i] = program{}
		}
	}
}
