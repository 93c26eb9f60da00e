// AVX2 + FMA kernels: the same arithmetic as the AVX-512 ones (gemm_amd64.s,
// gelu_amd64.s), 8 lanes at a time in 16 YMM registers, written out in full
// (no macros). See gemm.go, gelu.go and avx2_amd64.go.

//go:build amd64 && !purego

#include "textflag.h"
#include "tail_amd64.h"

// func kern6x16(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)
TEXT ·kern6x16(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ai+16(FP), SI
	MOVQ ap+24(FP), R8
	MOVQ b+32(FP), BX
	MOVQ bp+40(FP), R9
	MOVQ c+48(FP), DX
	MOVQ ci+56(FP), R10
	MOVQ bias+64(FP), R12
	LEAQ (SI)(SI*2), DI
	LEAQ (AX)(SI*4), R11
	TESTQ R12, R12
	JZ kern6x16_zero
	VMOVUPS (R12), Y0
	VMOVUPS 32(R12), Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y1, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	VMOVAPS Y0, Y8
	VMOVAPS Y1, Y9
	VMOVAPS Y0, Y10
	VMOVAPS Y1, Y11
	JMP kern6x16_start
kern6x16_zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
kern6x16_start:
	TESTQ CX, CX
	JZ kern6x16_store
kern6x16_loop:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	VBROADCASTSS (AX), Y14
	VFMADD231PS Y14, Y12, Y0
	VFMADD231PS Y14, Y13, Y1
	VBROADCASTSS (AX)(SI*1), Y14
	VFMADD231PS Y14, Y12, Y2
	VFMADD231PS Y14, Y13, Y3
	VBROADCASTSS (AX)(SI*2), Y14
	VFMADD231PS Y14, Y12, Y4
	VFMADD231PS Y14, Y13, Y5
	VBROADCASTSS (AX)(DI*1), Y14
	VFMADD231PS Y14, Y12, Y6
	VFMADD231PS Y14, Y13, Y7
	VBROADCASTSS (R11), Y14
	VFMADD231PS Y14, Y12, Y8
	VFMADD231PS Y14, Y13, Y9
	VBROADCASTSS (R11)(SI*1), Y14
	VFMADD231PS Y14, Y12, Y10
	VFMADD231PS Y14, Y13, Y11
	ADDQ R8, AX
	ADDQ R8, R11
	ADDQ R9, BX
	DECQ CX
	JNZ kern6x16_loop
kern6x16_store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ R10, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ R10, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ R10, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ R10, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ R10, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

// func kern4x16(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32):
// kern6x16 on 4 rows (the rows a 6-row block leaves of a 16-row head).
TEXT ·kern4x16(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ai+16(FP), SI
	MOVQ ap+24(FP), R8
	MOVQ b+32(FP), BX
	MOVQ bp+40(FP), R9
	MOVQ c+48(FP), DX
	MOVQ ci+56(FP), R10
	MOVQ bias+64(FP), R12
	LEAQ (SI)(SI*2), DI
	TESTQ R12, R12
	JZ kern4x16_zero
	VMOVUPS (R12), Y0
	VMOVUPS 32(R12), Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y1, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	JMP kern4x16_start
kern4x16_zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
kern4x16_start:
	TESTQ CX, CX
	JZ kern4x16_store
kern4x16_loop:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	VBROADCASTSS (AX), Y14
	VFMADD231PS Y14, Y12, Y0
	VFMADD231PS Y14, Y13, Y1
	VBROADCASTSS (AX)(SI*1), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y3
	VBROADCASTSS (AX)(SI*2), Y14
	VFMADD231PS Y14, Y12, Y4
	VFMADD231PS Y14, Y13, Y5
	VBROADCASTSS (AX)(DI*1), Y15
	VFMADD231PS Y15, Y12, Y6
	VFMADD231PS Y15, Y13, Y7
	ADDQ R8, AX
	ADDQ R9, BX
	DECQ CX
	JNZ kern4x16_loop
kern4x16_store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ R10, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ R10, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ R10, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// func kern6x16m(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)
TEXT ·kern6x16m(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ai+16(FP), SI
	MOVQ ap+24(FP), R8
	MOVQ b+32(FP), BX
	MOVQ bp+40(FP), R9
	MOVQ c+48(FP), DX
	MOVQ ci+56(FP), R10
	MOVQ bias+64(FP), R12
	MOVQ m1+80(FP), R13
	VMOVDQU (R13), Y15
	LEAQ (SI)(SI*2), DI
	LEAQ (AX)(SI*4), R11
	TESTQ R12, R12
	JZ kern6x16m_zero
	VMOVUPS (R12), Y0
	VMASKMOVPS 32(R12), Y15, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y1, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	VMOVAPS Y0, Y8
	VMOVAPS Y1, Y9
	VMOVAPS Y0, Y10
	VMOVAPS Y1, Y11
	JMP kern6x16m_start
kern6x16m_zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
kern6x16m_start:
	TESTQ CX, CX
	JZ kern6x16m_store
kern6x16m_loop:
	VMOVUPS (BX), Y12
	VMASKMOVPS 32(BX), Y15, Y13
	VBROADCASTSS (AX), Y14
	VFMADD231PS Y14, Y12, Y0
	VFMADD231PS Y14, Y13, Y1
	VBROADCASTSS (AX)(SI*1), Y14
	VFMADD231PS Y14, Y12, Y2
	VFMADD231PS Y14, Y13, Y3
	VBROADCASTSS (AX)(SI*2), Y14
	VFMADD231PS Y14, Y12, Y4
	VFMADD231PS Y14, Y13, Y5
	VBROADCASTSS (AX)(DI*1), Y14
	VFMADD231PS Y14, Y12, Y6
	VFMADD231PS Y14, Y13, Y7
	VBROADCASTSS (R11), Y14
	VFMADD231PS Y14, Y12, Y8
	VFMADD231PS Y14, Y13, Y9
	VBROADCASTSS (R11)(SI*1), Y14
	VFMADD231PS Y14, Y12, Y10
	VFMADD231PS Y14, Y13, Y11
	ADDQ R8, AX
	ADDQ R8, R11
	ADDQ R9, BX
	DECQ CX
	JNZ kern6x16m_loop
kern6x16m_store:
	// Columns 8.. of each row: the lanes of Y15, in STORETAIL pieces.
	VMOVMSKPS Y15, CX
	POPCNTL CX, CX
	VMOVUPS Y0, (DX)
	LEAQ 32(DX), AX
	STORETAIL(Y1, X1, X12, CX, AX, k616m_0a, k616m_0b, k616m_0c)
	ADDQ R10, DX
	VMOVUPS Y2, (DX)
	LEAQ 32(DX), AX
	STORETAIL(Y3, X3, X12, CX, AX, k616m_1a, k616m_1b, k616m_1c)
	ADDQ R10, DX
	VMOVUPS Y4, (DX)
	LEAQ 32(DX), AX
	STORETAIL(Y5, X5, X12, CX, AX, k616m_2a, k616m_2b, k616m_2c)
	ADDQ R10, DX
	VMOVUPS Y6, (DX)
	LEAQ 32(DX), AX
	STORETAIL(Y7, X7, X12, CX, AX, k616m_3a, k616m_3b, k616m_3c)
	ADDQ R10, DX
	VMOVUPS Y8, (DX)
	LEAQ 32(DX), AX
	STORETAIL(Y9, X9, X12, CX, AX, k616m_4a, k616m_4b, k616m_4c)
	ADDQ R10, DX
	VMOVUPS Y10, (DX)
	LEAQ 32(DX), AX
	STORETAIL(Y11, X11, X12, CX, AX, k616m_5a, k616m_5b, k616m_5c)
	VZEROUPPER
	RET

// func kern6x8m(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)
TEXT ·kern6x8m(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ai+16(FP), SI
	MOVQ ap+24(FP), R8
	MOVQ b+32(FP), BX
	MOVQ bp+40(FP), R9
	MOVQ c+48(FP), DX
	MOVQ ci+56(FP), R10
	MOVQ bias+64(FP), R12
	MOVQ m0+72(FP), R13
	VMOVDQU (R13), Y15
	LEAQ (SI)(SI*2), DI
	LEAQ (AX)(SI*4), R11
	TESTQ R12, R12
	JZ kern6x8m_zero
	VMASKMOVPS (R12), Y15, Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y0, Y5
	JMP kern6x8m_start
kern6x8m_zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
kern6x8m_start:
	TESTQ CX, CX
	JZ kern6x8m_store
kern6x8m_loop:
	VMASKMOVPS (BX), Y15, Y12
	VBROADCASTSS (AX), Y14
	VFMADD231PS Y14, Y12, Y0
	VBROADCASTSS (AX)(SI*1), Y14
	VFMADD231PS Y14, Y12, Y1
	VBROADCASTSS (AX)(SI*2), Y14
	VFMADD231PS Y14, Y12, Y2
	VBROADCASTSS (AX)(DI*1), Y14
	VFMADD231PS Y14, Y12, Y3
	VBROADCASTSS (R11), Y14
	VFMADD231PS Y14, Y12, Y4
	VBROADCASTSS (R11)(SI*1), Y14
	VFMADD231PS Y14, Y12, Y5
	ADDQ R8, AX
	ADDQ R8, R11
	ADDQ R9, BX
	DECQ CX
	JNZ kern6x8m_loop
kern6x8m_store:
	// The lanes of Y15: whole rows when all 8 are, else STORETAIL pieces.
	VMOVMSKPS Y15, CX
	POPCNTL CX, CX
	CMPQ CX, $8
	JEQ kern6x8m_whole
	MOVQ DX, AX
	STORETAIL(Y0, X0, X12, CX, AX, k68m_0a, k68m_0b, k68m_0c)
	ADDQ R10, DX
	MOVQ DX, AX
	STORETAIL(Y1, X1, X12, CX, AX, k68m_1a, k68m_1b, k68m_1c)
	ADDQ R10, DX
	MOVQ DX, AX
	STORETAIL(Y2, X2, X12, CX, AX, k68m_2a, k68m_2b, k68m_2c)
	ADDQ R10, DX
	MOVQ DX, AX
	STORETAIL(Y3, X3, X12, CX, AX, k68m_3a, k68m_3b, k68m_3c)
	ADDQ R10, DX
	MOVQ DX, AX
	STORETAIL(Y4, X4, X12, CX, AX, k68m_4a, k68m_4b, k68m_4c)
	ADDQ R10, DX
	MOVQ DX, AX
	STORETAIL(Y5, X5, X12, CX, AX, k68m_5a, k68m_5b, k68m_5c)
	VZEROUPPER
	RET
kern6x8m_whole:
	VMOVUPS Y0, (DX)
	ADDQ R10, DX
	VMOVUPS Y1, (DX)
	ADDQ R10, DX
	VMOVUPS Y2, (DX)
	ADDQ R10, DX
	VMOVUPS Y3, (DX)
	ADDQ R10, DX
	VMOVUPS Y4, (DX)
	ADDQ R10, DX
	VMOVUPS Y5, (DX)
	VZEROUPPER
	RET

// func kern1x16(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)
TEXT ·kern1x16(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ai+16(FP), SI
	MOVQ ap+24(FP), R8
	MOVQ b+32(FP), BX
	MOVQ bp+40(FP), R9
	MOVQ c+48(FP), DX
	MOVQ ci+56(FP), R10
	MOVQ bias+64(FP), R12
	TESTQ R12, R12
	JZ kern1x16_zero
	VMOVUPS (R12), Y0
	VMOVUPS 32(R12), Y1
	JMP kern1x16_start
kern1x16_zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
kern1x16_start:
	TESTQ CX, CX
	JZ kern1x16_store
kern1x16_loop:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	VBROADCASTSS (AX), Y14
	VFMADD231PS Y14, Y12, Y0
	VFMADD231PS Y14, Y13, Y1
	ADDQ R8, AX
	ADDQ R9, BX
	DECQ CX
	JNZ kern1x16_loop
kern1x16_store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET

// func kern1x16m(k int, a *float32, ai, ap int, b *float32, bp int, c *float32, ci int, bias *float32, m0, m1 *int32)
TEXT ·kern1x16m(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ ai+16(FP), SI
	MOVQ ap+24(FP), R8
	MOVQ b+32(FP), BX
	MOVQ bp+40(FP), R9
	MOVQ c+48(FP), DX
	MOVQ ci+56(FP), R10
	MOVQ bias+64(FP), R12
	MOVQ m0+72(FP), R13
	VMOVDQU (R13), Y14
	MOVQ m1+80(FP), R13
	VMOVDQU (R13), Y15
	TESTQ R12, R12
	JZ kern1x16m_zero
	VMASKMOVPS (R12), Y14, Y0
	VMASKMOVPS 32(R12), Y15, Y1
	JMP kern1x16m_start
kern1x16m_zero:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
kern1x16m_start:
	TESTQ CX, CX
	JZ kern1x16m_store
kern1x16m_loop:
	VMASKMOVPS (BX), Y14, Y12
	VMASKMOVPS 32(BX), Y15, Y13
	VBROADCASTSS (AX), Y11
	VFMADD231PS Y11, Y12, Y0
	VFMADD231PS Y11, Y13, Y1
	ADDQ R8, AX
	ADDQ R9, BX
	DECQ CX
	JNZ kern1x16m_loop
kern1x16m_store:
	// w = the lanes of Y14 and Y15 (1..15): whole 8s, then pieces.
	VMOVMSKPS Y14, CX
	POPCNTL CX, CX
	VMOVMSKPS Y15, BX
	POPCNTL BX, BX
	ADDQ BX, CX
	MOVQ DX, AX
	CMPQ CX, $8
	JLT k116m_part
	VMOVUPS Y0, (AX)
	ADDQ $32, AX
	SUBQ $8, CX
	VMOVAPS Y1, Y0
k116m_part:
	STORETAIL(Y0, X0, X12, CX, AX, k116m_a, k116m_b, k116m_c)
	VZEROUPPER
	RET

DATA avx2con<>+0(SB)/4, $0x7fffffff
DATA avx2con<>+4(SB)/4, $0x7fffffff
DATA avx2con<>+8(SB)/4, $0x7fffffff
DATA avx2con<>+12(SB)/4, $0x7fffffff
DATA avx2con<>+16(SB)/4, $0x7fffffff
DATA avx2con<>+20(SB)/4, $0x7fffffff
DATA avx2con<>+24(SB)/4, $0x7fffffff
DATA avx2con<>+28(SB)/4, $0x7fffffff
DATA avx2con<>+32(SB)/4, $0x3eb504f3
DATA avx2con<>+36(SB)/4, $0x3eb504f3
DATA avx2con<>+40(SB)/4, $0x3eb504f3
DATA avx2con<>+44(SB)/4, $0x3eb504f3
DATA avx2con<>+48(SB)/4, $0x3eb504f3
DATA avx2con<>+52(SB)/4, $0x3eb504f3
DATA avx2con<>+56(SB)/4, $0x3eb504f3
DATA avx2con<>+60(SB)/4, $0x3eb504f3
DATA avx2con<>+64(SB)/4, $0x3f800000
DATA avx2con<>+68(SB)/4, $0x3f800000
DATA avx2con<>+72(SB)/4, $0x3f800000
DATA avx2con<>+76(SB)/4, $0x3f800000
DATA avx2con<>+80(SB)/4, $0x3f800000
DATA avx2con<>+84(SB)/4, $0x3f800000
DATA avx2con<>+88(SB)/4, $0x3f800000
DATA avx2con<>+92(SB)/4, $0x3f800000
DATA avx2con<>+96(SB)/4, $0xbf000000
DATA avx2con<>+100(SB)/4, $0xbf000000
DATA avx2con<>+104(SB)/4, $0xbf000000
DATA avx2con<>+108(SB)/4, $0xbf000000
DATA avx2con<>+112(SB)/4, $0xbf000000
DATA avx2con<>+116(SB)/4, $0xbf000000
DATA avx2con<>+120(SB)/4, $0xbf000000
DATA avx2con<>+124(SB)/4, $0xbf000000
DATA avx2con<>+128(SB)/4, $0xc2d00000
DATA avx2con<>+132(SB)/4, $0xc2d00000
DATA avx2con<>+136(SB)/4, $0xc2d00000
DATA avx2con<>+140(SB)/4, $0xc2d00000
DATA avx2con<>+144(SB)/4, $0xc2d00000
DATA avx2con<>+148(SB)/4, $0xc2d00000
DATA avx2con<>+152(SB)/4, $0xc2d00000
DATA avx2con<>+156(SB)/4, $0xc2d00000
DATA avx2con<>+160(SB)/4, $0x3fb8aa3b
DATA avx2con<>+164(SB)/4, $0x3fb8aa3b
DATA avx2con<>+168(SB)/4, $0x3fb8aa3b
DATA avx2con<>+172(SB)/4, $0x3fb8aa3b
DATA avx2con<>+176(SB)/4, $0x3fb8aa3b
DATA avx2con<>+180(SB)/4, $0x3fb8aa3b
DATA avx2con<>+184(SB)/4, $0x3fb8aa3b
DATA avx2con<>+188(SB)/4, $0x3fb8aa3b
DATA avx2con<>+192(SB)/4, $0xbf317200
DATA avx2con<>+196(SB)/4, $0xbf317200
DATA avx2con<>+200(SB)/4, $0xbf317200
DATA avx2con<>+204(SB)/4, $0xbf317200
DATA avx2con<>+208(SB)/4, $0xbf317200
DATA avx2con<>+212(SB)/4, $0xbf317200
DATA avx2con<>+216(SB)/4, $0xbf317200
DATA avx2con<>+220(SB)/4, $0xbf317200
DATA avx2con<>+224(SB)/4, $0xb5bfbe8e
DATA avx2con<>+228(SB)/4, $0xb5bfbe8e
DATA avx2con<>+232(SB)/4, $0xb5bfbe8e
DATA avx2con<>+236(SB)/4, $0xb5bfbe8e
DATA avx2con<>+240(SB)/4, $0xb5bfbe8e
DATA avx2con<>+244(SB)/4, $0xb5bfbe8e
DATA avx2con<>+248(SB)/4, $0xb5bfbe8e
DATA avx2con<>+252(SB)/4, $0xb5bfbe8e
DATA avx2con<>+256(SB)/4, $0x3f000000
DATA avx2con<>+260(SB)/4, $0x3f000000
DATA avx2con<>+264(SB)/4, $0x3f000000
DATA avx2con<>+268(SB)/4, $0x3f000000
DATA avx2con<>+272(SB)/4, $0x3f000000
DATA avx2con<>+276(SB)/4, $0x3f000000
DATA avx2con<>+280(SB)/4, $0x3f000000
DATA avx2con<>+284(SB)/4, $0x3f000000
DATA avx2con<>+288(SB)/4, $0x3ecc422a
DATA avx2con<>+292(SB)/4, $0x3ecc422a
DATA avx2con<>+296(SB)/4, $0x3ecc422a
DATA avx2con<>+300(SB)/4, $0x3ecc422a
DATA avx2con<>+304(SB)/4, $0x3ecc422a
DATA avx2con<>+308(SB)/4, $0x3ecc422a
DATA avx2con<>+312(SB)/4, $0x3ecc422a
DATA avx2con<>+316(SB)/4, $0x3ecc422a
DATA avx2con<>+320(SB)/4, $0x3cdc2b91
DATA avx2con<>+324(SB)/4, $0x3cdc2b91
DATA avx2con<>+328(SB)/4, $0x3cdc2b91
DATA avx2con<>+332(SB)/4, $0x3cdc2b91
DATA avx2con<>+336(SB)/4, $0x3cdc2b91
DATA avx2con<>+340(SB)/4, $0x3cdc2b91
DATA avx2con<>+344(SB)/4, $0x3cdc2b91
DATA avx2con<>+348(SB)/4, $0x3cdc2b91
DATA avx2con<>+352(SB)/4, $0xbe52bc85
DATA avx2con<>+356(SB)/4, $0xbe52bc85
DATA avx2con<>+360(SB)/4, $0xbe52bc85
DATA avx2con<>+364(SB)/4, $0xbe52bc85
DATA avx2con<>+368(SB)/4, $0xbe52bc85
DATA avx2con<>+372(SB)/4, $0xbe52bc85
DATA avx2con<>+376(SB)/4, $0xbe52bc85
DATA avx2con<>+380(SB)/4, $0xbe52bc85
DATA avx2con<>+384(SB)/4, $0x3f21f347
DATA avx2con<>+388(SB)/4, $0x3f21f347
DATA avx2con<>+392(SB)/4, $0x3f21f347
DATA avx2con<>+396(SB)/4, $0x3f21f347
DATA avx2con<>+400(SB)/4, $0x3f21f347
DATA avx2con<>+404(SB)/4, $0x3f21f347
DATA avx2con<>+408(SB)/4, $0x3f21f347
DATA avx2con<>+412(SB)/4, $0x3f21f347
DATA avx2con<>+416(SB)/4, $0xbf75432f
DATA avx2con<>+420(SB)/4, $0xbf75432f
DATA avx2con<>+424(SB)/4, $0xbf75432f
DATA avx2con<>+428(SB)/4, $0xbf75432f
DATA avx2con<>+432(SB)/4, $0xbf75432f
DATA avx2con<>+436(SB)/4, $0xbf75432f
DATA avx2con<>+440(SB)/4, $0xbf75432f
DATA avx2con<>+444(SB)/4, $0xbf75432f
DATA avx2con<>+448(SB)/4, $0x3f2dd792
DATA avx2con<>+452(SB)/4, $0x3f2dd792
DATA avx2con<>+456(SB)/4, $0x3f2dd792
DATA avx2con<>+460(SB)/4, $0x3f2dd792
DATA avx2con<>+464(SB)/4, $0x3f2dd792
DATA avx2con<>+468(SB)/4, $0x3f2dd792
DATA avx2con<>+472(SB)/4, $0x3f2dd792
DATA avx2con<>+476(SB)/4, $0x3f2dd792
DATA avx2con<>+480(SB)/4, $0xbe80438d
DATA avx2con<>+484(SB)/4, $0xbe80438d
DATA avx2con<>+488(SB)/4, $0xbe80438d
DATA avx2con<>+492(SB)/4, $0xbe80438d
DATA avx2con<>+496(SB)/4, $0xbe80438d
DATA avx2con<>+500(SB)/4, $0xbe80438d
DATA avx2con<>+504(SB)/4, $0xbe80438d
DATA avx2con<>+508(SB)/4, $0xbe80438d
DATA avx2con<>+512(SB)/4, $0x3e922260
DATA avx2con<>+516(SB)/4, $0x3e922260
DATA avx2con<>+520(SB)/4, $0x3e922260
DATA avx2con<>+524(SB)/4, $0x3e922260
DATA avx2con<>+528(SB)/4, $0x3e922260
DATA avx2con<>+532(SB)/4, $0x3e922260
DATA avx2con<>+536(SB)/4, $0x3e922260
DATA avx2con<>+540(SB)/4, $0x3e922260
DATA avx2con<>+544(SB)/4, $0x3e6488de
DATA avx2con<>+548(SB)/4, $0x3e6488de
DATA avx2con<>+552(SB)/4, $0x3e6488de
DATA avx2con<>+556(SB)/4, $0x3e6488de
DATA avx2con<>+560(SB)/4, $0x3e6488de
DATA avx2con<>+564(SB)/4, $0x3e6488de
DATA avx2con<>+568(SB)/4, $0x3e6488de
DATA avx2con<>+572(SB)/4, $0x3e6488de
DATA avx2con<>+576(SB)/4, $0x3e921b23
DATA avx2con<>+580(SB)/4, $0x3e921b23
DATA avx2con<>+584(SB)/4, $0x3e921b23
DATA avx2con<>+588(SB)/4, $0x3e921b23
DATA avx2con<>+592(SB)/4, $0x3e921b23
DATA avx2con<>+596(SB)/4, $0x3e921b23
DATA avx2con<>+600(SB)/4, $0x3e921b23
DATA avx2con<>+604(SB)/4, $0x3e921b23
DATA avx2con<>+608(SB)/4, $0x3e904ca2
DATA avx2con<>+612(SB)/4, $0x3e904ca2
DATA avx2con<>+616(SB)/4, $0x3e904ca2
DATA avx2con<>+620(SB)/4, $0x3e904ca2
DATA avx2con<>+624(SB)/4, $0x3e904ca2
DATA avx2con<>+628(SB)/4, $0x3e904ca2
DATA avx2con<>+632(SB)/4, $0x3e904ca2
DATA avx2con<>+636(SB)/4, $0x3e904ca2
DATA avx2con<>+640(SB)/4, $0x3717fccb
DATA avx2con<>+644(SB)/4, $0x3717fccb
DATA avx2con<>+648(SB)/4, $0x3717fccb
DATA avx2con<>+652(SB)/4, $0x3717fccb
DATA avx2con<>+656(SB)/4, $0x3717fccb
DATA avx2con<>+660(SB)/4, $0x3717fccb
DATA avx2con<>+664(SB)/4, $0x3717fccb
DATA avx2con<>+668(SB)/4, $0x3717fccb
DATA avx2con<>+672(SB)/4, $0x39500d01
DATA avx2con<>+676(SB)/4, $0x39500d01
DATA avx2con<>+680(SB)/4, $0x39500d01
DATA avx2con<>+684(SB)/4, $0x39500d01
DATA avx2con<>+688(SB)/4, $0x39500d01
DATA avx2con<>+692(SB)/4, $0x39500d01
DATA avx2con<>+696(SB)/4, $0x39500d01
DATA avx2con<>+700(SB)/4, $0x39500d01
DATA avx2con<>+704(SB)/4, $0x3ab60b61
DATA avx2con<>+708(SB)/4, $0x3ab60b61
DATA avx2con<>+712(SB)/4, $0x3ab60b61
DATA avx2con<>+716(SB)/4, $0x3ab60b61
DATA avx2con<>+720(SB)/4, $0x3ab60b61
DATA avx2con<>+724(SB)/4, $0x3ab60b61
DATA avx2con<>+728(SB)/4, $0x3ab60b61
DATA avx2con<>+732(SB)/4, $0x3ab60b61
DATA avx2con<>+736(SB)/4, $0x3c088889
DATA avx2con<>+740(SB)/4, $0x3c088889
DATA avx2con<>+744(SB)/4, $0x3c088889
DATA avx2con<>+748(SB)/4, $0x3c088889
DATA avx2con<>+752(SB)/4, $0x3c088889
DATA avx2con<>+756(SB)/4, $0x3c088889
DATA avx2con<>+760(SB)/4, $0x3c088889
DATA avx2con<>+764(SB)/4, $0x3c088889
DATA avx2con<>+768(SB)/4, $0x3d2aaaab
DATA avx2con<>+772(SB)/4, $0x3d2aaaab
DATA avx2con<>+776(SB)/4, $0x3d2aaaab
DATA avx2con<>+780(SB)/4, $0x3d2aaaab
DATA avx2con<>+784(SB)/4, $0x3d2aaaab
DATA avx2con<>+788(SB)/4, $0x3d2aaaab
DATA avx2con<>+792(SB)/4, $0x3d2aaaab
DATA avx2con<>+796(SB)/4, $0x3d2aaaab
DATA avx2con<>+800(SB)/4, $0x3e2aaaab
DATA avx2con<>+804(SB)/4, $0x3e2aaaab
DATA avx2con<>+808(SB)/4, $0x3e2aaaab
DATA avx2con<>+812(SB)/4, $0x3e2aaaab
DATA avx2con<>+816(SB)/4, $0x3e2aaaab
DATA avx2con<>+820(SB)/4, $0x3e2aaaab
DATA avx2con<>+824(SB)/4, $0x3e2aaaab
DATA avx2con<>+828(SB)/4, $0x3e2aaaab
DATA avx2con<>+832(SB)/4, $0x3f000000
DATA avx2con<>+836(SB)/4, $0x3f000000
DATA avx2con<>+840(SB)/4, $0x3f000000
DATA avx2con<>+844(SB)/4, $0x3f000000
DATA avx2con<>+848(SB)/4, $0x3f000000
DATA avx2con<>+852(SB)/4, $0x3f000000
DATA avx2con<>+856(SB)/4, $0x3f000000
DATA avx2con<>+860(SB)/4, $0x3f000000
DATA avx2con<>+864(SB)/4, $0x3f800000
DATA avx2con<>+868(SB)/4, $0x3f800000
DATA avx2con<>+872(SB)/4, $0x3f800000
DATA avx2con<>+876(SB)/4, $0x3f800000
DATA avx2con<>+880(SB)/4, $0x3f800000
DATA avx2con<>+884(SB)/4, $0x3f800000
DATA avx2con<>+888(SB)/4, $0x3f800000
DATA avx2con<>+892(SB)/4, $0x3f800000
DATA avx2con<>+896(SB)/4, $0x3f800000
DATA avx2con<>+900(SB)/4, $0x3f800000
DATA avx2con<>+904(SB)/4, $0x3f800000
DATA avx2con<>+908(SB)/4, $0x3f800000
DATA avx2con<>+912(SB)/4, $0x3f800000
DATA avx2con<>+916(SB)/4, $0x3f800000
DATA avx2con<>+920(SB)/4, $0x3f800000
DATA avx2con<>+924(SB)/4, $0x3f800000
DATA avx2con<>+928(SB)/4, $0x43000000
DATA avx2con<>+932(SB)/4, $0x43000000
DATA avx2con<>+936(SB)/4, $0x43000000
DATA avx2con<>+940(SB)/4, $0x43000000
DATA avx2con<>+944(SB)/4, $0x43000000
DATA avx2con<>+948(SB)/4, $0x43000000
DATA avx2con<>+952(SB)/4, $0x43000000
DATA avx2con<>+956(SB)/4, $0x43000000
DATA avx2con<>+960(SB)/4, $0x0000007f
DATA avx2con<>+964(SB)/4, $0x0000007f
DATA avx2con<>+968(SB)/4, $0x0000007f
DATA avx2con<>+972(SB)/4, $0x0000007f
DATA avx2con<>+976(SB)/4, $0x0000007f
DATA avx2con<>+980(SB)/4, $0x0000007f
DATA avx2con<>+984(SB)/4, $0x0000007f
DATA avx2con<>+988(SB)/4, $0x0000007f
GLOBL avx2con<>(SB), RODATA|NOPTR, $992

// func geluKernelAVX2(n int, x, y, d *float32): n a positive multiple of 8.
TEXT ·geluKernelAVX2(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ d+24(FP), R8
	VMOVUPS avx2con<>+64(SB), Y14
	VXORPS Y15, Y15, Y15
avx2gelu_loop:
	VMOVUPS (SI), Y0
	VANDPS avx2con<>+0(SB), Y0, Y1
	VMULPS Y0, Y0, Y2
	VMULPS avx2con<>+96(SB), Y2, Y2
	VMAXPS avx2con<>+128(SB), Y2, Y2
	VMULPS avx2con<>+160(SB), Y2, Y3
	VROUNDPS $0, Y3, Y3
	VFMADD231PS avx2con<>+192(SB), Y3, Y2
	VFMADD231PS avx2con<>+224(SB), Y3, Y2
	VMOVUPS avx2con<>+672(SB), Y4
	VFMADD213PS avx2con<>+704(SB), Y2, Y4
	VFMADD213PS avx2con<>+736(SB), Y2, Y4
	VFMADD213PS avx2con<>+768(SB), Y2, Y4
	VFMADD213PS avx2con<>+800(SB), Y2, Y4
	VFMADD213PS avx2con<>+832(SB), Y2, Y4
	VFMADD213PS avx2con<>+864(SB), Y2, Y4
	VFMADD213PS avx2con<>+896(SB), Y2, Y4
	// Y4 *= 2^n as VSCALEFPS does (-150 <= n <= 185): by 2^(n>>1), exact,
	// then by 2^(n-(n>>1)), rounding once.
	VCVTPS2DQ Y3, Y10
	VPSRAD $1, Y10, Y11
	VPSUBD Y11, Y10, Y10
	VPADDD avx2con<>+960(SB), Y11, Y11
	VPSLLD $23, Y11, Y11
	VPADDD avx2con<>+960(SB), Y10, Y10
	VPSLLD $23, Y10, Y10
	VMULPS Y11, Y4, Y4
	VMULPS Y10, Y4, Y4
	VMOVAPS Y14, Y5
	VFMADD231PS avx2con<>+32(SB), Y1, Y5
	VDIVPS Y5, Y14, Y5
	VMOVUPS avx2con<>+320(SB), Y6
	VFMADD213PS avx2con<>+352(SB), Y5, Y6
	VFMADD213PS avx2con<>+384(SB), Y5, Y6
	VFMADD213PS avx2con<>+416(SB), Y5, Y6
	VFMADD213PS avx2con<>+448(SB), Y5, Y6
	VFMADD213PS avx2con<>+480(SB), Y5, Y6
	VFMADD213PS avx2con<>+512(SB), Y5, Y6
	VFMADD213PS avx2con<>+544(SB), Y5, Y6
	VFMADD213PS avx2con<>+576(SB), Y5, Y6
	VFMADD213PS avx2con<>+608(SB), Y5, Y6
	VFMADD213PS avx2con<>+640(SB), Y5, Y6
	VMULPS Y4, Y6, Y6
	VMULPS avx2con<>+256(SB), Y6, Y6
	VSUBPS Y6, Y14, Y7
	VCMPPS $0x1e, Y15, Y0, Y9
	VBLENDVPS Y9, Y7, Y6, Y6
	VMULPS avx2con<>+288(SB), Y4, Y4
	VMULPS Y6, Y0, Y8
	VFMADD231PS Y4, Y0, Y6
	VMOVUPS Y8, (DI)
	VMOVUPS Y6, (R8)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	SUBQ $8, CX
	JNZ avx2gelu_loop
	VZEROUPPER
	RET

// func expKernelAVX2(n int, x *float32): x = exp(min(max(x, -104), 128)) in
// place, n a positive multiple of 8; the exponential of the GELU kernel.
TEXT ·expKernelAVX2(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
avx2exp_loop:
	VMOVUPS (SI), Y2
	VMAXPS avx2con<>+128(SB), Y2, Y2
	VMINPS avx2con<>+928(SB), Y2, Y2
	VMULPS avx2con<>+160(SB), Y2, Y3
	VROUNDPS $0, Y3, Y3
	VFMADD231PS avx2con<>+192(SB), Y3, Y2
	VFMADD231PS avx2con<>+224(SB), Y3, Y2
	VMOVUPS avx2con<>+672(SB), Y4
	VFMADD213PS avx2con<>+704(SB), Y2, Y4
	VFMADD213PS avx2con<>+736(SB), Y2, Y4
	VFMADD213PS avx2con<>+768(SB), Y2, Y4
	VFMADD213PS avx2con<>+800(SB), Y2, Y4
	VFMADD213PS avx2con<>+832(SB), Y2, Y4
	VFMADD213PS avx2con<>+864(SB), Y2, Y4
	VFMADD213PS avx2con<>+896(SB), Y2, Y4
	// Y4 *= 2^n as VSCALEFPS does (-150 <= n <= 185): by 2^(n>>1), exact,
	// then by 2^(n-(n>>1)), rounding once.
	VCVTPS2DQ Y3, Y10
	VPSRAD $1, Y10, Y11
	VPSUBD Y11, Y10, Y10
	VPADDD avx2con<>+960(SB), Y11, Y11
	VPSLLD $23, Y11, Y11
	VPADDD avx2con<>+960(SB), Y10, Y10
	VPSLLD $23, Y10, Y10
	VMULPS Y11, Y4, Y4
	VMULPS Y10, Y4, Y4
	VMOVUPS Y4, (SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ avx2exp_loop
	VZEROUPPER
	RET
