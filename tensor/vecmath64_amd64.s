//go:build !purego

#include "textflag.h"

// The AVX-512 and AVX2+FMA kernels of vecmath64.go. Each map has the Go
// signature func(z, x []float64) and sets z[i] = f(x[i]) for i < len(z)
// (the Go wrappers check len(x) ≥ len(z)); the backward maps take g and y
// in place of x. The main loop takes 8 (ZMM) or 4 (YMM) elements at a
// time; the last 1 to 7 (or 3) are loaded and stored through a mask, so
// nothing outside the slices is read or written. The algorithms and
// constants are those of the pure-Go kernels (see the comment at the top
// of vecmath64.go); the operand order below is Go's: sources first,
// destination last.

// Constants, each repeated 4 times (32 bytes) so that the AVX2 code can use
// them as memory operands; the AVX-512 code broadcasts the first copy.
#define C4(off, v) \
	DATA ·vec64Consts+(off)(SB)/8, v; \
	DATA ·vec64Consts+(off+8)(SB)/8, v; \
	DATA ·vec64Consts+(off+16)(SB)/8, v; \
	DATA ·vec64Consts+(off+24)(SB)/8, v

C4(0, $0x3ff71547652b82fe)    // log₂e
C4(32, $0x4338000000000000)   // magic = 1.5·2⁵²
C4(64, $0x3fe62e42fee00000)   // ln2hi
C4(96, $0x3dea39ef35793c76)   // ln2lo
C4(128, $0x3fe0000000000000)  // 1/2!, also ½
C4(160, $0x3fc5555555555555)  // 1/3!
C4(192, $0x3fa5555555555555)  // 1/4!
C4(224, $0x3f81111111111111)  // 1/5!
C4(256, $0x3f56c16c16c16c17)  // 1/6!
C4(288, $0x3f2a01a01a01a01a)  // 1/7!
C4(320, $0x3efa01a01a01a01a)  // 1/8!
C4(352, $0x3ec71de3a556c734)  // 1/9!
C4(384, $0x3e927e4fb7789f5c)  // 1/10!
C4(416, $0x3e5ae64567f544e4)  // 1/11!
C4(448, $0x3e21eed8eff8d898)  // 1/12!
C4(480, $0x3de6124613a86d09)  // 1/13!
C4(512, $0x3fe5555555555555)  // 2/3
C4(544, $0x3fd999999999999a)  // 2/5
C4(576, $0x3fd2492492492492)  // 2/7
C4(608, $0x3fcc71c71c71c71c)  // 2/9
C4(640, $0x3fc745d1745d1746)  // 2/11
C4(672, $0x3fc3b13b13b13b14)  // 2/13
C4(704, $0x3fc1111111111111)  // 2/15
C4(736, $0x3fbe1e1e1e1e1e1e)  // 2/17
C4(768, $0x3fbaf286bca1af28)  // 2/19
C4(800, $0x3fb8618618618618)  // 2/21
C4(832, $0x3ff0000000000000)  // 1
C4(864, $0x4000000000000000)  // 2
C4(896, $0xc087500000000000)  // expMin = −746
C4(928, $0x4086300000000000)  // expMax = 710
C4(960, $0x4034000000000000)  // 20, where tanh is clamped
C4(992, $0x3fda827999fcef32)  // log1pSplit = √2 − 1 rounded down
C4(1024, $0x7fffffffffffffff) // |·| mask
C4(1056, $0x8000000000000000) // sign bit
C4(1088, $0x3fe6a09e667f3bcd) // bits of √2/2
C4(1120, $0x000fffffffffffff) // mantissa mask
C4(1152, $0x4330000000000000) // 2⁵²
C4(1184, $0x4330000000000400) // 2⁵² + 1024
C4(1216, $0x4000000000000000) // 1024 << 52 (integer)
C4(1248, $0x404a000000000000) // 52
C4(1280, $0x0010000000000000) // 2⁻¹⁰²², the smallest normal number
C4(1312, $0x7ff0000000000000) // +Inf
C4(1344, $0xfff0000000000000) // −Inf
C4(1376, $0x7ff8000000000000) // NaN
C4(1408, $0x3ff6a09e667f3bcd) // √2
C4(1440, $0x0000000000000000) // 0
C4(1472, $0xc044000000000000) // −40, softplus′'s lower clamp of −y
C4(1504, $0x4086280000000000) // 709, its upper clamp
C4(1536, $0x43380000000003ff) // magic + 1023
C4(1568, $0x3fe62e42fefa39ef) // ln2
GLOBL ·vec64Consts(SB), RODATA|NOPTR, $1600

