package gl

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	ogl "github.com/go-gl/gl/v4.3-core/gl"

	"headlab/backend/cpu"
	"headlab/kernels"
)

// tb is the Backend shared by the tests; skipReason is set when none could
// be made outside CI.
var (
	tb         *Backend
	skipReason string
)

// childEnv makes the test binary act as a subprocess for one test (New
// without a display, New with too old a GL) instead of running the suite.
const childEnv = "HEADLAB_GL_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(m.Run())
	}
	var err error
	tb, err = New(Options{})
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "FAIL: CI is set and no OpenGL 4.3 context:", err)
			os.Exit(1)
		}
		skipReason = "no OpenGL 4.3 context: " + err.Error()
	}
	code := m.Run()
	if tb != nil {
		tb.Close()
	}
	os.Exit(code)
}

func needGL(t testing.TB) *Backend {
	t.Helper()
	if tb == nil {
		t.Skip(skipReason)
	}
	return tb
}

// near reports whether a GL value matches the CPU's within the brief's
// tolerance: 1e-5 absolute or 1e-4 relative.
func near(g, c float32) bool {
	d := math.Abs(float64(g) - float64(c))
	return d <= 1e-5 || d <= 1e-4*math.Abs(float64(c))
}

func compare(t *testing.T, what string, s kernels.Shape, got, want []float32) {
	t.Helper()
	bad := 0
	for i := range want {
		if !near(got[i], want[i]) || math.IsNaN(float64(got[i])) {
			if bad < 5 {
				t.Errorf("%s %+v: [%d] gl %g cpu %g", what, s, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s %+v: %d of %d elements differ", what, s, bad, len(want))
	}
}

// masked checks that masked cells of a [B, H, T, T] result are exactly 0.
func masked(t *testing.T, what string, s kernels.Shape, p []float32) {
	t.Helper()
	if !s.Causal {
		return
	}
	for r := 0; r < s.B*s.H*s.T; r++ {
		i := r % s.T
		for j := i + 1; j < s.T; j++ {
			if v := p[r*s.T+j]; math.Float32bits(v) != 0 {
				t.Fatalf("%s %+v: masked cell row %d col %d is %g, not 0", what, s, r, j, v)
			}
		}
	}
}

func randn(r *rand.Rand, n int, amp float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = amp * float32(r.NormFloat64())
	}
	return x
}

// inputs are one test case's tensors; P and dP are genuine (from the CPU
// kernels) so that the backward kernels see real softmax rows.
type inputs struct {
	q, k, v, dO, p, dP []float32
}

// kind selects the input distribution.
type kind int

const (
	normal   kind = iota // unit normal
	large                // logits of std 40, so ±80 and beyond after scaling
	equalRow             // Q = 0: every row of logits is constant
	equalKey             // all keys equal: constant rows, nonzero Q
)

func (k kind) String() string { return [...]string{"normal", "large", "equalRow", "equalKey"}[k] }

func makeInputs(t *testing.T, s kernels.Shape, kd kind, seed uint64) inputs {
	r := rand.New(rand.NewPCG(seed, uint64(s.B*1000003+s.T*1009+s.H*31+s.Dh)))
	n := s.QKVLen()
	in := inputs{q: randn(r, n, 1), k: randn(r, n, 1), v: randn(r, n, 1), dO: randn(r, n, 1)}
	switch kd {
	case large:
		// scale * q.k has std amp when q ~ N(0, amp²) and k ~ N(0, 1).
		in.q = randn(r, n, 40)
	case equalRow:
		clear(in.q)
	case equalKey:
		for b := 0; b < s.B; b++ {
			for tt := 1; tt < s.T; tt++ {
				copy(in.k[((b*s.T+tt)*s.H)*s.Dh:((b*s.T+tt+1)*s.H)*s.Dh], in.k[(b*s.T*s.H)*s.Dh:((b*s.T+1)*s.H)*s.Dh])
			}
		}
	}
	c := cpu.New()
	in.p = make([]float32, s.ProbsLen())
	in.dP = make([]float32, s.ProbsLen())
	if err := c.Probs(s, in.q, in.k, in.p); err != nil {
		t.Fatal(err)
	}
	if err := c.MixGradP(s, in.dO, in.v, in.dP); err != nil {
		t.Fatal(err)
	}
	return in
}

// runAll runs the six kernels on backend be and returns their outputs in
// the order Probs, Mix, MixGradP, MixGradV, ProbsGradQ, ProbsGradK.
func runAll(t *testing.T, be kernels.Backend, s kernels.Shape, in inputs) [6][]float32 {
	t.Helper()
	var out [6][]float32
	for i := range out {
		if i == 0 || i == 2 {
			out[i] = make([]float32, s.ProbsLen())
		} else {
			out[i] = make([]float32, s.QKVLen())
		}
		// Poison, so that an element the kernel fails to write shows.
		for j := range out[i] {
			out[i][j] = float32(math.NaN())
		}
	}
	errs := []error{
		be.Probs(s, in.q, in.k, out[0]),
		be.Mix(s, in.p, in.v, out[1]),
		be.MixGradP(s, in.dO, in.v, out[2]),
		be.MixGradV(s, in.p, in.dO, out[3]),
		be.ProbsGradQ(s, in.p, in.dP, in.k, out[4]),
		be.ProbsGradK(s, in.p, in.dP, in.q, out[5]),
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s kernel %s: %v", be.Name(), kernelNames[i], err)
		}
	}
	return out
}

var kernelNames = [6]string{"Probs", "Mix", "MixGradP", "MixGradV", "ProbsGradQ", "ProbsGradK"}

func parity(t *testing.T, s kernels.Shape, kd kind) {
	g := needGL(t)
	in := makeInputs(t, s, kd, 1)
	want := runAll(t, cpu.New(), s, in)
	got := runAll(t, g, s, in)
	for i := range want {
		compare(t, kernelNames[i]+"/"+kd.String(), s, got[i], want[i])
	}
	masked(t, "Probs", s, got[0])
	masked(t, "MixGradP", s, got[2])
}

// parityShapes cover T 1..64, Dh 4..64, H 1..4 and up to 4096
// sequence-heads per call; the biggest shapes appear once each.
var parityShapes = []kernels.Shape{
	{B: 1, T: 1, H: 1, Dh: 4},
	{B: 4096, T: 1, H: 1, Dh: 4},
	{B: 1024, T: 4, H: 4, Dh: 8},
	{B: 2048, T: 2, H: 2, Dh: 16},
	{B: 1024, T: 8, H: 4, Dh: 4},
	{B: 3, T: 7, H: 3, Dh: 5},
	{B: 8, T: 33, H: 1, Dh: 12},
	{B: 32, T: 16, H: 2, Dh: 16},
	{B: 16, T: 24, H: 2, Dh: 64},
	{B: 2, T: 64, H: 4, Dh: 64},
	{B: 32, T: 64, H: 2, Dh: 32},
}

func TestParity(t *testing.T) {
	t.Logf("renderer: %s", needGL(t).Renderer())
	for _, s := range parityShapes {
		for _, causal := range []bool{false, true} {
			s.Causal = causal
			t.Run(fmt.Sprintf("B%d_T%d_H%d_Dh%d_causal%v", s.B, s.T, s.H, s.Dh, causal), func(t *testing.T) {
				parity(t, s, normal)
			})
		}
	}
}

func TestParityExtreme(t *testing.T) {
	needGL(t)
	shapes := []kernels.Shape{
		{B: 4, T: 16, H: 2, Dh: 16},
		{B: 2, T: 64, H: 3, Dh: 64},
		{B: 512, T: 3, H: 4, Dh: 4},
	}
	for _, kd := range []kind{large, equalRow, equalKey} {
		for _, s := range shapes {
			for _, causal := range []bool{false, true} {
				s.Causal = causal
				t.Run(fmt.Sprintf("%v/B%d_T%d_H%d_Dh%d_causal%v", kd, s.B, s.T, s.H, s.Dh, causal), func(t *testing.T) {
					parity(t, s, kd)
				})
			}
		}
	}
}

// TestDeterministic runs every kernel again, after a call on another shape
// in between (so buffers are reused and regrown), and wants the same bits.
func TestDeterministic(t *testing.T) {
	g := needGL(t)
	s := kernels.Shape{B: 8, T: 32, H: 4, Dh: 32, Causal: true}
	in := makeInputs(t, s, normal, 7)
	first := runAll(t, g, s, in)
	other := kernels.Shape{B: 64, T: 48, H: 2, Dh: 16}
	runAll(t, g, other, makeInputs(t, other, normal, 8))
	for rep := 0; rep < 2; rep++ {
		again := runAll(t, g, s, in)
		for i := range first {
			for j := range first[i] {
				if math.Float32bits(first[i][j]) != math.Float32bits(again[i][j]) {
					t.Fatalf("%s: run %d element %d is %g, first run %g", kernelNames[i], rep+2, j, again[i][j], first[i][j])
				}
			}
		}
	}
}

// TestConcurrentCallers calls kernels from several goroutines, as a
// TapeMachine and a viewer might; each must get its own correct result.
func TestConcurrentCallers(t *testing.T) {
	g := needGL(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := kernels.Shape{B: 4 + w, T: 8 + w, H: 2, Dh: 8, Causal: w%2 == 0}
			in := makeInputs(t, s, normal, uint64(w))
			want := make([]float32, s.QKVLen())
			if err := cpu.New().Mix(s, in.p, in.v, want); err != nil {
				t.Error(err)
				return
			}
			for range 5 {
				got := make([]float32, s.QKVLen())
				if err := g.Mix(s, in.p, in.v, got); err != nil {
					t.Error(err)
					return
				}
				for i := range want {
					if !near(got[i], want[i]) {
						t.Errorf("worker %d: element %d gl %g cpu %g", w, i, got[i], want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestProbsBuffer(t *testing.T) {
	g := needGL(t)
	s := kernels.Shape{B: 3, T: 5, H: 2, Dh: 4, Causal: true}
	in := makeInputs(t, s, normal, 3)
	p := make([]float32, s.ProbsLen())
	if err := g.Probs(s, in.q, in.k, p); err != nil {
		t.Fatal(err)
	}
	id, got := g.ProbsBuffer()
	if got != s || id == 0 {
		t.Fatalf("ProbsBuffer = %d, %+v; want a buffer and %+v", id, got, s)
	}
	onGPU := make([]float32, len(p))
	if err := g.Call(func() {
		ogl.BindBuffer(ogl.SHADER_STORAGE_BUFFER, id)
		ogl.GetBufferSubData(ogl.SHADER_STORAGE_BUFFER, 0, 4*len(onGPU), ogl.Ptr(onGPU))
	}); err != nil {
		t.Fatal(err)
	}
	for i := range p {
		if math.Float32bits(p[i]) != math.Float32bits(onGPU[i]) {
			t.Fatalf("buffer element %d is %g, Probs returned %g", i, onGPU[i], p[i])
		}
	}
}

func TestBadLengths(t *testing.T) {
	g := needGL(t)
	s := kernels.Shape{B: 2, T: 3, H: 1, Dh: 4}
	q := make([]float32, s.QKVLen())
	if err := g.Probs(s, q, q, make([]float32, s.ProbsLen()-1)); err == nil || !strings.Contains(err.Error(), "length") {
		t.Errorf("short output: err = %v", err)
	}
	if err := g.Mix(kernels.Shape{B: 0, T: 1, H: 1, Dh: 1}, nil, nil, nil); err == nil {
		t.Error("empty shape: no error")
	}
}

func TestCompileError(t *testing.T) {
	g := needGL(t)
	var err error
	g.Call(func() {
		var id uint32
		id, err = compileCompute("broken.comp", "#version 430 core\nlayout(local_size_x = 1) in;\nvoid main() { undeclared_thing = 1.0; }\n")
		if id != 0 {
			ogl.DeleteProgram(id)
		}
	})
	if err == nil {
		t.Fatal("broken shader compiled")
	}
	msg := err.Error()
	if !strings.Contains(msg, "broken.comp") || !strings.Contains(msg, "undeclared_thing") {
		t.Errorf("error lacks the file name or the driver log: %q", msg)
	}
	t.Log(msg)
}

// TestPanicInCall checks that a panic in Call's function reaches the
// caller and leaves the GL thread working.
func TestPanicInCall(t *testing.T) {
	g := needGL(t)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want boom", p)
			}
		}()
		g.Call(func() { panic("boom") })
	}()
	if err := g.Call(func() {}); err != nil {
		t.Fatal(err)
	}
}

// TestDebugAndClose opens a second, debug Backend (GLFW is shared and
// counted), provokes a GL error through Call and closes it.
func TestDebugAndClose(t *testing.T) {
	needGL(t)
	d, err := New(Options{Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	s := kernels.Shape{B: 2, T: 4, H: 2, Dh: 8, Causal: true}
	in := makeInputs(t, s, normal, 5)
	want := runAll(t, cpu.New(), s, in)
	got := runAll(t, d, s, in)
	for i := range want {
		compare(t, kernelNames[i], s, got[i], want[i])
	}
	err = d.Call(func() { ogl.BindBuffer(0xdead, 0) })
	if err == nil || !strings.Contains(err.Error(), "GL_INVALID_ENUM") {
		t.Errorf("invalid enum in debug mode: err = %v", err)
	}
	t.Log(err)
	// The error is consumed: the next call is clean.
	if err := d.Call(func() {}); err != nil {
		t.Errorf("after the error: %v", err)
	}
	d.Close()
	d.Close()
	if err := d.Mix(s, in.p, in.v, got[1]); err != ErrClosed {
		t.Errorf("Mix after Close: %v, want ErrClosed", err)
	}
	if err := d.Call(func() {}); err != ErrClosed {
		t.Errorf("Call after Close: %v, want ErrClosed", err)
	}
	// The shared Backend still works after the other one closed its window.
	if err := tb.Mix(s, in.p, in.v, got[1]); err != nil {
		t.Fatal(err)
	}
	compare(t, "Mix after Close of another", s, got[1], want[1])
}

func TestDisplayCheck(t *testing.T) {
	t.Setenv("DISPLAY", "")
	err := displayCheck()
	if err == nil || !strings.Contains(err.Error(), "DISPLAY is not set") {
		t.Fatalf("displayCheck without DISPLAY: %v", err)
	}
}

// child runs this test binary with one child test and extra environment,
// bounded in time, and returns its output.
func child(t *testing.T, test string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), append([]string{childEnv + "=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s hung: %s", test, out)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", test, err, out)
	}
	return string(out)
}

// TestNewWithoutDisplay runs New with DISPLAY unset in a subprocess (GLFW
// state is per process) and wants a quick, clear error.
func TestNewWithoutDisplay(t *testing.T) {
	out := child(t, "TestChildNew", "DISPLAY=")
	if !strings.Contains(out, "child error: gl: no display") {
		t.Errorf("want a no-display error, got:\n%s", out)
	}
}

// TestNewUnreachableDisplay names a display no server answers: one clear
// error, and nothing else printed (go-gl/glfw logs platform errors).
func TestNewUnreachableDisplay(t *testing.T) {
	out := child(t, "TestChildNew", "DISPLAY=:97")
	if !strings.Contains(out, "child error: gl: no display: GLFW cannot start: PlatformError: X11: Failed to open display :97") {
		t.Errorf("want a no-display error, got:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "20") && strings.Contains(line, "PlatformError") {
			t.Errorf("glfw's error leaked to the log: %q", line)
		}
	}
}

// TestNewOldGL asks Mesa to offer only OpenGL 3.3 and wants New to refuse
// with the version in the message.
func TestNewOldGL(t *testing.T) {
	g := needGL(t)
	if !strings.Contains(g.Renderer(), "Mesa") {
		t.Skip("MESA_GL_VERSION_OVERRIDE needs Mesa; renderer is " + g.Renderer())
	}
	out := child(t, "TestChildNew", "MESA_GL_VERSION_OVERRIDE=3.3")
	if !strings.Contains(out, "child error: gl: OpenGL 4.3 needed") {
		t.Errorf("want a version error, got:\n%s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// TestChildNew is the subprocess side of the tests above.
func TestChildNew(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		return // only meaningful as the subprocess of the tests above
	}
	b, err := New(Options{})
	if err != nil {
		fmt.Println("child error:", err)
		return
	}
	fmt.Println("child made", b.Renderer())
	b.Close()
}

// TestCallGLError wants a GL error made inside Call returned by that Call,
// not by the next kernel, outside debug mode too.
func TestCallGLError(t *testing.T) {
	g := needGL(t)
	err := g.Call(func() { ogl.BindBuffer(0xdead, 0) })
	if err == nil || !strings.Contains(err.Error(), "GL_INVALID_ENUM") {
		t.Errorf("Call: err = %v, want GL_INVALID_ENUM", err)
	}
	s := kernels.Shape{B: 1, T: 2, H: 1, Dh: 4}
	if err := g.Mix(s, make([]float32, s.ProbsLen()), make([]float32, s.QKVLen()), make([]float32, s.QKVLen())); err != nil {
		t.Errorf("Mix after the Call: %v", err)
	}
}

// TestTensorsStayOnGPU runs a forward and backward pass the way the model
// does: the backward kernels find P, Q, K and V already on the GPU. A
// slice changed in place is sent again, and results stay exact.
func TestTensorsStayOnGPU(t *testing.T) {
	g := needGL(t)
	c := cpu.New()
	s := kernels.Shape{B: 8, T: 16, H: 2, Dh: 8, Causal: true}
	r := rand.New(rand.NewPCG(9, 9))
	q, k, v, dO := randn(r, s.QKVLen(), 1), randn(r, s.QKVLen(), 1), randn(r, s.QKVLen(), 1), randn(r, s.QKVLen(), 1)
	p, o, dP := make([]float32, s.ProbsLen()), make([]float32, s.QKVLen()), make([]float32, s.ProbsLen())
	dQ, dK, dV := make([]float32, s.QKVLen()), make([]float32, s.QKVLen()), make([]float32, s.QKVLen())
	before := g.Stats()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.Probs(s, q, k, p))
	must(g.Mix(s, p, v, o))
	must(g.MixGradP(s, dO, v, dP))
	must(g.MixGradV(s, p, dO, dV))
	must(g.ProbsGradQ(s, p, dP, k, dQ))
	must(g.ProbsGradK(s, p, dP, q, dK))
	d := g.Stats()
	d.Uploads -= before.Uploads
	d.Resident -= before.Resident
	d.DeviceCopies -= before.DeviceCopies
	// 14 inputs. Sent from the host: q, k, v and dO, once each. Copied on
	// the GPU: P from the forward kernel's buffer, dP from MixGradP's. The
	// other 8 are already in place.
	if d.Uploads != 4 || d.DeviceCopies != 2 || d.Resident != 8 {
		t.Errorf("transfers %+v, want 4 uploads, 2 copies on the GPU, 8 resident", d)
	}
	want := make([]float32, s.QKVLen())
	must(c.ProbsGradK(s, p, dP, q, want))
	compare(t, "dK after resident inputs", s, dK, want)

	// Change P in place: Mix must see the new values, not the GPU's copy.
	for i := range p {
		p[i] *= 0.5
	}
	must(g.Mix(s, p, v, o))
	must(c.Mix(s, p, v, want))
	compare(t, "Mix after P changed in place", s, o, want)
}
