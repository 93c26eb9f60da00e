// Attention prologue, after common.glsl for the six attention kernels.
// Layout (kernels/kernels.go), per seed: Q, K, V, O and their gradients
// are [B, T, H, Dh] row-major; P and dP are [B, H, T, T]. Sums run over
// keys or queries in order, one fma a step, as the CPU device's per-head
// products do; masked cells of P are 0 and are skipped.

uniform int B;
uniform int T;
uniform int H;
uniform int Dh;
uniform bool causal;
uniform float scale;

// row is the offset of (b, t, h) in a [B, T, H, Dh] array.
int row(int b, int t, int h) { return ((b * T + t) * H + h) * Dh; }

// prow is the offset of row i of head (b, h) in a [B, H, T, T] array.
int prow(int b, int h, int i) { return ((b * H + h) * T + i) * T; }

// keys is how many keys query i sees; masked keys are a suffix.
int keys(int i) { return causal ? i + 1 : T; }