#define LOG2E ·vec64Consts+0(SB)
#define MAGIC ·vec64Consts+32(SB)
#define LN2HI ·vec64Consts+64(SB)
#define LN2LO ·vec64Consts+96(SB)
#define HALF ·vec64Consts+128(SB)
#define EX2 ·vec64Consts+128(SB)
#define EX3 ·vec64Consts+160(SB)
#define EX4 ·vec64Consts+192(SB)
#define EX5 ·vec64Consts+224(SB)
#define EX6 ·vec64Consts+256(SB)
#define EX7 ·vec64Consts+288(SB)
#define EX8 ·vec64Consts+320(SB)
#define EX9 ·vec64Consts+352(SB)
#define EX10 ·vec64Consts+384(SB)
#define EX11 ·vec64Consts+416(SB)
#define EX12 ·vec64Consts+448(SB)
#define EX13 ·vec64Consts+480(SB)
#define LG1 ·vec64Consts+512(SB)
#define LG2 ·vec64Consts+544(SB)
#define LG3 ·vec64Consts+576(SB)
#define LG4 ·vec64Consts+608(SB)
#define LG5 ·vec64Consts+640(SB)
#define LG6 ·vec64Consts+672(SB)
#define LG7 ·vec64Consts+704(SB)
#define LG8 ·vec64Consts+736(SB)
#define LG9 ·vec64Consts+768(SB)
#define LG10 ·vec64Consts+800(SB)
#define ONE ·vec64Consts+832(SB)
#define TWO ·vec64Consts+864(SB)
#define EXPMIN ·vec64Consts+896(SB)
#define EXPMAX ·vec64Consts+928(SB)
#define TANHMAX ·vec64Consts+960(SB)
#define SPLIT ·vec64Consts+992(SB)
#define ABSMASK ·vec64Consts+1024(SB)
#define SIGNBIT ·vec64Consts+1056(SB)
#define SQRTHALF ·vec64Consts+1088(SB)
#define MANTMASK ·vec64Consts+1120(SB)
#define TWO52 ·vec64Consts+1152(SB)
#define TWO52P1024 ·vec64Consts+1184(SB)
#define EXPOFF ·vec64Consts+1216(SB)
#define C52 ·vec64Consts+1248(SB)
#define MINNORM ·vec64Consts+1280(SB)
#define PINF ·vec64Consts+1312(SB)
#define NINF ·vec64Consts+1344(SB)
#define QNAN ·vec64Consts+1376(SB)
#define SQRT2 ·vec64Consts+1408(SB)
#define ZERO ·vec64Consts+1440(SB)
#define SPBWDLO ·vec64Consts+1472(SB)
#define SPBWDHI ·vec64Consts+1504(SB)
#define MAGICBIAS ·vec64Consts+1536(SB)
#define LN2 ·vec64Consts+1568(SB)

// ---------------------------------------------------------------------------
// AVX-512: 8 lanes. Z0 holds x on entry to a body and f(x) on exit; Z1–Z8
// are scratch; Z9–Z12 hold constants, the rest are broadcast memory
// operands; K1 is the tail's mask (the bodies use K2 and K3 only). Only
// Z0–Z15 are used, which VZEROUPPER clears.

#define ZONE Z9
#define ZLO Z10  // expMin, or softplus′'s lower clamp
#define ZHI Z11  // 20 for tanh, or softplus′'s upper clamp
#define ZSIGN Z12

// REDUCE512 sets K = round(X·log₂e) and R = X − K·ln2hi − K·ln2lo.
#define REDUCE512(X, K, R) \
	VMULPD.BCST LOG2E, X, K; \
	VRNDSCALEPD $8, K, K; \
	VMOVAPD X, R; \
	VFNMADD231PD.BCST LN2HI, K, R; \
	VFNMADD231PD.BCST LN2LO, K, R

// EXPM1512 sets B = eᴿ − 1 = R + W·(E(W) + R·O(W)), W = R², using W, A.
#define EXPM1512(R, W, A, B) \
	VMULPD R, R, W; \
	VBROADCASTSD EX12, A; \
	VFMADD213PD.BCST EX10, W, A; \
	VFMADD213PD.BCST EX8, W, A; \
	VFMADD213PD.BCST EX6, W, A; \
	VFMADD213PD.BCST EX4, W, A; \
	VFMADD213PD.BCST EX2, W, A; \
	VBROADCASTSD EX13, B; \
	VFMADD213PD.BCST EX11, W, B; \
	VFMADD213PD.BCST EX9, W, B; \
	VFMADD213PD.BCST EX7, W, B; \
	VFMADD213PD.BCST EX5, W, B; \
	VFMADD213PD.BCST EX3, W, B; \
	VFMADD231PD B, R, A; \
	VMOVAPD R, B; \
	VFMADD231PD A, W, B

