// AVX2 column kernels of cols.go, used on the avx2 and avx512 paths: the
// same float32 operations, in the same order, as the per-row loops there.
// ColDot's products are separate VMULPS (never FMA); ColDot and ColSum
// keep each column's sum in a register while the rows go by in order,
// 32 columns (four YMM sums) at a time, then 8.

//go:build amd64 && !purego

#include "textflag.h"

// COLARGS loads (rows, n, ld) into R8, CX, R9 (ld in bytes) and out into DI.
#define COLARGS MOVQ rows+0(FP), R8; MOVQ n+8(FP), CX; MOVQ ld+16(FP), R9; SHLQ $2, R9; MOVQ out+24(FP), DI

// func colScaleKernel(rows, n, ld int, out, x, v *float32):
// out[r*ld+j] = x[r*ld+j] * v[j] for j < n.
TEXT ·colScaleKernel(SB), NOSPLIT, $0-48
	COLARGS
	MOVQ x+32(FP), SI
	MOVQ v+40(FP), DX
cs_row:
	XORQ AX, AX
	MOVQ CX, BX
cs_col:
	VMOVUPS (SI)(AX*1), Y0
	VMULPS (DX)(AX*1), Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	SUBQ $8, BX
	JNZ cs_col
	ADDQ R9, SI
	ADDQ R9, DI
	DECQ R8
	JNZ cs_row
	VZEROUPPER
	RET

// func colDotKernel(rows, n, ld int, out, a, b *float32):
// out[j] = sum over r in order of a[r*ld+j] * b[r*ld+j], from 0.
TEXT ·colDotKernel(SB), NOSPLIT, $0-48
	COLARGS
	MOVQ a+32(FP), SI
	MOVQ b+40(FP), DX
cd_block32:
	CMPQ CX, $32
	JB cd_block8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ R8, BX
cd_rows32:
	VMOVUPS (R10), Y4
	VMULPS (R11), Y4, Y4
	VADDPS Y4, Y0, Y0
	VMOVUPS 32(R10), Y5
	VMULPS 32(R11), Y5, Y5
	VADDPS Y5, Y1, Y1
	VMOVUPS 64(R10), Y6
	VMULPS 64(R11), Y6, Y6
	VADDPS Y6, Y2, Y2
	VMOVUPS 96(R10), Y7
	VMULPS 96(R11), Y7, Y7
	VADDPS Y7, Y3, Y3
	ADDQ R9, R10
	ADDQ R9, R11
	DECQ BX
	JNZ cd_rows32
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP cd_block32
cd_block8:
	TESTQ CX, CX
	JZ cd_done
	VXORPS Y0, Y0, Y0
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ R8, BX
cd_rows8:
	VMOVUPS (R10), Y4
	VMULPS (R11), Y4, Y4
	VADDPS Y4, Y0, Y0
	ADDQ R9, R10
	ADDQ R9, R11
	DECQ BX
	JNZ cd_rows8
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP cd_block8
cd_done:
	VZEROUPPER
	RET

// func colSumKernel(rows, n, ld int, out, x *float32):
// out[j] = sum over r in order of x[r*ld+j], from 0.
TEXT ·colSumKernel(SB), NOSPLIT, $0-40
	COLARGS
	MOVQ x+32(FP), SI
ck_block32:
	CMPQ CX, $32
	JB ck_block8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ SI, R10
	MOVQ R8, BX
ck_rows32:
	VADDPS (R10), Y0, Y0
	VADDPS 32(R10), Y1, Y1
	VADDPS 64(R10), Y2, Y2
	VADDPS 96(R10), Y3, Y3
	ADDQ R9, R10
	DECQ BX
	JNZ ck_rows32
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP ck_block32
ck_block8:
	TESTQ CX, CX
	JZ ck_done
	VXORPS Y0, Y0, Y0
	MOVQ SI, R10
	MOVQ R8, BX
ck_rows8:
	VADDPS (R10), Y0, Y0
	ADDQ R9, R10
	DECQ BX
	JNZ ck_rows8
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP ck_block8
ck_done:
	VZEROUPPER
	RET
