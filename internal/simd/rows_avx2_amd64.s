// AVX2 kernels of rows.go: one row at a time, 8 lanes a chunk. A chunk
// that the row's visible keys or its end cut short takes a lane mask
// (lane l < n, a compare against 0..7): inside the row, masked lanes are
// computed and then blended out or zeroed, and only a chunk that runs
// past the row's end loads with VMASKMOVPS and stores its lanes in pieces
// (STORETAIL: masked stores are microcoded on Zen 3 and 4), so nothing
// outside the block is touched. The float32 operations are rows.go's, entry by
// entry; the row's max is an integer max over a key (see KEY) that orders
// floats as Go's max does, so it is the portable loop's to the bit.

//go:build amd64 && !purego

#include "textflag.h"
#include "tail_amd64.h"

DATA rows2con<>+0(SB)/4, $0
DATA rows2con<>+4(SB)/4, $1
DATA rows2con<>+8(SB)/4, $2
DATA rows2con<>+12(SB)/4, $3
DATA rows2con<>+16(SB)/4, $4
DATA rows2con<>+20(SB)/4, $5
DATA rows2con<>+24(SB)/4, $6
DATA rows2con<>+28(SB)/4, $7
DATA rows2con<>+32(SB)/4, $0xff800000 // -Inf
DATA rows2con<>+36(SB)/4, $0x807fffff // KEY(-Inf)
DATA rows2con<>+40(SB)/4, $0x7fc00000 // NaN
GLOBL rows2con<>(SB), RODATA|NOPTR, $44

// LANES sets dst to the lanes l < CX (none if CX <= 0): CX against 0..7
// in Y14. Clobbers X13.
#define LANES(dst) \
	VMOVQ CX, X13; \
	VPBROADCASTD X13, dst; \
	VPCMPGTD Y14, dst, dst

// KEY maps float bits v to an int32 whose signed order is the floats'
// order with -0 below +0 (negative floats get their magnitude bits
// flipped): an integer max over keys is Go's max, whatever the order. It
// is its own inverse.
#define KEY(v, dst) \
	VPSRAD $31, v, dst; \
	VPSRLD $1, dst, dst; \
	VPXOR v, dst, dst

// MAXKEY folds the 8 floats of v into Y0 (the max so far, as keys) and
// Y1 (the lanes that saw a NaN). Clobbers Y5.
#define MAXKEY(v) \
	VCMPPS $3, v, v, Y5; \
	VORPS Y5, Y1, Y1; \
	KEY(v, Y5); \
	VPMAXSD Y5, Y0, Y0

// ADDCOL adds column c to the sums (Y9) in the lanes whose row sees it
// (Y10 > Y11), and moves Y11 to the next column. Clobbers Y3.
#define ADDCOL(c) \
	VPCMPGTD Y11, Y10, Y3; \
	VANDPS Y3, c, c; \
	VADDPS c, Y9, Y9; \
	VPADDD Y12, Y11, Y11

// VISIBLE sets R12 to how many keys the row sees: R11+1 (causal, R10 != 0)
// or t (R9).
#define VISIBLE \
	MOVQ R9, R12; \
	LEAQ 1(R11), AX; \
	TESTQ R10, R10; \
	CMOVQNE AX, R12

// NEXTROW moves R11 (the query) on, back to 0 after t-1, and counts R8
// (rows left) down; flags from DECQ R8.
#define NEXTROW \
	INCQ R11; \
	XORL AX, AX; \
	CMPQ R11, R9; \
	CMOVQEQ AX, R11; \
	DECQ R8

// func scaleSubMaxAVX2(rows, t, causal int, scale float32, x *float32)
TEXT ·scaleSubMaxAVX2(SB), NOSPLIT, $0-40
	MOVQ rows+0(FP), R8
	MOVQ t+8(FP), R9
	MOVQ causal+16(FP), R10
	VBROADCASTSS scale+24(FP), Y15
	MOVQ x+32(FP), SI
	VMOVDQU rows2con<>+0(SB), Y14
	VBROADCASTSS rows2con<>+32(SB), Y12
	XORQ R11, R11
ssm_row:
	VISIBLE
	// Pass 1: scale the visible entries, keep their max per lane (Y0)
	// and whether any is NaN (Y1).
	VPBROADCASTD rows2con<>+36(SB), Y0
	VPXOR Y1, Y1, Y1
	XORQ R13, R13
	MOVQ SI, DI
