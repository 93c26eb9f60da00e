package glctx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	gl41 "github.com/go-gl/gl/v4.1-core/gl"
	gl43 "github.com/go-gl/gl/v4.3-core/gl"
	"github.com/go-gl/glfw/v3.3/glfw"

	"headlab/glctx/egl"
)

// The kinds every path test runs on. The glfw path needs a display; the
// EGL paths run with DISPLAY unset, as on a GPU server.
var kinds = []string{kindDevice, kindSurfaceless, kindGLFW}

func TestMain(m *testing.M) {
	// CI sets HEADLAB_GL_CONTEXT to run the compute backend once per path;
	// these tests pick every path themselves.
	os.Unsetenv("HEADLAB_GL_CONTEXT")
	if helper := os.Getenv("GLCTX_TEST_HELPER"); helper != "" {
		runHelper(helper)
		return
	}
	// Main serves the main thread, as in headlab itself: GLFW windows are
	// made there, their contexts used on the Threads' own threads.
	code := 1
	Main(func() { code = m.Run() })
	os.Exit(code)
}

// onPath prepares the environment for kind: the glfw path needs a display
// (a precondition, skipped without one), the EGL paths must work without.
func onPath(t *testing.T, kind string) {
	t.Helper()
	if kind == kindGLFW {
		if os.Getenv("DISPLAY") == "" {
			t.Skip("the glfw path needs a display and DISPLAY is empty")
		}
		return
	}
	unsetEnv(t, "DISPLAY")
}

// unsetEnv removes name for the rest of the test.
func unsetEnv(t *testing.T, name string) {
	t.Helper()
	old, had := os.LookupEnv(name)
	os.Unsetenv(name)
	t.Cleanup(func() {
		if had {
			os.Setenv(name, old)
		}
	})
}

// newThread makes a Thread or, when no context can be made on this path,
// skips (outside CI) or fails (under CI).
func newThread(t *testing.T, o Options) *Thread {
	t.Helper()
	th, err := New(o)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and New(%+v) failed: %v", o, err)
		}
		t.Skipf("no %q context here: %v", o.Context, err)
	}
	t.Cleanup(func() { th.Close() })
	return th
}

// The go-gl version packages the tests use, as backend/gl and the viewer
// load theirs.
var (
	profile43 = Profile{Init: gl43.InitWithProcAddrFunc}
	profile41 = Profile{Init: gl41.InitWithProcAddrFunc}
)

// loadGL43 loads go-gl's 4.3 core functions, on th.
func loadGL43(t *testing.T, th *Thread) {
	t.Helper()
	var err error
	if cerr := th.Call(func() { err = profile43.Load(th) }); cerr != nil {
		t.Fatalf("Call: %v", cerr)
	}
	if err != nil {
		t.Fatalf("loading go-gl's 4.3 core functions: %v", err)
	}
}

const doubler = `#version 430
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint v[]; };
uniform uint n;
void main() {
	uint i = gl_GlobalInvocationID.x;
	if (i < n) v[i] = i * 2u;
}
` + "\x00"

// compileCompute builds a compute program on the GL thread.
func compileCompute(src string) (uint32, error) {
	sh := gl43.CreateShader(gl43.COMPUTE_SHADER)
	cs, free := gl43.Strs(src)
	gl43.ShaderSource(sh, 1, cs, nil)
	free()
	gl43.CompileShader(sh)
	var ok int32
	gl43.GetShaderiv(sh, gl43.COMPILE_STATUS, &ok)
	if ok == 0 {
		log := make([]byte, 2048)
		gl43.GetShaderInfoLog(sh, int32(len(log)), nil, &log[0])
		gl43.DeleteShader(sh)
		return 0, fmt.Errorf("compile: %s", gl43.GoStr(&log[0]))
	}
	p := gl43.CreateProgram()
	gl43.AttachShader(p, sh)
	gl43.LinkProgram(p)
	gl43.DeleteShader(sh)
	gl43.GetProgramiv(p, gl43.LINK_STATUS, &ok)
	if ok == 0 {
		gl43.DeleteProgram(p)
		return 0, errors.New("link failed")
	}
	return p, nil
}

