// Attention prologue, after common.glsl for the attention kernels.
// Layout (kernels/kernels.go), per seed: Q, K, V, O and their gradients
// are [B, T, H, Dh] row-major; P and dP are [B, H, T, T]. Sums run over
// keys or queries in order, one fma a step, as the CPU device's per-head
// products do; masked cells of P are 0 and are skipped.
//
// A workgroup takes one head of one sequence of one seed (work is B*H).
// With STAGED, and when the head's blocks fit SMEM floats, they go
// through shared memory, each loaded and stored whole by neighbouring
// invocations, rows padded by one float so that invocations reading
// different rows hit different banks; so they do always in the fused
// kernels (attend.comp, attendgrad.comp: FUSED), which run only on heads
// that fit. Otherwise each invocation reads what it needs itself. The
// same steps in the same order either way.

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

// The CPU's products run over masked cells too, adding 0 times the other
// operand: nothing to a finite sum, but NaN where that operand is NaN or
// infinite (a model gone non-finite at a later position is NaN at the
// earlier ones too). maskedTerm is that term's effect on a sum: acc, or
// NaN when x is not finite.
float maskedTerm(float acc, float x) { return finite(x) ? acc : NAN; }

// keys is how many keys query i sees; masked keys are a suffix.
int keys(int i) { return causal ? i + 1 : T; }

// head sets this workgroup's seed, sequence and head; it is false past
// the grid.
bool head(out int s, out int b, out int h) {
	int g = group();
	s = g / work;
	int bh = g - s * work;
	b = bh / H;
	h = bh - b * H;
	return s < S;
}

#if defined(STAGED) || defined(FUSED)
#define SMEM 6144
shared float sm[SMEM];

// staged says whether blocks of qkv [T, Dh] and pp [T, T] arrays (and
// extra floats) fit the shared memory.
bool staged(int qkv, int pp, int extra) {
	return qkv * T * (Dh + 1) + pp * T * (T + 1) + extra <= SMEM;
}

// sync orders a phase's shared writes before the next phase's reads.
void sync() {
	memoryBarrierShared();
	barrier();
}
#define QS(at, t, d) sm[(at) + (t) * (Dh + 1) + (d)]
#define PS(at, i, j) sm[(at) + (i) * (T + 1) + (j)]
#endif

#if defined(STAGED) || defined(FUSED)
// STAGE_QKV copies head (b, h) of a [B, T, H, Dh] array buf (seed base gb)
// to the block at at; STAGE_PP a [B, H, T, T] array's.
#define STAGE_QKV(at, buf, gb) \
	for (int e_ = lid(); e_ < T * Dh; e_ += WG) { \
		int t_ = e_ / Dh; \
		QS(at, t_, e_ - t_ * Dh) = buf[(gb) + row(b, t_, h) + e_ - t_ * Dh]; \
	}
#define STAGE_PP(at, buf, gb) \
	for (int e_ = lid(); e_ < T * T; e_ += WG) { \
		int i_ = e_ / T; \
		PS(at, i_, e_ - i_ * T) = buf[(gb) + prow(b, h, 0) + e_]; \
	}
#endif

#ifdef FUSED
// STAGE_QKV_NF is STAGE_QKV that also sets the shared float at nf to 1
// when the block holds a value that is not finite (every writer writes
// the same 1). A sum's masked terms (maskedTerm) change it only then, so
// the fused kernels skip them for a finite block: the same bits. nf must
// be 0 before, a barrier earlier.
#define STAGE_QKV_NF(at, buf, gb, nf) \
	for (int e_ = lid(); e_ < T * Dh; e_ += WG) { \
		int t_ = e_ / Dh; \
		float x_ = buf[(gb) + row(b, t_, h) + e_ - t_ * Dh]; \
		QS(at, t_, e_ - t_ * Dh) = x_; \
		if (!finite(x_)) sm[nf] = 1.0; \
	}
#endif