ssm_scale:
	MOVQ R12, CX
	SUBQ R13, CX
	CMPQ CX, $8
	JLT ssm_scale_part
	VMOVUPS (DI), Y2
	VMULPS Y15, Y2, Y2
	VMOVUPS Y2, (DI)
	MAXKEY(Y2)
	ADDQ $32, DI
	ADDQ $8, R13
	CMPQ R13, R12
	JLT ssm_scale
	JMP ssm_max
ssm_scale_part:
	// The last visible chunk, lanes Y3: inside the row the masked lanes
	// are stored back as they were; past its end they are not touched.
	LANES(Y3)
	LEAQ 8(R13), AX
	CMPQ AX, R9
	JGT ssm_scale_end
	VMOVUPS (DI), Y4
	VMULPS Y15, Y4, Y2
	VBLENDVPS Y3, Y2, Y4, Y4
	VMOVUPS Y4, (DI)
	JMP ssm_scale_max
ssm_scale_end:
	VMASKMOVPS (DI), Y3, Y2
	VMULPS Y15, Y2, Y2
	MOVQ DI, AX
	STORETAIL(Y2, X2, X4, CX, AX, ssm_st4, ssm_st2, ssm_st1)
ssm_scale_max:
	VBLENDVPS Y3, Y2, Y12, Y2
	MAXKEY(Y2)
ssm_max:
	// The row's max, in every lane of Y0 (NaN if any entry was).
	VEXTRACTI128 $1, Y0, X2
	VPMAXSD X2, X0, X0
	VPSHUFD $0x4e, X0, X2
	VPMAXSD X2, X0, X0
	VPSHUFD $0xb1, X0, X2
	VPMAXSD X2, X0, X0
	KEY(X0, X2)
	VPBROADCASTD X2, Y0
	VMOVMSKPS Y1, AX
	TESTL AX, AX
	JZ ssm_nonan
	VBROADCASTSS rows2con<>+40(SB), Y0
ssm_nonan:
	// Pass 2: subtract it.
	XORQ R13, R13
	MOVQ SI, DI
ssm_sub:
	MOVQ R12, CX
	SUBQ R13, CX
	CMPQ CX, $8
	JLT ssm_sub_part
	VMOVUPS (DI), Y2
	VSUBPS Y0, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	ADDQ $8, R13
	CMPQ R13, R12
	JLT ssm_sub
	JMP ssm_next
ssm_sub_part:
	LANES(Y3)
	LEAQ 8(R13), AX
	CMPQ AX, R9
	JGT ssm_sub_end
	VMOVUPS (DI), Y4
	VSUBPS Y0, Y4, Y2
	VBLENDVPS Y3, Y2, Y4, Y4
	VMOVUPS Y4, (DI)
	JMP ssm_next
ssm_sub_end:
	VMASKMOVPS (DI), Y3, Y2
	VSUBPS Y0, Y2, Y2
	MOVQ DI, AX
	STORETAIL(Y2, X2, X4, CX, AX, ssm_su4, ssm_su2, ssm_su1)
ssm_next:
	LEAQ (SI)(R9*4), SI
	NEXTROW
	JNZ ssm_row
	VZEROUPPER
	RET

// func divRowsAVX2(rows, t, causal int, x, sums *float32)
TEXT ·divRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ rows+0(FP), R8
	MOVQ t+8(FP), R9
	MOVQ causal+16(FP), R10
	MOVQ x+24(FP), SI
	MOVQ sums+32(FP), DX
	VMOVDQU rows2con<>+0(SB), Y14
	XORQ R11, R11
div_row:
	VISIBLE
	VBROADCASTSS (DX), Y0
	XORQ R13, R13
	MOVQ SI, DI
div_chunk:
	// Y3: the visible lanes; the rest of the row becomes +0.
	MOVQ R12, CX
	SUBQ R13, CX
	LANES(Y3)
	MOVQ R9, CX
	SUBQ R13, CX
	CMPQ CX, $8
	JLT div_end
	VMOVUPS (DI), Y1
	VDIVPS Y0, Y1, Y1
	VANDPS Y3, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ $8, R13
	CMPQ R13, R9
	JLT div_chunk
	JMP div_next