// runDoubler dispatches the doubler over n elements of a buffer filled with
// a sentinel and returns what the GPU wrote.
func runDoubler(t *testing.T, th *Thread, n int) []uint32 {
	t.Helper()
	out := make([]uint32, n)
	var err error
	cerr := th.Call(func() {
		var p uint32
		if p, err = compileCompute(doubler); err != nil {
			return
		}
		defer gl43.DeleteProgram(p)
		init := make([]uint32, n)
		for i := range init {
			init[i] = 0xFFFFFFFF
		}
		var buf uint32
		gl43.GenBuffers(1, &buf)
		defer gl43.DeleteBuffers(1, &buf)
		gl43.BindBuffer(gl43.SHADER_STORAGE_BUFFER, buf)
		gl43.BufferData(gl43.SHADER_STORAGE_BUFFER, 4*n, unsafe.Pointer(&init[0]), gl43.DYNAMIC_COPY)
		gl43.BindBufferBase(gl43.SHADER_STORAGE_BUFFER, 0, buf)
		gl43.UseProgram(p)
		gl43.Uniform1ui(gl43.GetUniformLocation(p, gl43.Str("n\x00")), uint32(n))
		gl43.DispatchCompute(uint32((n+63)/64), 1, 1)
		gl43.MemoryBarrier(gl43.BUFFER_UPDATE_BARRIER_BIT)
		gl43.GetBufferSubData(gl43.SHADER_STORAGE_BUFFER, 0, 4*n, unsafe.Pointer(&out[0]))
		gl43.UseProgram(0)
		gl43.BindBuffer(gl43.SHADER_STORAGE_BUFFER, 0)
	})
	if cerr != nil {
		t.Fatalf("Call around the dispatch: %v", cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkDoubled(t *testing.T, got []uint32) {
	t.Helper()
	bad := 0
	for i, v := range got {
		if v != uint32(2*i) {
			if bad < 5 {
				t.Errorf("v[%d] = %d, want %d", i, v, 2*i)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d values wrong", bad, len(got))
	}
}

// bogus leaves GL_INVALID_ENUM behind.
func bogus() { gl43.BindBuffer(0xdead, 0) }

func TestPaths(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			onPath(t, kind)
			th := newThread(t, Options{Context: kind})
			var tid uint64
			if err := th.Call(func() { tid = self() }); err != nil || tid != th.tid || tid == mainTid {
				t.Fatalf("%s: Call ran on thread %d (err %v), want the Thread's own %d, not the main thread %d", kind, tid, err, th.tid, mainTid)
			}
			if th.Kind() != kind {
				t.Fatalf("Kind() = %q, want %q", th.Kind(), kind)
			}
			if major, minor := th.Version(); !egl.AtLeast(major, minor, 4, 3) {
				t.Fatalf("Version() = %d.%d, want at least 4.3", major, minor)
			}
			if r := th.Renderer(); !strings.Contains(r, ", OpenGL ") || strings.HasPrefix(r, ",") {
				t.Fatalf("Renderer() = %q, want GL_RENDERER, OpenGL GL_VERSION", r)
			}
			t.Logf("%s: %s", kind, th.Renderer())
			if (th.Window() != nil) != (kind == kindGLFW) {
				t.Fatalf("Window() = %v on %s", th.Window(), kind)
			}
			loadGL43(t, th)
			checkDoubled(t, runDoubler(t, th, 1000))

			t.Run("GoSyncOrder", func(t *testing.T) { testGoSync(t, th) })
			t.Run("GoReturnsAtOnce", func(t *testing.T) { testGoAtOnce(t, th) })
			t.Run("Errors", func(t *testing.T) { testErrors(t, th) })
			t.Run("Panics", func(t *testing.T) { testPanics(t, th) })
			t.Run("OnThread", func(t *testing.T) { testOnThread(t, th) })
			t.Run("Close", func(t *testing.T) { testClose(t, th) })
		})
	}
}

func testGoSync(t *testing.T, th *Thread) {
	const n = 300
	var order []int
	var buf uint32
	if err := th.Call(func() {
		gl43.GenBuffers(1, &buf)
		gl43.BindBuffer(gl43.SHADER_STORAGE_BUFFER, buf)
		gl43.BufferData(gl43.SHADER_STORAGE_BUFFER, 4*n, nil, gl43.DYNAMIC_COPY)
	}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		th.Go(func() {
			order = append(order, i)
			v := uint32(3*i + 1)
			gl43.BindBuffer(gl43.SHADER_STORAGE_BUFFER, buf)
			gl43.BufferSubData(gl43.SHADER_STORAGE_BUFFER, 4*i, 4, unsafe.Pointer(&v))
		})
	}
	// Call runs after everything queued before it.
	got := make([]uint32, n)
	if err := th.Call(func() {
		gl43.BindBuffer(gl43.SHADER_STORAGE_BUFFER, buf)
		gl43.GetBufferSubData(gl43.SHADER_STORAGE_BUFFER, 0, 4*n, unsafe.Pointer(&got[0]))
		gl43.DeleteBuffers(1, &buf)
	}); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != uint32(3*i+1) {
			t.Fatalf("buffer[%d] = %d after the queued writes, want %d", i, v, 3*i+1)
		}
	}
	more := 0
	for range 50 {
		th.Go(func() { more++ })
	}
	if err := th.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if more != 50 {
		t.Fatalf("after Sync %d of 50 queued functions ran", more)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("queued functions ran out of order: position %d ran %d", i, v)
		}
	}
	if len(order) != n {
		t.Fatalf("%d of %d queued functions ran", len(order), n)
	}
}

