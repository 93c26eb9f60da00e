// Shared prologue, inserted by the Go side after "#version 430 core" and
// before each kernel; "#line 1" follows it so that driver logs give the
// kernel file's own line numbers.
//
// Every kernel covers all S seeds in one dispatch: seed s's array of the
// tensor bound at binding b starts at off[b] + s*stride[b] (a tensor's Off
// and Stride; stride 0 is a constant every seed shares). The grid is one
// invocation per output element (or per row, or one workgroup per seed for
// the reductions over rows) of every seed, flattened as s*work + index and
// rounded up to whole workgroups; past 65535 workgroups it spills into y.
//
// Each invocation sums serially in a fixed order that depends only on the
// kernel's shape, never on S or on the other seeds, and nothing sums with
// atomics: a seed's bits are the same alone or in any group (batch
// invariance), and the same on every run. Sums marked precise keep their
// written order and rounding; fma() is used where the CPU device fuses
// (its matrix products), a*b + c where it rounds twice.

// WG is the workgroup size: 64 unless the Go side defines another for
// the kernel (progSpec.wg). STAGED, defined on GPUs, makes the kernels
// that can stage their operands through shared memory do so.
#ifndef WG
#define WG 64
#endif
layout(local_size_x = WG) in;

// S is the number of seeds, work the invocations (or, for one-seed
// workgroups, the workgroups) per seed.
uniform int S;
uniform int work;
uniform int off[8];
uniform int stride[8];

// base is where seed s's array of the tensor at binding b starts.
int base(int b, int s) { return off[b] + s * stride[b]; }

// item splits this invocation's global index into a seed and an index
// within that seed; it is false past the end of the grid.
bool item(out int s, out int i) {
	uint g = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x;
	if (g >= uint(S) * uint(work)) {
		s = 0;
		i = 0;
		return false;
	}
	s = int(g) / work;
	i = int(g) % work;
	return true;
}

// group is the linear index of this workgroup, for the kernels that give
// each workgroup to one seed (their grids count workgroups).
int group() { return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x); }

// lid is the invocation's index within its workgroup.
int lid() { return int(gl_LocalInvocationIndex); }

// div is a / b rounded once to the nearest float, as the CPU's float32
// division is (GLSL allows float division 2.5 ULP).
float div(float a, float b) { return float(double(a) / double(b)); }

// wholeIn says whether x is a whole number in 0..n-1.
bool wholeIn(float x, int n) { return x >= 0.0 && x < float(n) && floor(x) == x; }

// finite says whether x is neither infinite nor NaN, from its bits (a
// compiler may fold isnan away).
bool finite(float x) { return (floatBitsToUint(x) & 0x7f800000u) != 0x7f800000u; }

// nonzero says whether x is not +0 or -0 (NaN is nonzero, as in Go).
bool nonzero(float x) { return (floatBitsToUint(x) & 0x7fffffffu) != 0u; }

// isNaN says whether x is NaN, from its bits.
bool isNaN(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }

#ifdef NV_MAX
// For tests: max as NVIDIA's GLSL computes it, the other operand when one
// is NaN. maxNaN and exp32 must not depend on max's NaN rule.
float nvMax(float a, float b) { return isNaN(a) ? b : (isNaN(b) ? a : (a > b ? a : b)); }
int nvMax(int a, int b) { return a > b ? a : b; }
#define max(a, b) nvMax(a, b)
#endif

// maxNaN is Go's max, which the CPU device's row maxima take: NaN when
// either is NaN (GLSL's max may return the other operand, as NVIDIA's
// does), +0 above -0.
float maxNaN(float a, float b) {
	if (isNaN(a)) return a;
	if (isNaN(b)) return b;
	if (a == b) return uintBitsToFloat(floatBitsToUint(a) & floatBitsToUint(b));
	return a > b ? a : b;
}

// NAN is a quiet NaN.
#define NAN uintBitsToFloat(0x7fc00000u)
// NEG_INF is -Inf.
#define NEG_INF uintBitsToFloat(0xff800000u)

// exp32 is exp(max(x, -104)) as internal/simd's float32 kernel computes
// it: 2^n p(r), n = roundEven(x log2 e), r = x - n ln2 with ln2 in two
// parts, p the Taylor polynomial of degree 7, scaled by 2^n. Relative
// error under 1e-7 for normal results on any driver (GLSL's own exp is
// allowed 3 + 2|x| ULP). NaN stays NaN, as in the CPU's portable exp32
// (GLSL's max could turn it into -104).
float exp32(float x) {
	if (isNaN(x)) return x;
	precise float t = max(x, uintBitsToFloat(0xc2d00000u));
	precise float n = roundEven(t * uintBitsToFloat(0x3fb8aa3bu));
	precise float r = fma(n, uintBitsToFloat(0xbf317200u), t);
	r = fma(n, uintBitsToFloat(0xb5bfbe8eu), r);
	precise float p = uintBitsToFloat(0x39500d01u);
	p = fma(p, r, uintBitsToFloat(0x3ab60b61u));
	p = fma(p, r, uintBitsToFloat(0x3c088889u));
	p = fma(p, r, uintBitsToFloat(0x3d2aaaabu));
	p = fma(p, r, uintBitsToFloat(0x3e2aaaabu));
	p = fma(p, r, 0.5);
	p = fma(p, r, 1.0);
	p = fma(p, r, 1.0);
	// 2^n in two steps, so that n down to -150 stays in range.
	int k = int(n);
	int k1 = k >> 1;
	return ldexp(ldexp(p, k1), k - k1);
}

// dlog is the natural logarithm in double precision (GLSL has no double
// log): x = m 2^e with m in [sqrt(1/2), sqrt 2), log m = 2 atanh(z),
// z = (m-1)/(m+1), |z| < 0.172, by its series to z^25 (error < 1e-17).
double dlog(double x) {
	int e;
	double m = frexp(x, e);
	if (m < 0.70710678118654752lf) {
		m *= 2.0lf;
		e -= 1;
	}
	precise double z = (m - 1.0lf) / (m + 1.0lf);
	precise double z2 = z * z;
	precise double s = 1.0lf / 25.0lf;
	for (int k = 23; k >= 1; k -= 2) {
		s = s * z2 + 1.0lf / double(k);
	}
	precise double l = double(e) * 0.69314718055994531lf + 2.0lf * z * s;
	return l;
}