div_end:
	LANES(Y4)
	VMASKMOVPS (DI), Y4, Y1
	VDIVPS Y0, Y1, Y1
	VANDPS Y3, Y1, Y1
	MOVQ DI, AX
	STORETAIL(Y1, X1, X2, CX, AX, div_st4, div_st2, div_st1)
div_next:
	ADDQ $4, DX
	LEAQ (SI)(R9*4), SI
	NEXTROW
	JNZ div_row
	VZEROUPPER
	RET

// func scoreGradAVX2(rows, t, causal int, scale float32, o, p, dp, rs *float32)
TEXT ·scoreGradAVX2(SB), NOSPLIT, $0-64
	MOVQ rows+0(FP), R8
	MOVQ t+8(FP), R9
	MOVQ causal+16(FP), R10
	VBROADCASTSS scale+24(FP), Y15
	MOVQ o+32(FP), DI
	MOVQ p+40(FP), SI
	MOVQ dp+48(FP), R14
	MOVQ rs+56(FP), DX
	VMOVDQU rows2con<>+0(SB), Y14
	XORQ R11, R11
sg_row:
	VISIBLE
	VBROADCASTSS (DX), Y0
	XORQ R13, R13
sg_chunk:
	MOVQ R12, CX
	SUBQ R13, CX
	LANES(Y3)
	MOVQ R9, CX
	SUBQ R13, CX
	CMPQ CX, $8
	JLT sg_end
	VMOVUPS (SI)(R13*4), Y1
	VMOVUPS (R14)(R13*4), Y2
	VSUBPS Y0, Y2, Y2
	VMULPS Y2, Y1, Y2
	VMULPS Y15, Y2, Y2
	VANDPS Y3, Y2, Y2
	VMOVUPS Y2, (DI)(R13*4)
	ADDQ $8, R13
	CMPQ R13, R9
	JLT sg_chunk
	JMP sg_next
sg_end:
	LANES(Y4)
	VMASKMOVPS (SI)(R13*4), Y4, Y1
	VMASKMOVPS (R14)(R13*4), Y4, Y2
	VSUBPS Y0, Y2, Y2
	VMULPS Y2, Y1, Y2
	VMULPS Y15, Y2, Y2
	VANDPS Y3, Y2, Y2
	LEAQ (DI)(R13*4), AX
	STORETAIL(Y2, X2, X5, CX, AX, sg_st4, sg_st2, sg_st1)
sg_next:
	ADDQ $4, DX
	LEAQ (DI)(R9*4), DI
	LEAQ (SI)(R9*4), SI
	LEAQ (R14)(R9*4), R14
	NEXTROW
	JNZ sg_row
	VZEROUPPER
	RET

// func transposeAVX2(t, dh int, x *float32, ld int, dst *float32): 8x8
// blocks transposed in registers (unpack, shuffle, swap halves), then the
// rows (j past the last whole block) and columns (d past it) left over, one
// float at a time.
TEXT ·transposeAVX2(SB), NOSPLIT, $0-40
	MOVQ t+0(FP), R9
	MOVQ dh+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ ld+24(FP), R10
	MOVQ dst+32(FP), DI
	SHLQ $2, R10           // ld, in bytes
	LEAQ (R10)(R10*2), R11 // 3 ld
	MOVQ R9, R12
	SHLQ $2, R12           // t, in bytes: dst's row stride
	LEAQ (R12)(R12*2), R13 // 3 t
	MOVQ R9, BX
	ANDQ $-8, BX           // rows in whole blocks
	MOVQ R8, CX
	ANDQ $-8, CX           // columns in whole blocks
	XORQ DX, DX            // d0
tr_dblock:
	CMPQ DX, CX
	JGE tr_edges
	XORQ AX, AX            // j0
