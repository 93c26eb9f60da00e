package gl

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// tdev is the Device the tests share; skipReason is set when none could be
// made outside CI.
var (
	tdev       *Device
	skipReason string
)

func TestMain(m *testing.M) {
	var err error
	tdev, err = New(Options{})
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "FAIL: CI is set and no OpenGL 4.3 context:", err)
			os.Exit(1)
		}
		skipReason = "no OpenGL 4.3 context: " + err.Error()
	}
	code := m.Run()
	if nvDev != nil {
		nvDev.Close()
	}
	if tdev != nil {
		if testing.Verbose() {
			fmt.Printf("renderer %s, context %s\n%s", tdev.Renderer(), tdev.Context(), worst.report())
		}
		if err := tdev.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "Close:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// needGL returns the shared Device or skips the test (never under CI, where
// TestMain has already failed).
func needGL(t testing.TB) *Device {
	t.Helper()
	if tdev == nil {
		t.Skip(skipReason)
	}
	return tdev
}

// near reports whether a GL value matches the CPU's within the brief's
// tolerance: 1e-5 absolute or 1e-4 relative; NaN matches NaN, an infinity
// itself.
func near(g, c float32) bool {
	if g == c || math.IsNaN(float64(g)) && math.IsNaN(float64(c)) {
		return true
	}
	d := math.Abs(float64(g) - float64(c))
	return d <= 1e-5 || d <= 1e-4*math.Abs(float64(c))
}

// diffs records the worst differences seen per kernel, for the report
// printed by go test -v.
type diffs struct {
	mu sync.Mutex
	m  map[string]*diff
}

type diff struct {
	abs, rel    float64
	n, exact    int
	absAt, relC float32
}

var worst = diffs{m: map[string]*diff{}}

func (w *diffs) add(kernel string, g, c float32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.m[kernel]
	if d == nil {
		d = &diff{}
		w.m[kernel] = d
	}
	d.n++
	if math.Float32bits(g) == math.Float32bits(c) {
		d.exact++
		return
	}
	if math.IsNaN(float64(g)) || math.IsNaN(float64(c)) || math.IsInf(float64(c), 0) {
		return
	}
	a := math.Abs(float64(g) - float64(c))
	if a > d.abs {
		d.abs, d.absAt = a, c
	}
	if math.Abs(float64(c)) >= 1e-3 {
		if r := a / math.Abs(float64(c)); r > d.rel {
			d.rel, d.relC = r, c
		}
	}
}

func (w *diffs) report() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.m))
	for k := range w.m {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("worst GL-CPU differences per kernel (abs at value; rel where |cpu| >= 1e-3; bit-exact share):\n")
	for _, k := range names {
		d := w.m[k]
		fmt.Fprintf(&b, "  %-16s abs %.2e (at %.3g)  rel %.2e  exact %d/%d\n", k, d.abs, d.absAt, d.rel, d.exact, d.n)
	}
	return b.String()
}

// compare checks got (GL) against want (CPU) and records the differences.
func compare(t *testing.T, kernel, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		worst.add(kernel, got[i], want[i])
		if !near(got[i], want[i]) {
			if bad < 5 {
				t.Errorf("%s: [%d] gl %g cpu %g", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ", what, bad, len(want))
	}
}

func sameBits(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestInfo reports the device's properties and checks the limits.
func TestInfo(t *testing.T) {
	d := needGL(t)
	t.Logf("renderer %q, context %q, largest buffer %d floats", d.Renderer(), d.Context(), d.MaxBufferFloats())
	if mem, ok := d.MemoryBytes(); ok {
		t.Logf("GPU memory %d MiB", mem>>20)
	}
	switch d.Context() {
	case "egl-device", "egl-surfaceless", "glfw":
	default:
		t.Errorf("Context() = %q", d.Context())
	}
	if os.Getenv("DISPLAY") == "" && d.Context() == "glfw" {
		t.Error("a GLFW context without a display")
	}
	if d.MaxBufferFloats() <= 0 || d.Thread() == nil || d.Name() != "gl" {
		t.Errorf("MaxBufferFloats %d, Thread %v, Name %q", d.MaxBufferFloats(), d.Thread(), d.Name())
	}
	_, err := d.Alloc(d.MaxBufferFloats() + 1)
	if err == nil || !strings.Contains(err.Error(), "largest shader storage buffer") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Alloc beyond the limit: %v", err)
	}
	if _, err := d.Alloc(-1); err == nil {
		t.Error("Alloc(-1): no error")
	}
}
