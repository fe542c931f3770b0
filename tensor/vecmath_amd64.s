//go:build !purego

#include "textflag.h"

// The AVX-512 and AVX2+FMA kernels of vecmath.go. Each map has the Go
// signature func(z, x []float32) and sets z[i] = f(x[i]) for i < len(z)
// (the Go wrappers check len(x) ≥ len(z)); the backward maps, further on,
// take g and y in place of x. The main loop takes 16 (ZMM) or
// 8 (YMM) elements at a time; the last 1 to 15 (or 7) are loaded and stored
// through a mask, so nothing outside the slices is read or written. The
// algorithms and constants are those of the pure-Go kernels (see the
// comment at the top of vecmath.go); the operand order below is Go's:
// sources first, destination last.

// Constants, each repeated 8 times (32 bytes) so that the AVX2 code can use
// them as memory operands; the AVX-512 code broadcasts the first copy.
#define C8(off, v) \
	DATA ·vecConsts+(off)(SB)/4, v; \
	DATA ·vecConsts+(off+4)(SB)/4, v; \
	DATA ·vecConsts+(off+8)(SB)/4, v; \
	DATA ·vecConsts+(off+12)(SB)/4, v; \
	DATA ·vecConsts+(off+16)(SB)/4, v; \
	DATA ·vecConsts+(off+20)(SB)/4, v; \
	DATA ·vecConsts+(off+24)(SB)/4, v; \
	DATA ·vecConsts+(off+28)(SB)/4, v

C8(0, $0x3fb8aa3b)   // log₂e
C8(32, $0x4b400000)  // magic = 1.5·2²³
C8(64, $0x3f317200)  // ln2hi
C8(96, $0x35bfbe8e)  // ln2lo
C8(128, $0x3f000000) // p0 = 0.5
C8(160, $0x3e2aaa6e) // p1
C8(192, $0x3d2aaa5c) // p2
C8(224, $0x3c0905b9) // p3
C8(256, $0x3ab6baa6) // p4
C8(288, $0xbeffffff) // q0
C8(320, $0x3eaaaaa4) // q1
C8(352, $0xbe8000fc) // q2
C8(384, $0x3e4cd3de) // q3
C8(416, $0xbe2a47b8) // q4
C8(448, $0x3e1122dc) // q5
C8(480, $0xbe05dce9) // q6
C8(512, $0x3e04476d) // q7
C8(544, $0xbda52a0e) // q8
C8(576, $0x3f800000) // 1
C8(608, $0xc2d00000) // expMin = −104
C8(640, $0x42b20000) // expMax = 89
C8(672, $0x41180000) // 9.5, where tanh is clamped
C8(704, $0x40000000) // 2
C8(736, $0x3ed413cd) // log1pSplit
C8(768, $0x3f317218) // ln2
C8(800, $0x7fffffff) // |·| mask
C8(832, $0x80000000) // sign bit
C8(864, $0x3f3504f3) // bits of √2/2
C8(896, $0x007fffff) // mantissa mask
C8(928, $0x4b000000) // 2²³
C8(960, $0x41b80000) // 23
C8(992, $0x00800000) // 2⁻¹²⁶, the smallest normal number
C8(1024, $0x7f800000) // +Inf
C8(1056, $0xff800000) // −Inf
C8(1088, $0x7fc00000) // NaN
C8(1120, $0x0000007f) // 127, the exponent bias (integer)
C8(1152, $0x3fb504f3) // √2
C8(1184, $0x00000000) // 0
C8(1216, $0xc1f00000) // −30, softplus′'s lower clamp of −y
C8(1248, $0x42b00000) // 88, its upper clamp
GLOBL ·vecConsts(SB), RODATA|NOPTR, $1280

#define LOG2E ·vecConsts+0(SB)
#define MAGIC ·vecConsts+32(SB)
#define LN2HI ·vecConsts+64(SB)
#define LN2LO ·vecConsts+96(SB)
#define P0 ·vecConsts+128(SB)
#define P1 ·vecConsts+160(SB)
#define P2 ·vecConsts+192(SB)
#define P3 ·vecConsts+224(SB)
#define P4 ·vecConsts+256(SB)
#define Q0 ·vecConsts+288(SB)
#define Q1 ·vecConsts+320(SB)
#define Q2 ·vecConsts+352(SB)
#define Q3 ·vecConsts+384(SB)
#define Q4 ·vecConsts+416(SB)
#define Q5 ·vecConsts+448(SB)
#define Q6 ·vecConsts+480(SB)
#define Q7 ·vecConsts+512(SB)
#define Q8 ·vecConsts+544(SB)
#define ONE ·vecConsts+576(SB)
#define EXPMIN ·vecConsts+608(SB)
#define EXPMAX ·vecConsts+640(SB)
#define TANHMAX ·vecConsts+672(SB)
#define TWO ·vecConsts+704(SB)
#define SPLIT ·vecConsts+736(SB)
#define LN2 ·vecConsts+768(SB)
#define ABSMASK ·vecConsts+800(SB)
#define SIGNBIT ·vecConsts+832(SB)
#define SQRTHALF ·vecConsts+864(SB)
#define MANTMASK ·vecConsts+896(SB)
#define TWO23 ·vecConsts+928(SB)
#define C23 ·vecConsts+960(SB)
#define MINNORM ·vecConsts+992(SB)
#define PINF ·vecConsts+1024(SB)
#define NINF ·vecConsts+1056(SB)
#define QNAN ·vecConsts+1088(SB)
#define BIAS ·vecConsts+1120(SB)
#define SQRT2 ·vecConsts+1152(SB)
#define ZERO ·vecConsts+1184(SB)
#define SPBWDLO ·vecConsts+1216(SB)
#define SPBWDHI ·vecConsts+1248(SB)