func testGoAtOnce(t *testing.T, th *Thread) {
	gate, ran, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		th.Go(func() { <-gate; close(ran) })
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		close(gate)
		t.Fatal("Go waited for its function to run")
	}
	select {
	case <-ran:
		t.Fatal("the function ran before it could have")
	default:
	}
	close(gate)
	if err := th.Sync(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	default:
		t.Fatal("Sync returned before the queued function ran")
	}
}

func testErrors(t *testing.T, th *Thread) {
	err := th.Call(bogus)
	if err == nil || !strings.Contains(err.Error(), "GL_INVALID_ENUM") || !strings.Contains(err.Error(), "in Call") {
		t.Fatalf("Call(bogus BindBuffer) = %v, want GL_INVALID_ENUM in Call", err)
	}
	if err := th.Call(func() {}); err != nil {
		t.Fatalf("the next Call got %v: the error was not drained", err)
	}
	th.Go(bogus)
	th.Go(func() {})
	if err := th.Sync(); err == nil || !strings.Contains(err.Error(), "GL_INVALID_ENUM") {
		t.Fatalf("Sync after a bogus Go = %v, want GL_INVALID_ENUM", err)
	}
	if err := th.Sync(); err != nil {
		t.Fatalf("second Sync = %v, want nil", err)
	}
	// The next Call reports Go's error too.
	th.Go(bogus)
	if err := th.Call(func() {}); err == nil || !strings.Contains(err.Error(), "queued with Go") {
		t.Fatalf("Call after a bogus Go = %v, want the Go work's error", err)
	}
	if err := th.Sync(); err != nil {
		t.Fatalf("Sync after that Call = %v, want nil", err)
	}
}

func testPanics(t *testing.T, th *Thread) {
	func() {
		defer func() {
			if p := recover(); p != "kaboom" {
				t.Fatalf("recovered %v, want the panic of f", p)
			}
		}()
		th.Call(func() { panic("kaboom") })
		t.Fatal("Call did not re-raise the panic")
	}()
	if err := th.Call(func() {}); err != nil {
		t.Fatalf("Call after a panic: %v", err)
	}
	// A panic in Go is kept; the first error wins.
	th.Go(func() { panic("boom") })
	th.Go(bogus)
	if err := th.Sync(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Sync after a panicking Go = %v, want the panic", err)
	}
	th.Go(bogus)
	th.Go(func() { panic("boom") })
	if err := th.Sync(); err == nil || !strings.Contains(err.Error(), "GL_INVALID_ENUM") || strings.Contains(err.Error(), "boom") {
		t.Fatalf("Sync = %v, want the GL error that came before the panic", err)
	}
	if err := th.Sync(); err != nil {
		t.Fatalf("Sync = %v, want nil", err)
	}
}

func testOnThread(t *testing.T, th *Thread) {
	var inner, syncErr, closeErr error
	res := make(chan error, 1)
	go func() {
		res <- th.Call(func() {
			inner = th.Call(bogus) // inline on the GL thread
			syncErr = th.Sync()
			closeErr = th.Close()
		})
	}()
	var err error
	select {
	case err = <-res:
	case <-time.After(20 * time.Second):
		t.Fatal("Call, Sync or Close on the GL thread waited for itself")
	}
	if err != nil {
		t.Fatalf("outer Call: %v", err)
	}
	if inner == nil || !strings.Contains(inner.Error(), "GL_INVALID_ENUM") {
		t.Fatalf("nested Call = %v, want GL_INVALID_ENUM", inner)
	}
	if syncErr == nil || closeErr == nil {
		t.Fatalf("Sync, Close on the GL thread = %v, %v; want errors, not a wait", syncErr, closeErr)
	}
}

func testClose(t *testing.T, th *Thread) {
	// Close runs what was queued and reports its unreported error.
	queued := false
	th.Go(func() { queued = true })
	th.Go(bogus)
	if err := th.Close(); err == nil || !strings.Contains(err.Error(), "GL_INVALID_ENUM") {
		t.Fatalf("Close after a bogus Go = %v, want its GL error", err)
	}
	if !queued {
		t.Fatal("Close dropped work queued before it")
	}
	if err := th.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ran := false
	if err := th.Call(func() { ran = true }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Call after Close = %v, want ErrClosed", err)
	}
	th.Go(func() { ran = true })
	if err := th.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close = %v, want ErrClosed", err)
	}
	if ran {
		t.Fatal("a function ran after Close")
	}
}

