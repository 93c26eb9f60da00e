// NEON (ASIMD) kernels of Sgemm, GELU and Exp; see gemm_arm64.go.
// Go's arm64 assembler has no mnemonics for the vector floating-point
// instructions other than VFMLA, so those are written as WORDs with the
// instruction (GNU syntax) in a comment.
// The encodings come from llvm-mc -triple=aarch64 (go tool objdump decodes
// them back to the instructions named).

//go:build arm64 && !purego

#include "textflag.h"

// func kern8x8(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32)
TEXT ·kern8x8(SB), NOSPLIT, $0-72
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD ai+16(FP), R2
	MOVD ap+24(FP), R3
	MOVD b+32(FP), R4
	MOVD bp+40(FP), R5
	MOVD c+48(FP), R6
	MOVD ci+56(FP), R7
	MOVD bias+64(FP), R8
	MOVD R1, R9
	ADD R2, R9, R10
	ADD R2, R10, R11
	ADD R2, R11, R12
	ADD R2, R12, R13
	ADD R2, R13, R14
	ADD R2, R14, R15
	ADD R2, R15, R19
	CBZ R8, kern8x8_zero
	VLD1 (R8), [V0.S4, V1.S4]
	VMOV V0.B16, V2.B16
	VMOV V1.B16, V3.B16
	VMOV V0.B16, V4.B16
	VMOV V1.B16, V5.B16
	VMOV V0.B16, V6.B16
	VMOV V1.B16, V7.B16
	VMOV V0.B16, V8.B16
	VMOV V1.B16, V9.B16
	VMOV V0.B16, V10.B16
	VMOV V1.B16, V11.B16
	VMOV V0.B16, V12.B16
	VMOV V1.B16, V13.B16
	VMOV V0.B16, V14.B16
	VMOV V1.B16, V15.B16
	B kern8x8_start
kern8x8_zero:
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
kern8x8_start:
	CBZ R0, kern8x8_store
kern8x8_loop:
	VLD1 (R4), [V24.S4, V25.S4]
	ADD R5, R4, R4
	VLD1R.P (R9)(R3), [V16.S4]
	VFMLA V24.S4, V16.S4, V0.S4
	VFMLA V25.S4, V16.S4, V1.S4
	VLD1R.P (R10)(R3), [V17.S4]
	VFMLA V24.S4, V17.S4, V2.S4
	VFMLA V25.S4, V17.S4, V3.S4
	VLD1R.P (R11)(R3), [V18.S4]
	VFMLA V24.S4, V18.S4, V4.S4
	VFMLA V25.S4, V18.S4, V5.S4
	VLD1R.P (R12)(R3), [V19.S4]
	VFMLA V24.S4, V19.S4, V6.S4
	VFMLA V25.S4, V19.S4, V7.S4
	VLD1R.P (R13)(R3), [V20.S4]
	VFMLA V24.S4, V20.S4, V8.S4
	VFMLA V25.S4, V20.S4, V9.S4
	VLD1R.P (R14)(R3), [V21.S4]
	VFMLA V24.S4, V21.S4, V10.S4
	VFMLA V25.S4, V21.S4, V11.S4
	VLD1R.P (R15)(R3), [V22.S4]
	VFMLA V24.S4, V22.S4, V12.S4
	VFMLA V25.S4, V22.S4, V13.S4
	VLD1R.P (R19)(R3), [V23.S4]
	VFMLA V24.S4, V23.S4, V14.S4
	VFMLA V25.S4, V23.S4, V15.S4
	SUBS $1, R0, R0
	BNE kern8x8_loop
kern8x8_store:
	VST1 [V0.S4, V1.S4], (R6)
	ADD R7, R6, R6
	VST1 [V2.S4, V3.S4], (R6)
	ADD R7, R6, R6
	VST1 [V4.S4, V5.S4], (R6)
	ADD R7, R6, R6
	VST1 [V6.S4, V7.S4], (R6)
	ADD R7, R6, R6
	VST1 [V8.S4, V9.S4], (R6)
	ADD R7, R6, R6
	VST1 [V10.S4, V11.S4], (R6)
	ADD R7, R6, R6
	VST1 [V12.S4, V13.S4], (R6)
	ADD R7, R6, R6
	VST1 [V14.S4, V15.S4], (R6)
	RET