// vecTailMask is 8 all-ones words and 8 zero words: the 32 bytes at
// vecTailMask+32−4n select the first n of 8 lanes.
DATA ·vecTailMask+0(SB)/8, $-1
DATA ·vecTailMask+8(SB)/8, $-1
DATA ·vecTailMask+16(SB)/8, $-1
DATA ·vecTailMask+24(SB)/8, $-1
DATA ·vecTailMask+32(SB)/8, $0
DATA ·vecTailMask+40(SB)/8, $0
DATA ·vecTailMask+48(SB)/8, $0
DATA ·vecTailMask+56(SB)/8, $0
GLOBL ·vecTailMask(SB), RODATA|NOPTR, $64

// ---------------------------------------------------------------------------
// AVX-512: 16 lanes. Z0 holds x on entry to a body and f(x) on exit; Z1–Z8
// are scratch; Z9–Z31 hold constants; K1 is the tail's mask (the bodies use
// K2 and K3 only).

#define ZLOG2E Z9
#define ZLN2HI Z10
#define ZLN2LO Z11
#define ZP0 Z12 // also ½
#define ZP1 Z13
#define ZP2 Z14
#define ZP3 Z15
#define ZP4 Z16
#define ZONE Z17
#define ZLO Z18 // expMin
#define ZHI Z19 // expMax, or 9.5 for tanh
#define ZSIGN Z20
#define ZABS Z21
#define ZTWO Z22 // 2, or √2 for log
#define ZLN2 Z23
#define ZQ0 Z24
#define ZQ1 Z25
#define ZQ2 Z26
#define ZQ3 Z27
#define ZQ4 Z28
#define ZQ5 Z29
#define ZQ6 Z30
#define ZQ7 Z31

// The constants of the exponential's reduction and polynomial.
#define LOADEXP512 \
	VBROADCASTSS LOG2E, ZLOG2E; \
	VBROADCASTSS LN2HI, ZLN2HI; \
	VBROADCASTSS LN2LO, ZLN2LO; \
	VBROADCASTSS P0, ZP0; \
	VBROADCASTSS P1, ZP1; \
	VBROADCASTSS P2, ZP2; \
	VBROADCASTSS P3, ZP3; \
	VBROADCASTSS P4, ZP4; \
	VBROADCASTSS ONE, ZONE

// The constants of log1p's polynomial (q8 is a broadcast memory operand).
#define LOADLOG512 \
	VBROADCASTSS Q0, ZQ0; \
	VBROADCASTSS Q1, ZQ1; \
	VBROADCASTSS Q2, ZQ2; \
	VBROADCASTSS Q3, ZQ3; \
	VBROADCASTSS Q4, ZQ4; \
	VBROADCASTSS Q5, ZQ5; \
	VBROADCASTSS Q6, ZQ6; \
	VBROADCASTSS Q7, ZQ7

// REDUCE512 sets K = round(X·log₂e) and R = X − K·ln2hi − K·ln2lo.
#define REDUCE512(X, K, R) \
	VMULPS ZLOG2E, X, K; \
	VRNDSCALEPS $8, K, K; \
	VMOVAPS X, R; \
	VFNMADD231PS ZLN2HI, K, R; \
	VFNMADD231PS ZLN2LO, K, R

// EXPM1512 sets B = eᴿ − 1 = R + R²·P(R) (Estrin's scheme), using R2, A.
#define EXPM1512(R, R2, A, B) \
	VMULPS R, R, R2; \
	VMOVAPS ZP1, A; \
	VFMADD213PS ZP0, R, A; \
	VMOVAPS ZP3, B; \
	VFMADD213PS ZP2, R, B; \
	VFMADD231PS ZP4, R2, B; \
	VFMADD231PS B, R2, A; \
	VMOVAPS R, B; \
	VFMADD231PS A, R2, B

// EXP512 sets Y = e^X for X in [expMin, expMax] or NaN: (1 + expm1(r))·2ᵏ
// with VSCALEFPS, which rounds once, to a denormal if need be.
#define EXP512(X, Y) \
	REDUCE512(X, Z1, Z2); \
	EXPM1512(Z2, Z3, Z4, Y); \
	VADDPS ZONE, Y, Y; \
	VSCALEFPS Z1, Y, Y

