package window

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"time"
	"unsafe"

	// OpenGL 4.1 core, macOS's ceiling: the viewer draws in a 4.1 context
	// with CPU kernels, and in the GL device's 4.3 one with GL kernels.
	ogl "github.com/go-gl/gl/v4.1-core/gl"
	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/glctx"
	"headlab/graph"
	"headlab/viz"
)

// The UI program draws textured quads over the glyph atlas in framebuffer
// pixels (origin top left).
const uiVertex = `#version 410 core
layout(location = 0) in vec2 pos;
layout(location = 1) in vec2 uv;
layout(location = 2) in vec4 col;
uniform vec2 fb;
out vec2 vuv;
out vec4 vcol;
void main() {
	vuv = uv;
	vcol = col;
	gl_Position = vec4(pos.x / fb.x * 2.0 - 1.0, 1.0 - pos.y / fb.y * 2.0, 0.0, 1.0);
}
`

const uiFragment = `#version 410 core
uniform sampler2D atlas;
in vec2 vuv;
in vec4 vcol;
out vec4 color;
void main() {
	float a = texelFetch(atlas, ivec2(floor(vuv)), 0).r;
	color = vec4(vcol.rgb, vcol.a * a);
}
`

// The heatmap program draws one instance per panel: a rectangle and a
// slice of the probability texture array, coloured by viz's cell rule.
const heatVertex = `#version 410 core
layout(location = 0) in vec4 rect;  // x0, y0, x1, y1 in framebuffer pixels
layout(location = 1) in vec2 info;  // texture slice, brightness
uniform vec2 fb;
out vec2 vuv;
flat out int vslice;
flat out float vdim;
void main() {
	vec2 c = vec2(gl_VertexID & 1, gl_VertexID >> 1);
	vec2 p = mix(rect.xy, rect.zw, c);
	vuv = c;
	vslice = int(info.x + 0.5);
	vdim = info.y;
	gl_Position = vec4(p.x / fb.x * 2.0 - 1.0, 1.0 - p.y / fb.y * 2.0, 0.0, 1.0);
}
`

// heatFragment is viz.CellColor for one texel: viz.MaskedCell,
// viz.BadCell, or the weight's colour in viz.ViridisSteps, searched as
// ColorSteps.At does (edges: its Edges, colors: its Colors), so that a
// cell has exactly the colour it has in a figure.
var heatFragment = fmt.Sprintf(`#version 410 core
uniform sampler2DArray probs;
uniform sampler2D edges;
uniform sampler2D colors;
uniform int T;
uniform int causal;
in vec2 vuv;
flat in int vslice;
flat in float vdim;
out vec4 color;
void main() {
	int j = min(int(vuv.x * float(T)), T - 1);  // key: column
	int i = min(int(vuv.y * float(T)), T - 1);  // query: row
	vec3 c;
	if (causal != 0 && j > i) {
		c = %s;
	} else {
		float w = texelFetch(probs, ivec3(j, i, vslice), 0).r;
		if (isnan(w) || isinf(w)) {
			c = %s;
		} else {
			int lo = 0, hi = textureSize(edges, 0).x;
			while (hi - lo > 1) {
				int mid = (lo + hi) / 2;
				if (texelFetch(edges, ivec2(mid, 0), 0).r <= w) {
					lo = mid;
				} else {
					hi = mid;
				}
			}
			c = texelFetch(colors, ivec2(lo, 0), 0).rgb;
		}
	}
	color = vec4(c * vdim, 1.0);
}
`, glslColor(viz.MaskedCell), glslColor(viz.BadCell))

// glslColor writes c as a GLSL vec3.
func glslColor(c color.RGBA) string {
	return fmt.Sprintf("vec3(%g, %g, %g)", float64(c.R)/255, float64(c.G)/255, float64(c.B)/255)
}

// texShape is the shape of a probability texture array: slice
// (l*n + e)*h + hd holds head hd of layer l on captured example e, so
// that one layer's captured examples are one contiguous run of slices, as
// they are in the Probs buffer.
type texShape struct{ l, n, h, t int }

func (s texShape) slice(l, e, hd int) int { return (l*s.n+e)*s.h + hd }

type probTex struct {
	id    uint32
	shape texShape
}