// The viewer's version: a 4.1 core context draws with a 4.1 shader into a
// framebuffer object.
func TestVersion41(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			onPath(t, kind)
			th := newThread(t, Options{Context: kind, Major: 4, Minor: 1})
			if major, minor := th.Version(); !egl.AtLeast(major, minor, 4, 1) {
				t.Fatalf("Version() = %d.%d, want at least 4.1", major, minor)
			}
			var px [4]uint8
			var err error
			if cerr := th.Call(func() { px, err = draw41(th) }); cerr != nil {
				t.Fatal(cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := [4]uint8{51, 102, 153, 255}
			for i := range px {
				if math.Abs(float64(px[i])-float64(want[i])) > 1 {
					t.Fatalf("pixel = %v, want %v", px, want)
				}
			}
		})
	}
}

const vert41 = "#version 410 core\nvoid main() { vec2 p = vec2((gl_VertexID & 1) * 4 - 1, (gl_VertexID & 2) * 2 - 1); gl_Position = vec4(p, 0, 1); }\n\x00"
const frag41 = "#version 410 core\nout vec4 c; void main() { c = vec4(0.2, 0.4, 0.6, 1.0); }\n\x00"

// draw41 draws a full-screen triangle into an 8x8 texture and reads a pixel.
func draw41(th *Thread) (px [4]uint8, err error) {
	if err := profile41.Load(th); err != nil {
		return px, err
	}
	prog := gl41.CreateProgram()
	for _, s := range []struct {
		kind uint32
		src  string
	}{{gl41.VERTEX_SHADER, vert41}, {gl41.FRAGMENT_SHADER, frag41}} {
		sh := gl41.CreateShader(s.kind)
		cs, free := gl41.Strs(s.src)
		gl41.ShaderSource(sh, 1, cs, nil)
		free()
		gl41.CompileShader(sh)
		var ok int32
		if gl41.GetShaderiv(sh, gl41.COMPILE_STATUS, &ok); ok == 0 {
			return px, errors.New("a 4.1 shader did not compile")
		}
		gl41.AttachShader(prog, sh)
		gl41.DeleteShader(sh)
	}
	gl41.LinkProgram(prog)
	defer gl41.DeleteProgram(prog)
	var tex, fbo, vao uint32
	gl41.GenTextures(1, &tex)
	defer gl41.DeleteTextures(1, &tex)
	gl41.BindTexture(gl41.TEXTURE_2D, tex)
	gl41.TexParameteri(gl41.TEXTURE_2D, gl41.TEXTURE_MIN_FILTER, gl41.NEAREST)
	gl41.TexImage2D(gl41.TEXTURE_2D, 0, gl41.RGBA8, 8, 8, 0, gl41.RGBA, gl41.UNSIGNED_BYTE, nil)
	gl41.GenFramebuffers(1, &fbo)
	defer gl41.DeleteFramebuffers(1, &fbo)
	gl41.BindFramebuffer(gl41.FRAMEBUFFER, fbo)
	defer gl41.BindFramebuffer(gl41.FRAMEBUFFER, 0)
	gl41.FramebufferTexture2D(gl41.FRAMEBUFFER, gl41.COLOR_ATTACHMENT0, gl41.TEXTURE_2D, tex, 0)
	if s := gl41.CheckFramebufferStatus(gl41.FRAMEBUFFER); s != gl41.FRAMEBUFFER_COMPLETE {
		return px, fmt.Errorf("framebuffer incomplete: 0x%x", s)
	}
	gl41.GenVertexArrays(1, &vao)
	defer gl41.DeleteVertexArrays(1, &vao)
	gl41.BindVertexArray(vao)
	gl41.Viewport(0, 0, 8, 8)
	gl41.ClearColor(1, 0, 0, 1)
	gl41.Clear(gl41.COLOR_BUFFER_BIT)
	gl41.UseProgram(prog)
	gl41.DrawArrays(gl41.TRIANGLES, 0, 3)
	gl41.UseProgram(0)
	gl41.PixelStorei(gl41.PACK_ALIGNMENT, 1)
	gl41.ReadPixels(4, 4, 1, 1, gl41.RGBA, gl41.UNSIGNED_BYTE, unsafe.Pointer(&px[0]))
	return px, nil
}

