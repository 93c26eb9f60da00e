// AVX-512 kernels of rows.go: one row at a time, 16 lanes a chunk, the
// row's end and its visible keys as lane masks, so rows of any width
// take one loop. The float32 operations are rows.go's, entry by entry;
// the row's max is an integer max over rows_avx2_amd64.s's KEY, which
// orders floats as Go's max does.

//go:build amd64 && !purego

#include "textflag.h"

DATA rowscon<>+0(SB)/4, $0x807fffff // KEY(-Inf)
DATA rowscon<>+4(SB)/4, $0x7fc00000 // NaN
DATA rowscon<>+8(SB)/4, $0
DATA rowscon<>+12(SB)/4, $1
DATA rowscon<>+16(SB)/4, $2
DATA rowscon<>+20(SB)/4, $3
DATA rowscon<>+24(SB)/4, $4
DATA rowscon<>+28(SB)/4, $5
DATA rowscon<>+32(SB)/4, $6
DATA rowscon<>+36(SB)/4, $7
DATA rowscon<>+40(SB)/4, $8
DATA rowscon<>+44(SB)/4, $9
DATA rowscon<>+48(SB)/4, $10
DATA rowscon<>+52(SB)/4, $11
DATA rowscon<>+56(SB)/4, $12
DATA rowscon<>+60(SB)/4, $13
DATA rowscon<>+64(SB)/4, $14
DATA rowscon<>+68(SB)/4, $15
GLOBL rowscon<>(SB), RODATA|NOPTR, $72

// MASK sets K to the low min(max(rem, 0), 16) lanes; rem is in CX
// (clobbered), tmp is clobbered.
#define MASK(tmp, K) \
	MOVQ $16, tmp; \
	CMPQ CX, tmp; \
	CMOVQGT tmp, CX; \
	XORL tmp, tmp; \
	CMPQ CX, tmp; \
	CMOVQLT tmp, CX; \
	MOVL $1, tmp; \
	SHLL CX, tmp; \
	DECL tmp; \
	KMOVW tmp, K

// VISIBLE sets R12 to how many keys the row sees: R11+1 (causal, R10 != 0)
// or t (R9).
#define VISIBLE \
	MOVQ R9, R12; \
	LEAQ 1(R11), AX; \
	TESTQ R10, R10; \
	CMOVQNE AX, R12

// CHUNKMASKS sets K2 to the lanes of the chunk at R13 inside the row
// (before t, R9) and K1 to those visible (before R12).
#define CHUNKMASKS \
	MOVQ R9, CX; \
	SUBQ R13, CX; \
	MASK(BX, K2); \
	MOVQ R12, CX; \
	SUBQ R13, CX; \
	MASK(BX, K1)

// NEXTROW moves R11 (the query) on, back to 0 after t-1, and counts R8
// (rows left) down; flags from DECQ R8.
#define NEXTROW \
	INCQ R11; \
	XORL AX, AX; \
	CMPQ R11, R9; \
	CMOVQEQ AX, R11; \
	DECQ R8

// KEY maps float bits v to an int32 whose signed order is the floats'
// order with -0 below +0; its own inverse (see rows_avx2_amd64.s).
#define KEY(v, dst) \
	VPSRAD $31, v, dst; \
	VPSRLD $1, dst, dst; \
	VPXORD v, dst, dst

// func scaleSubMax512(rows, t, causal int, scale float32, x *float32)
TEXT ·scaleSubMax512(SB), NOSPLIT, $0-40
	MOVQ rows+0(FP), R8
	MOVQ t+8(FP), R9
	MOVQ causal+16(FP), R10
	VBROADCASTSS scale+24(FP), Z15
	MOVQ x+32(FP), SI
	VPBROADCASTD rowscon<>+0(SB), Z14
	XORQ R11, R11
ssm_row:
	VISIBLE
	// Pass 1: scale the visible entries, keep their max per lane (Z0, as
	// keys) and whether any is NaN (K3).
	VMOVAPS Z14, Z0
	KXORW K3, K3, K3
	XORQ R13, R13
	MOVQ SI, DI
ssm_scale:
	MOVQ R12, CX
	SUBQ R13, CX
	MASK(BX, K1)
	VMOVUPS.Z (DI), K1, Z1
	VMULPS Z15, Z1, Z1
	VMOVUPS Z1, K1, (DI)
	KEY(Z1, Z2)
	VPMAXSD Z2, Z0, K1, Z0
	VCMPPS $3, Z1, Z1, K1, K2
	KORW K2, K3, K3
	ADDQ $64, DI
	ADDQ $16, R13
	CMPQ R13, R12
	JLT ssm_scale
	// The row's max, in every lane of Z0 (NaN if any entry was).
	VEXTRACTF64X4 $1, Z0, Y1
	VPMAXSD Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VPMAXSD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPMAXSD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPMAXSD X1, X0, X0
	KEY(X0, X1)
	VMOVAPS X1, X0
	KORTESTW K3, K3
	JZ ssm_nonan
	VMOVSS rowscon<>+4(SB), X0
ssm_nonan:
	VBROADCASTSS X0, Z0
	// Pass 2: subtract it.
	XORQ R13, R13
	MOVQ SI, DI
ssm_sub:
	MOVQ R12, CX
	SUBQ R13, CX
	MASK(BX, K1)
	VMOVUPS.Z (DI), K1, Z1
	VSUBPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (DI)
	ADDQ $64, DI
	ADDQ $16, R13
	CMPQ R13, R12
	JLT ssm_sub
	LEAQ (SI)(R9*4), SI
	NEXTROW
	JNZ ssm_row
	VZEROUPPER
	RET

// func divRows512(rows, t, causal int, x, sums *float32)
TEXT ·divRows512(SB), NOSPLIT, $0-40
	MOVQ rows+0(FP), R8
	MOVQ t+8(FP), R9
	MOVQ causal+16(FP), R10
	MOVQ x+24(FP), SI
	MOVQ sums+32(FP), DX
	XORQ R11, R11
div_row:
	VISIBLE
	VBROADCASTSS (DX), Z0
	XORQ R13, R13
	MOVQ SI, DI
div_chunk:
	CHUNKMASKS
	VMOVUPS.Z (DI), K1, Z1
	VDIVPS Z0, Z1, Z1
	VMOVAPS.Z Z1, K1, Z1
	VMOVUPS Z1, K2, (DI)
	ADDQ $64, DI
	ADDQ $16, R13
	CMPQ R13, R9
	JLT div_chunk
	ADDQ $4, DX
	LEAQ (SI)(R9*4), SI
	NEXTROW
	JNZ div_row
	VZEROUPPER
	RET

// func scoreGrad512(rows, t, causal int, scale float32, o, p, dp, rs *float32)
TEXT ·scoreGrad512(SB), NOSPLIT, $0-64
	MOVQ rows+0(FP), R8
	MOVQ t+8(FP), R9
	MOVQ causal+16(FP), R10
	VBROADCASTSS scale+24(FP), Z15
	MOVQ o+32(FP), DI
	MOVQ p+40(FP), SI
	MOVQ dp+48(FP), R14
	MOVQ rs+56(FP), DX
	XORQ R11, R11
sg_row:
	VISIBLE
	VBROADCASTSS (DX), Z0
	XORQ R13, R13
sg_chunk:
	CHUNKMASKS
	VMOVUPS.Z (SI)(R13*4), K1, Z1
	VMOVUPS.Z (R14)(R13*4), K1, Z2
	VSUBPS Z0, Z2, Z2
	VMULPS Z2, Z1, Z2
	VMULPS Z15, Z2, Z2
	VMOVAPS.Z Z2, K1, Z2
	VMOVUPS Z2, K2, (DI)(R13*4)
	ADDQ $16, R13
	CMPQ R13, R9
	JLT sg_chunk
	ADDQ $4, DX
	LEAQ (DI)(R9*4), DI
	LEAQ (SI)(R9*4), SI
	LEAQ (R14)(R9*4), R14
	NEXTROW
	JNZ sg_row
	VZEROUPPER
	RET

// func transpose512(t, dh int, x *float32, ld int, dst *float32): for
// each column d, gathers 16 rows' x[j*ld+d] at a time (lane l reads row
// j+l, masked past t) into dst's row d. ld*15*4 must fit in int32.
TEXT ·transpose512(SB), NOSPLIT, $0-40
	MOVQ t+0(FP), R9
	MOVQ dh+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ ld+24(FP), AX
	MOVQ dst+32(FP), DI
	// Z15: lane l's byte offset l*ld*4; DX: 16 rows, in bytes.
	SHLQ $2, AX
	VPBROADCASTD AX, Z15
	VPMULLD rowscon<>+8(SB), Z15, Z15
	MOVQ AX, DX
	SHLQ $4, DX
tr_col:
	MOVQ SI, R10
	XORQ R13, R13
tr_chunk:
	MOVQ R9, CX
	SUBQ R13, CX
	MASK(BX, K1)
	KMOVW K1, K2
	VXORPS Z0, Z0, Z0
	VGATHERDPS (R10)(Z15*1), K2, Z0
	VMOVUPS Z0, K1, (DI)
	ADDQ DX, R10
	ADDQ $64, DI
	ADDQ $16, R13
	CMPQ R13, R9
	JLT tr_chunk
	// dst's row d is t long: step back over the last chunk's unused lanes.
	MOVQ R13, CX
	SUBQ R9, CX
	SHLQ $2, CX
	SUBQ CX, DI
	ADDQ $4, SI
	DECQ R8
	JNZ tr_col
	VZEROUPPER
	RET

