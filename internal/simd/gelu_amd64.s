// AVX-512 GELU: y = x Phi(x) and d = Phi(x) + x phi(x), 16 lanes at a
// time, in float32. The algorithm (gelu.go, geluGo) is
//   t = max(-x*x/2, -104); e = exp(t) = 2^n p(r), n = round(t log2 e),
//   r = t - n ln2 (two parts), p the Taylor polynomial of degree 7;
//   u = 1/(1 + |x| 0.5/sqrt2); q = Q(u), a degree-10 fit of erfcx(|x|/sqrt2);
//   h = e q / 2 = Phi(-|x|); Phi = 1 - h for x > 0, else h;
//   phi = e / sqrt(2 pi); y = x Phi; d = x phi + Phi.

//go:build amd64 && !purego

#include "textflag.h"

DATA gelucon<>+0(SB)/4, $0x7fffffff
DATA gelucon<>+4(SB)/4, $0x3eb504f3
DATA gelucon<>+8(SB)/4, $0x3f800000
DATA gelucon<>+12(SB)/4, $0xbf000000
DATA gelucon<>+16(SB)/4, $0xc2d00000
DATA gelucon<>+20(SB)/4, $0x3fb8aa3b
DATA gelucon<>+24(SB)/4, $0xbf317200
DATA gelucon<>+28(SB)/4, $0xb5bfbe8e
DATA gelucon<>+32(SB)/4, $0x3f000000
DATA gelucon<>+36(SB)/4, $0x3ecc422a
DATA gelucon<>+40(SB)/4, $0x3cdc2b91
DATA gelucon<>+44(SB)/4, $0xbe52bc85
DATA gelucon<>+48(SB)/4, $0x3f21f347
DATA gelucon<>+52(SB)/4, $0xbf75432f
DATA gelucon<>+56(SB)/4, $0x3f2dd792
DATA gelucon<>+60(SB)/4, $0xbe80438d
DATA gelucon<>+64(SB)/4, $0x3e922260
DATA gelucon<>+68(SB)/4, $0x3e6488de
DATA gelucon<>+72(SB)/4, $0x3e921b23
DATA gelucon<>+76(SB)/4, $0x3e904ca2
DATA gelucon<>+80(SB)/4, $0x3717fccb
DATA gelucon<>+84(SB)/4, $0x39500d01
DATA gelucon<>+88(SB)/4, $0x3ab60b61
DATA gelucon<>+92(SB)/4, $0x3c088889
DATA gelucon<>+96(SB)/4, $0x3d2aaaab
DATA gelucon<>+100(SB)/4, $0x3e2aaaab
DATA gelucon<>+104(SB)/4, $0x3f000000
DATA gelucon<>+108(SB)/4, $0x3f800000
DATA gelucon<>+112(SB)/4, $0x3f800000
DATA gelucon<>+116(SB)/4, $0x43000000
GLOBL gelucon<>(SB), RODATA|NOPTR, $120

// func geluKernel(n int, x, y, d *float32): n a positive multiple of 16.
TEXT ·geluKernel(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ d+24(FP), R8
	VBROADCASTSS gelucon<>+0(SB), Z16
	VBROADCASTSS gelucon<>+4(SB), Z17
	VBROADCASTSS gelucon<>+8(SB), Z18
	VBROADCASTSS gelucon<>+12(SB), Z19
	VBROADCASTSS gelucon<>+16(SB), Z20
	VBROADCASTSS gelucon<>+20(SB), Z21
	VBROADCASTSS gelucon<>+24(SB), Z22
	VBROADCASTSS gelucon<>+28(SB), Z23
	VBROADCASTSS gelucon<>+32(SB), Z24
	VBROADCASTSS gelucon<>+36(SB), Z25
	VXORPS Z15, Z15, Z15
gelu_loop:
	VMOVUPS (SI), Z0
	VANDPS Z16, Z0, Z1
	VMULPS Z0, Z0, Z2
	VMULPS Z19, Z2, Z2
	VMAXPS Z20, Z2, Z2
	VMULPS Z21, Z2, Z3
	VRNDSCALEPS $0, Z3, Z3
	VFMADD231PS Z22, Z3, Z2
	VFMADD231PS Z23, Z3, Z2
	VBROADCASTSS gelucon<>+84(SB), Z4
	VFMADD213PS.BCST gelucon<>+88(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+92(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+96(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+100(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+104(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+108(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+112(SB), Z2, Z4
	VSCALEFPS Z3, Z4, Z4
	VMOVAPS Z18, Z5
	VFMADD231PS Z17, Z1, Z5
	VDIVPS Z5, Z18, Z5
	VBROADCASTSS gelucon<>+40(SB), Z6
	VFMADD213PS.BCST gelucon<>+44(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+48(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+52(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+56(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+60(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+64(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+68(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+72(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+76(SB), Z5, Z6
	VFMADD213PS.BCST gelucon<>+80(SB), Z5, Z6
	VMULPS Z4, Z6, Z6
	VMULPS Z24, Z6, Z6
	VSUBPS Z6, Z18, Z7
	VCMPPS $0x1e, Z15, Z0, K1
	VMOVAPS Z7, K1, Z6
	VMULPS Z25, Z4, Z4
	VMULPS Z6, Z0, Z8
	VFMADD231PS Z4, Z0, Z6
	VMOVUPS Z8, (DI)
	VMOVUPS Z6, (R8)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, R8
	SUBQ $16, CX
	JNZ gelu_loop
	VZEROUPPER
	RET

// func expKernel(n int, x *float32): x = exp(min(max(x, -104), 128)) in
// place, n a positive multiple of 16; the exponential of the GELU kernel.
// The upper clamp keeps r finite, so every x > 88.8 (+Inf too) gives +Inf.
TEXT ·expKernel(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), SI
	VBROADCASTSS gelucon<>+16(SB), Z20
	VBROADCASTSS gelucon<>+20(SB), Z21
	VBROADCASTSS gelucon<>+24(SB), Z22
	VBROADCASTSS gelucon<>+28(SB), Z23
	VBROADCASTSS gelucon<>+116(SB), Z24
exp_loop:
	VMOVUPS (SI), Z2
	VMAXPS Z20, Z2, Z2
	VMINPS Z24, Z2, Z2
	VMULPS Z21, Z2, Z3
	VRNDSCALEPS $0, Z3, Z3
	VFMADD231PS Z22, Z3, Z2
	VFMADD231PS Z23, Z3, Z2
	VBROADCASTSS gelucon<>+84(SB), Z4
	VFMADD213PS.BCST gelucon<>+88(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+92(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+96(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+100(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+104(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+108(SB), Z2, Z4
	VFMADD213PS.BCST gelucon<>+112(SB), Z2, Z4
	VSCALEFPS Z3, Z4, Z4
	VMOVUPS Z4, (SI)
	ADDQ $64, SI
	SUBQ $16, CX
	JNZ exp_loop
	VZEROUPPER
	RET