func TestBadInput(t *testing.T) {
	for _, o := range []Options{
		{Context: "nonsense"},
		{Major: -1},
		{Major: 2, Minor: 1},
		{Context: "egl", Window: true},
	} {
		th, err := New(o)
		if err == nil {
			th.Close()
			t.Errorf("New(%+v) succeeded, want an error", o)
			continue
		}
		if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "glctx: ") {
			t.Errorf("New(%+v) error %q is not one glctx line", o, err)
		}
	}
	if _, err := New(Options{Context: "nonsense"}); err == nil || !strings.Contains(err.Error(), `"nonsense"`) {
		t.Errorf("New(nonsense) = %v, want it to name the bad kind", err)
	}
	t.Setenv("HEADLAB_GL_CONTEXT", "bogus")
	if _, err := New(Options{Context: kindSurfaceless}); err == nil || !strings.Contains(err.Error(), "HEADLAB_GL_CONTEXT") {
		t.Errorf("New with HEADLAB_GL_CONTEXT=bogus = %v, want an error naming the variable", err)
	}
}

// Too new a version is refused in one line that says what the driver has.
func TestVersionTooNew(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			onPath(t, kind)
			th, err := New(Options{Context: kind, Major: 9, Minor: 9})
			if err == nil {
				th.Close()
				t.Fatal("New(9.9) succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, "OpenGL 9.9 needed, driver gives ") {
				// No context at all on this path is a different failure.
				if newOK(kind) {
					t.Fatalf("New(9.9) = %q, want \"OpenGL 9.9 needed, driver gives X.Y\"", msg)
				}
				if os.Getenv("CI") != "" {
					t.Fatalf("CI is set and no %s context: %v", kind, err)
				}
				t.Skipf("no %s context here: %v", kind, err)
			}
			if strings.Contains(msg, "\n") {
				t.Fatalf("error has several lines: %q", msg)
			}
			t.Log(msg)
		})
	}
}

// newOK reports whether a default context can be made on kind.
func newOK(kind string) bool {
	th, err := New(Options{Context: kind})
	if err != nil {
		return false
	}
	th.Close()
	return true
}

func TestAuto(t *testing.T) {
	t.Run("headless", func(t *testing.T) {
		unsetEnv(t, "DISPLAY")
		th := newThread(t, Options{})
		if k := th.Kind(); !strings.HasPrefix(k, "egl-") {
			t.Fatalf("auto without DISPLAY made a %q context, want EGL", k)
		}
		loadGL43(t, th)
		checkDoubled(t, runDoubler(t, th, 70))
	})
	t.Run("window", func(t *testing.T) {
		onPath(t, kindGLFW)
		th := newThread(t, Options{Window: true, Major: 4, Minor: 1})
		if th.Kind() != kindGLFW || th.Window() == nil {
			t.Fatalf("Window: true gave kind %q, window %v", th.Kind(), th.Window())
		}
		var w, h int
		var visible int
		OnMain(func() {
			w, h = th.Window().GetSize()
			visible = th.Window().GetAttrib(glfw.Visible)
		})
		if w != 1 || h != 1 || visible != 0 {
			t.Fatalf("window %dx%d visible %d, want a hidden 1x1", w, h, visible)
		}
		// CI's per-path HEADLAB_GL_CONTEXT must not break the viewer.
		t.Setenv("HEADLAB_GL_CONTEXT", kindDevice)
		if w := newThread(t, Options{Window: true}); w.Kind() != kindGLFW {
			t.Fatalf("Window with HEADLAB_GL_CONTEXT=%s gave %q", kindDevice, w.Kind())
		}
	})
	t.Run("env", func(t *testing.T) {
		unsetEnv(t, "DISPLAY")
		t.Setenv("HEADLAB_GL_CONTEXT", kindSurfaceless)
		th := newThread(t, Options{Context: kindDevice})
		if th.Kind() != kindSurfaceless {
			t.Fatalf("HEADLAB_GL_CONTEXT=%s gave %q", kindSurfaceless, th.Kind())
		}
	})
}

func TestDeviceChoice(t *testing.T) {
	unsetEnv(t, "DISPLAY")
	if list, err := egl.DeviceList(); err == nil {
		t.Logf("EGL devices: %s", list)
	}
	t.Setenv("HEADLAB_EGL_DEVICE", "0")
	newThread(t, Options{Context: kindDevice}) // device 0 exists where the platform works
	t.Setenv("HEADLAB_EGL_DEVICE", "99")
	_, err := New(Options{Context: kindDevice})
	if err == nil || !strings.Contains(err.Error(), "HEADLAB_EGL_DEVICE=99") || !errors.Is(err, ErrDeviceChoice) {
		t.Fatalf("New with HEADLAB_EGL_DEVICE=99 = %v, want an ErrDeviceChoice naming it", err)
	}
	t.Log(err)
	// An explicit choice that fails is not papered over by surfaceless.
	if th, err := New(Options{Context: "egl"}); err == nil {
		th.Close()
		t.Fatalf("New(egl) with HEADLAB_EGL_DEVICE=99 fell back to %s", th.Kind())
	}
}