// func kern8x4(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32)
TEXT ·kern8x4(SB), NOSPLIT, $0-72
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD ai+16(FP), R2
	MOVD ap+24(FP), R3
	MOVD b+32(FP), R4
	MOVD bp+40(FP), R5
	MOVD c+48(FP), R6
	MOVD ci+56(FP), R7
	MOVD bias+64(FP), R8
	MOVD R1, R9
	ADD R2, R9, R10
	ADD R2, R10, R11
	ADD R2, R11, R12
	ADD R2, R12, R13
	ADD R2, R13, R14
	ADD R2, R14, R15
	ADD R2, R15, R19
	CBZ R8, kern8x4_zero
	VLD1 (R8), [V0.S4]
	VMOV V0.B16, V1.B16
	VMOV V0.B16, V2.B16
	VMOV V0.B16, V3.B16
	VMOV V0.B16, V4.B16
	VMOV V0.B16, V5.B16
	VMOV V0.B16, V6.B16
	VMOV V0.B16, V7.B16
	B kern8x4_start
kern8x4_zero:
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
kern8x4_start:
	CBZ R0, kern8x4_store
kern8x4_loop:
	VLD1 (R4), [V24.S4]
	ADD R5, R4, R4
	VLD1R.P (R9)(R3), [V16.S4]
	VFMLA V24.S4, V16.S4, V0.S4
	VLD1R.P (R10)(R3), [V17.S4]
	VFMLA V24.S4, V17.S4, V1.S4
	VLD1R.P (R11)(R3), [V18.S4]
	VFMLA V24.S4, V18.S4, V2.S4
	VLD1R.P (R12)(R3), [V19.S4]
	VFMLA V24.S4, V19.S4, V3.S4
	VLD1R.P (R13)(R3), [V20.S4]
	VFMLA V24.S4, V20.S4, V4.S4
	VLD1R.P (R14)(R3), [V21.S4]
	VFMLA V24.S4, V21.S4, V5.S4
	VLD1R.P (R15)(R3), [V22.S4]
	VFMLA V24.S4, V22.S4, V6.S4
	VLD1R.P (R19)(R3), [V23.S4]
	VFMLA V24.S4, V23.S4, V7.S4
	SUBS $1, R0, R0
	BNE kern8x4_loop
kern8x4_store:
	VST1 [V0.S4], (R6)
	ADD R7, R6, R6
	VST1 [V1.S4], (R6)
	ADD R7, R6, R6
	VST1 [V2.S4], (R6)
	ADD R7, R6, R6
	VST1 [V3.S4], (R6)
	ADD R7, R6, R6
	VST1 [V4.S4], (R6)
	ADD R7, R6, R6
	VST1 [V5.S4], (R6)
	ADD R7, R6, R6
	VST1 [V6.S4], (R6)
	ADD R7, R6, R6
	VST1 [V7.S4], (R6)
	RET

// func kern1x8(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32)
TEXT ·kern1x8(SB), NOSPLIT, $0-72
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD ai+16(FP), R2
	MOVD ap+24(FP), R3
	MOVD b+32(FP), R4
	MOVD bp+40(FP), R5
	MOVD c+48(FP), R6
	MOVD ci+56(FP), R7
	MOVD bias+64(FP), R8
	MOVD R1, R9
	CBZ R8, kern1x8_zero
	VLD1 (R8), [V0.S4, V1.S4]
	B kern1x8_start
kern1x8_zero:
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
kern1x8_start:
	CBZ R0, kern1x8_store
kern1x8_loop:
	VLD1 (R4), [V24.S4, V25.S4]
	ADD R5, R4, R4
	VLD1R.P (R9)(R3), [V16.S4]
	VFMLA V24.S4, V16.S4, V0.S4
	VFMLA V25.S4, V16.S4, V1.S4
	SUBS $1, R0, R0
	BNE kern1x8_loop