// LOG1P512 sets A = ln(1 + F) = F + F²·Q(F), using F2, F4, B, C, D.
#define LOG1P512(F, F2, F4, A, B, C, D) \
	VMULPS F, F, F2; \
	VMULPS F2, F2, F4; \
	VMOVAPS ZQ1, A; \
	VFMADD213PS ZQ0, F, A; \
	VMOVAPS ZQ3, B; \
	VFMADD213PS ZQ2, F, B; \
	VFMADD231PS B, F2, A; \
	VMOVAPS ZQ5, C; \
	VFMADD213PS ZQ4, F, C; \
	VMOVAPS ZQ7, D; \
	VFMADD213PS ZQ6, F, D; \
	VFMADD231PS D, F2, C; \
	VFMADD231PS.BCST Q8, F4, C; \
	VFMADD231PS C, F4, A; \
	VFMADD213PS F, F2, A

// The bodies. VMINPS and VMAXPS return their first (Go) operand when either
// is NaN, so x goes first wherever a NaN must get through a clamp.

#define BODYEXP512 \
	VMAXPS Z0, ZLO, Z0; \
	VMINPS Z0, ZHI, Z0; \
	EXP512(Z0, Z0)

// tanh|x| = t/(t + 2), t = e^2a − 1 = 2ᵏ·expm1(r) + (2ᵏ − 1), a = min(|x|, 9.5);
// the sign of x is put back with a bitwise or (VPTERNLOGD 0xEC: x = t | x&sign).
#define BODYTANH512 \
	VPANDD ZABS, Z0, Z1; \
	VMINPS Z1, ZHI, Z1; \
	VADDPS Z1, Z1, Z1; \
	REDUCE512(Z1, Z2, Z3); \
	EXPM1512(Z3, Z4, Z5, Z6); \
	VSCALEFPS Z2, ZONE, Z7; \
	VSUBPS ZONE, Z7, Z8; \
	VFMADD231PS Z6, Z7, Z8; \
	VADDPS ZTWO, Z8, Z1; \
	VDIVPS Z1, Z8, Z8; \
	VPTERNLOGD $0xEC, ZSIGN, Z8, Z0

// σ(x) = n/(1 + e), e = e^−|x|, n = e where x has its sign bit set, else 1.
#define BODYSIGMOID512 \
	VPORD ZSIGN, Z0, Z5; \
	VMAXPS Z5, ZLO, Z5; \
	EXP512(Z5, Z6); \
	VPTESTMD ZSIGN, Z0, K2; \
	VBLENDMPS Z6, ZONE, K2, Z7; \
	VADDPS ZONE, Z6, Z6; \
	VDIVPS Z6, Z7, Z0

// softplus(x) = max(x, 0) + log1p(u), u = e^−|x|; log1p(u) = L(u), or
// ln2 + L((u − 1)/2) for u above √2 − 1.
#define BODYSOFTPLUS512 \
	VPORD ZSIGN, Z0, Z5; \
	VMAXPS Z5, ZLO, Z5; \
	EXP512(Z5, Z6); \
	VCMPPS.BCST $0x1e, SPLIT, Z6, K2; \
	VPXORD Z7, Z7, Z7; \
	VMOVAPS ZLN2, K2, Z7; \
	VSUBPS ZONE, Z6, K2, Z6; \
	VMULPS ZP0, Z6, K2, Z6; \
	LOG1P512(Z6, Z1, Z2, Z3, Z4, Z5, Z8); \
	VADDPS Z3, Z7, Z7; \
	VMAXPS.BCST ZERO, Z0, Z0; \
	VADDPS Z7, Z0, Z0

// ln x = e·ln2hi + (e·ln2lo + L(m − 1)) with x = 2ᵉ·m, m in [√2/2, √2):
// VGETEXPPS and VGETMANTPS (interval [1, 2), sign cleared) split x, denormals
// included, then m ≥ √2 is halved. ±0 gives e = −Inf, so −Inf; +Inf gives
// e = +Inf and m = 1, so +Inf; NaN stays NaN; x < 0 is set to NaN after.
#define BODYLOG512 \
	VGETEXPPS Z0, Z1; \
	VGETMANTPS $4, Z0, Z2; \
	VCMPPS $0x0d, ZTWO, Z2, K2; \
	VMULPS ZP0, Z2, K2, Z2; \
	VADDPS ZONE, Z1, K2, Z1; \
	VSUBPS ZONE, Z2, Z2; \
	LOG1P512(Z2, Z3, Z4, Z5, Z6, Z7, Z8); \
	VFMADD231PS ZLN2LO, Z1, Z5; \
	VFMADD231PS ZLN2HI, Z1, Z5; \
	VCMPPS.BCST $0x11, ZERO, Z0, K3; \
	VBROADCASTSS QNAN, K3, Z5; \
	VMOVAPS Z5, Z0

#define BODYSQRT512 \
	VSQRTPS Z0, Z0

// CLEARZ16TO31 zeroes Z16–Z31, which VZEROUPPER leaves alone. Left holding
// constants, they slowed the SSE code that ran afterwards (math.Log, by
// 15% for as long as the program ran, on this package's Zen 5 test machine).
#define CLEARZ16TO31 \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31