// instance is one heatmap panel for the instanced draw.
type instance struct {
	x0, y0, x1, y1 float32
	slice, dim     float32
}

const instanceSize = 24

// gpu holds the viewer's GL objects; it lives on the GL thread.
type gpu struct {
	ui, heat                        uint32
	uiFB, heatFB, heatT, heatCausal int32
	uiVAO, uiVBO, heatVAO, heatVBO  uint32
	atlas, edges, colors            uint32
	tex                             [2]probTex // alternate refreshes: one shown, one filled
	uploaded                        int        // snapshot gen whose CPU probs are uploaded
	scratch                         []float32
	fpsFrames                       int
	fpsAt                           time.Time
	drawnAt                         time.Time
}

// gl41 is go-gl's OpenGL 4.1 core package, loaded once per process (glctx.Profile).
var gl41 = glctx.Profile{Init: ogl.InitWithProcAddrFunc}

// maxSlices is GL_MAX_ARRAY_TEXTURE_LAYERS, read once by initGL.
func (v *Viewer) maxSlices() int { return v.slices }

// initGL shows and sizes the window, sets up input and creates the GL
// objects. It runs on the GL thread.
func (v *Viewer) initGL(shape graph.Config, tokChars int) (err error) {
	v.win = v.display.Window()
	if v.win == nil {
		return fmt.Errorf("window: the GL thread has no window (a headless context)")
	}
	if major, minor := v.display.Version(); major < 4 || major == 4 && minor < 1 {
		return fmt.Errorf("window: OpenGL 4.1 needed, the display's context is %d.%d", major, minor)
	}
	if err := gl41.Load(v.display); err != nil {
		return fmt.Errorf("window: loading OpenGL functions: %v", err)
	}
	g := &gpu{fpsAt: time.Now()}
	v.g = g
	defer func() {
		if err != nil {
			v.releaseGL()
		}
	}()
	if g.ui, err = link("viewer overlay", uiVertex, uiFragment); err != nil {
		return err
	}
	if g.heat, err = link("viewer heatmaps", heatVertex, heatFragment); err != nil {
		return err
	}
	g.uiFB = uniform(g.ui, "fb")
	g.heatFB, g.heatT, g.heatCausal = uniform(g.heat, "fb"), uniform(g.heat, "T"), uniform(g.heat, "causal")
	ogl.UseProgram(g.ui)
	ogl.Uniform1i(uniform(g.ui, "atlas"), 0)
	ogl.UseProgram(g.heat)
	ogl.Uniform1i(uniform(g.heat, "probs"), 0)
	ogl.Uniform1i(uniform(g.heat, "edges"), 1)
	ogl.Uniform1i(uniform(g.heat, "colors"), 2)
	ogl.UseProgram(0)

	// UI quads: pos, uv, colour (normalised bytes).
	g.uiVAO, g.uiVBO = newVertexArray()
	ogl.EnableVertexAttribArray(0)
	ogl.VertexAttribPointerWithOffset(0, 2, ogl.FLOAT, false, vertexSize, 0)
	ogl.EnableVertexAttribArray(1)
	ogl.VertexAttribPointerWithOffset(1, 2, ogl.FLOAT, false, vertexSize, 8)
	ogl.EnableVertexAttribArray(2)
	ogl.VertexAttribPointerWithOffset(2, 4, ogl.UNSIGNED_BYTE, true, vertexSize, 16)
	// Heatmap instances: rect, (slice, brightness), one per instance.
	g.heatVAO, g.heatVBO = newVertexArray()
	ogl.EnableVertexAttribArray(0)
	ogl.VertexAttribPointerWithOffset(0, 4, ogl.FLOAT, false, instanceSize, 0)
	ogl.VertexAttribDivisor(0, 1)
	ogl.EnableVertexAttribArray(1)
	ogl.VertexAttribPointerWithOffset(1, 2, ogl.FLOAT, false, instanceSize, 16)
	ogl.VertexAttribDivisor(1, 1)
	ogl.BindVertexArray(0)
	ogl.BindBuffer(ogl.ARRAY_BUFFER, 0)

	// Single-level textures with NEAREST filters (gl-notes: a texture
	// with the default mipmap filter and no mipmaps samples 0).
	atlas := buildAtlas()
	ogl.PixelStorei(ogl.UNPACK_ALIGNMENT, 1)
	g.atlas = newTexture2D(ogl.R8, ogl.RED, ogl.UNSIGNED_BYTE, atlasW, atlasH, unsafe.Pointer(&atlas.Pix[0]))
	steps := viz.ViridisSteps()
	ns := int32(len(steps.Edges))
	g.edges = newTexture2D(ogl.R32F, ogl.RED, ogl.FLOAT, ns, 1, unsafe.Pointer(&steps.Edges[0]))
	g.colors = newTexture2D(ogl.RGBA8, ogl.RGBA, ogl.UNSIGNED_BYTE, ns, 1, unsafe.Pointer(&steps.Colors[0]))
	ogl.PixelStorei(ogl.UNPACK_ALIGNMENT, 4)
	var n int32
	ogl.GetIntegerv(ogl.MAX_ARRAY_TEXTURE_LAYERS, &n)
	v.slices = int(n)

	// GLFW wants its window calls on the main thread (glctx.OnMain); the
	// context stays on this one.
	glctx.OnMain(func() { v.setupWindow(shape, tokChars) })
	// Frames are paced by Run; a swap must never wait for a vertical
	// blank, as the kernels share this thread.
	glfw.SwapInterval(0)
	// Mesa revalidates a window's buffers (and picks up its new size) at a
	// swap; without one the first frame draws into the old 1x1 buffer.
	v.win.SwapBuffers()
	return nil
}