// The compute limits GL 4.3 promises hold on every EGL path; the test's
// log records them (on a GPU server, gpu-check.sh keeps it).
func TestComputeLimits(t *testing.T) {
	for _, kind := range []string{kindDevice, kindSurfaceless} {
		t.Run(kind, func(t *testing.T) {
			onPath(t, kind)
			th := newThread(t, Options{Context: kind})
			loadGL43(t, th)
			var shared, invocations, bindings, blocks int32
			var block int64
			var size, count [3]int32
			if err := th.Call(func() {
				gl43.GetIntegerv(gl43.MAX_COMPUTE_SHARED_MEMORY_SIZE, &shared)
				gl43.GetIntegerv(gl43.MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &invocations)
				gl43.GetIntegerv(gl43.MAX_SHADER_STORAGE_BUFFER_BINDINGS, &bindings)
				gl43.GetIntegerv(gl43.MAX_COMPUTE_SHADER_STORAGE_BLOCKS, &blocks)
				gl43.GetInteger64v(gl43.MAX_SHADER_STORAGE_BLOCK_SIZE, &block)
				for i := range 3 {
					gl43.GetIntegeri_v(gl43.MAX_COMPUTE_WORK_GROUP_SIZE, uint32(i), &size[i])
					gl43.GetIntegeri_v(gl43.MAX_COMPUTE_WORK_GROUP_COUNT, uint32(i), &count[i])
				}
			}); err != nil {
				t.Fatal(err)
			}
			t.Logf("limits on %s: shared memory %d B, %d invocations a work group, work group size %v, count %v, SSBO block %d B, %d SSBO bindings, %d SSBOs in a compute shader",
				th.Renderer(), shared, invocations, size, count, block, bindings, blocks)
			// The minimums the OpenGL 4.3 core specification sets for these.
			if shared < 32768 || invocations < 1024 || size[0] < 1024 || size[1] < 1024 || size[2] < 64 ||
				count[0] < 65535 || count[1] < 65535 || count[2] < 65535 || block < 1<<24 || bindings < 8 || blocks < 8 {
				t.Errorf("below GL 4.3's minimums")
			}
		})
	}
}

// withFakeNVIDIA clears the environment that chooses EGL devices, for
// the rest of the test.
func withFakeNVIDIA(t *testing.T) {
	t.Helper()
	unsetEnv(t, "DISPLAY")
	unsetEnv(t, "CUDA_VISIBLE_DEVICES")
	unsetEnv(t, "HEADLAB_EGL_DEVICE")
}

// nvidia is o with an NVIDIA device that cannot be opened (its handle is
// no device) in front of EGL's real list.
func nvidia(o Options) Options {
	o.devices = func(devs []egl.Device) []egl.Device {
		return append([]egl.Device{{Desc: "NVIDIA CUDA", CUDA: true, Ordinal: 0}}, devs...)
	}
	return o
}

