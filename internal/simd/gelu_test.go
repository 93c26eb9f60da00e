package simd

import (
	"math"
	"testing"
)

// exact is the float64 GELU and its derivative.
func exact(x float32) (y, d, phi float64) {
	v := float64(x)
	phi = 0.5 * math.Erfc(-v/math.Sqrt2)
	return v * phi, phi + v*math.Exp(-0.5*v*v)/math.Sqrt(2*math.Pi), phi
}

// TestGELUAccuracy sweeps x over [-16, 16] (and specials) and bounds the
// error of Phi = y/x, of y and of d against float64.
func TestGELUAccuracy(t *testing.T) { forEachPath(t, checkGELUAccuracy) }

func checkGELUAccuracy(t *testing.T) {
	var xs []float32
	for v := -16.0; v <= 16; v += 1.0 / 4096 {
		xs = append(xs, float32(v))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 100, -100, 1e30, -1e30)
	y, d := make([]float32, len(xs)), make([]float32, len(xs))
	check := func(name string) {
		var maxPhi, maxY, maxD float64
		for i, x := range xs {
			wy, wd, wphi := exact(x)
			ey := math.Abs(float64(y[i]) - wy)
			ed := math.Abs(float64(d[i]) - wd)
			// Phi error as seen through y: |y - x Phi| / |x|.
			if x != 0 && math.Abs(float64(x)) < 20 {
				maxPhi = max(maxPhi, ey/math.Abs(float64(x)))
			}
			_ = wphi
			maxY = max(maxY, ey/max(1, math.Abs(wy)))
			maxD = max(maxD, ed)
		}
		t.Logf("%s: max |Phi err| %.3g, max |y err|/max(1,|y|) %.3g, max |d err| %.3g", name, maxPhi, maxY, maxD)
		if maxPhi > 2.5e-7 || maxY > 2.5e-7 || maxD > 4e-7 {
			t.Errorf("%s: errors too large", name)
		}
	}
	GELU(xs, y, d)
	check("kernel")
	for i, x := range xs {
		y[i], d[i] = geluGo(x)
	}
	check("portable")
	// Infinities and NaN behave like the exact formula.
	inf := float32(math.Inf(1))
	in := []float32{inf, -inf, float32(math.NaN())}
	yo, do := make([]float32, 3), make([]float32, 3)
	GELU(in, yo, do)
	if yo[0] != inf || !math.IsNaN(float64(yo[1])) || !math.IsNaN(float64(yo[2])) {
		t.Errorf("GELU(+Inf, -Inf, NaN) = %v", yo)
	}
}

func BenchmarkGELU(b *testing.B) {
	x := make([]float32, 65536)
	for i := range x {
		x[i] = float32(i-32768) / 8192
	}
	y, d := make([]float32, len(x)), make([]float32, len(x))
	for _, p := range runnablePaths() {
		b.Run(p.String(), func(b *testing.B) {
			setPath(b, p)
			for b.Loop() {
				GELU(x, y, d)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
		})
	}
}

func BenchmarkExp(b *testing.B) {
	x := make([]float32, 65536)
	for _, p := range runnablePaths() {
		b.Run(p.String(), func(b *testing.B) {
			setPath(b, p)
			for b.Loop() {
				for i := range x {
					x[i] = float32(i-65536) / 1024
				}
				Exp(x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
		})
	}
}

func TestExp(t *testing.T) { forEachPath(t, checkExp) }

func checkExp(t *testing.T) {
	var xs []float32
	for v := -100.0; v <= 80; v += 1.0 / 512 {
		xs = append(xs, float32(v))
	}
	got := append([]float32(nil), xs...)
	Exp(got)
	var worst float64
	for i, x := range xs {
		want := math.Exp(float64(x))
		if want < 0x1p-126 { // subnormal results: absolute error
			if math.Abs(float64(got[i])-want) > 0x1p-149 {
				t.Errorf("Exp(%v) = %v, want %v", x, got[i], want)
			}
			continue
		}
		worst = max(worst, math.Abs(float64(got[i])-want)/want)
	}
	t.Logf("max relative error %.3g", worst)
	if worst > 2.5e-7 {
		t.Errorf("max relative error %.3g", worst)
	}
	in := []float32{float32(math.Inf(-1)), -200, 0}
	Exp(in)
	if in[0] > 1.5e-45 || in[1] > 1.5e-45 || in[2] != 1 {
		t.Errorf("Exp(-Inf, -200, 0) = %v", in)
	}
	big := []float32{89, 127, 200, 1e30, math.MaxFloat32, float32(math.Inf(1))}
	Exp(big)
	for i, v := range big {
		if !math.IsInf(float64(v), 1) {
			t.Errorf("Exp(big[%d]) = %v, want +Inf", i, v)
		}
	}
}