kern1x8_store:
	VST1 [V0.S4, V1.S4], (R6)
	RET

// func kern1x4(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32)
TEXT ·kern1x4(SB), NOSPLIT, $0-72
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD ai+16(FP), R2
	MOVD ap+24(FP), R3
	MOVD b+32(FP), R4
	MOVD bp+40(FP), R5
	MOVD c+48(FP), R6
	MOVD ci+56(FP), R7
	MOVD bias+64(FP), R8
	MOVD R1, R9
	CBZ R8, kern1x4_zero
	VLD1 (R8), [V0.S4]
	B kern1x4_start
kern1x4_zero:
	VEOR V0.B16, V0.B16, V0.B16
kern1x4_start:
	CBZ R0, kern1x4_store
kern1x4_loop:
	VLD1 (R4), [V24.S4]
	ADD R5, R4, R4
	VLD1R.P (R9)(R3), [V16.S4]
	VFMLA V24.S4, V16.S4, V0.S4
	SUBS $1, R0, R0
	BNE kern1x4_loop
kern1x4_store:
	VST1 [V0.S4], (R6)
	RET

// func kernTail(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, rows, cols int)
// The scalar kernel: rows x cols (cols < 4) elements, each one FMADDS per
// step in the same order as the vector kernels.
TEXT ·kernTail(SB), NOSPLIT, $0-88
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD ai+16(FP), R2
	MOVD ap+24(FP), R3
	MOVD b+32(FP), R4
	MOVD bp+40(FP), R5
	MOVD c+48(FP), R6
	MOVD ci+56(FP), R7
	MOVD bias+64(FP), R8
	MOVD rows+72(FP), R9
	MOVD cols+80(FP), R10
	LSL $2, R10, R10
	CBZ R9, tail_done
	CBZ R10, tail_done
tail_row:
	MOVD ZR, R11
tail_col:
	FMOVS ZR, F0
	CBZ R8, tail_sum
	FMOVS (R8)(R11), F0
tail_sum:
	MOVD R1, R13
	ADD R4, R11, R14
	MOVD R0, R15
	CBZ R15, tail_put
tail_step:
	FMOVS (R13), F1
	FMOVS (R14), F2
	FMADDS F2, F0, F1, F0
	ADD R3, R13, R13
	ADD R5, R14, R14
	SUBS $1, R15, R15
	BNE tail_step
tail_put:
	FMOVS F0, (R6)(R11)
	ADD $4, R11, R11
	CMP R10, R11
	BLT tail_col
	ADD R2, R1, R1
	ADD R7, R6, R6
	SUBS $1, R9, R9
	BNE tail_row
tail_done:
	RET

DATA neoncon<>+0(SB)/4, $0x7fffffff
DATA neoncon<>+4(SB)/4, $0x7fffffff
DATA neoncon<>+8(SB)/4, $0x7fffffff
DATA neoncon<>+12(SB)/4, $0x7fffffff
DATA neoncon<>+16(SB)/4, $0x3eb504f3
DATA neoncon<>+20(SB)/4, $0x3eb504f3
DATA neoncon<>+24(SB)/4, $0x3eb504f3
DATA neoncon<>+28(SB)/4, $0x3eb504f3
DATA neoncon<>+32(SB)/4, $0x3f800000
DATA neoncon<>+36(SB)/4, $0x3f800000
DATA neoncon<>+40(SB)/4, $0x3f800000
DATA neoncon<>+44(SB)/4, $0x3f800000
DATA neoncon<>+48(SB)/4, $0xbf000000
DATA neoncon<>+52(SB)/4, $0xbf000000
DATA neoncon<>+56(SB)/4, $0xbf000000
DATA neoncon<>+60(SB)/4, $0xbf000000
DATA neoncon<>+64(SB)/4, $0xc2d00000
DATA neoncon<>+68(SB)/4, $0xc2d00000
DATA neoncon<>+72(SB)/4, $0xc2d00000
DATA neoncon<>+76(SB)/4, $0xc2d00000
DATA neoncon<>+80(SB)/4, $0x3fb8aa3b
DATA neoncon<>+84(SB)/4, $0x3fb8aa3b
DATA neoncon<>+88(SB)/4, $0x3fb8aa3b
DATA neoncon<>+92(SB)/4, $0x3fb8aa3b
DATA neoncon<>+96(SB)/4, $0xbf317200
DATA neoncon<>+100(SB)/4, $0xbf317200
DATA neoncon<>+104(SB)/4, $0xbf317200
DATA neoncon<>+108(SB)/4, $0xbf317200
DATA neoncon<>+112(SB)/4, $0xb5bfbe8e
DATA neoncon<>+116(SB)/4, $0xb5bfbe8e
DATA neoncon<>+120(SB)/4, $0xb5bfbe8e
DATA neoncon<>+124(SB)/4, $0xb5bfbe8e
DATA neoncon<>+128(SB)/4, $0x3f000000
DATA neoncon<>+132(SB)/4, $0x3f000000
DATA neoncon<>+136(SB)/4, $0x3f000000
DATA neoncon<>+140(SB)/4, $0x3f000000
DATA neoncon<>+144(SB)/4, $0x3ecc422a
DATA neoncon<>+148(SB)/4, $0x3ecc422a
DATA neoncon<>+152(SB)/4, $0x3ecc422a
DATA neoncon<>+156(SB)/4, $0x3ecc422a
DATA neoncon<>+160(SB)/4, $0x0000007f
DATA neoncon<>+164(SB)/4, $0x0000007f
DATA neoncon<>+168(SB)/4, $0x0000007f
DATA neoncon<>+172(SB)/4, $0x0000007f
DATA neoncon<>+176(SB)/4, $0x43000000
DATA neoncon<>+180(SB)/4, $0x43000000
DATA neoncon<>+184(SB)/4, $0x43000000
DATA neoncon<>+188(SB)/4, $0x43000000
DATA neoncon<>+192(SB)/4, $0x3cdc2b91
DATA neoncon<>+196(SB)/4, $0xbe52bc85
DATA neoncon<>+200(SB)/4, $0x3f21f347
DATA neoncon<>+204(SB)/4, $0xbf75432f
DATA neoncon<>+208(SB)/4, $0x3f2dd792
DATA neoncon<>+212(SB)/4, $0xbe80438d
DATA neoncon<>+216(SB)/4, $0x3e922260
DATA neoncon<>+220(SB)/4, $0x3e6488de
DATA neoncon<>+224(SB)/4, $0x3e921b23
DATA neoncon<>+228(SB)/4, $0x3e904ca2
DATA neoncon<>+232(SB)/4, $0x3717fccb
DATA neoncon<>+236(SB)/4, $0x39500d01
DATA neoncon<>+240(SB)/4, $0x3ab60b61
DATA neoncon<>+244(SB)/4, $0x3c088889
DATA neoncon<>+248(SB)/4, $0x3d2aaaab
DATA neoncon<>+252(SB)/4, $0x3e2aaaab
DATA neoncon<>+256(SB)/4, $0x3f000000
DATA neoncon<>+260(SB)/4, $0x3f800000
DATA neoncon<>+264(SB)/4, $0x3f800000
DATA neoncon<>+268(SB)/4, $0x00000000
GLOBL neoncon<>(SB), RODATA|NOPTR, $272

