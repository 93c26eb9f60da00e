package simd

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runnablePaths lists the paths this CPU and build run, fastest first.
func runnablePaths() []path {
	var ps []path
	for _, p := range preference {
		if canRun(p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// setPath makes every kernel take p until tb ends.
func setPath(tb testing.TB, p path) {
	tb.Helper()
	if !canRun(p) {
		tb.Fatalf("path %s cannot run here", p)
	}
	old := cur
	cur = p
	tb.Cleanup(func() { cur = old })
}

// forEachPath runs f as a subtest on every path this CPU runs.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	for _, p := range runnablePaths() {
		t.Run(p.String(), func(t *testing.T) {
			setPath(t, p)
			f(t)
		})
	}
}

// needAVX2And512 skips unless both assembly paths run here.
func needAVX2And512(t *testing.T) {
	if !canRun(pathAVX2) || !canRun(pathAVX512) {
		t.Skip("needs both AVX2 and AVX-512")
	}
}

// onPath runs f with the kernels on p.
func onPath(p path, f func()) {
	old := cur
	cur = p
	defer func() { cur = old }()
	f()
}

func sameBits(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || (x != x && y != y)
}

// TestAVX2MatchesAVX512Sgemm: the two kernels do the same fused steps in
// the same order, so they agree bit for bit on every shape, transpose, bias
// and column or row tail; guard cells around c survive both.
func TestAVX2MatchesAVX512Sgemm(t *testing.T) {
	needAVX2And512(t)
	r := rand.New(rand.NewPCG(7, 8))
	var s Scratch
	ks := []int{1, 2, 3, 5, 8, 9, 16, 17, 31, 40}
	if testing.Short() {
		ks = []int{1, 7, 40}
	}
	for m := 1; m <= 40; m++ {
		for n := 1; n <= 40; n++ {
			for _, k := range ks {
				tr := [2]bool{(m+k)%2 == 1, (n+k)%3 == 1}
				var bias []float32
				if (m+n)%2 == 0 {
					bias = fill(r, n)
				}
				a, b := fill(r, m*k), fill(r, k*n)
				c1, c2 := fill(r, m*n+20), make([]float32, m*n+20)
				copy(c2, c1)
				onPath(pathAVX512, func() { Sgemm(tr[0], tr[1], m, n, k, a, b, c1, bias, &s) })
				onPath(pathAVX2, func() { Sgemm(tr[0], tr[1], m, n, k, a, b, c2, bias, &s) })
				for i := range c1 {
					if !sameBits(c1[i], c2[i]) {
						t.Fatalf("m%d n%d k%d t%v bias %v: c[%d]: avx512 %v, avx2 %v", m, n, k, tr, bias != nil, i, c1[i], c2[i])
					}
				}
			}
		}
	}
}

// TestAVX2MatchesAVX512Gemm covers Gemm's strides: a column of a (ai, ap
// both set), ldb > n and ldc > n with the cells between rows untouched.
func TestAVX2MatchesAVX512Gemm(t *testing.T) {
	needAVX2And512(t)
	r := rand.New(rand.NewPCG(9, 10))
	for _, sh := range [][3]int{{1, 1, 1}, {7, 13, 5}, {6, 16, 3}, {13, 40, 9}, {33, 17, 40}, {40, 9, 2}} {
		m, n, k := sh[0], sh[1], sh[2]
		ldb, ldc := n+3, n+5
		a := fill(r, m*k*2)
		b := fill(r, k*ldb)
		bias := fill(r, n)
		for _, withBias := range []bool{false, true} {
			bs := bias
			if !withBias {
				bs = nil
			}
			c1 := fill(r, m*ldc)
			c2 := append([]float32(nil), c1...)
			// a stored k x 2m: element (i, p) at a[i + p*2m].
			onPath(pathAVX512, func() { Gemm(m, n, k, a, 1, 2*m, b, ldb, c1, ldc, bs) })
			onPath(pathAVX2, func() { Gemm(m, n, k, a, 1, 2*m, b, ldb, c2, ldc, bs) })
			for i := range c1 {
				if !sameBits(c1[i], c2[i]) {
					t.Fatalf("%v bias %v: c[%d]: avx512 %v, avx2 %v", sh, withBias, i, c1[i], c2[i])
				}
			}
		}
	}
}

// specials are inputs at the edges of GELU's and exp's ranges.
var specials = []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-45, -1e-45,
	0.5, -0.5, 1, -1, 14.4, -14.4, 87, 88.7, 88.8, 89, 100, 127, 200, 1e10, 1e30, -1e30,
	-87, -88, -100, -103.9, -104, -104.1, -200, -1e10,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32}

// gridInputs: a dense sweep over [-120, 120], the specials, and random normals.
func gridInputs() []float32 {
	var xs []float32
	for v := -120.0; v <= 120; v += 1.0 / 1024 {
		xs = append(xs, float32(v))
	}
	xs = append(xs, specials...)
	r := rand.New(rand.NewPCG(11, 12))
	for range 10000 {
		xs = append(xs, float32(r.NormFloat64()*4))
	}
	return xs
}

