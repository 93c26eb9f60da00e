// NEON kernels of vec.go: the same float32 operations, in the same order,
// as the Go loops there (separate FMUL and FADD, never FMLA). Row sums
// accumulate in one 4-lane register, combined by two FADDPs as
// (s0+s1)+(s2+s3): sum4's order. Vector arithmetic is written as WORDs
// (see neon_arm64.s), the instruction in a comment.

//go:build arm64 && !purego

#include "textflag.h"

// ELEMARGS loads (n, out, a, b) into R0..R3.
#define ELEMARGS MOVD n+0(FP), R0; MOVD out+8(FP), R1; MOVD a+16(FP), R2; MOVD b+24(FP), R3

// func addKernel(n int, out, a, b *float32): out = a + b, n a positive
// multiple of 4.
TEXT ·addKernel(SB), NOSPLIT, $0-32
	ELEMARGS
add_loop:
	VLD1.P 16(R2), [V0.S4]
	VLD1.P 16(R3), [V1.S4]
	WORD $0x4e21d400 // fadd v0.4s, v0.4s, v1.4s
	VST1.P [V0.S4], 16(R1)
	SUBS $4, R0, R0
	BNE add_loop
	RET

// func mulKernel(n int, out, a, b *float32): out = a * b.
TEXT ·mulKernel(SB), NOSPLIT, $0-32
	ELEMARGS
mul_loop:
	VLD1.P 16(R2), [V0.S4]
	VLD1.P 16(R3), [V1.S4]
	WORD $0x6e21dc00 // fmul v0.4s, v0.4s, v1.4s
	VST1.P [V0.S4], 16(R1)
	SUBS $4, R0, R0
	BNE mul_loop
	RET

// func addMulKernel(n int, out, a, b *float32): out += a * b, the product
// rounded first.
TEXT ·addMulKernel(SB), NOSPLIT, $0-32
	ELEMARGS
addmul_loop:
	VLD1.P 16(R2), [V0.S4]
	VLD1.P 16(R3), [V1.S4]
	VLD1 (R1), [V2.S4]
	WORD $0x6e21dc00 // fmul v0.4s, v0.4s, v1.4s
	WORD $0x4e20d442 // fadd v2.4s, v2.4s, v0.4s
	VST1.P [V2.S4], 16(R1)
	SUBS $4, R0, R0
	BNE addmul_loop
	RET

// func lnKernel(rows, n int, x, gamma, beta, out, xh, inv *float32, eps float32):
// LayerNorm of rows rows of n floats, n a positive multiple of 4.
TEXT ·lnKernel(SB), NOSPLIT, $0-68
	MOVD rows+0(FP), R0
	MOVD n+8(FP), R1
	MOVD x+16(FP), R2
	MOVD gamma+24(FP), R3
	MOVD beta+32(FP), R4
	MOVD out+40(FP), R5
	MOVD xh+48(FP), R6
	MOVD inv+56(FP), R7
	FMOVS eps+64(FP), F15
	SCVTFS R1, F14 // float32(n)
	FMOVD $1.0, F13
	LSL $2, R1, R8 // bytes per row
ln_row:
	VEOR V0.B16, V0.B16, V0.B16
	MOVD R2, R9
	MOVD R8, R10
ln_sum:
	VLD1.P 16(R9), [V1.S4]
	WORD $0x4e21d400 // fadd v0.4s, v0.4s, v1.4s
	SUBS $16, R10, R10
	BNE ln_sum
	WORD $0x6e20d401 // faddp v1.4s, v0.4s, v0.4s
	WORD $0x7e30d821 // faddp s1, v1.2s
	FDIVS F14, F1, F1 // mean
	VDUP V1.S[0], V2.S4
	VEOR V0.B16, V0.B16, V0.B16
	MOVD R2, R9
	MOVD R6, R11
	MOVD R8, R10
ln_dev:
	VLD1.P 16(R9), [V3.S4]
	WORD $0x4ea2d463 // fsub v3.4s, v3.4s, v2.4s
	VST1.P [V3.S4], 16(R11)
	WORD $0x6e23dc64 // fmul v4.4s, v3.4s, v3.4s
	WORD $0x4e24d400 // fadd v0.4s, v0.4s, v4.4s
	SUBS $16, R10, R10
	BNE ln_dev
	WORD $0x6e20d401 // faddp v1.4s, v0.4s, v0.4s
	WORD $0x7e30d821 // faddp s1, v1.2s
	FDIVS F14, F1, F1
	FADDS F15, F1, F1
	FCVTSD F1, F1
	FSQRTD F1, F1
	FDIVD F1, F13, F1
	FCVTDS F1, F1 // inv
	FMOVS F1, (R7)
	ADD $4, R7, R7
	VDUP V1.S[0], V2.S4
	MOVD R6, R11
	MOVD R3, R12
	MOVD R4, R13
	MOVD R5, R14
	MOVD R8, R10
ln_out:
	VLD1 (R11), [V3.S4]
	WORD $0x6e22dc63 // fmul v3.4s, v3.4s, v2.4s
	VST1.P [V3.S4], 16(R11)
	VLD1.P 16(R12), [V4.S4]
	WORD $0x6e24dc63 // fmul v3.4s, v3.4s, v4.4s
	VLD1.P 16(R13), [V5.S4]
	WORD $0x4e25d463 // fadd v3.4s, v3.4s, v5.4s
	VST1.P [V3.S4], 16(R14)
	SUBS $16, R10, R10
	BNE ln_out
	ADD R8, R2, R2
	ADD R8, R6, R6
	ADD R8, R5, R5
	SUBS $1, R0, R0
	BNE ln_row
	RET

// func lnGradKernel(rows, n int, out, gamma, dy, xh, inv *float32): the
// LayerNorm input gradient, n a positive multiple of 4.
TEXT ·lnGradKernel(SB), NOSPLIT, $0-56
	MOVD rows+0(FP), R0
	MOVD n+8(FP), R1
	MOVD out+16(FP), R2
	MOVD gamma+24(FP), R3
	MOVD dy+32(FP), R4
	MOVD xh+40(FP), R5
	MOVD inv+48(FP), R6
	SCVTFS R1, F14 // float32(n)
	LSL $2, R1, R8
lng_row:
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	MOVD R4, R9
	MOVD R3, R10
	MOVD R2, R11
	MOVD R5, R12
	MOVD R8, R13
lng_sums:
	VLD1.P 16(R9), [V2.S4]
	VLD1.P 16(R10), [V3.S4]
	WORD $0x6e23dc42 // fmul v2.4s, v2.4s, v3.4s
	VST1.P [V2.S4], 16(R11)
	WORD $0x4e22d400 // fadd v0.4s, v0.4s, v2.4s
	VLD1.P 16(R12), [V3.S4]
	WORD $0x6e23dc43 // fmul v3.4s, v2.4s, v3.4s
	WORD $0x4e23d421 // fadd v1.4s, v1.4s, v3.4s
	SUBS $16, R13, R13
	BNE lng_sums
	WORD $0x6e20d404 // faddp v4.4s, v0.4s, v0.4s
	WORD $0x7e30d884 // faddp s4, v4.2s
	FDIVS F14, F4, F4
	VDUP V4.S[0], V5.S4 // mean(g)
	WORD $0x6e21d424 // faddp v4.4s, v1.4s, v1.4s
	WORD $0x7e30d884 // faddp s4, v4.2s
	FDIVS F14, F4, F4
	VDUP V4.S[0], V6.S4 // mean(g*xh)
	FMOVS (R6), F7
	ADD $4, R6, R6
	VDUP V7.S[0], V7.S4
	MOVD R2, R11
	MOVD R5, R12
	MOVD R8, R13
lng_out:
	VLD1 (R11), [V2.S4]
	WORD $0x4ea5d442 // fsub v2.4s, v2.4s, v5.4s
	VLD1.P 16(R12), [V3.S4]
	WORD $0x6e26dc63 // fmul v3.4s, v3.4s, v6.4s
	WORD $0x4ea3d442 // fsub v2.4s, v2.4s, v3.4s
	WORD $0x6e22dce2 // fmul v2.4s, v7.4s, v2.4s
	VST1.P [V2.S4], 16(R11)
	SUBS $16, R13, R13
	BNE lng_out
	ADD R8, R2, R2
	ADD R8, R4, R4
	ADD R8, R5, R5
	SUBS $1, R0, R0
	BNE lng_row
	RET

// func adamKernel(n int, w, grad, m, v *float32, p *AdamStep): one Adam
// update of n (a positive multiple of 4) parameters.
TEXT ·adamKernel(SB), NOSPLIT, $0-48
	MOVD n+0(FP), R0
	MOVD w+8(FP), R1
	MOVD grad+16(FP), R2
	MOVD m+24(FP), R3
	MOVD v+32(FP), R4
	MOVD p+40(FP), R5
	VLD1 (R5), [V24.S4, V25.S4]
	VDUP V24.S[0], V16.S4 // b1
	VDUP V24.S[1], V17.S4 // b2
	VDUP V24.S[2], V18.S4 // 1-b1
	VDUP V24.S[3], V19.S4 // 1-b2
	VDUP V25.S[0], V20.S4 // eps
	VDUP V25.S[1], V21.S4 // c1
	VDUP V25.S[2], V22.S4 // c2
	VDUP V25.S[3], V23.S4 // -lr
	MOVWU 32(R5), R6
	VDUP R6, V26.S4 // decay
adam_loop:
	VLD1.P 16(R2), [V0.S4]
	WORD $0x6e32dc01 // fmul v1.4s, v0.4s, v18.4s
	VLD1 (R3), [V2.S4]
	WORD $0x6e30dc42 // fmul v2.4s, v2.4s, v16.4s
	WORD $0x4e22d421 // fadd v1.4s, v1.4s, v2.4s
	VST1.P [V1.S4], 16(R3)
	WORD $0x6e20dc03 // fmul v3.4s, v0.4s, v0.4s
	WORD $0x6e33dc63 // fmul v3.4s, v3.4s, v19.4s
	VLD1 (R4), [V4.S4]
	WORD $0x6e31dc84 // fmul v4.4s, v4.4s, v17.4s
	WORD $0x4e24d463 // fadd v3.4s, v3.4s, v4.4s
	VST1.P [V3.S4], 16(R4)
	WORD $0x6e36dc63 // fmul v3.4s, v3.4s, v22.4s
	WORD $0x6ea1f863 // fsqrt v3.4s, v3.4s
	WORD $0x4e34d463 // fadd v3.4s, v3.4s, v20.4s
	WORD $0x6e35dc21 // fmul v1.4s, v1.4s, v21.4s
	WORD $0x6e37dc21 // fmul v1.4s, v1.4s, v23.4s
	WORD $0x6e23fc21 // fdiv v1.4s, v1.4s, v3.4s
	VLD1 (R1), [V5.S4]
	WORD $0x6e3adca5 // fmul v5.4s, v5.4s, v26.4s
	WORD $0x4e21d4a5 // fadd v5.4s, v5.4s, v1.4s
	VST1.P [V5.S4], 16(R1)
	SUBS $4, R0, R0
	BNE adam_loop
	RET
