// STORETAIL stores the first n floats of y (x: its low half) at p, n in
// 0..7 in a general register, as pieces of 4, 2 and 1 floats by n's bits.
// It replaces VMASKMOVPS stores, which Zen 3 and Zen 4 microcode (42
// micro-ops, one every 12 cycles; scripts/mca.sh) and other CPUs do in
// one or two: plain stores are fast everywhere. p moves on; t is an XMM
// scratch register (y and x are left as they were); l4, l2, l1 are labels
// unique to each use.
#define STORETAIL(y, x, t, n, p, l4, l2, l1) \
	VMOVAPS x, t; \
	TESTQ $4, n; \
	JZ l4; \
	VMOVUPS t, (p); \
	VEXTRACTF128 $1, y, t; \
	ADDQ $16, p; \
l4: \
	TESTQ $2, n; \
	JZ l2; \
	VMOVQ t, (p); \
	VPSRLDQ $8, t, t; \
	ADDQ $8, p; \
l2: \
	TESTQ $1, n; \
	JZ l1; \
	VMOVSS t, (p); \
l1:
