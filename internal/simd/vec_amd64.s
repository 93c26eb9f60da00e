// AVX2 kernels of vec.go, used on the avx2 and avx512 paths: the same
// float32 operations, in the same order, as the Go loops there. Products
// are separate VMULPS (never FMA), and row sums accumulate in one XMM
// register (lane j mod 4), combined as (s0+s1)+(s2+s3) by HSUM: sum4's
// order.

//go:build amd64 && !purego

#include "textflag.h"

// ELEMARGS loads (n, out, a, b) into CX, DI, SI, DX; STEP8 advances them by
// 8 floats and counts n down.
#define ELEMARGS MOVQ n+0(FP), CX; MOVQ out+8(FP), DI; MOVQ a+16(FP), SI; MOVQ b+24(FP), DX
#define STEP8 ADDQ $32, SI; ADDQ $32, DX; ADDQ $32, DI; SUBQ $8, CX

// HSUM sets the low lane of D to (x0+x1)+(x2+x3) of the four lanes of X
// (T is clobbered).
#define HSUM(X, T, D) VMOVSHDUP X, T; VADDPS T, X, T; VMOVHLPS T, T, D; VADDSS D, T, D

// func addKernel(n int, out, a, b *float32): out = a + b, n a positive
// multiple of 8.
TEXT ·addKernel(SB), NOSPLIT, $0-32
	ELEMARGS
add_loop:
	VMOVUPS (SI), Y0
	VADDPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	STEP8
	JNZ add_loop
	VZEROUPPER
	RET

// func mulKernel(n int, out, a, b *float32): out = a * b.
TEXT ·mulKernel(SB), NOSPLIT, $0-32
	ELEMARGS
mul_loop:
	VMOVUPS (SI), Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	STEP8
	JNZ mul_loop
	VZEROUPPER
	RET

// func addMulKernel(n int, out, a, b *float32): out += a * b, the product
// rounded first.
TEXT ·addMulKernel(SB), NOSPLIT, $0-32
	ELEMARGS
