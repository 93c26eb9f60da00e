// NEON kernels of rows.go (see rows_arm64.go): one row at a time, 4 lanes
// a step while 4 or more of its entries are left, then the rest one by
// one. Vector arithmetic is written as WORDs (see neon_arm64.s), the
// instruction in a comment.

//go:build arm64 && !purego

#include "textflag.h"

// VISIBLE sets R5 to how many keys the row sees: R4+1 (R4 the query;
// causal, R2 != 0) or t (R1).
#define VISIBLE ADD $1, R4, R5; CMP $0, R2; CSEL EQ, R1, R5, R5

// NEXTROW moves R4 (the query) on, back to 0 after t-1, and counts R0
// (rows left) down; flags from the count.
#define NEXTROW ADD $1, R4, R4; CMP R1, R4; CSEL EQ, ZR, R4, R4; SUBS $1, R0, R0

// func scaleSubMaxKernel(rows, t, causal int, scale float32, x *float32)
TEXT ·scaleSubMaxKernel(SB), NOSPLIT, $0-40
	MOVD rows+0(FP), R0
	MOVD t+8(FP), R1
	MOVD causal+16(FP), R2
	FMOVS scale+24(FP), F15
	MOVD x+32(FP), R3
	VDUP V15.S[0], V15.S4
	MOVW $0xff800000, R6
	VDUP R6, V14.S4 // -Inf
	LSL $2, R1, R8  // bytes per row
	MOVD $0, R4
ssm_row:
	VISIBLE
	// Pass 1: scale the visible entries and take their max, in V0's lanes,
	// then in F0 (NaN if any entry is).
	VMOV V14.B16, V0.B16
	MOVD R3, R6
	MOVD R5, R7
ssm_scale4:
	CMP $4, R7
	BLT ssm_scale1
	VLD1 (R6), [V1.S4]
	WORD $0x6e2fdc21 // fmul v1.4s, v1.4s, v15.4s
	VST1.P [V1.S4], 16(R6)
	WORD $0x4e21f400 // fmax v0.4s, v0.4s, v1.4s
	SUB $4, R7, R7
	B ssm_scale4
ssm_scale1:
	WORD $0x6e30f800 // fmaxv s0, v0.4s
	CBZ R7, ssm_max
ssm_scale1loop:
	FMOVS (R6), F1
	FMULS F15, F1, F1
	FMOVS.P F1, 4(R6)
	FMAXS F1, F0, F0
	SUBS $1, R7, R7
	BNE ssm_scale1loop
ssm_max:
	// Pass 2: subtract it.
	VDUP V0.S[0], V0.S4
	MOVD R3, R6
	MOVD R5, R7
ssm_sub4:
	CMP $4, R7
	BLT ssm_sub1
	VLD1 (R6), [V1.S4]
	WORD $0x4ea0d421 // fsub v1.4s, v1.4s, v0.4s
	VST1.P [V1.S4], 16(R6)
	SUB $4, R7, R7
	B ssm_sub4
ssm_sub1:
	CBZ R7, ssm_next
ssm_sub1loop:
	FMOVS (R6), F1
	FSUBS F0, F1, F1
	FMOVS.P F1, 4(R6)
	SUBS $1, R7, R7
	BNE ssm_sub1loop
ssm_next:
	ADD R8, R3, R3
	NEXTROW
	BNE ssm_row
	RET

// func divRowsKernel(rows, t, causal int, x, sums *float32)
TEXT ·divRowsKernel(SB), NOSPLIT, $0-40
	MOVD rows+0(FP), R0
	MOVD t+8(FP), R1
	MOVD causal+16(FP), R2
	MOVD x+24(FP), R3
	MOVD sums+32(FP), R9
	VEOR V31.B16, V31.B16, V31.B16
	MOVD $0, R4
div_row:
	VISIBLE
	FMOVS.P 4(R9), F0
	VDUP V0.S[0], V0.S4
	MOVD R5, R7
div_4:
	CMP $4, R7
	BLT div_1
	VLD1 (R3), [V1.S4]
	WORD $0x6e20fc21 // fdiv v1.4s, v1.4s, v0.4s
	VST1.P [V1.S4], 16(R3)
	SUB $4, R7, R7
	B div_4
div_1:
	CBZ R7, div_clear
div_1loop:
	FMOVS (R3), F1
	FDIVS F0, F1, F1
	FMOVS.P F1, 4(R3)
	SUBS $1, R7, R7
	BNE div_1loop
div_clear:
	// The masked entries, t-R5 of them, to 0.
	SUB R5, R1, R7
div_clear4:
	CMP $4, R7
	BLT div_clear1
	VST1.P [V31.S4], 16(R3)
	SUB $4, R7, R7
	B div_clear4
div_clear1:
	CBZ R7, div_next
div_clear1loop:
	MOVW.P ZR, 4(R3)
	SUBS $1, R7, R7
	BNE div_clear1loop
div_next:
	NEXTROW
	BNE div_row
	RET

// func scoreGradKernel(rows, t, causal int, scale float32, o, p, dp, rs *float32)
TEXT ·scoreGradKernel(SB), NOSPLIT, $0-64
	MOVD rows+0(FP), R0
	MOVD t+8(FP), R1
	MOVD causal+16(FP), R2
	FMOVS scale+24(FP), F15
	MOVD o+32(FP), R3
	MOVD p+40(FP), R10
	MOVD dp+48(FP), R11
	MOVD rs+56(FP), R9
	VDUP V15.S[0], V15.S4
	VEOR V31.B16, V31.B16, V31.B16
	LSL $2, R1, R8 // bytes per row
	MOVD $0, R4