tr_jblock:
	CMPQ AX, BX
	JGE tr_dnext
	// Rows j0..j0+7 of x from column d0.
	MOVQ AX, R14
	IMULQ R10, R14
	ADDQ SI, R14
	LEAQ (R14)(DX*4), R14
	VMOVUPS (R14), Y0
	VMOVUPS (R14)(R10*1), Y1
	VMOVUPS (R14)(R10*2), Y2
	VMOVUPS (R14)(R11*1), Y3
	LEAQ (R14)(R10*4), R14
	VMOVUPS (R14), Y4
	VMOVUPS (R14)(R10*1), Y5
	VMOVUPS (R14)(R10*2), Y6
	VMOVUPS (R14)(R11*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xee, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xee, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xee, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xee, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	// dst's rows d0..d0+7 from column j0.
	MOVQ DX, R14
	IMULQ R12, R14
	ADDQ DI, R14
	LEAQ (R14)(AX*4), R14
	VMOVUPS Y8, (R14)
	VMOVUPS Y9, (R14)(R12*1)
	VMOVUPS Y10, (R14)(R12*2)
	VMOVUPS Y11, (R14)(R13*1)
	LEAQ (R14)(R12*4), R14
	VMOVUPS Y12, (R14)
	VMOVUPS Y13, (R14)(R12*1)
	VMOVUPS Y14, (R14)(R12*2)
	VMOVUPS Y15, (R14)(R13*1)
	ADDQ $8, AX
	JMP tr_jblock
tr_dnext:
	ADDQ $8, DX
	JMP tr_dblock
tr_edges:
	// For each column d: from j = BX (d in whole blocks) or 0.
	XORQ DX, DX
tr_ecol:
	CMPQ DX, R8
	JGE tr_done
	MOVQ BX, AX
	XORQ R11, R11
	CMPQ DX, CX
	CMOVQGE R11, AX
	MOVQ AX, R14           // &x[j*ld+d]
	IMULQ R10, R14
	ADDQ SI, R14
	LEAQ (R14)(DX*4), R14
	MOVQ DX, R13           // &dst[d*t]
	IMULQ R12, R13
	ADDQ DI, R13
tr_erow:
	CMPQ AX, R9
	JGE tr_enext
	MOVL (R14), R11
	MOVL R11, (R13)(AX*4)
	ADDQ R10, R14
	INCQ AX
	JMP tr_erow
tr_enext:
	INCQ DX
	JMP tr_ecol
tr_done:
	VZEROUPPER
	RET

// func rowSumsAVX2(groups, t, causal int, a, b, sums *float32): RowSums
// for 8*groups rows, t >= 8, eight rows at a time, one per lane. Each
// 8x8 chunk of the rows (their products with b's, rounded first, when b is
// not nil) is transposed in registers so that its columns can be added in
// order into the eight sums: each lane adds its row's entries from left
// to right, as the portable loop does. An entry a row does not see is
// added as +0, which leaves a sum that started at +0 as it was.
TEXT ·rowSumsAVX2(SB), NOSPLIT, $0-48
	MOVQ groups+0(FP), R8
	MOVQ t+8(FP), R9
	MOVQ a+24(FP), SI
	MOVQ b+32(FP), DI
	MOVQ sums+40(FP), DX
	MOVQ DI, R10
	SUBQ SI, R10           // b's offset from a
	MOVQ R9, R12
	SHLQ $2, R12           // a row, in bytes
	LEAQ (R12)(R12*2), R13 // 3 rows
	VMOVDQU rows2con<>+0(SB), Y14
	VPCMPEQD Y12, Y12, Y12
	VPSRLD $31, Y12, Y12   // 1 in every lane
	XORQ R11, R11          // the group's first query
rs_group:
	// Y10: how many keys each lane's row sees; BX: the most any sees.
	VMOVQ R9, X8
	VPBROADCASTD X8, Y15
	MOVQ R9, BX
	VMOVDQA Y15, Y10
	CMPQ causal+16(FP), $0
	JEQ rs_vis
	VMOVQ R11, X8
	VPBROADCASTD X8, Y10
	VPADDD Y14, Y10, Y10   // queries q0+l
	VPCMPGTD Y10, Y15, Y8
	VPANDN Y15, Y8, Y8
	VPSUBD Y8, Y10, Y10    // back to 0 past t-1 (t >= 8: once at most)
	VPADDD Y12, Y10, Y10
	LEAQ 8(R11), AX
	CMPQ AX, R9
	CMOVQLT AX, BX
rs_vis:
	VXORPS Y9, Y9, Y9      // the sums
	XORQ CX, CX            // j
rs_chunk:
	// Y13: the chunk's lanes inside the row; rows l into Y0..Y7.
	MOVQ R9, AX
	SUBQ CX, AX
	VMOVQ AX, X8
	VPBROADCASTD X8, Y13
	VPCMPGTD Y14, Y13, Y13
	LEAQ (SI)(CX*4), R14
	VMASKMOVPS (R14), Y13, Y0
	VMASKMOVPS (R14)(R12*1), Y13, Y1
	VMASKMOVPS (R14)(R12*2), Y13, Y2
	VMASKMOVPS (R14)(R13*1), Y13, Y3
	LEAQ (R14)(R12*4), AX
	VMASKMOVPS (AX), Y13, Y4
	VMASKMOVPS (AX)(R12*1), Y13, Y5
	VMASKMOVPS (AX)(R12*2), Y13, Y6
	VMASKMOVPS (AX)(R13*1), Y13, Y7
	TESTQ DI, DI
	JZ rs_sum
	ADDQ R10, R14
	VMASKMOVPS (R14), Y13, Y8
	VMULPS Y8, Y0, Y0
	VMASKMOVPS (R14)(R12*1), Y13, Y8
	VMULPS Y8, Y1, Y1
	VMASKMOVPS (R14)(R12*2), Y13, Y8
	VMULPS Y8, Y2, Y2
	VMASKMOVPS (R14)(R13*1), Y13, Y8
	VMULPS Y8, Y3, Y3
	LEAQ (R14)(R12*4), AX
	VMASKMOVPS (AX), Y13, Y8
	VMULPS Y8, Y4, Y4
	VMASKMOVPS (AX)(R12*1), Y13, Y8
	VMULPS Y8, Y5, Y5
	VMASKMOVPS (AX)(R12*2), Y13, Y8
	VMULPS Y8, Y6, Y6
	VMASKMOVPS (AX)(R13*1), Y13, Y8
	VMULPS Y8, Y7, Y7
rs_sum:
	// Transpose, one spare register a step: columns j..j+7 end in Y5,
	// Y6, Y0, Y8, Y1, Y4, Y2, Y7.
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y1
	VUNPCKLPS Y3, Y2, Y0
	VUNPCKHPS Y3, Y2, Y3
	VUNPCKLPS Y5, Y4, Y2
	VUNPCKHPS Y5, Y4, Y5
	VUNPCKLPS Y7, Y6, Y4
	VUNPCKHPS Y7, Y6, Y7
	VSHUFPS $0x44, Y0, Y8, Y6
	VSHUFPS $0xee, Y0, Y8, Y0
	VSHUFPS $0x44, Y3, Y1, Y8
	VSHUFPS $0xee, Y3, Y1, Y3
	VSHUFPS $0x44, Y4, Y2, Y1
	VSHUFPS $0xee, Y4, Y2, Y4
	VSHUFPS $0x44, Y7, Y5, Y2
	VSHUFPS $0xee, Y7, Y5, Y7
	VPERM2F128 $0x20, Y1, Y6, Y5
	VPERM2F128 $0x31, Y1, Y6, Y1
	VPERM2F128 $0x20, Y4, Y0, Y6
	VPERM2F128 $0x31, Y4, Y0, Y4
	VPERM2F128 $0x20, Y2, Y8, Y0
	VPERM2F128 $0x31, Y2, Y8, Y2
	VPERM2F128 $0x20, Y7, Y3, Y8
	VPERM2F128 $0x31, Y7, Y3, Y7
	// Add column j+k where the lane's row sees it (Y11: j+k).
	VMOVQ CX, X3
	VPBROADCASTD X3, Y11
	ADDCOL(Y5)
	ADDCOL(Y6)
	ADDCOL(Y0)
	ADDCOL(Y8)
	ADDCOL(Y1)
	ADDCOL(Y4)
	ADDCOL(Y2)
	ADDCOL(Y7)
	ADDQ $8, CX
	CMPQ CX, BX
	JLT rs_chunk
	VMOVUPS Y9, (DX)
	ADDQ $32, DX
	LEAQ (SI)(R12*8), SI
	ADDQ $8, R11
	MOVQ R11, AX
	SUBQ R9, AX
	CMPQ R11, R9
	CMOVQGE AX, R11
	DECQ R8
	JNZ rs_group
	VZEROUPPER
	RET