// EXP512 sets Y = e^X for X in [expMin, expMax] or NaN: (1 + expm1(r))·2ᵏ
// with VSCALEFPD, which rounds once, to a denormal if need be. It uses
// Z1–Z4.
#define EXP512(X, Y) \
	REDUCE512(X, Z1, Z2); \
	EXPM1512(Z2, Z3, Z4, Y); \
	VADDPD ZONE, Y, Y; \
	VSCALEFPD Z1, Y, Y

// LOG1PCORR512 sets A = c with ln(1 + F) = F − c: c = F²/2 − S·(F²/2 + R),
// S = F/(2 + F), R = W·(2/3 + W·(2/5 + …)), W = S²; it uses S, W, B.
#define LOG1PCORR512(F, S, W, A, B) \
	VADDPD.BCST TWO, F, B; \
	VDIVPD B, F, S; \
	VMULPD S, S, W; \
	VBROADCASTSD LG10, A; \
	VFMADD213PD.BCST LG9, W, A; \
	VFMADD213PD.BCST LG8, W, A; \
	VFMADD213PD.BCST LG7, W, A; \
	VFMADD213PD.BCST LG6, W, A; \
	VFMADD213PD.BCST LG5, W, A; \
	VFMADD213PD.BCST LG4, W, A; \
	VFMADD213PD.BCST LG3, W, A; \
	VFMADD213PD.BCST LG2, W, A; \
	VFMADD213PD.BCST LG1, W, A; \
	VMULPD W, A, A; \
	VMULPD.BCST HALF, F, B; \
	VMULPD F, B, B; \
	VADDPD B, A, A; \
	VFNMADD213PD B, S, A

// The bodies. VMINPD and VMAXPD return their first (Go) operand when either
// is NaN, so x goes first wherever a NaN must get through a clamp.

#define BODYEXP512 \
	VMAXPD Z0, ZLO, Z0; \
	VMINPD Z0, ZHI, Z0; \
	EXP512(Z0, Z0)

// tanh|x| = t/(t + 2), t = e^2a − 1 = 2ᵏ·expm1(r) + (2ᵏ − 1), a = min(|x|, 20),
// the quotient y = t/d, d = t + 2 rounded, corrected by (t − y·d − y·e)/d,
// e = (t + 2) − d (Fast2Sum), with VRCP14PD's 1/d; the sign of x is put
// back with a bitwise or (VPTERNLOGQ 0xEC: x = y | x&sign).
#define BODYTANH512 \
	VPANDQ.BCST ABSMASK, Z0, Z1; \
	VMINPD Z1, ZHI, Z1; \
	VADDPD Z1, Z1, Z1; \
	REDUCE512(Z1, Z2, Z3); \
	EXPM1512(Z3, Z4, Z5, Z6); \
	VSCALEFPD Z2, ZONE, Z7; \
	VSUBPD ZONE, Z7, Z8; \
	VFMADD231PD Z6, Z7, Z8; \
	VADDPD.BCST TWO, Z8, Z1; \
	VMAXPD.BCST TWO, Z8, Z2; \
	VSUBPD Z1, Z2, Z2; \
	VMINPD.BCST TWO, Z8, Z3; \
	VADDPD Z3, Z2, Z2; \
	VDIVPD Z1, Z8, Z3; \
	VMOVAPD Z8, Z4; \
	VFNMADD231PD Z3, Z1, Z4; \
	VFNMADD231PD Z3, Z2, Z4; \
	VRCP14PD Z1, Z5; \
	VFMADD231PD Z5, Z4, Z3; \
	VPTERNLOGQ $0xEC, ZSIGN, Z3, Z0

// σ(x) = n/(1 + e), e = e^−|x|, n = e where x has its sign bit set, else 1.
#define BODYSIGMOID512 \
	VPORQ ZSIGN, Z0, Z5; \
	VMAXPD Z5, ZLO, Z5; \
	EXP512(Z5, Z6); \
	VPTESTMQ ZSIGN, Z0, K2; \
	VBLENDMPD Z6, ZONE, K2, Z7; \
	VADDPD ZONE, Z6, Z6; \
	VDIVPD Z6, Z7, Z0