// func geluKernel(n int, x, y, d *float32): n a positive multiple of 4.
// The AVX-512 kernel's operations (gelu_amd64.s), 4 lanes at a time:
// FMLA where it fuses, FMAXNM for VMAXPS (NaN gives -104 on both).
TEXT ·geluKernel(SB), NOSPLIT, $0-32
	MOVD n+0(FP), R0
	MOVD x+8(FP), R1
	MOVD y+16(FP), R2
	MOVD d+24(FP), R3
	MOVD $neoncon<>(SB), R4
	VLD1.P 64(R4), [V11.S4, V12.S4, V13.S4, V14.S4]
	VLD1.P 64(R4), [V15.S4, V16.S4, V17.S4, V18.S4]
	VLD1.P 64(R4), [V19.S4, V20.S4, V21.S4, V22.S4]
	VLD1.P 64(R4), [V23.S4, V24.S4, V25.S4, V26.S4]
	VLD1 (R4), [V27.S4]
neongelu_loop:
	VLD1.P 16(R1), [V0.S4]
	VAND V11.B16, V0.B16, V1.B16
	WORD $0x6e20dc02 // fmul v2.4s, v0.4s, v0.4s
	WORD $0x6e2edc42 // fmul v2.4s, v2.4s, v14.4s
	WORD $0x4e2fc442 // fmaxnm v2.4s, v2.4s, v15.4s
	WORD $0x6e30dc43 // fmul v3.4s, v2.4s, v16.4s
	WORD $0x4e218863 // frintn v3.4s, v3.4s
	VFMLA V17.S4, V3.S4, V2.S4
	VFMLA V18.S4, V3.S4, V2.S4
	VDUP V25.S[3], V4.S4
	VDUP V26.S[0], V5.S4
	VFMLA V2.S4, V4.S4, V5.S4
	VDUP V26.S[1], V4.S4
	VFMLA V2.S4, V5.S4, V4.S4
	VDUP V26.S[2], V5.S4
	VFMLA V2.S4, V4.S4, V5.S4
	VDUP V26.S[3], V4.S4
	VFMLA V2.S4, V5.S4, V4.S4
	VDUP V27.S[0], V5.S4
	VFMLA V2.S4, V4.S4, V5.S4
	VDUP V27.S[1], V4.S4
	VFMLA V2.S4, V5.S4, V4.S4
	VDUP V27.S[2], V5.S4
	VFMLA V2.S4, V4.S4, V5.S4
	// p *= 2^n as VSCALEFPS does (-150 <= n <= 185): by 2^(n>>1), exact,
	// then by 2^(n-(n>>1)), rounding once (as the AVX2 kernel).
	WORD $0x4ea1b868 // fcvtzs v8.4s, v3.4s
	WORD $0x4f3f0509 // sshr v9.4s, v8.4s, #1
	VSUB V9.S4, V8.S4, V8.S4
	VADD V21.S4, V9.S4, V9.S4
	VSHL $23, V9.S4, V9.S4
	VADD V21.S4, V8.S4, V8.S4
	VSHL $23, V8.S4, V8.S4
	WORD $0x6e29dca5 // fmul v5.4s, v5.4s, v9.4s
	WORD $0x6e28dca5 // fmul v5.4s, v5.4s, v8.4s
	VMOV V13.B16, V6.B16
	VFMLA V12.S4, V1.S4, V6.S4
	WORD $0x6e26fda6 // fdiv v6.4s, v13.4s, v6.4s
	VDUP V23.S[0], V7.S4
	VDUP V23.S[1], V10.S4
	VFMLA V6.S4, V7.S4, V10.S4
	VDUP V23.S[2], V7.S4
	VFMLA V6.S4, V10.S4, V7.S4
	VDUP V23.S[3], V10.S4
	VFMLA V6.S4, V7.S4, V10.S4
	VDUP V24.S[0], V7.S4
	VFMLA V6.S4, V10.S4, V7.S4
	VDUP V24.S[1], V10.S4
	VFMLA V6.S4, V7.S4, V10.S4
	VDUP V24.S[2], V7.S4
	VFMLA V6.S4, V10.S4, V7.S4
	VDUP V24.S[3], V10.S4
	VFMLA V6.S4, V7.S4, V10.S4
	VDUP V25.S[0], V7.S4
	VFMLA V6.S4, V10.S4, V7.S4
	VDUP V25.S[1], V10.S4
	VFMLA V6.S4, V7.S4, V10.S4
	VDUP V25.S[2], V7.S4
	VFMLA V6.S4, V10.S4, V7.S4
	WORD $0x6e25dce7 // fmul v7.4s, v7.4s, v5.4s
	WORD $0x6e33dce7 // fmul v7.4s, v7.4s, v19.4s
	WORD $0x4ea7d5aa // fsub v10.4s, v13.4s, v7.4s
	WORD $0x4ea0c809 // fcmgt v9.4s, v0.4s, #0.0
	VBIT V9.B16, V10.B16, V7.B16
	WORD $0x6e34dca5 // fmul v5.4s, v5.4s, v20.4s
	WORD $0x6e27dc04 // fmul v4.4s, v0.4s, v7.4s
	VFMLA V5.S4, V0.S4, V7.S4
	VST1.P [V4.S4], 16(R2)
	VST1.P [V7.S4], 16(R3)
	SUBS $4, R0, R0
	BNE neongelu_loop
	RET