// A failing NVIDIA device ends New with one line, unless the context kind
// allows a fallback (auto, or surfaceless, which never tries it); auto
// then says what failed.
func TestNVIDIAFailure(t *testing.T) {
	refused := func(t *testing.T, o Options, choice bool, says ...string) {
		t.Helper()
		th, err := New(o)
		if err == nil {
			th.Close()
			t.Fatalf("New(%+v) with a failing NVIDIA device succeeded on %s (%s)", o, th.Kind(), th.Renderer())
		}
		if errors.Is(err, ErrDeviceChoice) != choice {
			t.Errorf("New(%+v): errors.Is(%v, ErrDeviceChoice) = %v", o, err, !choice)
		}
		msg := err.Error()
		for _, s := range says {
			if !strings.Contains(msg, s) {
				t.Errorf("New(%+v) = %q; want it to say %q", o, msg, s)
			}
		}
		if strings.Contains(msg, "\n") || strings.Contains(msg, kindSurfaceless+":") {
			t.Errorf("New(%+v) = %q; want one line and no other platform tried", o, msg)
		}
		t.Log(msg)
	}
	t.Run("default", func(t *testing.T) {
		withFakeNVIDIA(t)
		for _, ctx := range []string{"", "egl", kindDevice} {
			refused(t, nvidia(Options{Context: ctx}), false, "EGL device 0 (NVIDIA CUDA 0)", "not falling back to a software renderer", "HEADLAB_GL_CONTEXT=auto")
		}
	})
	t.Run("auto", func(t *testing.T) {
		withFakeNVIDIA(t)
		th := newThread(t, nvidia(Options{Context: "auto"}))
		if fb := th.Fallback(); !strings.Contains(fb, "NVIDIA CUDA 0") {
			t.Fatalf("auto past a failing NVIDIA device: Fallback() = %q, want it to name the device", fb)
		}
		t.Logf("%s on %s: %s", th.Renderer(), th.Kind(), th.Fallback())
		loadGL43(t, th)
		checkDoubled(t, runDoubler(t, th, 70))
	})
	t.Run("env auto", func(t *testing.T) {
		withFakeNVIDIA(t)
		t.Setenv("HEADLAB_GL_CONTEXT", "auto")
		if th := newThread(t, nvidia(Options{})); th.Fallback() == "" {
			t.Fatal("HEADLAB_GL_CONTEXT=auto past a failing NVIDIA device: Fallback() is empty")
		}
	})
	t.Run("surfaceless", func(t *testing.T) {
		withFakeNVIDIA(t)
		t.Setenv("HEADLAB_GL_CONTEXT", kindSurfaceless)
		if th := newThread(t, nvidia(Options{})); th.Kind() != kindSurfaceless || th.Fallback() != "" {
			t.Fatalf("surfaceless: kind %q, Fallback %q; want no device tried", th.Kind(), th.Fallback())
		}
	})
	t.Run("chosen", func(t *testing.T) {
		withFakeNVIDIA(t)
		t.Setenv("HEADLAB_EGL_DEVICE", "0")
		refused(t, nvidia(Options{Context: "auto"}), true, "HEADLAB_EGL_DEVICE=0: EGL device 0 (NVIDIA CUDA 0)")
		t.Setenv("HEADLAB_EGL_DEVICE", "1")
		refused(t, nvidia(Options{Context: "auto"}), true, "HEADLAB_EGL_DEVICE=1: want a CUDA device number (0)")
	})
	t.Run("hidden", func(t *testing.T) {
		withFakeNVIDIA(t)
		t.Setenv("CUDA_VISIBLE_DEVICES", "")
		refused(t, nvidia(Options{}), false, `CUDA_VISIBLE_DEVICES="" hides every NVIDIA device`)
		if th := newThread(t, nvidia(Options{Context: "auto"})); !strings.Contains(th.Fallback(), "CUDA_VISIBLE_DEVICES") {
			t.Fatalf("auto with every NVIDIA device hidden: Fallback() = %q", th.Fallback())
		}
	})
}

func TestDebug(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			onPath(t, kind)
			th := newThread(t, Options{Context: kind, Debug: true})
			loadGL43(t, th)
			err := th.Call(bogus)
			if err == nil || !strings.Contains(err.Error(), "KHR_debug:") {
				t.Fatalf("Call(bogus) in debug mode = %v, want a KHR_debug message", err)
			}
			t.Log(err)
			th.Go(bogus)
			if err := th.Sync(); err == nil || !strings.Contains(err.Error(), "KHR_debug:") {
				t.Fatalf("Sync after bogus Go in debug mode = %v, want a KHR_debug message", err)
			}
			if err := th.Call(func() {}); err != nil {
				t.Fatalf("clean Call = %v", err)
			}
		})
	}
	t.Run("env", func(t *testing.T) {
		unsetEnv(t, "DISPLAY")
		t.Setenv("HEADLAB_GL_DEBUG", "1")
		th := newThread(t, Options{Context: kindSurfaceless})
		loadGL43(t, th)
		if err := th.Call(bogus); err == nil || !strings.Contains(err.Error(), "KHR_debug:") {
			t.Fatalf("HEADLAB_GL_DEBUG=1 did not turn debug on: %v", err)
		}
	})
}