// func transpose16(x *float32, ld int, dst *float32, ldd int): the 16x16
// block at x (rows ld floats apart) into dst (rows ldd floats apart),
// dst[d*ldd+j] = x[j*ld+d]: 16 row loads, four rounds of 16 shuffles
// (pairs of floats, of float pairs, of 128-bit lanes, twice), 16 stores.
TEXT ·transpose16(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ ld+8(FP), AX
	MOVQ dst+16(FP), DI
	MOVQ ldd+24(FP), DX
	SHLQ $2, AX
	SHLQ $2, DX
	VMOVUPS (SI), Z0
	ADDQ AX, SI
	VMOVUPS (SI), Z1
	ADDQ AX, SI
	VMOVUPS (SI), Z2
	ADDQ AX, SI
	VMOVUPS (SI), Z3
	ADDQ AX, SI
	VMOVUPS (SI), Z4
	ADDQ AX, SI
	VMOVUPS (SI), Z5
	ADDQ AX, SI
	VMOVUPS (SI), Z6
	ADDQ AX, SI
	VMOVUPS (SI), Z7
	ADDQ AX, SI
	VMOVUPS (SI), Z8
	ADDQ AX, SI
	VMOVUPS (SI), Z9
	ADDQ AX, SI
	VMOVUPS (SI), Z10
	ADDQ AX, SI
	VMOVUPS (SI), Z11
	ADDQ AX, SI
	VMOVUPS (SI), Z12
	ADDQ AX, SI
	VMOVUPS (SI), Z13
	ADDQ AX, SI
	VMOVUPS (SI), Z14
	ADDQ AX, SI
	VMOVUPS (SI), Z15
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	VSHUFF32X4 $0x88, Z4, Z0, Z16
	VSHUFF32X4 $0xdd, Z4, Z0, Z20
	VSHUFF32X4 $0x88, Z5, Z1, Z17
	VSHUFF32X4 $0xdd, Z5, Z1, Z21
	VSHUFF32X4 $0x88, Z6, Z2, Z18
	VSHUFF32X4 $0xdd, Z6, Z2, Z22
	VSHUFF32X4 $0x88, Z7, Z3, Z19
	VSHUFF32X4 $0xdd, Z7, Z3, Z23
	VSHUFF32X4 $0x88, Z12, Z8, Z24
	VSHUFF32X4 $0xdd, Z12, Z8, Z28
	VSHUFF32X4 $0x88, Z13, Z9, Z25
	VSHUFF32X4 $0xdd, Z13, Z9, Z29
	VSHUFF32X4 $0x88, Z14, Z10, Z26
	VSHUFF32X4 $0xdd, Z14, Z10, Z30
	VSHUFF32X4 $0x88, Z15, Z11, Z27
	VSHUFF32X4 $0xdd, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z24, Z16, Z0
	VSHUFF32X4 $0xdd, Z24, Z16, Z8
	VSHUFF32X4 $0x88, Z25, Z17, Z1
	VSHUFF32X4 $0xdd, Z25, Z17, Z9
	VSHUFF32X4 $0x88, Z26, Z18, Z2
	VSHUFF32X4 $0xdd, Z26, Z18, Z10
	VSHUFF32X4 $0x88, Z27, Z19, Z3
	VSHUFF32X4 $0xdd, Z27, Z19, Z11
	VSHUFF32X4 $0x88, Z28, Z20, Z4
	VSHUFF32X4 $0xdd, Z28, Z20, Z12
	VSHUFF32X4 $0x88, Z29, Z21, Z5
	VSHUFF32X4 $0xdd, Z29, Z21, Z13
	VSHUFF32X4 $0x88, Z30, Z22, Z6
	VSHUFF32X4 $0xdd, Z30, Z22, Z14
	VSHUFF32X4 $0x88, Z31, Z23, Z7
	VSHUFF32X4 $0xdd, Z31, Z23, Z15
	VMOVUPS Z0, (DI)
	ADDQ DX, DI
	VMOVUPS Z1, (DI)
	ADDQ DX, DI
	VMOVUPS Z2, (DI)
	ADDQ DX, DI
	VMOVUPS Z3, (DI)
	ADDQ DX, DI
	VMOVUPS Z4, (DI)
	ADDQ DX, DI
	VMOVUPS Z5, (DI)
	ADDQ DX, DI
	VMOVUPS Z6, (DI)
	ADDQ DX, DI
	VMOVUPS Z7, (DI)
	ADDQ DX, DI
	VMOVUPS Z8, (DI)
	ADDQ DX, DI
	VMOVUPS Z9, (DI)
	ADDQ DX, DI
	VMOVUPS Z10, (DI)
	ADDQ DX, DI
	VMOVUPS Z11, (DI)
	ADDQ DX, DI
	VMOVUPS Z12, (DI)
	ADDQ DX, DI
	VMOVUPS Z13, (DI)
	ADDQ DX, DI
	VMOVUPS Z14, (DI)
	ADDQ DX, DI
	VMOVUPS Z15, (DI)
	VZEROUPPER
	RET

// func clearMasked512(rows, t int, x *float32): sets the masked cells of
// each causal row (those past its query's keys) to +0, as clear does.
TEXT ·clearMasked512(SB), NOSPLIT, $0-24
	MOVQ rows+0(FP), R8
	MOVQ t+8(FP), R9
	MOVQ x+16(FP), SI
	MOVQ $1, R10 // causal
	XORQ R11, R11
	VXORPS Z0, Z0, Z0
cm_row:
	VISIBLE
	XORQ R13, R13
	MOVQ SI, DI
cm_chunk:
	CHUNKMASKS
	KANDNW K2, K1, K3 // in the row, not visible
	VMOVUPS Z0, K3, (DI)
	ADDQ $64, DI
	ADDQ $16, R13
	CMPQ R13, R9
	JLT cm_chunk
	LEAQ (SI)(R9*4), SI
	NEXTROW
	JNZ cm_row
	VZEROUPPER
	RET