// TestAVX2MatchesAVX512GELU: same operation sequence, same bits, for every
// length 1..40 (tails) and over the whole grid.
func TestAVX2MatchesAVX512GELU(t *testing.T) {
	needAVX2And512(t)
	xs := gridInputs()
	check := func(x []float32) {
		y1, d1 := make([]float32, len(x)), make([]float32, len(x))
		y2, d2 := make([]float32, len(x)), make([]float32, len(x))
		onPath(pathAVX512, func() { GELU(x, y1, d1) })
		onPath(pathAVX2, func() { GELU(x, y2, d2) })
		for i := range x {
			if !sameBits(y1[i], y2[i]) || !sameBits(d1[i], d2[i]) {
				t.Fatalf("GELU(%v) (len %d, i %d): avx512 %v %v, avx2 %v %v", x[i], len(x), i, y1[i], d1[i], y2[i], d2[i])
			}
		}
	}
	check(xs)
	for n := 1; n <= 40; n++ {
		check(xs[len(xs)-n-len(specials)-3:][:n])
	}
}

func TestAVX2MatchesAVX512Exp(t *testing.T) {
	needAVX2And512(t)
	xs := gridInputs()
	check := func(x []float32) {
		e1, e2 := append([]float32(nil), x...), append([]float32(nil), x...)
		onPath(pathAVX512, func() { Exp(e1) })
		onPath(pathAVX2, func() { Exp(e2) })
		for i := range x {
			if !sameBits(e1[i], e2[i]) {
				t.Fatalf("Exp(%v) (len %d, i %d): avx512 %v (%#x), avx2 %v (%#x)", x[i], len(x), i, e1[i], math.Float32bits(e1[i]), e2[i], math.Float32bits(e2[i]))
			}
		}
	}
	check(xs)
	for n := 1; n <= 40; n++ {
		check(xs[len(xs)-n-len(specials)-3:][:n])
	}
}

func TestChoose(t *testing.T) {
	all := func(path) bool { return true }
	avx2 := func(p path) bool { return p == pathGo || p == pathAVX2 }
	goOnly := func(p path) bool { return p == pathGo }
	for _, c := range []struct {
		env  string
		can  func(path) bool
		want path
		err  string
	}{
		{"", all, pathAVX512, ""},
		{"", avx2, pathAVX2, ""},
		{"", goOnly, pathGo, ""},
		{"avx512", all, pathAVX512, ""},
		{"avx2", all, pathAVX2, ""},
		{" AVX2 ", all, pathAVX2, ""},
		{"go", all, pathGo, ""},
		{"go", goOnly, pathGo, ""},
		{"avx512", avx2, pathAVX2, "cannot run the avx512 kernels"},
		{"avx2", goOnly, pathGo, "cannot run the avx2 kernels"},
		{"neon", avx2, pathAVX2, "cannot run the neon kernels"},
		{"sse9", all, pathAVX512, "unknown kernel path"},
		{"avx512,avx2", all, pathAVX512, "unknown kernel path"},
	} {
		got, err := choose(c.env, c.can)
		if got != c.want {
			t.Errorf("choose(%q): %s, want %s", c.env, got, c.want)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("choose(%q): %v", c.env, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("choose(%q): error %v, want one containing %q", c.env, err, c.err)
		case err != nil && strings.ContainsAny(err.Error(), "\n\r"):
			t.Errorf("choose(%q): error is not one line: %q", c.env, err)
		}
	}
}

func TestKernelName(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		if !strings.HasPrefix(KernelName(), Path()) {
			t.Errorf("KernelName %q does not start with Path %q", KernelName(), Path())
		}
	})
}

// TestForcePath runs this test binary with HEADLAB_SIMD set to each name
// and checks what the package chose at init.
func TestForcePath(t *testing.T) {
	if os.Getenv("HEADLAB_SIMD_CHILD") == "1" {
		t.Skip("child")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	run := func(env string) string {
		cmd := exec.Command(exe, "-test.run=^TestPrintPath$", "-test.v")
		cmd.Env = append(os.Environ(), "HEADLAB_SIMD="+env, "HEADLAB_SIMD_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("HEADLAB_SIMD=%s: %v\n%s", env, err, out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if s, ok := strings.CutPrefix(strings.TrimSpace(l), "path_test.go"); ok {
				_, s, _ = strings.Cut(s, ": ")
				return s
			}
		}
		t.Fatalf("HEADLAB_SIMD=%s: no report in\n%s", env, out)
		return ""
	}
	best := runnablePaths()[0]
	for p := range numPaths {
		got := run(p.String())
		want := "path " + p.String() + " err <nil>"
		if !canRun(p) {
			want = "path " + best.String() + " err HEADLAB_SIMD=" + p.String() + ": "
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("HEADLAB_SIMD=%s: child says %q, want %q...", p, got, want)
		}
	}
	if got := run("bogus"); !strings.HasPrefix(got, "path "+best.String()+` err HEADLAB_SIMD="bogus": unknown`) {
		t.Errorf("HEADLAB_SIMD=bogus: child says %q", got)
	}
	if got := run(""); got != "path "+best.String()+" err <nil>" {
		t.Errorf("HEADLAB_SIMD unset: child says %q", got)
	}
}

// TestPrintPath is TestForcePath's child: it reports the path chosen at init.
func TestPrintPath(t *testing.T) {
	if os.Getenv("HEADLAB_SIMD_CHILD") != "1" {
		t.Skip("run by TestForcePath")
	}
	t.Logf("path %s err %v", Path(), Choose())
}