// LOOP512 runs BODY over z = DI, x = SI, n = CX.
#define LOOP512(BODY) \
loop: \
	CMPQ CX, $16; \
	JB tail; \
	VMOVUPS (SI), Z0; \
	BODY; \
	VMOVUPS Z0, (DI); \
	ADDQ $64, SI; \
	ADDQ $64, DI; \
	SUBQ $16, CX; \
	JMP loop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
	KMOVW AX, K1; \
	VMOVUPS.Z (SI), K1, Z0; \
	BODY; \
	VMOVUPS Z0, K1, (DI); \
done: \
	CLEARZ16TO31; \
	VZEROUPPER; \
	RET

// func expAVX512(z, x []float32)
TEXT ·expAVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOADEXP512
	VBROADCASTSS EXPMIN, ZLO
	VBROADCASTSS EXPMAX, ZHI
	LOOP512(BODYEXP512)

// func tanhAVX512(z, x []float32)
TEXT ·tanhAVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOADEXP512
	VBROADCASTSS TANHMAX, ZHI
	VBROADCASTSS ABSMASK, ZABS
	VBROADCASTSS SIGNBIT, ZSIGN
	VBROADCASTSS TWO, ZTWO
	LOOP512(BODYTANH512)

// func sigmoidAVX512(z, x []float32)
TEXT ·sigmoidAVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOADEXP512
	VBROADCASTSS EXPMIN, ZLO
	VBROADCASTSS SIGNBIT, ZSIGN
	LOOP512(BODYSIGMOID512)

// func softplusAVX512(z, x []float32)
TEXT ·softplusAVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOADEXP512
	LOADLOG512
	VBROADCASTSS EXPMIN, ZLO
	VBROADCASTSS SIGNBIT, ZSIGN
	VBROADCASTSS LN2, ZLN2
	LOOP512(BODYSOFTPLUS512)

// func logAVX512(z, x []float32)
TEXT ·logAVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOADLOG512
	VBROADCASTSS LN2HI, ZLN2HI
	VBROADCASTSS LN2LO, ZLN2LO
	VBROADCASTSS P0, ZP0
	VBROADCASTSS ONE, ZONE
	VBROADCASTSS SQRT2, ZTWO
	LOOP512(BODYLOG512)

// func sqrtAVX512(z, x []float32)
TEXT ·sqrtAVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOOP512(BODYSQRT512)

// The ReLU kernels and the backward maps. The maps with two sources have
// the Go signature func(z, g, y []float32) (with slope float32 after them
// for LeakyReLU): Z0 holds g and Z1 holds y on entry to a body, and the
// new z on exit (the AVX2 bodies likewise in Y0 and Y1). The ReLU kernels
// keep 0 in Z9 and the slope in Z10.

#define ZZERO Z9
#define ZSLOPE Z10

// relu: x where x > 0 or x is NaN (predicate NLE_UQ), else +0.
#define BODYRELU512 \
	VCMPPS $0x06, ZZERO, Z0, K2; \
	VMOVAPS.Z Z0, K2, Z0

// leaky: slope·x where x ≤ 0 (LE_OQ: NaN stays itself), else x.
#define BODYLEAKY512 \
	VCMPPS $0x12, ZZERO, Z0, K2; \
	VMULPS ZSLOPE, Z0, K2, Z0

// tanh′: g·(1 − y²), 1 − y² in one fused, once-rounded step.
#define BODYTANHBWD512 \
	VMOVAPS ZONE, Z2; \
	VFNMADD231PS Z1, Z1, Z2; \
	VMULPS Z2, Z0, Z0

// σ′: g·(y − y²), likewise.
#define BODYSIGMOIDBWD512 \
	VMOVAPS Z1, Z2; \
	VFNMADD231PS Z1, Z1, Z2; \
	VMULPS Z2, Z0, Z0

// softplus′: g·((1 − 2ᵏ) − 2ᵏ·expm1(r)), −y = k·ln2 + r clamped to
// [−30, 88] in ZLO and ZHI (a NaN y gets through).
#define BODYSOFTPLUSBWD512 \
	VPXORD ZSIGN, Z1, Z1; \
	VMAXPS Z1, ZLO, Z1; \
	VMINPS Z1, ZHI, Z1; \
	REDUCE512(Z1, Z2, Z3); \
	EXPM1512(Z3, Z4, Z5, Z6); \
	VSCALEFPS Z2, ZONE, Z7; \
	VSUBPS Z7, ZONE, Z8; \
	VFNMADD231PS Z6, Z7, Z8; \
	VMULPS Z8, Z0, Z0

// ReLU′: g where y > 0 (GT_OQ), else +0.
#define BODYRELUBWD512 \
	VCMPPS $0x1e, ZZERO, Z1, K2; \
	VMOVAPS.Z Z0, K2, Z0

// LeakyReLU′: slope·g where y is not > 0 (NGT_UQ), else g.
#define BODYLEAKYBWD512 \
	VCMPPS $0x1a, ZZERO, Z1, K2; \
	VMULPS ZSLOPE, Z0, K2, Z0