// softplus(x) = max(x, 0) + log1p(u), u = e^−|x|; log1p(u) = L(u), or
// ln2 + L((u − 1)/2) for u above √2 − 1.
#define BODYSOFTPLUS512 \
	VPORQ ZSIGN, Z0, Z5; \
	VMAXPD Z5, ZLO, Z5; \
	EXP512(Z5, Z6); \
	VCMPPD.BCST $0x1e, SPLIT, Z6, K2; \
	VPXORQ Z7, Z7, Z7; \
	VBROADCASTSD LN2, K2, Z7; \
	VSUBPD ZONE, Z6, K2, Z6; \
	VMULPD.BCST HALF, Z6, K2, Z6; \
	LOG1PCORR512(Z6, Z1, Z2, Z3, Z4); \
	VSUBPD Z3, Z6, Z3; \
	VADDPD Z3, Z7, Z7; \
	VMAXPD.BCST ZERO, Z0, Z0; \
	VADDPD Z7, Z0, Z0

// ln x = e·ln2hi + (f − (c − e·ln2lo)), f = m − 1, with x = 2ᵉ·m, m in
// [√2/2, √2): VGETEXPPD and VGETMANTPD (interval [1, 2), sign cleared)
// split x, denormals included, then m ≥ √2 is halved. ±0 gives e = −Inf,
// so −Inf; +Inf gives e = +Inf and m = 1, so +Inf; NaN stays NaN; x < 0 is
// set to NaN after.
#define BODYLOG512 \
	VGETEXPPD Z0, Z1; \
	VGETMANTPD $4, Z0, Z2; \
	VCMPPD.BCST $0x0d, SQRT2, Z2, K2; \
	VMULPD.BCST HALF, Z2, K2, Z2; \
	VADDPD ZONE, Z1, K2, Z1; \
	VSUBPD ZONE, Z2, Z2; \
	LOG1PCORR512(Z2, Z3, Z4, Z5, Z6); \
	VFNMADD231PD.BCST LN2LO, Z1, Z5; \
	VSUBPD Z5, Z2, Z5; \
	VFMADD231PD.BCST LN2HI, Z1, Z5; \
	VCMPPD.BCST $0x11, ZERO, Z0, K3; \
	VBROADCASTSD QNAN, K3, Z5; \
	VMOVAPD Z5, Z0

#define BODYSQRT512 \
	VSQRTPD Z0, Z0

// LOOP512 runs BODY over z = DI, x = SI, n = CX.
#define LOOP512(BODY) \
loop: \
	CMPQ CX, $8; \
	JB tail; \
	VMOVUPD (SI), Z0; \
	BODY; \
	VMOVUPD Z0, (DI); \
	ADDQ $64, SI; \
	ADDQ $64, DI; \
	SUBQ $8, CX; \
	JMP loop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
	KMOVW AX, K1; \
	VMOVUPD.Z (SI), K1, Z0; \
	BODY; \
	VMOVUPD Z0, K1, (DI); \
done: \
	VZEROUPPER; \
	RET

// func exp64AVX512(z, x []float64)
TEXT ·exp64AVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, ZONE
	VBROADCASTSD EXPMIN, ZLO
	VBROADCASTSD EXPMAX, ZHI
	LOOP512(BODYEXP512)

// func tanh64AVX512(z, x []float64)
TEXT ·tanh64AVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, ZONE
	VBROADCASTSD TANHMAX, ZHI
	VBROADCASTSD SIGNBIT, ZSIGN
	LOOP512(BODYTANH512)

// func sigmoid64AVX512(z, x []float64)
TEXT ·sigmoid64AVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, ZONE
	VBROADCASTSD EXPMIN, ZLO
	VBROADCASTSD SIGNBIT, ZSIGN
	LOOP512(BODYSIGMOID512)

// func softplus64AVX512(z, x []float64)
TEXT ·softplus64AVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, ZONE
	VBROADCASTSD EXPMIN, ZLO
	VBROADCASTSD SIGNBIT, ZSIGN
	LOOP512(BODYSOFTPLUS512)

// func log64AVX512(z, x []float64)
TEXT ·log64AVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, ZONE
	LOOP512(BODYLOG512)

// func sqrt64AVX512(z, x []float64)
TEXT ·sqrt64AVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOOP512(BODYSQRT512)

// The backward maps, with the Go signature func(z, g, y []float64): Z0
// holds g and Z1 holds y on entry to a body, and the new z on exit (the
// AVX2 bodies likewise in Y0 and Y1).

// tanh′: g·(1 − y²), 1 − y² in one fused, once-rounded step.
#define BODYTANHBWD512 \
	VMOVAPD ZONE, Z2; \
	VFNMADD231PD Z1, Z1, Z2; \
	VMULPD Z2, Z0, Z0