// Several Threads at once, on every path, each computing; closing one
// leaves the others (and the display they share) working.
func TestConcurrent(t *testing.T) {
	unsetEnv(t, "DISPLAY")
	var ths []*Thread
	for _, k := range []string{kindDevice, kindDevice, kindSurfaceless, kindSurfaceless} {
		ths = append(ths, newThread(t, Options{Context: k}))
	}
	for _, th := range ths {
		loadGL43(t, th)
	}
	compute := func(ths []*Thread) {
		var wg sync.WaitGroup
		for _, th := range ths {
			wg.Go(func() {
				for range 5 {
					got := runDoubler(t, th, 130)
					for i, v := range got {
						if v != uint32(2*i) {
							t.Errorf("%s: v[%d] = %d", th.Kind(), i, v)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}
	compute(ths)
	if err := ths[0].Close(); err != nil {
		t.Fatalf("Close of the first device Thread: %v", err)
	}
	if err := ths[2].Close(); err != nil {
		t.Fatalf("Close of the first surfaceless Thread: %v", err)
	}
	compute([]*Thread{ths[1], ths[3]})
	for _, th := range []*Thread{ths[1], ths[3]} {
		if err := th.Close(); err != nil {
			t.Fatalf("Close of %s after another on the same display closed: %v", th.Kind(), err)
		}
	}
}

// newHeadless makes a surfaceless EGL thread with DISPLAY unset for the
// call, closed when the test ends; without one it skips, or fails in CI.
func newHeadless(t *testing.T) *Thread {
	t.Helper()
	display := os.Getenv("DISPLAY")
	os.Unsetenv("DISPLAY")
	e, err := New(Options{Context: kindSurfaceless})
	os.Setenv("DISPLAY", display)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// With a GLFW window and an EGL context alive together, both compute.
func TestConcurrentGLFWAndEGL(t *testing.T) {
	onPath(t, kindGLFW)
	g := newThread(t, Options{Context: kindGLFW})
	e := newHeadless(t)
	loadGL43(t, g)
	loadGL43(t, e)
	var wg sync.WaitGroup
	for _, th := range []*Thread{g, e} {
		wg.Go(func() {
			for range 5 {
				checkDoubled(t, runDoubler(t, th, 200))
			}
		})
	}
	wg.Wait()
}

// The path for drivers without no-config or surfaceless contexts: a chosen
// config and a pbuffer.
func TestConfigFallback(t *testing.T) {
	unsetEnv(t, "DISPLAY")
	for _, kind := range []string{kindDevice, kindSurfaceless} {
		t.Run(kind, func(t *testing.T) {
			th := newThread(t, Options{Context: kind, eglConfig: true})
			loadGL43(t, th)
			checkDoubled(t, runDoubler(t, th, 64))
			if err := th.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// New gives up after its timeout, and the abandoned thread frees its
// context when it gets one after all.
func TestTimeout(t *testing.T) {
	unsetEnv(t, "DISPLAY")
	newThread(t, Options{Context: kindSurfaceless}).Close() // the path works here
	before := egl.Held()
	gate := make(chan struct{})
	held := make(chan *Thread, 1)
	hold := func(th *Thread) { held <- th; <-gate }
	start := time.Now()
	th, err := New(Options{Context: kindSurfaceless, timeout: 200 * time.Millisecond, hold: hold})
	if err == nil {
		th.Close()
		t.Fatal("New succeeded although the thread was held")
	}
	if d := time.Since(start); d > 5*time.Second || !strings.Contains(err.Error(), "no OpenGL context after") {
		t.Fatalf("New = %v after %v, want the timeout error after 200ms", err, d)
	}
	abandoned := <-held
	close(gate)
	// The thread makes its context, finds itself abandoned and frees it.
	select {
	case <-abandoned.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the abandoned thread did not end")
	}
	if abandoned.renderer == "" {
		t.Fatal("the abandoned thread never made its context")
	}
	if after := egl.Held(); after != before {
		t.Fatalf("abandoned thread kept its display: EGL display holds %d, before %d", after, before)
	}
}

// A function that ends its goroutine (t.FailNow inside Call) ends the
// thread without hanging the caller or later calls.
func TestGoexit(t *testing.T) {
	unsetEnv(t, "DISPLAY")
	th := newThread(t, Options{Context: kindSurfaceless})
	done, after := make(chan error, 1), make(chan error, 1)
	// Hold the thread so that the Goexit Call and a Sync queue behind it
	// in one batch.
	gate, started := make(chan struct{}), make(chan struct{})
	th.Go(func() { close(started); <-gate })
	<-started
	go func() { done <- th.Call(runtime.Goexit) }()
	time.Sleep(50 * time.Millisecond)
	go func() { after <- th.Sync() }()
	time.Sleep(50 * time.Millisecond)
	close(gate)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "Goexit") {
			t.Fatalf("Call(runtime.Goexit) = %v, want an error naming Goexit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call(runtime.Goexit) hung")
	}
	select {
	case err := <-after:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Sync queued behind the Goexit = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Sync queued behind the Goexit hung")
	}
	if err := th.Call(func() {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Call after the thread ended = %v, want ErrClosed", err)
	}
	th.Close()
}

// Costs of the hand-off to the GL thread (no GL work).
func BenchmarkCall(b *testing.B) {
	b.Setenv("DISPLAY", "") // an EGL path, without X
	th, err := New(Options{Context: kindSurfaceless})
	if err != nil {
		b.Skip(err)
	}
	defer th.Close()
	for b.Loop() {
		th.Call(func() {})
	}
}

func BenchmarkGo(b *testing.B) {
	b.Setenv("DISPLAY", "") // an EGL path, without X
	th, err := New(Options{Context: kindSurfaceless})
	if err != nil {
		b.Skip(err)
	}
	defer th.Close()
	f := func() {}
	for b.Loop() {
		th.Go(f)
	}
	th.Sync()
}