// ACC512 adds z (loaded through K1, all ones in the main loop) to Z0;
// NOACC512 does nothing.
#define ACC512 \
	VMOVUPS.Z (DI), K1, Z2; \
	VADDPS Z2, Z0, Z0

#define NOACC512 \
	NOP

// LOOP3_512 runs BODY, then ACC, over z = DI, g = SI, y = DX, n = CX.
#define LOOP3_512(BODY, ACC) \
	KXNORW K1, K1, K1; \
loop: \
	CMPQ CX, $16; \
	JB tail; \
	VMOVUPS (SI), Z0; \
	VMOVUPS (DX), Z1; \
	BODY; \
	ACC; \
	VMOVUPS Z0, (DI); \
	ADDQ $64, SI; \
	ADDQ $64, DX; \
	ADDQ $64, DI; \
	SUBQ $16, CX; \
	JMP loop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
	KMOVW AX, K1; \
	VMOVUPS.Z (SI), K1, Z0; \
	VMOVUPS.Z (DX), K1, Z1; \
	BODY; \
	ACC; \
	VMOVUPS Z0, K1, (DI); \
done: \
	CLEARZ16TO31; \
	VZEROUPPER; \
	RET

// func reluAVX512(z, x []float32)
TEXT ·reluAVX512(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VPXORD ZZERO, ZZERO, ZZERO
	LOOP512(BODYRELU512)

// func leakyAVX512(z, x []float32, slope float32)
TEXT ·leakyAVX512(SB), NOSPLIT, $0-52
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS slope+48(FP), ZSLOPE
	VPXORD ZZERO, ZZERO, ZZERO
	LOOP512(BODYLEAKY512)

// func tanhBwdAVX512(z, g, y []float32)
TEXT ·tanhBwdAVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS ONE, ZONE
	LOOP3_512(BODYTANHBWD512, NOACC512)

// func tanhBwdAccAVX512(z, g, y []float32)
TEXT ·tanhBwdAccAVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS ONE, ZONE
	LOOP3_512(BODYTANHBWD512, ACC512)

// func sigmoidBwdAVX512(z, g, y []float32)
TEXT ·sigmoidBwdAVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOOP3_512(BODYSIGMOIDBWD512, NOACC512)

// func sigmoidBwdAccAVX512(z, g, y []float32)
TEXT ·sigmoidBwdAccAVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOOP3_512(BODYSIGMOIDBWD512, ACC512)

#define LOADSOFTPLUSBWD512 \
	LOADEXP512; \
	VBROADCASTSS SPBWDLO, ZLO; \
	VBROADCASTSS SPBWDHI, ZHI; \
	VBROADCASTSS SIGNBIT, ZSIGN

// func softplusBwdAVX512(z, g, y []float32)
TEXT ·softplusBwdAVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOADSOFTPLUSBWD512
	LOOP3_512(BODYSOFTPLUSBWD512, NOACC512)

// func softplusBwdAccAVX512(z, g, y []float32)
TEXT ·softplusBwdAccAVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOADSOFTPLUSBWD512
	LOOP3_512(BODYSOFTPLUSBWD512, ACC512)

// func reluBwdAVX512(z, g, y []float32)
TEXT ·reluBwdAVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VPXORD ZZERO, ZZERO, ZZERO
	LOOP3_512(BODYRELUBWD512, NOACC512)

// func reluBwdAccAVX512(z, g, y []float32)
TEXT ·reluBwdAccAVX512(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VPXORD ZZERO, ZZERO, ZZERO
	LOOP3_512(BODYRELUBWD512, ACC512)

// func leakyBwdAVX512(z, g, y []float32, slope float32)
TEXT ·leakyBwdAVX512(SB), NOSPLIT, $0-76
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS slope+72(FP), ZSLOPE
	VPXORD ZZERO, ZZERO, ZZERO
	LOOP3_512(BODYLEAKYBWD512, NOACC512)

// func leakyBwdAccAVX512(z, g, y []float32, slope float32)
TEXT ·leakyBwdAccAVX512(SB), NOSPLIT, $0-76
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS slope+72(FP), ZSLOPE
	VPXORD ZZERO, ZZERO, ZZERO
	LOOP3_512(BODYLEAKYBWD512, ACC512)

// ---------------------------------------------------------------------------
// AVX2 + FMA: 8 lanes. Y0 holds x on entry to a body and f(x) on exit; Y1–Y7
// are scratch; the constants are memory operands, except those that must be
// registers: the clamps (whose NaN rule fixes the operand order) and the
// blend's other source.

#define YONE Y8
#define YLO Y9  // expMin
#define YHI Y10 // expMax, or 9.5 for tanh

// REDUCE256 sets T = X·log₂e + magic (two roundings, as in Go), whose low
// mantissa bits hold k = round(X·log₂e), and R = X − k·ln2hi − k·ln2lo;
// it uses K.
#define REDUCE256(X, T, K, R) \
	VMULPS LOG2E, X, T; \
	VADDPS MAGIC, T, T; \
	VSUBPS MAGIC, T, K; \
	VMOVAPS X, R; \
	VFNMADD231PS LN2HI, K, R; \
	VFNMADD231PS LN2LO, K, R

// EXPM1256 sets B = eᴿ − 1 = R + R²·P(R), using R2, A.
#define EXPM1256(R, R2, A, B) \
	VMULPS R, R, R2; \
	VMOVUPS P1, A; \
	VFMADD213PS P0, R, A; \
	VMOVUPS P3, B; \
	VFMADD213PS P2, R, B; \
	VFMADD231PS P4, R2, B; \
	VFMADD231PS B, R2, A; \
	VMOVAPS R, B; \
	VFMADD231PS A, R2, B

// EXP256 sets Y = e^X for X in [expMin, expMax] or NaN: (1 + expm1(r))
// scaled by 2^⌊k/2⌋ and then 2^(k − ⌊k/2⌋), both exact powers of two, so
// that k in [−150, 128] works and a denormal result is rounded once. It
// uses Y1–Y4.
#define EXP256(X, Y) \
	REDUCE256(X, Y1, Y2, Y3); \
	EXPM1256(Y3, Y4, Y2, Y); \
	VADDPS YONE, Y, Y; \
	VPSUBD MAGIC, Y1, Y1; \
	VPSRAD $1, Y1, Y2; \
	VPSUBD Y2, Y1, Y1; \
	VPADDD BIAS, Y2, Y2; \
	VPADDD BIAS, Y1, Y1; \
	VPSLLD $23, Y2, Y2; \
	VPSLLD $23, Y1, Y1; \
	VMULPS Y2, Y, Y; \
	VMULPS Y1, Y, Y

// LOG1P256 sets A = ln(1 + F) = F + F²·Q(F), using F2, F4, B, C.
#define LOG1P256(F, F2, F4, A, B, C) \
	VMULPS F, F, F2; \
	VMULPS F2, F2, F4; \
	VMOVUPS Q1, A; \
	VFMADD213PS Q0, F, A; \
	VMOVUPS Q3, B; \
	VFMADD213PS Q2, F, B; \
	VFMADD231PS B, F2, A; \
	VMOVUPS Q5, C; \
	VFMADD213PS Q4, F, C; \
	VMOVUPS Q7, B; \
	VFMADD213PS Q6, F, B; \
	VFMADD231PS B, F2, C; \
	VFMADD231PS Q8, F4, C; \
	VFMADD231PS C, F4, A; \
	VFMADD213PS F, F2, A

#define BODYEXP256 \
	VMAXPS Y0, YLO, Y0; \
	VMINPS Y0, YHI, Y0; \
	EXP256(Y0, Y0)

// tanh: as BODYTANH512, with 2ᵏ made from the bits of T (k is in [0, 28]).
#define BODYTANH256 \
	VANDPS ABSMASK, Y0, Y5; \
	VMINPS Y5, YHI, Y5; \
	VADDPS Y5, Y5, Y5; \
	REDUCE256(Y5, Y1, Y2, Y3); \
	EXPM1256(Y3, Y4, Y2, Y6); \
	VPSLLD $23, Y1, Y1; \
	VPADDD YONE, Y1, Y1; \
	VSUBPS YONE, Y1, Y7; \
	VFMADD231PS Y6, Y1, Y7; \
	VADDPS TWO, Y7, Y1; \
	VDIVPS Y1, Y7, Y7; \
	VANDPS SIGNBIT, Y0, Y0; \
	VORPS Y7, Y0, Y0

// σ: as BODYSIGMOID512; VBLENDVPS selects by the sign bit of x itself.
#define BODYSIGMOID256 \
	VORPS SIGNBIT, Y0, Y5; \
	VMAXPS Y5, YLO, Y5; \
	EXP256(Y5, Y6); \
	VBLENDVPS Y0, Y6, YONE, Y7; \
	VADDPS YONE, Y6, Y6; \
	VDIVPS Y6, Y7, Y0

#define BODYSOFTPLUS256 \
	VORPS SIGNBIT, Y0, Y5; \
	VMAXPS Y5, YLO, Y5; \
	EXP256(Y5, Y6); \
	VCMPPS $0x1e, SPLIT, Y6, Y7; \
	VSUBPS YONE, Y6, Y5; \
	VMULPS P0, Y5, Y5; \
	VBLENDVPS Y7, Y5, Y6, Y6; \
	VANDPS LN2, Y7, Y7; \
	LOG1P256(Y6, Y1, Y2, Y3, Y4, Y5); \
	VADDPS Y3, Y7, Y7; \
	VMAXPS ZERO, Y0, Y0; \
	VADDPS Y7, Y0, Y0

// ln: as the Go code, from the bits; denormals are scaled by 2²³ first.
// Then 0 → −Inf, x < 0 or NaN → NaN, +Inf → +Inf.
#define BODYLOG256 \
	VCMPPS $0x11, MINNORM, Y0, Y1; \
	VMULPS TWO23, Y0, Y2; \
	VBLENDVPS Y1, Y2, Y0, Y2; \
	VPSUBD SQRTHALF, Y2, Y2; \
	VPSRAD $23, Y2, Y7; \
	VCVTDQ2PS Y7, Y7; \
	VANDPS C23, Y1, Y1; \
	VSUBPS Y1, Y7, Y7; \
	VPAND MANTMASK, Y2, Y2; \
	VPADDD SQRTHALF, Y2, Y2; \
	VSUBPS YONE, Y2, Y2; \
	LOG1P256(Y2, Y3, Y4, Y5, Y6, Y1); \
	VFMADD231PS LN2LO, Y7, Y5; \
	VFMADD231PS LN2HI, Y7, Y5; \
	VCMPPS $0x19, ZERO, Y0, Y1; \
	VBLENDVPS Y1, QNAN, Y5, Y5; \
	VCMPPS $0x00, ZERO, Y0, Y1; \
	VBLENDVPS Y1, NINF, Y5, Y5; \
	VCMPPS $0x00, PINF, Y0, Y1; \
	VBLENDVPS Y1, Y0, Y5, Y0

#define BODYSQRT256 \
	VSQRTPS Y0, Y0

// LOOP256 runs BODY over z = DI, x = SI, n = CX; the tail's mask is read
// from vecTailMask (R8), before the body and again after it.
#define LOOP256(BODY) \
loop: \
	CMPQ CX, $8; \
	JB tail; \
	VMOVUPS (SI), Y0; \
	BODY; \
	VMOVUPS Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DI; \
	SUBQ $8, CX; \
	JMP loop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	LEAQ ·vecTailMask+32(SB), R8; \
	SHLQ $2, CX; \
	SUBQ CX, R8; \
	VMOVDQU (R8), Y1; \
	VMASKMOVPS (SI), Y1, Y0; \
	BODY; \
	VMOVDQU (R8), Y1; \
	VMASKMOVPS Y0, Y1, (DI); \
done: \
	VZEROUPPER; \
	RET

// func expAVX2(z, x []float32)
TEXT ·expAVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS ONE, YONE
	VBROADCASTSS EXPMIN, YLO
	VBROADCASTSS EXPMAX, YHI
	LOOP256(BODYEXP256)

// func tanhAVX2(z, x []float32)
TEXT ·tanhAVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS ONE, YONE
	VBROADCASTSS TANHMAX, YHI
	LOOP256(BODYTANH256)

// func sigmoidAVX2(z, x []float32)
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS ONE, YONE
	VBROADCASTSS EXPMIN, YLO
	LOOP256(BODYSIGMOID256)

// func softplusAVX2(z, x []float32)
TEXT ·softplusAVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS ONE, YONE
	VBROADCASTSS EXPMIN, YLO
	LOOP256(BODYSOFTPLUS256)

// func logAVX2(z, x []float32)
TEXT ·logAVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS ONE, YONE
	LOOP256(BODYLOG256)

// func sqrtAVX2(z, x []float32)
TEXT ·sqrtAVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	LOOP256(BODYSQRT256)

// The ReLU kernels and the backward maps (see above the AVX-512 ones). The
// ReLU kernels keep 0 in Y11 and the slope in Y12; LOOP3_256 keeps the
// tail's mask in Y15.

#define YZERO Y11
#define YSLOPE Y12

// relu: x where x > 0 or NaN (NLE_UQ), else +0.
#define BODYRELU256 \
	VCMPPS $0x06, YZERO, Y0, Y1; \
	VANDPS Y1, Y0, Y0

// leaky: x where x > 0 (GT_OQ), else slope·x.
#define BODYLEAKY256 \
	VMULPS YSLOPE, Y0, Y2; \
	VCMPPS $0x1e, YZERO, Y0, Y1; \
	VBLENDVPS Y1, Y0, Y2, Y0

#define BODYTANHBWD256 \
	VMOVAPS YONE, Y2; \
	VFNMADD231PS Y1, Y1, Y2; \
	VMULPS Y2, Y0, Y0

#define BODYSIGMOIDBWD256 \
	VMOVAPS Y1, Y2; \
	VFNMADD231PS Y1, Y1, Y2; \
	VMULPS Y2, Y0, Y0

// softplus′: as BODYSOFTPLUSBWD512, with 2ᵏ made from the bits of T (k is
// in [−44, 127]).
#define BODYSOFTPLUSBWD256 \
	VXORPS SIGNBIT, Y1, Y5; \
	VMAXPS Y5, YLO, Y5; \
	VMINPS Y5, YHI, Y5; \
	REDUCE256(Y5, Y1, Y2, Y3); \
	EXPM1256(Y3, Y4, Y2, Y6); \
	VPSLLD $23, Y1, Y1; \
	VPADDD YONE, Y1, Y1; \
	VSUBPS Y1, YONE, Y7; \
	VFNMADD231PS Y6, Y1, Y7; \
	VMULPS Y7, Y0, Y0

// ReLU′: g where y > 0 (GT_OQ), else +0.
#define BODYRELUBWD256 \
	VCMPPS $0x1e, YZERO, Y1, Y2; \
	VANDPS Y2, Y0, Y0

// LeakyReLU′: g where y > 0, else slope·g.
#define BODYLEAKYBWD256 \
	VMULPS YSLOPE, Y0, Y3; \
	VCMPPS $0x1e, YZERO, Y1, Y2; \
	VBLENDVPS Y2, Y0, Y3, Y0

// ACC256 adds z to Y0 in the main loop, ACCTAIL256 in the tail (through
// the mask in Y15); NOACC256 does nothing.
#define ACC256 \
	VADDPS (DI), Y0, Y0

#define ACCTAIL256 \
	VMASKMOVPS (DI), Y15, Y2; \
	VADDPS Y2, Y0, Y0

#define NOACC256 \
	NOP

// LOOP3_256 runs BODY, then ACC (ACCT in the tail), over z = DI, g = SI,
// y = DX, n = CX.
#define LOOP3_256(BODY, ACC, ACCT) \
loop: \
	CMPQ CX, $8; \
	JB tail; \
	VMOVUPS (SI), Y0; \
	VMOVUPS (DX), Y1; \
	BODY; \
	ACC; \
	VMOVUPS Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DX; \
	ADDQ $32, DI; \
	SUBQ $8, CX; \
	JMP loop; \
tail: \
	TESTQ CX, CX; \
	JZ done; \
	LEAQ ·vecTailMask+32(SB), R8; \
	SHLQ $2, CX; \
	SUBQ CX, R8; \
	VMOVDQU (R8), Y15; \
	VMASKMOVPS (SI), Y15, Y0; \
	VMASKMOVPS (DX), Y15, Y1; \
	BODY; \
	ACCT; \
	VMASKMOVPS Y0, Y15, (DI); \
done: \
	VZEROUPPER; \
	RET

// func reluAVX2(z, x []float32)
TEXT ·reluAVX2(SB), NOSPLIT, $0-48
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VXORPS YZERO, YZERO, YZERO
	LOOP256(BODYRELU256)

// func leakyAVX2(z, x []float32, slope float32)
TEXT ·leakyAVX2(SB), NOSPLIT, $0-52
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS slope+48(FP), YSLOPE
	VXORPS YZERO, YZERO, YZERO
	LOOP256(BODYLEAKY256)

// func tanhBwdAVX2(z, g, y []float32)
TEXT ·tanhBwdAVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS ONE, YONE
	LOOP3_256(BODYTANHBWD256, NOACC256, NOACC256)

// func tanhBwdAccAVX2(z, g, y []float32)
TEXT ·tanhBwdAccAVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS ONE, YONE
	LOOP3_256(BODYTANHBWD256, ACC256, ACCTAIL256)

// func sigmoidBwdAVX2(z, g, y []float32)
TEXT ·sigmoidBwdAVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOOP3_256(BODYSIGMOIDBWD256, NOACC256, NOACC256)

// func sigmoidBwdAccAVX2(z, g, y []float32)
TEXT ·sigmoidBwdAccAVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	LOOP3_256(BODYSIGMOIDBWD256, ACC256, ACCTAIL256)

// func softplusBwdAVX2(z, g, y []float32)
TEXT ·softplusBwdAVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS ONE, YONE
	VBROADCASTSS SPBWDLO, YLO
	VBROADCASTSS SPBWDHI, YHI
	LOOP3_256(BODYSOFTPLUSBWD256, NOACC256, NOACC256)

// func softplusBwdAccAVX2(z, g, y []float32)
TEXT ·softplusBwdAccAVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS ONE, YONE
	VBROADCASTSS SPBWDLO, YLO
	VBROADCASTSS SPBWDHI, YHI
	LOOP3_256(BODYSOFTPLUSBWD256, ACC256, ACCTAIL256)

// func reluBwdAVX2(z, g, y []float32)
TEXT ·reluBwdAVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VXORPS YZERO, YZERO, YZERO
	LOOP3_256(BODYRELUBWD256, NOACC256, NOACC256)

// func reluBwdAccAVX2(z, g, y []float32)
TEXT ·reluBwdAccAVX2(SB), NOSPLIT, $0-72
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VXORPS YZERO, YZERO, YZERO
	LOOP3_256(BODYRELUBWD256, ACC256, ACCTAIL256)

// func leakyBwdAVX2(z, g, y []float32, slope float32)
TEXT ·leakyBwdAVX2(SB), NOSPLIT, $0-76
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS slope+72(FP), YSLOPE
	VXORPS YZERO, YZERO, YZERO
	LOOP3_256(BODYLEAKYBWD256, NOACC256, NOACC256)

// func leakyBwdAccAVX2(z, g, y []float32, slope float32)
TEXT ·leakyBwdAccAVX2(SB), NOSPLIT, $0-76
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ y_base+48(FP), DX
	VBROADCASTSS slope+72(FP), YSLOPE
	VXORPS YZERO, YZERO, YZERO
	LOOP3_256(BODYLEAKYBWD256, ACC256, ACCTAIL256)