// σ′: g·(y − y²), likewise.
#define BODYSIGMOIDBWD512 \
	VMOVAPD Z1, Z2; \
	VFNMADD231PD Z1, Z1, Z2; \
	VMULPD Z2, Z0, Z0

// softplus′: g·((1 − 2ᵏ) − 2ᵏ·expm1(r)), −y = k·ln2 + r clamped to
// [−40, 709] in ZLO and ZHI (a NaN y gets through).
#define BODYSOFTPLUSBWD512 \
	VPXORQ ZSIGN, Z1, Z1; \
	VMAXPD Z1, ZLO, Z1; \
	VMINPD Z1, ZHI, Z1; \
	REDUCE512(Z1, Z2, Z3); \
	EXPM1512(Z3, Z4, Z5, Z6); \
	VSCALEFPD Z2, ZONE, Z7; \
	VSUBPD Z7, ZONE, Z8; \
	VFNMADD231PD Z6, Z7, Z8; \
	VMULPD Z8, Z0, Z0

// ACC512 adds z (loaded through K1, all ones in the main loop) to Z0;
// NOACC512 does nothing.
#define ACC512 \
	VMOVUPD.Z (DI), K1, Z2; \
	VADDPD Z2, Z0, Z0

#define NOACC512 \
	NOP

// LOOP3_512 runs BODY, then ACC, over z = DI, g = SI, y = DX, n = CX.
#define LOOP3_512(BODY, ACC) \
	KXNORW K1, K1, K1; \
loop: \
	CMPQ CX, $8; \
	JB tail; \
	VMOVUPD (SI), Z0; \
	VMOVUPD (DX), Z1; \
	BODY; \
	ACC; \
	VMOVUPD Z0, (DI); \
	ADDQ $64, SI; \
	ADDQ $64, DX; \
	ADDQ $64, DI; \
	SUBQ $8, CX; \
	JMP loop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
	KMOVW AX, K1; \
	VMOVUPD.Z (SI), K1, Z0; \
	VMOVUPD.Z (DX), K1, Z1; \
	BODY; \
	ACC; \
	VMOVUPD Z0, K1, (DI); \
done: \
	VZEROUPPER; \
	RET

#define LOADSOFTPLUSBWD512 \
	VBROADCASTSD ONE, ZONE; \
	VBROADCASTSD SPBWDLO, ZLO; \
	VBROADCASTSD SPBWDHI, ZHI; \
	VBROADCASTSD SIGNBIT, ZSIGN

// func tanhBwd64AVX512(z, g, y []float64)
TEXT ·tanhBwd64AVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSD ONE, ZONE
	LOOP3_512(BODYTANHBWD512, NOACC512)

// func tanhBwdAcc64AVX512(z, g, y []float64)
TEXT ·tanhBwdAcc64AVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSD ONE, ZONE
	LOOP3_512(BODYTANHBWD512, ACC512)

// func sigmoidBwd64AVX512(z, g, y []float64)
TEXT ·sigmoidBwd64AVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOOP3_512(BODYSIGMOIDBWD512, NOACC512)

// func sigmoidBwdAcc64AVX512(z, g, y []float64)
TEXT ·sigmoidBwdAcc64AVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOOP3_512(BODYSIGMOIDBWD512, ACC512)

// func softplusBwd64AVX512(z, g, y []float64)
TEXT ·softplusBwd64AVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOADSOFTPLUSBWD512
	LOOP3_512(BODYSOFTPLUSBWD512, NOACC512)

// func softplusBwdAcc64AVX512(z, g, y []float64)
TEXT ·softplusBwdAcc64AVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOADSOFTPLUSBWD512
	LOOP3_512(BODYSOFTPLUSBWD512, ACC512)

// ---------------------------------------------------------------------------
// AVX2 + FMA: 4 lanes. Y0 holds x on entry to a body and f(x) on exit; Y1–Y7
// are scratch; the constants are memory operands, except those that must be
// registers: 1 and the clamps (whose NaN rule fixes the operand order).

#define YONE Y8
#define YLO Y9  // expMin, or softplus′'s lower clamp
#define YHI Y10 // expMax, 20 for tanh, or softplus′'s upper clamp

// REDUCE256 sets T = X·log₂e + magic (two roundings, as in Go), whose low
// mantissa bits hold k = round(X·log₂e), K = k and R = X − k·ln2hi −
// k·ln2lo.
#define REDUCE256(X, T, K, R) \
	VMULPD LOG2E, X, T; \
	VADDPD MAGIC, T, T; \
	VSUBPD MAGIC, T, K; \
	VMOVAPD X, R; \
	VFNMADD231PD LN2HI, K, R; \
	VFNMADD231PD LN2LO, K, R