sg_row:
	VISIBLE
	FMOVS.P 4(R9), F0
	VDUP V0.S[0], V0.S4
	MOVD R10, R12
	MOVD R11, R13
	MOVD R5, R7
sg_4:
	CMP $4, R7
	BLT sg_1
	VLD1.P 16(R12), [V1.S4]
	VLD1.P 16(R13), [V2.S4]
	WORD $0x4ea0d442 // fsub v2.4s, v2.4s, v0.4s
	WORD $0x6e22dc22 // fmul v2.4s, v1.4s, v2.4s
	WORD $0x6e22dde2 // fmul v2.4s, v15.4s, v2.4s
	VST1.P [V2.S4], 16(R3)
	SUB $4, R7, R7
	B sg_4
sg_1:
	CBZ R7, sg_clear
sg_1loop:
	FMOVS.P 4(R12), F1
	FMOVS.P 4(R13), F2
	FSUBS F0, F2, F2
	FMULS F2, F1, F2
	FMULS F2, F15, F2
	FMOVS.P F2, 4(R3)
	SUBS $1, R7, R7
	BNE sg_1loop
sg_clear:
	// The masked entries, t-R5 of them, to 0.
	SUB R5, R1, R7
sg_clear4:
	CMP $4, R7
	BLT sg_clear1
	VST1.P [V31.S4], 16(R3)
	SUB $4, R7, R7
	B sg_clear4
sg_clear1:
	CBZ R7, sg_next
sg_clear1loop:
	MOVW.P ZR, 4(R3)
	SUBS $1, R7, R7
	BNE sg_clear1loop
sg_next:
	ADD R8, R10, R10
	ADD R8, R11, R11
	NEXTROW
	BNE sg_row
	RET

// func transposeKernel(t, dh int, x *float32, ld int, dst *float32): four
// columns of x at a time, into four rows of dst: 4x4 blocks transposed in
// registers (TRN1/TRN2 on lanes, then on halves), the last 1 to 3 rows of
// x by lanes; then the last 1 to 3 columns one element at a time.
TEXT ·transposeKernel(SB), NOSPLIT, $0-40
	MOVD t+0(FP), R0
	MOVD dh+8(FP), R1
	MOVD x+16(FP), R2
	MOVD ld+24(FP), R3
	MOVD dst+32(FP), R4
	LSL $2, R3, R3 // bytes between rows of x
	LSL $2, R0, R5 // bytes per row of dst
tr_cols4:
	CMP $4, R1
	BLT tr_cols1
	// Columns d..d+3 (R2 at x's row 0) into dst's rows d..d+3 (R7..R10).
	MOVD R2, R6
	MOVD R4, R7
	ADD R5, R7, R8
	ADD R5, R8, R9
	ADD R5, R9, R10
	MOVD R0, R11
tr_rows4:
	CMP $4, R11
	BLT tr_rows1
	VLD1.P (R6)(R3), [V0.S4]
	VLD1.P (R6)(R3), [V1.S4]
	VLD1.P (R6)(R3), [V2.S4]
	VLD1.P (R6)(R3), [V3.S4]
	VTRN1 V1.S4, V0.S4, V4.S4 // x[j][d], x[j+1][d], x[j][d+2], x[j+1][d+2]
	VTRN2 V1.S4, V0.S4, V5.S4 // the same for d+1, d+3
	VTRN1 V3.S4, V2.S4, V6.S4 // rows j+2, j+3
	VTRN2 V3.S4, V2.S4, V7.S4
	VTRN1 V6.D2, V4.D2, V16.D2 // column d of rows j..j+3
	VTRN1 V7.D2, V5.D2, V17.D2 // d+1
	VTRN2 V6.D2, V4.D2, V18.D2 // d+2
	VTRN2 V7.D2, V5.D2, V19.D2 // d+3
	VST1.P [V16.S4], 16(R7)
	VST1.P [V17.S4], 16(R8)
	VST1.P [V18.S4], 16(R9)
	VST1.P [V19.S4], 16(R10)
	SUB $4, R11, R11
	B tr_rows4
tr_rows1:
	CBZ R11, tr_next4
tr_rows1loop:
	VLD1.P (R6)(R3), [V0.S4]
	VST1.P V0.S[0], 4(R7)
	VST1.P V0.S[1], 4(R8)
	VST1.P V0.S[2], 4(R9)
	VST1.P V0.S[3], 4(R10)
	SUBS $1, R11, R11
	BNE tr_rows1loop
tr_next4:
	MOVD R10, R4 // dst's row d+4
	ADD $16, R2, R2
	SUB $4, R1, R1
	B tr_cols4
tr_cols1:
	CBZ R1, tr_done
tr_col:
	MOVD R2, R6
	MOVD R0, R11
tr_col1loop:
	FMOVS (R6), F0
	ADD R3, R6, R6
	FMOVS.P F0, 4(R4)
	SUBS $1, R11, R11
	BNE tr_col1loop
	ADD $4, R2, R2
	SUBS $1, R1, R1
	BNE tr_col
tr_done:
	RET