// func expKernel(n int, x *float32): x = exp(min(max(x, -104), 128)) in
// place, n a positive multiple of 4; the exponential of the GELU kernel.
TEXT ·expKernel(SB), NOSPLIT, $0-16
	MOVD n+0(FP), R0
	MOVD x+8(FP), R1
	MOVD $neoncon<>(SB), R4
	VLD1.P 64(R4), [V11.S4, V12.S4, V13.S4, V14.S4]
	VLD1.P 64(R4), [V15.S4, V16.S4, V17.S4, V18.S4]
	VLD1.P 64(R4), [V19.S4, V20.S4, V21.S4, V22.S4]
	VLD1.P 64(R4), [V23.S4, V24.S4, V25.S4, V26.S4]
	VLD1 (R4), [V27.S4]
neonexp_loop:
	VLD1 (R1), [V2.S4]
	WORD $0x4e2fc442 // fmaxnm v2.4s, v2.4s, v15.4s
	WORD $0x4eb6c442 // fminnm v2.4s, v2.4s, v22.4s
	WORD $0x6e30dc43 // fmul v3.4s, v2.4s, v16.4s
	WORD $0x4e218863 // frintn v3.4s, v3.4s
	VFMLA V17.S4, V3.S4, V2.S4
	VFMLA V18.S4, V3.S4, V2.S4
	VDUP V25.S[3], V4.S4
	VDUP V26.S[0], V5.S4
	VFMLA V2.S4, V4.S4, V5.S4
	VDUP V26.S[1], V4.S4
	VFMLA V2.S4, V5.S4, V4.S4
	VDUP V26.S[2], V5.S4
	VFMLA V2.S4, V4.S4, V5.S4
	VDUP V26.S[3], V4.S4
	VFMLA V2.S4, V5.S4, V4.S4
	VDUP V27.S[0], V5.S4
	VFMLA V2.S4, V4.S4, V5.S4
	VDUP V27.S[1], V4.S4
	VFMLA V2.S4, V5.S4, V4.S4
	VDUP V27.S[2], V5.S4
	VFMLA V2.S4, V4.S4, V5.S4
	// p *= 2^n as VSCALEFPS does (-150 <= n <= 185): by 2^(n>>1), exact,
	// then by 2^(n-(n>>1)), rounding once (as the AVX2 kernel).
	WORD $0x4ea1b868 // fcvtzs v8.4s, v3.4s
	WORD $0x4f3f0509 // sshr v9.4s, v8.4s, #1
	VSUB V9.S4, V8.S4, V8.S4
	VADD V21.S4, V9.S4, V9.S4
	VSHL $23, V9.S4, V9.S4
	VADD V21.S4, V8.S4, V8.S4
	VSHL $23, V8.S4, V8.S4
	WORD $0x6e29dca5 // fmul v5.4s, v5.4s, v9.4s
	WORD $0x6e28dca5 // fmul v5.4s, v5.4s, v8.4s
	VST1.P [V5.S4], 16(R1)
	SUBS $4, R0, R0
	BNE neonexp_loop
	RET