// EXPM1256 sets B = eᴿ − 1, as EXPM1512, using W, A.
#define EXPM1256(R, W, A, B) \
	VMULPD R, R, W; \
	VMOVUPD EX12, A; \
	VFMADD213PD EX10, W, A; \
	VFMADD213PD EX8, W, A; \
	VFMADD213PD EX6, W, A; \
	VFMADD213PD EX4, W, A; \
	VFMADD213PD EX2, W, A; \
	VMOVUPD EX13, B; \
	VFMADD213PD EX11, W, B; \
	VFMADD213PD EX9, W, B; \
	VFMADD213PD EX7, W, B; \
	VFMADD213PD EX5, W, B; \
	VFMADD213PD EX3, W, B; \
	VFMADD231PD B, R, A; \
	VMOVAPD R, B; \
	VFMADD231PD A, W, B

// EXP256 sets Y = e^X for X in [expMin, expMax] or NaN: (1 + expm1(r))
// scaled by 2^k1 and then 2^(k − k1), k1 = ⌊k/2⌋, both exact powers of
// two made from k1 + magic + 1023 and k − k1 + magic + 1023 (whose low
// bits hold the biased exponents), so that k in [−1077, 1025] works and a
// denormal result is rounded once. It uses Y1–Y4.
#define EXP256(X, Y) \
	REDUCE256(X, Y1, Y2, Y3); \
	EXPM1256(Y3, Y4, Y1, Y); \
	VADDPD YONE, Y, Y; \
	VMULPD HALF, Y2, Y3; \
	VROUNDPD $9, Y3, Y3; \
	VSUBPD Y3, Y2, Y2; \
	VADDPD MAGICBIAS, Y3, Y3; \
	VADDPD MAGICBIAS, Y2, Y2; \
	VPSLLQ $52, Y3, Y3; \
	VPSLLQ $52, Y2, Y2; \
	VMULPD Y3, Y, Y; \
	VMULPD Y2, Y, Y

// LOG1PCORR256 sets A = c as LOG1PCORR512, using S, W, B.
#define LOG1PCORR256(F, S, W, A, B) \
	VADDPD TWO, F, B; \
	VDIVPD B, F, S; \
	VMULPD S, S, W; \
	VMOVUPD LG10, A; \
	VFMADD213PD LG9, W, A; \
	VFMADD213PD LG8, W, A; \
	VFMADD213PD LG7, W, A; \
	VFMADD213PD LG6, W, A; \
	VFMADD213PD LG5, W, A; \
	VFMADD213PD LG4, W, A; \
	VFMADD213PD LG3, W, A; \
	VFMADD213PD LG2, W, A; \
	VFMADD213PD LG1, W, A; \
	VMULPD W, A, A; \
	VMULPD HALF, F, B; \
	VMULPD F, B, B; \
	VADDPD B, A, A; \
	VFNMADD213PD B, S, A

#define BODYEXP256 \
	VMAXPD Y0, YLO, Y0; \
	VMINPD Y0, YHI, Y0; \
	EXP256(Y0, Y0)

// tanh: as BODYTANH512, with 2ᵏ made from the bits of T (k is in [0, 58])
// and the correction divided by d.
#define BODYTANH256 \
	VANDPD ABSMASK, Y0, Y5; \
	VMINPD Y5, YHI, Y5; \
	VADDPD Y5, Y5, Y5; \
	REDUCE256(Y5, Y1, Y2, Y3); \
	EXPM1256(Y3, Y4, Y2, Y6); \
	VPSLLQ $52, Y1, Y1; \
	VPADDQ YONE, Y1, Y1; \
	VSUBPD YONE, Y1, Y7; \
	VFMADD231PD Y6, Y1, Y7; \
	VADDPD TWO, Y7, Y1; \
	VMAXPD TWO, Y7, Y2; \
	VSUBPD Y1, Y2, Y2; \
	VMINPD TWO, Y7, Y3; \
	VADDPD Y3, Y2, Y2; \
	VDIVPD Y1, Y7, Y3; \
	VFNMADD231PD Y3, Y1, Y7; \
	VFNMADD231PD Y3, Y2, Y7; \
	VDIVPD Y1, Y7, Y7; \
	VADDPD Y7, Y3, Y7; \
	VANDPD SIGNBIT, Y0, Y0; \
	VORPD Y7, Y0, Y0