addmul_loop:
	VMOVUPS (SI), Y0
	VMULPS (DX), Y0, Y0
	VADDPS (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	STEP8
	JNZ addmul_loop
	VZEROUPPER
	RET

// func lnKernel(rows, n int, x, gamma, beta, out, xh, inv *float32, eps float32):
// LayerNorm of rows rows of n floats, n a positive multiple of 4.
TEXT ·lnKernel(SB), NOSPLIT, $0-68
	MOVQ rows+0(FP), R8
	MOVQ n+8(FP), R9
	MOVQ x+16(FP), SI
	MOVQ gamma+24(FP), R10
	MOVQ beta+32(FP), R11
	MOVQ out+40(FP), DI
	MOVQ xh+48(FP), DX
	MOVQ inv+56(FP), R12
	VMOVSS eps+64(FP), X15
	VXORPS X14, X14, X14
	VCVTSI2SSQ R9, X14, X14 // float32(n)
	MOVQ $0x3ff0000000000000, AX
	VMOVQ AX, X13 // 1.0
	SHLQ $2, R9 // bytes per row
	// Two rows at a time when rows are whole YMM vectors (n a multiple of
	// 8), each row's operations exactly as ln_row's: the rows' dependency
	// chains (the sums, the roots) overlap, and the elementwise steps take
	// 8 lanes. A squared deviation's low half is added to the row's sum
	// before its high half, as ln_row's two 4-lane steps add them.
ln_pairs:
	CMPQ R8, $2
	JB ln_rest
	TESTQ $31, R9
	JNZ ln_rest
	LEAQ (SI)(R9*1), R13 // the second row's x
	LEAQ (DX)(R9*1), R14 // xh
	LEAQ (DI)(R9*1), BX // out
	VXORPS X0, X0, X0
	VXORPS X8, X8, X8
	XORQ AX, AX
ln2_sum:
	VADDPS (SI)(AX*1), X0, X0
	VADDPS (R13)(AX*1), X8, X8
	ADDQ $16, AX
	CMPQ AX, R9
	JB ln2_sum
	HSUM(X0, X1, X2)
	HSUM(X8, X9, X10)
	VDIVSS X14, X2, X2
	VDIVSS X14, X10, X10
	VBROADCASTSS X2, Y2
	VBROADCASTSS X10, Y10
	VXORPS X0, X0, X0
	VXORPS X8, X8, X8
	XORQ AX, AX
ln2_dev:
	VMOVUPS (SI)(AX*1), Y3
	VMOVUPS (R13)(AX*1), Y11
	VSUBPS Y2, Y3, Y3
	VSUBPS Y10, Y11, Y11
	VMOVUPS Y3, (DX)(AX*1)
	VMOVUPS Y11, (R14)(AX*1)
	VMULPS Y3, Y3, Y4
	VMULPS Y11, Y11, Y12
	VADDPS X4, X0, X0
	VADDPS X12, X8, X8
	VEXTRACTF128 $1, Y4, X4
	VEXTRACTF128 $1, Y12, X12
	VADDPS X4, X0, X0
	VADDPS X12, X8, X8
	ADDQ $32, AX
	CMPQ AX, R9
	JB ln2_dev
	HSUM(X0, X1, X2)
	HSUM(X8, X9, X10)
	VDIVSS X14, X2, X2
	VDIVSS X14, X10, X10
	VADDSS X15, X2, X2
	VADDSS X15, X10, X10
	VCVTSS2SD X2, X2, X2
	VCVTSS2SD X10, X10, X10
	VSQRTSD X2, X2, X2
	VSQRTSD X10, X10, X10
	VDIVSD X2, X13, X2
	VDIVSD X10, X13, X10
	VCVTSD2SS X2, X2, X2
	VCVTSD2SS X10, X10, X10
	VMOVSS X2, (R12)
	VMOVSS X10, 4(R12)
	VBROADCASTSS X2, Y2
	VBROADCASTSS X10, Y10
	XORQ AX, AX
ln2_out:
	VMULPS (DX)(AX*1), Y2, Y3
	VMULPS (R14)(AX*1), Y10, Y11
	VMOVUPS Y3, (DX)(AX*1)
	VMOVUPS Y11, (R14)(AX*1)
	VMULPS (R10)(AX*1), Y3, Y3
	VMULPS (R10)(AX*1), Y11, Y11
	VADDPS (R11)(AX*1), Y3, Y3
	VADDPS (R11)(AX*1), Y11, Y11
	VMOVUPS Y3, (DI)(AX*1)
	VMOVUPS Y11, (BX)(AX*1)
	ADDQ $32, AX
	CMPQ AX, R9
	JB ln2_out
	LEAQ (SI)(R9*2), SI
	LEAQ (DX)(R9*2), DX
	LEAQ (DI)(R9*2), DI
	ADDQ $8, R12
	SUBQ $2, R8
	JMP ln_pairs
ln_rest:
	TESTQ R8, R8
	JZ ln_done
ln_row:
	VXORPS X0, X0, X0
	XORQ AX, AX
ln_sum:
	VADDPS (SI)(AX*1), X0, X0
	ADDQ $16, AX
	CMPQ AX, R9
	JB ln_sum
	HSUM(X0, X1, X2)
	VDIVSS X14, X2, X2 // mean
	VBROADCASTSS X2, X2
	VXORPS X0, X0, X0
	XORQ AX, AX
ln_dev:
	VMOVUPS (SI)(AX*1), X3
	VSUBPS X2, X3, X3
	VMOVUPS X3, (DX)(AX*1)
	VMULPS X3, X3, X4
	VADDPS X4, X0, X0
	ADDQ $16, AX
	CMPQ AX, R9
	JB ln_dev
	HSUM(X0, X1, X2)
	VDIVSS X14, X2, X2
	VADDSS X15, X2, X2
	VCVTSS2SD X2, X2, X2
	VSQRTSD X2, X2, X2
	VDIVSD X2, X13, X2
	VCVTSD2SS X2, X2, X2 // inv
	VMOVSS X2, (R12)
	VBROADCASTSS X2, X2
	XORQ AX, AX
ln_out:
	VMULPS (DX)(AX*1), X2, X3
	VMOVUPS X3, (DX)(AX*1)
	VMULPS (R10)(AX*1), X3, X3
	VADDPS (R11)(AX*1), X3, X3
	VMOVUPS X3, (DI)(AX*1)
	ADDQ $16, AX
	CMPQ AX, R9
	JB ln_out
	ADDQ R9, SI
	ADDQ R9, DX
	ADDQ R9, DI
	ADDQ $4, R12
	DECQ R8
	JNZ ln_row
ln_done:
	VZEROUPPER
	RET

// func lnGradKernel(rows, n int, out, gamma, dy, xh, inv *float32): the
// LayerNorm input gradient, n a positive multiple of 4.
TEXT ·lnGradKernel(SB), NOSPLIT, $0-56
	MOVQ rows+0(FP), R8
	MOVQ n+8(FP), R9
	MOVQ out+16(FP), DI
	MOVQ gamma+24(FP), R10
	MOVQ dy+32(FP), SI
	MOVQ xh+40(FP), DX
	MOVQ inv+48(FP), R12
	VXORPS X14, X14, X14
	VCVTSI2SSQ R9, X14, X14 // float32(n)
	SHLQ $2, R9
	// Two rows at a time when rows are whole YMM vectors, each row's
	// operations exactly as lng_row's (as in lnKernel: low halves before
	// high halves into the sums).
lng_pairs:
	CMPQ R8, $2
	JB lng_rest
	TESTQ $31, R9
	JNZ lng_rest
	LEAQ (DI)(R9*1), R13 // the second row's out
	LEAQ (SI)(R9*1), R14 // dy
	LEAQ (DX)(R9*1), BX // xh
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X8, X8, X8
	VXORPS X9, X9, X9
	XORQ AX, AX
lng2_sums:
	VMOVUPS (SI)(AX*1), Y2
	VMOVUPS (R14)(AX*1), Y10
	VMULPS (R10)(AX*1), Y2, Y2
	VMULPS (R10)(AX*1), Y10, Y10
	VMOVUPS Y2, (DI)(AX*1)
	VMOVUPS Y10, (R13)(AX*1)
	VMULPS (DX)(AX*1), Y2, Y3
	VMULPS (BX)(AX*1), Y10, Y11
	VADDPS X2, X0, X0
	VADDPS X10, X8, X8
	VADDPS X3, X1, X1
	VADDPS X11, X9, X9
	VEXTRACTF128 $1, Y2, X2
	VEXTRACTF128 $1, Y10, X10
	VEXTRACTF128 $1, Y3, X3
	VEXTRACTF128 $1, Y11, X11
	VADDPS X2, X0, X0
	VADDPS X10, X8, X8
	VADDPS X3, X1, X1
	VADDPS X11, X9, X9
	ADDQ $32, AX
	CMPQ AX, R9
	JB lng2_sums
	HSUM(X0, X3, X5)
	HSUM(X8, X11, X12)
	VDIVSS X14, X5, X5
	VDIVSS X14, X12, X12
	VBROADCASTSS X5, Y5
	VBROADCASTSS X12, Y12
	HSUM(X1, X3, X6)
	HSUM(X9, X11, X13)
	VDIVSS X14, X6, X6
	VDIVSS X14, X13, X13
	VBROADCASTSS X6, Y6
	VBROADCASTSS X13, Y13
	VBROADCASTSS (R12), Y7
	VBROADCASTSS 4(R12), Y15
	XORQ AX, AX
lng2_out:
	VMOVUPS (DI)(AX*1), Y2
	VMOVUPS (R13)(AX*1), Y10
	VSUBPS Y5, Y2, Y2
	VSUBPS Y12, Y10, Y10
	VMULPS (DX)(AX*1), Y6, Y3
	VMULPS (BX)(AX*1), Y13, Y11
	VSUBPS Y3, Y2, Y2
	VSUBPS Y11, Y10, Y10
	VMULPS Y2, Y7, Y2
	VMULPS Y10, Y15, Y10
	VMOVUPS Y2, (DI)(AX*1)
	VMOVUPS Y10, (R13)(AX*1)
	ADDQ $32, AX
	CMPQ AX, R9
	JB lng2_out
	LEAQ (SI)(R9*2), SI
	LEAQ (DX)(R9*2), DX
	LEAQ (DI)(R9*2), DI
	ADDQ $8, R12
	SUBQ $2, R8
	JMP lng_pairs
lng_rest:
	TESTQ R8, R8
	JZ lng_done
lng_row:
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	XORQ AX, AX
lng_sums:
	VMOVUPS (SI)(AX*1), X2
	VMULPS (R10)(AX*1), X2, X2 // g = dy*gamma
	VMOVUPS X2, (DI)(AX*1)
	VADDPS X2, X0, X0
	VMULPS (DX)(AX*1), X2, X3
	VADDPS X3, X1, X1
	ADDQ $16, AX
	CMPQ AX, R9
	JB lng_sums
	HSUM(X0, X3, X5)
	VDIVSS X14, X5, X5
	VBROADCASTSS X5, X5 // mean(g)
	HSUM(X1, X3, X6)
	VDIVSS X14, X6, X6
	VBROADCASTSS X6, X6 // mean(g*xh)
	VBROADCASTSS (R12), X7
	XORQ AX, AX
lng_out:
	VMOVUPS (DI)(AX*1), X2
	VSUBPS X5, X2, X2
	VMULPS (DX)(AX*1), X6, X3
	VSUBPS X3, X2, X2
	VMULPS X2, X7, X2
	VMOVUPS X2, (DI)(AX*1)
	ADDQ $16, AX
	CMPQ AX, R9
	JB lng_out
	ADDQ R9, SI
	ADDQ R9, DX
	ADDQ R9, DI
	ADDQ $4, R12
	DECQ R8
	JNZ lng_row
lng_done:
	VZEROUPPER
	RET

// func adamKernel(n int, w, grad, m, v *float32, p *AdamStep): one Adam
// update of n (a positive multiple of 8) parameters.
TEXT ·adamKernel(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), DI
	MOVQ grad+16(FP), SI
	MOVQ m+24(FP), DX
	MOVQ v+32(FP), BX
	MOVQ p+40(FP), R8
	VBROADCASTSS 0(R8), Y8 // b1
	VBROADCASTSS 4(R8), Y9 // b2
	VBROADCASTSS 8(R8), Y10 // 1-b1
	VBROADCASTSS 12(R8), Y11 // 1-b2
	VBROADCASTSS 16(R8), Y12 // eps
	VBROADCASTSS 20(R8), Y13 // c1
	VBROADCASTSS 24(R8), Y14 // c2
	VBROADCASTSS 28(R8), Y15 // -lr
	VBROADCASTSS 32(R8), Y5 // decay
adam_loop:
	VMOVUPS (SI), Y0
	VMULPS Y10, Y0, Y1
	VMULPS (DX), Y8, Y2
	VADDPS Y2, Y1, Y1 // m
	VMULPS Y0, Y0, Y3
	VMULPS Y11, Y3, Y3
	VMULPS (BX), Y9, Y4
	VADDPS Y4, Y3, Y3 // v
	VMOVUPS Y1, (DX)
	VMOVUPS Y3, (BX)
	VMULPS Y14, Y3, Y3
	VSQRTPS Y3, Y3
	VADDPS Y12, Y3, Y3 // den
	VMULPS Y13, Y1, Y1
	VMULPS Y15, Y1, Y1
	VDIVPS Y3, Y1, Y1
	VMULPS (DI), Y5, Y6 // w*decay
	VADDPS Y6, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ adam_loop
	VZEROUPPER
	RET
