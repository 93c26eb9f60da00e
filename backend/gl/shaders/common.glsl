// Shared prologue, inserted by the Go side after "#version 430 core" and
// before each kernel; "#line 1" follows it so that driver logs give the
// kernel file's own line numbers.
//
// Layout (see kernels.go): Q, K, V, O and their gradients are [B, T, H, Dh]
// row-major; P and dP are [B, H, T, T]. One invocation computes one output
// element (or one row for Probs and rowsum) and sums serially in the same
// order as backend/cpu, so results are deterministic without atomics.

layout(local_size_x = 64) in;

uniform int B;
uniform int T;
uniform int H;
uniform int Dh;
uniform bool causal;
uniform float scale;
// total is the number of invocations that do work; the grid is rounded up
// and may be two-dimensional when it exceeds 65535 groups.
uniform uint total;

uint gid() {
	return gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x;
}

// row is the offset of (b, t, h) in a [B, T, H, Dh] buffer.
int row(int b, int t, int h) { return ((b * T + t) * H + h) * Dh; }

// prow is the offset of row i of head (b, h) in a [B, H, T, T] buffer.
int prow(int b, int h, int i) { return ((b * H + h) * T + i) * T; }

// keys is how many keys query i sees; masked keys are a suffix.
int keys(int i) { return causal ? i + 1 : T; }