// σ: as BODYSIGMOID512; VBLENDVPD selects by the sign bit of x itself.
#define BODYSIGMOID256 \
	VORPD SIGNBIT, Y0, Y5; \
	VMAXPD Y5, YLO, Y5; \
	EXP256(Y5, Y6); \
	VBLENDVPD Y0, Y6, YONE, Y7; \
	VADDPD YONE, Y6, Y6; \
	VDIVPD Y6, Y7, Y0

#define BODYSOFTPLUS256 \
	VORPD SIGNBIT, Y0, Y5; \
	VMAXPD Y5, YLO, Y5; \
	EXP256(Y5, Y6); \
	VCMPPD $0x1e, SPLIT, Y6, Y7; \
	VSUBPD YONE, Y6, Y5; \
	VMULPD HALF, Y5, Y5; \
	VBLENDVPD Y7, Y5, Y6, Y6; \
	VANDPD LN2, Y7, Y7; \
	LOG1PCORR256(Y6, Y1, Y2, Y3, Y4); \
	VSUBPD Y3, Y6, Y3; \
	VADDPD Y3, Y7, Y7; \
	VMAXPD ZERO, Y0, Y0; \
	VADDPD Y7, Y0, Y0

// ln: as the Go code, from the bits; denormals are scaled by 2⁵² first.
// e = (t + 1024·2⁵²) >> 52 − 1024 (logical shift: AVX2 has no 64-bit
// arithmetic one), converted through the bits of 2⁵² + (e + 1024). Then
// 0 → −Inf, x < 0 or NaN → NaN, +Inf → +Inf.
#define BODYLOG256 \
	VCMPPD $0x11, MINNORM, Y0, Y1; \
	VMULPD TWO52, Y0, Y2; \
	VBLENDVPD Y1, Y2, Y0, Y2; \
	VPSUBQ SQRTHALF, Y2, Y2; \
	VPADDQ EXPOFF, Y2, Y7; \
	VPSRLQ $52, Y7, Y7; \
	VPOR TWO52, Y7, Y7; \
	VSUBPD TWO52P1024, Y7, Y7; \
	VANDPD C52, Y1, Y1; \
	VSUBPD Y1, Y7, Y7; \
	VPAND MANTMASK, Y2, Y2; \
	VPADDQ SQRTHALF, Y2, Y2; \
	VSUBPD YONE, Y2, Y2; \
	LOG1PCORR256(Y2, Y3, Y4, Y5, Y6); \
	VFNMADD231PD LN2LO, Y7, Y5; \
	VSUBPD Y5, Y2, Y5; \
	VFMADD231PD LN2HI, Y7, Y5; \
	VCMPPD $0x19, ZERO, Y0, Y1; \
	VBLENDVPD Y1, QNAN, Y5, Y5; \
	VCMPPD $0x00, ZERO, Y0, Y1; \
	VBLENDVPD Y1, NINF, Y5, Y5; \
	VCMPPD $0x00, PINF, Y0, Y1; \
	VBLENDVPD Y1, Y0, Y5, Y0

#define BODYSQRT256 \
	VSQRTPD Y0, Y0

// LOOP256 runs BODY over z = DI, x = SI, n = CX; the tail's mask is read
// from vecTailMask (R8, 32 − 8n bytes in: n all-ones quadwords), before
// the body and again after it.
#define LOOP256(BODY) \
loop: \
	CMPQ CX, $4; \
	JB tail; \
	VMOVUPD (SI), Y0; \
	BODY; \
	VMOVUPD Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DI; \
	SUBQ $4, CX; \
	JMP loop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	LEAQ ·vecTailMask+32(SB), R8; \
	SHLQ $3, CX; \
	SUBQ CX, R8; \
	VMOVDQU (R8), Y1; \
	VMASKMOVPD (SI), Y1, Y0; \
	BODY; \
	VMOVDQU (R8), Y1; \
	VMASKMOVPD Y0, Y1, (DI); \
done: \
	VZEROUPPER; \
	RET

// func exp64AVX2(z, x []float64)
TEXT ·exp64AVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, YONE
	VBROADCASTSD EXPMIN, YLO
	VBROADCASTSD EXPMAX, YHI
	LOOP256(BODYEXP256)

// func tanh64AVX2(z, x []float64)
TEXT ·tanh64AVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, YONE
	VBROADCASTSD TANHMAX, YHI
	LOOP256(BODYTANH256)

// func sigmoid64AVX2(z, x []float64)
TEXT ·sigmoid64AVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, YONE
	VBROADCASTSD EXPMIN, YLO
	LOOP256(BODYSIGMOID256)