// setupWindow sizes the window for the model (within the screen), shows
// it and installs the input callbacks. It runs on the main thread.
func (v *Viewer) setupWindow(shape graph.Config, tokChars int) {
	win := v.win
	cs, _ := win.GetContentScale()
	ppu := max(1, int(math.Round(float64(cs))))
	size := v.opts.Size
	if size == (image.Point{}) {
		var screen image.Point // logical pixels; zero when unknown
		if mon := glfw.GetPrimaryMonitor(); mon != nil {
			if vm := mon.GetVideoMode(); vm != nil {
				screen = image.Pt(vm.Width*95/100, vm.Height*92/100).Div(ppu)
			}
		}
		size = PreferredSize(shape.Layers, shape.Heads, shape.SeqLen, tokChars, screen)
	}
	w, h := size.X*ppu, size.Y*ppu
	win.SetTitle("headlab view")
	// Below this the sidebar no longer fits.
	win.SetSizeLimits(minWidth*ppu*2/3, yNote*ppu+4*16, glfw.DontCare, glfw.DontCare)
	win.SetSize(w, h)
	win.Show()
	win.SetShouldClose(false)
	// The resize is asynchronous on X11: wait (briefly) until the
	// framebuffer has the new size, so the first frame uses it.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		glfw.PollEvents()
		if ww, wh := win.GetSize(); ww == w && wh == h {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}

	win.SetKeyCallback(func(_ *glfw.Window, key glfw.Key, _ int, action glfw.Action, mods glfw.ModifierKey) {
		if action == glfw.Release {
			return
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		v.keyLocked(key, mods, action == glfw.Repeat)
	})
	win.SetCursorPosCallback(func(_ *glfw.Window, x, y float64) {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.st.cursor, v.st.cursorIn = v.st.m.toLogical(x, y), true
		v.st.urgent = true
	})
	win.SetCursorEnterCallback(func(_ *glfw.Window, entered bool) {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.st.cursorIn = entered
		v.st.urgent = true
	})
	win.SetMouseButtonCallback(func(w *glfw.Window, b glfw.MouseButton, action glfw.Action, _ glfw.ModifierKey) {
		if b != glfw.MouseButtonLeft || action != glfw.Press {
			return
		}
		x, y := w.GetCursorPos()
		v.mu.Lock()
		defer v.mu.Unlock()
		v.clickLocked(v.st.m.toLogical(x, y))
	})
	win.SetRefreshCallback(func(*glfw.Window) {
		v.mu.Lock()
		v.st.urgent = true
		v.mu.Unlock()
	})
	win.SetScrollCallback(func(w *glfw.Window, dx, dy float64) {
		shift := w.GetKey(glfw.KeyLeftShift) == glfw.Press || w.GetKey(glfw.KeyRightShift) == glfw.Press
		v.mu.Lock()
		defer v.mu.Unlock()
		v.st.wheel(dx, dy, shift)
	})
}

// freeGL releases the GL objects and hides the window, on the GL thread.
func (v *Viewer) freeGL() {
	_ = v.display.Call(v.releaseGL)
}

func (v *Viewer) releaseGL() {
	if win := v.win; win != nil {
		glctx.OnMain(func() {
			win.SetKeyCallback(nil)
			win.SetCursorPosCallback(nil)
			win.SetCursorEnterCallback(nil)
			win.SetMouseButtonCallback(nil)
			win.SetRefreshCallback(nil)
			win.SetScrollCallback(nil)
			win.Hide()
			win.SetShouldClose(false)
		})
	}
	g := v.g
	if g == nil {
		return
	}
	for _, p := range []uint32{g.ui, g.heat} {
		if p != 0 {
			ogl.DeleteProgram(p)
		}
	}
	for _, a := range []uint32{g.uiVAO, g.heatVAO} {
		if a != 0 {
			ogl.DeleteVertexArrays(1, &a)
		}
	}
	for _, b := range []uint32{g.uiVBO, g.heatVBO} {
		if b != 0 {
			ogl.DeleteBuffers(1, &b)
		}
	}
	for _, t := range []uint32{g.atlas, g.edges, g.colors, g.tex[0].id, g.tex[1].id} {
		if t != 0 {
			ogl.DeleteTextures(1, &t)
		}
	}
	v.g = nil
}

// newVertexArray makes a vertex array and its vertex buffer, both left
// bound for the attributes to be set up.
func newVertexArray() (vao, vbo uint32) {
	ogl.GenVertexArrays(1, &vao)
	ogl.GenBuffers(1, &vbo)
	ogl.BindVertexArray(vao)
	ogl.BindBuffer(ogl.ARRAY_BUFFER, vbo)
	return vao, vbo
}

// newTexture2D makes a 2D texture of one level (TexStorage2D is GL 4.2)
// holding w x h texels of format, components of type xtype, from pix.
func newTexture2D(internal, format, xtype uint32, w, h int32, pix unsafe.Pointer) uint32 {
	var id uint32
	ogl.GenTextures(1, &id)
	ogl.BindTexture(ogl.TEXTURE_2D, id)
	singleLevel(ogl.TEXTURE_2D)
	ogl.TexImage2D(ogl.TEXTURE_2D, 0, int32(internal), w, h, 0, format, xtype, pix)
	return id
}

// singleLevel makes the texture bound to target complete with level 0
// alone: no mipmaps, NEAREST filters.
func singleLevel(target uint32) {
	ogl.TexParameteri(target, ogl.TEXTURE_BASE_LEVEL, 0)
	ogl.TexParameteri(target, ogl.TEXTURE_MAX_LEVEL, 0)
	ogl.TexParameteri(target, ogl.TEXTURE_MIN_FILTER, ogl.NEAREST)
	ogl.TexParameteri(target, ogl.TEXTURE_MAG_FILTER, ogl.NEAREST)
}

// ensure makes texture k hold shape s (recreated when the model changes)
// and returns its id: a GL_TEXTURE_2D_ARRAY of R32F, one level (a
// TexImage3D: TexStorage3D is GL 4.2). GL thread.
func (g *gpu) ensure(k int, s texShape) uint32 {
	t := &g.tex[k]
	if t.id != 0 && t.shape == s {
		return t.id
	}
	if t.id != 0 {
		ogl.DeleteTextures(1, &t.id)
	}
	ogl.GenTextures(1, &t.id)
	ogl.BindTexture(ogl.TEXTURE_2D_ARRAY, t.id)
	singleLevel(ogl.TEXTURE_2D_ARRAY)
	ogl.TexImage3D(ogl.TEXTURE_2D_ARRAY, 0, ogl.R32F, int32(s.t), int32(s.t), int32(s.l*s.n*s.h), 0, ogl.RED, ogl.FLOAT, nil)
	t.shape = s
	if g.uploaded%2 == k {
		g.uploaded = 0 // whatever it held is gone
	}
	return t.id
}

// upload copies a CPU snapshot's attention into its texture, reordered
// from [n][l][h] to the texture's [l][n][h]: once per refresh. GL thread.
func (g *gpu) upload(sn *snapshot) {
	sh := texShape{l: sn.l, n: sn.n, h: sn.h, t: sn.t}
	id := g.ensure(sn.gen%2, sh)
	mat := sn.t * sn.t
	need := sn.l * sn.n * sn.h * mat
	if cap(g.scratch) < need {
		g.scratch = make([]float32, need)
	}
	buf := g.scratch[:need]
	for e := 0; e < sn.n; e++ {
		for l := 0; l < sn.l; l++ {
			src := sn.probs[(e*sn.l+l)*sn.h*mat : (e*sn.l+l+1)*sn.h*mat]
			copy(buf[sh.slice(l, e, 0)*mat:], src)
		}
	}
	ogl.BindTexture(ogl.TEXTURE_2D_ARRAY, id)
	ogl.PixelStorei(ogl.UNPACK_ALIGNMENT, 4)
	ogl.TexSubImage3D(ogl.TEXTURE_2D_ARRAY, 0, 0, 0, 0, int32(sn.t), int32(sn.t), int32(sh.l*sh.n*sh.h),
		ogl.RED, ogl.FLOAT, unsafe.Pointer(&buf[0]))
	g.uploaded = sn.gen
}

// frame polls input and, when draw is set and something changed (or shot
// asks for a screenshot), draws a frame; shot receives the pixels, read
// before the swap. It reports whether the user asked to quit. GL thread.
func (v *Viewer) frame(draw bool, shot *image.RGBA) (closed bool) {
	start := time.Now()
	win, g := v.win, v.g
	var m metrics
	glctx.OnMain(func() { // GLFW's event and window calls
		glfw.PollEvents()
		if g != nil {
			m.win.X, m.win.Y = win.GetSize()
			m.fb.X, m.fb.Y = win.GetFramebufferSize()
			cs, _ := win.GetContentScale()
			m.ppu = max(1, int(math.Round(max(float64(cs), m.fbPerWin()))))
		}
	})
	if g == nil {
		return true
	}

	v.mu.Lock()
	st := &v.st
	if m != st.m {
		st.m, st.urgent = m, true
	}
	closed = st.quit || win.ShouldClose()
	// Input redraws at once; new numbers from training at most every
	// dataFrameEvery, which leaves the CPU to training.
	due := st.urgent || st.dirty && time.Since(g.drawnAt) >= dataFrameEvery
	if !draw || !(due || shot != nil) || m.fb.X <= 0 || m.fb.Y <= 0 {
		v.mu.Unlock()
		return closed
	}
	f := v.composeLocked()
	st.dirty, st.urgent = false, false
	g.drawnAt = time.Now()
	v.frames++
	g.fpsFrames++
	if dt := time.Since(g.fpsAt); dt >= time.Second {
		st.fps = float64(g.fpsFrames) / dt.Seconds()
		g.fpsFrames, g.fpsAt = 0, time.Now()
	}
	v.mu.Unlock()

	if sn := f.snap; sn != nil && !sn.onGPU && g.uploaded != sn.gen {
		g.upload(sn)
	}
	v.draw(f, m)
	if shot != nil {
		*shot = *readPixels(m.fb)
	}
	win.SwapBuffers()
	v.mu.Lock()
	v.frameTime += time.Since(start)
	v.mu.Unlock()
	return closed
}

// draw renders a composed frame: background, UI, heatmaps, overlays.
func (v *Viewer) draw(f *composed, m metrics) {
	g := v.g
	fbw, fbh := float32(m.fb.X), float32(m.fb.Y)
	ogl.Viewport(0, 0, int32(m.fb.X), int32(m.fb.Y))
	c := colBackground
	ogl.ClearColor(float32(c.R)/255, float32(c.G)/255, float32(c.B)/255, 1)
	ogl.Clear(ogl.COLOR_BUFFER_BIT)
	ogl.Enable(ogl.BLEND)
	ogl.BlendFunc(ogl.SRC_ALPHA, ogl.ONE_MINUS_SRC_ALPHA)

	verts := append(f.under.verts, f.over.verts...)
	if len(verts) > 0 {
		ogl.BindBuffer(ogl.ARRAY_BUFFER, g.uiVBO)
		ogl.BufferData(ogl.ARRAY_BUFFER, len(verts)*vertexSize, unsafe.Pointer(&verts[0]), ogl.STREAM_DRAW)
	}
	drawUI := func(first, n int) {
		if n == 0 {
			return
		}
		ogl.UseProgram(g.ui)
		ogl.Uniform2f(g.uiFB, fbw, fbh)
		ogl.ActiveTexture(ogl.TEXTURE0)
		ogl.BindTexture(ogl.TEXTURE_2D, g.atlas)
		ogl.BindVertexArray(g.uiVAO)
		ogl.DrawArrays(ogl.TRIANGLES, int32(first), int32(n))
	}
	drawUI(0, len(f.under.verts))

	if sn := f.snap; sn != nil && len(f.heat) > 0 {
		t := g.tex[sn.gen%2]
		if t.id != 0 && t.shape == (texShape{l: sn.l, n: sn.n, h: sn.h, t: sn.t}) {
			ogl.Disable(ogl.BLEND)
			ogl.BindBuffer(ogl.ARRAY_BUFFER, g.heatVBO)
			ogl.BufferData(ogl.ARRAY_BUFFER, len(f.heat)*instanceSize, unsafe.Pointer(&f.heat[0]), ogl.STREAM_DRAW)
			ogl.UseProgram(g.heat)
			ogl.Uniform2f(g.heatFB, fbw, fbh)
			ogl.Uniform1i(g.heatT, int32(sn.t))
			causal := int32(0)
			if sn.causal {
				causal = 1
			}
			ogl.Uniform1i(g.heatCausal, causal)
			ogl.ActiveTexture(ogl.TEXTURE0)
			ogl.BindTexture(ogl.TEXTURE_2D_ARRAY, t.id)
			ogl.ActiveTexture(ogl.TEXTURE1)
			ogl.BindTexture(ogl.TEXTURE_2D, g.edges)
			ogl.ActiveTexture(ogl.TEXTURE2)
			ogl.BindTexture(ogl.TEXTURE_2D, g.colors)
			ogl.ActiveTexture(ogl.TEXTURE0)
			ogl.BindVertexArray(g.heatVAO)
			ogl.DrawArraysInstanced(ogl.TRIANGLE_STRIP, 0, 4, int32(len(f.heat)))
			ogl.Enable(ogl.BLEND)
		}
	}
	if len(f.over.verts) > 0 {
		ogl.BindBuffer(ogl.ARRAY_BUFFER, g.uiVBO)
		drawUI(len(f.under.verts), len(f.over.verts))
	}
	ogl.BindVertexArray(0)
	ogl.BindBuffer(ogl.ARRAY_BUFFER, 0)
	ogl.UseProgram(0)
}

// readPixels reads the back buffer (before the swap) as top-down RGBA.
func readPixels(size image.Point) *image.RGBA {
	img := image.NewRGBA(image.Rectangle{Max: size})
	ogl.ReadBuffer(ogl.BACK)
	ogl.PixelStorei(ogl.PACK_ALIGNMENT, 1)
	ogl.ReadPixels(0, 0, int32(size.X), int32(size.Y), ogl.RGBA, ogl.UNSIGNED_BYTE, unsafe.Pointer(&img.Pix[0]))
	// GL's rows start at the bottom.
	row := make([]byte, img.Stride)
	for y := 0; y < size.Y/2; y++ {
		a := img.Pix[y*img.Stride : (y+1)*img.Stride]
		b := img.Pix[(size.Y-1-y)*img.Stride : (size.Y-y)*img.Stride]
		copy(row, a)
		copy(a, b)
		copy(b, row)
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img
}

// link compiles and links a vertex and a fragment shader (glctx.Program).
func link(name, vs, fs string) (uint32, error) {
	p, err := glctx.Program(name, glctx.Stage{Kind: ogl.VERTEX_SHADER, Source: vs}, glctx.Stage{Kind: ogl.FRAGMENT_SHADER, Source: fs})
	if err != nil {
		return 0, fmt.Errorf("window: %v", err)
	}
	return p, nil
}

func uniform(p uint32, name string) int32 {
	return ogl.GetUniformLocation(p, ogl.Str(name+"\x00"))
}
