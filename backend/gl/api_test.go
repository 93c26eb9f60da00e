package gl

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	ogl "github.com/go-gl/gl/v4.3-core/gl"

	"headlab/backend/cpu"
	"headlab/glctx"
	"headlab/kernels"
)

func mustAlloc(t *testing.T, d kernels.Device, n int) kernels.Buffer {
	t.Helper()
	b, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestBadArguments wants every bad call refused with a clear one-line
// error before any GL work: nothing is dispatched or counted.
func TestBadArguments(t *testing.T) {
	g := needGL(t)
	must(t, g.Sync())
	a := mustAlloc(t, g, 64)
	defer g.Free(a)
	freed := mustAlloc(t, g, 64)
	g.Free(freed)
	x := kernels.Dense(a, 16)
	host := cpu.Wrap(make([]float32, 64))
	s := kernels.Shape{B: 1, T: 2, H: 1, Dh: 2}
	bigB := mustAlloc(t, g, 1024)
	defer g.Free(bigB)
	big := kernels.Tensor{Buf: bigB, Off: 0, Len: 1024, Stride: 0}
	before := g.Stats()
	cases := []struct {
		name, want string
		err        error
	}{
		{"short output", "needs 20", g.MatMul(1, false, false, 4, 5, 1, x, x, x, kernels.Tensor{})},
		{"short input", "needs 32", g.Add(1, 32, kernels.Dense(a, 32), x, kernels.Dense(a, 32))},
		{"overrun", "overrun", g.Mul(5, 16, x, x, x)},
		{"no seeds", "for 0 seeds", g.GELU(0, 4, x, x, x)},
		{"negative size", "negative size", g.ColSum(1, -1, 4, x, x)},
		{"no buffer", "has no buffer", g.Add(1, 4, kernels.Tensor{Len: 4}, x, x)},
		{"another device's buffer", "not a buffer of this device", g.Add(1, 4, host, x, x)},
		{"freed buffer", "was freed", g.Add(1, 4, kernels.Dense(freed, 4), x, x)},
		{"bad shape", "non-positive", g.Probs(1, kernels.Shape{B: 1, T: 0, H: 1, Dh: 2}, x, x, x)},
		{"short attention", "needs", g.Mix(1, kernels.Shape{B: 2, T: 4, H: 2, Dh: 4}, x, x, x)},
		{"32-bit overflow", "32-bit", g.Add(1<<22, 1024, big, big, big)},
		{"upload length", "Upload of 3 floats", g.Upload(x, 1, make([]float32, 3))},
		{"download length", "Download of 1 seeds of 16 into 3", g.Download(make([]float32, 3), x, 1)},
		{"upload overrun", "overrun", g.Upload(x, 5, make([]float32, 80))},
		{"bias too short", "needs 5", g.MatMul(1, false, false, 1, 5, 1, x, x, x, kernels.Tensor{Buf: a, Off: 62, Len: 2, Stride: 2})},
		{"probs grad k", "needs", g.ProbsGradK(2, kernels.Shape{B: 4, T: 4, H: 1, Dh: 2}, x, x, x, x)},
		{"attention ok shape, overrun", "overrun", g.Probs(40, s, x, x, x)},
	}
	for _, c := range cases {
		switch {
		case c.err == nil:
			t.Errorf("%s: no error", c.name)
		case !strings.Contains(c.err.Error(), c.want) || strings.Contains(c.err.Error(), "\n"):
			t.Errorf("%s: %q, want one line with %q", c.name, c.err, c.want)
		default:
			t.Logf("%s: %v", c.name, c.err)
		}
	}
	if after := g.Stats(); after != before {
		t.Errorf("refused calls changed the stats: %+v, then %+v", before, after)
	}
	must(t, g.Sync())
}

// TestStats wants uploads and readbacks counted exactly, in bytes, and
// every dispatch counted.
func TestStats(t *testing.T) {
	g := needGL(t)
	b := mustAlloc(t, g, 100)
	defer g.Free(b)
	before := g.Stats()
	strided := kernels.Tensor{Buf: b, Off: 3, Len: 7, Stride: 20}
	must(t, g.Upload(strided, 4, make([]float32, 28)))
	must(t, g.Upload(kernels.Dense(b, 10), 1, make([]float32, 10)))
	must(t, g.Add(4, 7, strided, strided, strided))
	must(t, g.ProbsGradK(1, kernels.Shape{B: 1, T: 2, H: 1, Dh: 2}, kernels.Dense(b, 4), kernels.Dense(b, 4).View(4, 4), kernels.Dense(b, 4).View(8, 4), kernels.Tensor{Buf: b, Off: 20, Len: 4, Stride: 4}))
	must(t, g.MatMul(1, false, false, 0, 3, 2, kernels.Dense(b, 0), kernels.Dense(b, 6), kernels.Dense(b, 0), kernels.Tensor{}))
	out := make([]float32, 21)
	must(t, g.Download(out, strided, 3))
	must(t, g.Download(nil, kernels.Dense(b, 0), 2))
	d := g.Stats()
	got := kernels.Stats{Dispatches: d.Dispatches - before.Dispatches, Uploaded: d.Uploaded - before.Uploaded, ReadBack: d.ReadBack - before.ReadBack}
	want := kernels.Stats{Dispatches: 2, Uploaded: 4 * 38, ReadBack: 4 * 21}
	if got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

// TestStridedUpload checks that a strided upload and download touch only
// the seeds' arrays and that a shared (stride 0) constant reads the same
// for every seed.
func TestStridedUpload(t *testing.T) {
	g := needGL(t)
	b := mustAlloc(t, g, 40)
	defer g.Free(b)
	src := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	ts := kernels.Tensor{Buf: b, Off: 2, Len: 3, Stride: 10}
	must(t, g.Upload(ts, 3, src))
	all := make([]float32, 40)
	must(t, g.Download(all, kernels.Dense(b, 40), 1))
	want := make([]float32, 40)
	for s := range 3 {
		copy(want[2+10*s:], src[3*s:3*s+3])
	}
	if i := sameBits(all, want); i >= 0 {
		t.Fatalf("buffer %v, want %v", all, want)
	}
	// One shared constant, added to every seed's array.
	c := kernels.Tensor{Buf: b, Off: 35, Len: 3, Stride: 0}
	must(t, g.Upload(c, 1, []float32{100, 200, 300}))
	must(t, g.Add(3, 3, ts, c, ts))
	got := make([]float32, 9)
	must(t, g.Download(got, ts, 3))
	for i := range got {
		if w := src[i] + float32(100*(i%3+1)); got[i] != w {
			t.Fatalf("seed %d element %d: %g, want %g", i/3, i%3, got[i], w)
		}
	}
}

// TestLargeGrids runs grids beyond 65535 workgroups, which spill into y:
// an elementwise kernel and a workgroup-per-seed one.
func TestLargeGrids(t *testing.T) {
	g := needGL(t)
	const S, n = 4500, 1000 // 4.5M invocations: 70313 workgroups
	in := mustAlloc(t, g, n)
	defer g.Free(in)
	outB := mustAlloc(t, g, S*n)
	defer g.Free(outB)
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	c := kernels.Tensor{Buf: in, Len: n}
	must(t, g.Upload(c, 1, x))
	o := kernels.Dense(outB, n)
	must(t, g.Add(S, n, c, c, o))
	got := make([]float32, S*n)
	must(t, g.Download(got, o, S))
	for i, v := range got {
		if v != 2*float32(i%n) {
			t.Fatalf("Add over %d seeds: element %d of seed %d is %g", S, i%n, i/n, v)
		}
	}

	const seeds = 70000 // one workgroup each
	lg := mustAlloc(t, g, 8)
	defer g.Free(lg)
	cnt := mustAlloc(t, g, seeds)
	defer g.Free(cnt)
	must(t, g.Upload(kernels.Dense(lg, 8), 1, []float32{0, 3, 1, 2, 9, 1 /* targets: */, 1, 1}))
	logits, tg := kernels.Tensor{Buf: lg, Len: 6}, kernels.Tensor{Buf: lg, Off: 6, Len: 2}
	cc := kernels.Dense(cnt, 1)
	must(t, g.CountCorrect(seeds, 2, 3, logits, tg, cc))
	counts := make([]float32, seeds)
	must(t, g.Download(counts, cc, seeds))
	for s, v := range counts {
		if v != 2 {
			t.Fatalf("CountCorrect over %d seeds: seed %d counts %g, want 2", seeds, s, v)
		}
	}
}

// TestStatusErrors wants ids and targets that only the device sees to be
// reported by the next Sync or Download, once, naming the kernel.
func TestStatusErrors(t *testing.T) {
	g := needGL(t)
	b := mustAlloc(t, g, 64)
	defer g.Free(b)
	ids := kernels.Tensor{Buf: b, Off: 0, Len: 2, Stride: 2}
	table := kernels.Tensor{Buf: b, Off: 8, Len: 6, Stride: 0} // 3 rows of 2
	out := kernels.Tensor{Buf: b, Off: 20, Len: 4, Stride: 4}
	must(t, g.Upload(ids, 2, []float32{0, 2, 1, 3}))
	// In debug mode the kernel reports it itself.
	err := g.Embed(2, 2, 2, ids, table, out)
	if err == nil {
		err = g.Sync()
	}
	if err == nil || !strings.Contains(err.Error(), "Embed") {
		t.Errorf("Sync after a bad id: %v", err)
	}
	t.Log(err)
	got := make([]float32, 8)
	must(t, g.Download(got, out, 2))
	if !math.IsNaN(float64(got[6])) || math.IsNaN(float64(got[4])) {
		t.Errorf("Embed rows %v: want NaN only for the bad id", got)
	}
	must(t, g.Sync())

	must(t, g.Upload(ids, 2, []float32{0, 1, 1, 2.5}))
	logits := kernels.Tensor{Buf: b, Off: 30, Len: 4, Stride: 0}
	loss := kernels.Tensor{Buf: b, Off: 40, Len: 1, Stride: 1}
	err = g.SoftmaxXent(2, 2, 2, logits, ids, kernels.Tensor{Buf: b, Off: 44, Len: 4, Stride: 4}, loss)
	l := make([]float32, 2)
	if derr := g.Download(l, loss, 2); err == nil {
		err = derr
	}
	if err == nil || !strings.Contains(err.Error(), "SoftmaxXent") {
		t.Errorf("Download after a bad target: %v", err)
	}
	if math.IsNaN(float64(l[0])) || !math.IsNaN(float64(l[1])) {
		t.Errorf("losses %v: want NaN only for the seed with the bad target", l)
	}
	must(t, g.Sync())
}

// TestCloseTwice closes a device twice and wants ErrClosed from every call
// after; the shared device still works.
func TestCloseTwice(t *testing.T) {
	needGL(t)
	d, err := New(Options{})
	must(t, err)
	b := mustAlloc(t, d, 8)
	x := kernels.Dense(b, 8)
	must(t, d.Upload(x, 1, make([]float32, 8)))
	must(t, d.Close())
	must(t, d.Close())
	errs := map[string]error{
		"Sync":     d.Sync(),
		"Upload":   d.Upload(x, 1, make([]float32, 8)),
		"Download": d.Download(make([]float32, 8), x, 1),
		"Add":      d.Add(1, 8, x, x, x),
		"Probs":    d.Probs(1, kernels.Shape{B: 1, T: 2, H: 1, Dh: 2}, x, x, x),
	}
	_, errs["Alloc"] = d.Alloc(4)
	for name, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	d.Free(b) // nothing to do, no panic
	if d.BufferID(b) != 0 {
		t.Error("BufferID of a buffer of a closed device is not 0")
	}
	g := needGL(t)
	y := mustAlloc(t, g, 4)
	defer g.Free(y)
	must(t, g.Add(1, 4, kernels.Dense(y, 4), kernels.Dense(y, 4), kernels.Dense(y, 4)))
	must(t, g.Sync())
}

// TestCompileError wants a shader that does not compile to give one clear
// line naming the file and quoting the driver.
func TestCompileError(t *testing.T) {
	g := needGL(t)
	var err error
	// In debug mode the driver's message also comes as a KHR_debug error,
	// which the Call returns.
	callErr := g.Thread().Call(func() {
		var p program
		p, err = compileKernel("broken.comp", "void main() {\n\tundeclared_thing = 1.0;\n}\n", progSpec{}, false, "")
		if p.id != 0 {
			ogl.DeleteProgram(p.id)
		}
	})
	if callErr != nil && !g.debug {
		t.Fatal(callErr)
	}
	if err == nil {
		t.Fatal("broken shader compiled")
	}
	msg := err.Error()
	if !strings.Contains(msg, "broken.comp") || !strings.Contains(msg, "undeclared_thing") || strings.Contains(msg, "\n") {
		t.Errorf("want one line with the file name and the driver log: %q", msg)
	}
	t.Log(msg)
	// A missing include is one line too.
	_ = g.Thread().Call(func() {
		_, err = compileKernel("inc.comp", "#include \"missing.glsl\"\nvoid main() {}\n", progSpec{}, false, "")
	})
	if err == nil || !strings.Contains(err.Error(), "missing.glsl") {
		t.Errorf("missing include: %v", err)
	}
}

// TestBorrowedThread runs a device on a thread made by glctx and wants
// Close to leave the thread working.
func TestBorrowedThread(t *testing.T) {
	needGL(t)
	th, err := glctx.New(glctx.Options{})
	must(t, err)
	defer th.Close()
	d, err := New(Options{Thread: th})
	must(t, err)
	if d.Thread() != th || d.Context() != th.Kind() {
		t.Errorf("Thread %p (want %p), Context %q (want %q)", d.Thread(), th, d.Context(), th.Kind())
	}
	parityOnce(t, d, "MatMul_tA")
	must(t, d.Close())
	if err := th.Call(func() {}); err != nil {
		t.Errorf("the borrowed thread after Close: %v", err)
	}
}

// TestGLFWContext runs a device on a GLFW context where there is a display.
func TestGLFWContext(t *testing.T) {
	needGL(t)
	if os.Getenv("DISPLAY") == "" {
		t.Skip("no display: the GLFW context is tested under xvfb-run")
	}
	d, err := New(Options{Context: "glfw"})
	must(t, err)
	defer d.Close()
	if d.Context() != "glfw" && os.Getenv("HEADLAB_GL_CONTEXT") == "" {
		t.Errorf("Context %q, want glfw", d.Context())
	}
	parityOnce(t, d, "Probs_B2T5H2Dh4_causaltrue")
}

// TestDebugMode runs a debug device: kernels wait, and a bad id is the
// kernel's own error.
func TestDebugMode(t *testing.T) {
	needGL(t)
	d, err := New(Options{Debug: true})
	must(t, err)
	defer d.Close()
	parityOnce(t, d, "SoftmaxXent_normal")
	b := mustAlloc(t, d, 32)
	must(t, d.Upload(kernels.Dense(b, 2), 1, []float32{1, 7}))
	err = d.EmbedGrad(1, 2, 2, 4, kernels.Dense(b, 2), kernels.Dense(b, 4).View(4, 4), kernels.Dense(b, 8).View(12, 8))
	if err == nil || !strings.HasPrefix(err.Error(), "gl: EmbedGrad:") {
		t.Errorf("EmbedGrad with a bad id in debug mode: %v", err)
	}
	t.Log(err)
	must(t, d.Sync())
	err = d.Thread().Call(func() { ogl.BindBuffer(0xdead, 0) })
	if err == nil || !strings.Contains(err.Error(), "GL_INVALID_ENUM") {
		t.Errorf("a GL error in Call: %v", err)
	}
}

// parityOnce runs the first case whose name starts with prefix on d and
// on the CPU, three seeds in the arena layout, and compares.
func parityOnce(t *testing.T, d *Device, prefix string) {
	t.Helper()
	for _, kc := range allCases() {
		if !strings.HasPrefix(kc.name, prefix) {
			continue
		}
		ids := []int{3, 4, 5}
		want := kc.runOn(t, cpu.New(), ids, arena)
		got := kc.runOn(t, d, ids, arena)
		for i, what := range kc.outNames(arena) {
			compare(t, kc.kernel, kc.name+" "+what, got[i], want[i])
		}
		return
	}
	t.Fatalf("no case %s", prefix)
}

// TestBufferID reads a Probs result straight from its buffer on the GL
// thread, as the viewer does.
func TestBufferID(t *testing.T) {
	g := needGL(t)
	s := kernels.Shape{B: 1, T: 4, H: 2, Dh: 4, Causal: true}
	b := mustAlloc(t, g, 2*s.QKVLen()+s.ProbsLen())
	defer g.Free(b)
	r := rand.New(rand.NewPCG(1, 2))
	qk := make([]float32, 2*s.QKVLen())
	for i := range qk {
		qk[i] = float32(r.NormFloat64())
	}
	must(t, g.Upload(kernels.Dense(b, len(qk)), 1, qk))
	p := kernels.Dense(b, s.ProbsLen()).View(len(qk), s.ProbsLen())
	must(t, g.Probs(1, s, kernels.Dense(b, s.QKVLen()), kernels.Dense(b, s.QKVLen()).View(s.QKVLen(), s.QKVLen()), p))
	id := g.BufferID(b)
	if id == 0 || g.BufferID(cpu.Wrap(nil).Buf) != 0 {
		t.Fatalf("BufferID %d", id)
	}
	onGPU := make([]float32, s.ProbsLen())
	must(t, g.Thread().Call(func() {
		ogl.MemoryBarrier(ogl.BUFFER_UPDATE_BARRIER_BIT)
		ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, id)
		ogl.GetBufferSubData(ogl.SHADER_STORAGE_BUFFER, 4*p.Off, 4*len(onGPU), ogl.Ptr(onGPU))
	}))
	want := make([]float32, s.ProbsLen())
	must(t, g.Download(want, p, 1))
	if i := sameBits(onGPU, want); i >= 0 {
		t.Fatalf("buffer element %d is %g, Download gives %g", i, onGPU[i], want[i])
	}
}

// TestConcurrentCallers uses the device from several goroutines at once,
// each on its own tensors.
func TestConcurrentCallers(t *testing.T) {
	g := needGL(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 100 + w
			b, err := g.Alloc(3 * n)
			if err != nil {
				t.Error(err)
				return
			}
			defer g.Free(b)
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i * (w + 1))
			}
			a, o := kernels.Dense(b, n), kernels.Dense(b, n).View(n, n)
			for rep := range 5 {
				if err := g.Upload(a, 1, x); err != nil {
					t.Error(err)
					return
				}
				if err := g.Add(1, n, a, a, o); err != nil {
					t.Error(err)
					return
				}
				got := make([]float32, n)
				if err := g.Download(got, o, 1); err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					if got[i] != 2*x[i] {
						t.Errorf("worker %d rep %d: element %d is %g, want %g", w, rep, i, got[i], 2*x[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestUploadsInFlight: uploads into a buffer that queued kernels read
// reach each kernel in queue order (each sees its own upload, none a
// later one), and a step's worth of uploads after a Sync never waits for
// a staging buffer (upload.go).
func TestUploadsInFlight(t *testing.T) {
	g := needGL(t)
	const n, rounds = 1000, 20
	in := mustAlloc(t, g, n)
	defer g.Free(in)
	out := mustAlloc(t, g, rounds*n)
	defer g.Free(out)
	x := kernels.Dense(in, n)
	for r := range rounds {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(r*n + i)
		}
		must(t, g.Upload(x, 1, src))
		must(t, g.Add(1, n, x, x, kernels.Dense(out, n).View(r*n, n)))
	}
	got := make([]float32, rounds*n)
	must(t, g.Download(got, kernels.Dense(out, rounds*n), 1))
	for i, v := range got {
		if v != float32(2*i) {
			t.Fatalf("element %d (round %d): %g, want %d", i, i/n, v, 2*i)
		}
	}
	must(t, g.Sync())
	var before int
	must(t, g.th.Call(func() { before = g.stagingWaits }))
	for r := range stagingSlots {
		must(t, g.Upload(x, 1, make([]float32, n)))
		must(t, g.Add(1, n, x, x, kernels.Dense(out, n).View(r*n, n)))
	}
	var after int
	must(t, g.th.Call(func() { after = g.stagingWaits }))
	if after != before {
		t.Errorf("%d uploads after a Sync waited %d times for a staging buffer", stagingSlots, after-before)
	}
	must(t, g.Sync())
}

// TestKernelsVariant: an unknown kernels variant is refused in one line
// before any context is made, from the options and from the environment.
func TestKernelsVariant(t *testing.T) {
	needGL(t)
	t.Setenv("HEADLAB_GL_KERNELS", "")
	if _, err := New(Options{Kernels: "fast"}); err == nil || !strings.Contains(err.Error(), "want staged or direct") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Kernels fast: %v", err)
	}
	t.Setenv("HEADLAB_GL_KERNELS", "tiled")
	if _, err := New(Options{Kernels: "staged"}); err == nil || !strings.Contains(err.Error(), `"tiled"`) {
		t.Errorf("HEADLAB_GL_KERNELS=tiled: %v", err)
	}
}