// func softplus64AVX2(z, x []float64)
TEXT ·softplus64AVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, YONE
	VBROADCASTSD EXPMIN, YLO
	LOOP256(BODYSOFTPLUS256)

// func log64AVX2(z, x []float64)
TEXT ·log64AVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSD ONE, YONE
	LOOP256(BODYLOG256)

// func sqrt64AVX2(z, x []float64)
TEXT ·sqrt64AVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOOP256(BODYSQRT256)

#define BODYTANHBWD256 \
	VMOVAPD YONE, Y2; \
	VFNMADD231PD Y1, Y1, Y2; \
	VMULPD Y2, Y0, Y0

#define BODYSIGMOIDBWD256 \
	VMOVAPD Y1, Y2; \
	VFNMADD231PD Y1, Y1, Y2; \
	VMULPD Y2, Y0, Y0

// softplus′: as BODYSOFTPLUSBWD512, with 2ᵏ made from the bits of T (k is
// in [−58, 1023]).
#define BODYSOFTPLUSBWD256 \
	VXORPD SIGNBIT, Y1, Y5; \
	VMAXPD Y5, YLO, Y5; \
	VMINPD Y5, YHI, Y5; \
	REDUCE256(Y5, Y1, Y2, Y3); \
	EXPM1256(Y3, Y4, Y2, Y6); \
	VPSLLQ $52, Y1, Y1; \
	VPADDQ YONE, Y1, Y1; \
	VSUBPD Y1, YONE, Y7; \
	VFNMADD231PD Y6, Y1, Y7; \
	VMULPD Y7, Y0, Y0

// ACC256 adds z to Y0 in the main loop, ACCTAIL256 in the tail (through
// the mask in Y15); NOACC256 does nothing.
#define ACC256 \
	VADDPD (DI), Y0, Y0

#define ACCTAIL256 \
	VMASKMOVPD (DI), Y15, Y2; \
	VADDPD Y2, Y0, Y0

#define NOACC256 \
	NOP

// LOOP3_256 runs BODY, then ACC (ACCT in the tail), over z = DI, g = SI,
// y = DX, n = CX.
#define LOOP3_256(BODY, ACC, ACCT) \
loop: \
	CMPQ CX, $4; \
	JB tail; \
	VMOVUPD (SI), Y0; \
	VMOVUPD (DX), Y1; \
	BODY; \
	ACC; \
	VMOVUPD Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DX; \
	ADDQ $32, DI; \
	SUBQ $4, CX; \
	JMP loop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	LEAQ ·vecTailMask+32(SB), R8; \
	SHLQ $3, CX; \
	SUBQ CX, R8; \
	VMOVDQU (R8), Y15; \
	VMASKMOVPD (SI), Y15, Y0; \
	VMASKMOVPD (DX), Y15, Y1; \
	BODY; \
	ACCT; \
	VMASKMOVPD Y0, Y15, (DI); \
done: \
	VZEROUPPER; \
	RET

#define LOADSOFTPLUSBWD256 \
	VBROADCASTSD ONE, YONE; \
	VBROADCASTSD SPBWDLO, YLO; \
	VBROADCASTSD SPBWDHI, YHI

// func tanhBwd64AVX2(z, g, y []float64)
TEXT ·tanhBwd64AVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSD ONE, YONE
	LOOP3_256(BODYTANHBWD256, NOACC256, NOACC256)

// func tanhBwdAcc64AVX2(z, g, y []float64)
TEXT ·tanhBwdAcc64AVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSD ONE, YONE
	LOOP3_256(BODYTANHBWD256, ACC256, ACCTAIL256)

// func sigmoidBwd64AVX2(z, g, y []float64)
TEXT ·sigmoidBwd64AVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOOP3_256(BODYSIGMOIDBWD256, NOACC256, NOACC256)

// func sigmoidBwdAcc64AVX2(z, g, y []float64)
TEXT ·sigmoidBwdAcc64AVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOOP3_256(BODYSIGMOIDBWD256, ACC256, ACCTAIL256)

// func softplusBwd64AVX2(z, g, y []float64)
TEXT ·softplusBwd64AVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOADSOFTPLUSBWD256
	LOOP3_256(BODYSOFTPLUSBWD256, NOACC256, NOACC256)

// func softplusBwdAcc64AVX2(z, g, y []float64)
TEXT ·softplusBwdAcc64AVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOADSOFTPLUSBWD256
	LOOP3_256(BODYSOFTPLUSBWD256, ACC256, ACCTAIL256)
