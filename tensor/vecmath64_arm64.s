//go:build !purego

#include "textflag.h"
#include "vecmath_neon_arm64.h"

// The NEON (Advanced SIMD) kernels of vecmath64.go: 2 float64 lanes in the
// 128-bit V registers, with the loops of vecmath_arm64.s (the last element
// of an odd length is loaded into a zeroed register, goes through the same
// body and is stored alone). The algorithms, constants and order of
// operations are those of the AVX2 kernels (vecmath64_amd64.s), except
// that ⌊k/2⌋ in the exponential's scaling is an arithmetic shift of the
// integer k, as in the Go code, where AVX2 rounds k/2 down as a float (the
// same value). V0 holds x on entry to a body and f(x) on exit; V1–V11 are
// scratch; the constants are in V12–V31. The polynomials' coefficients
// come from two tables of 16 constants, each repeated twice (16 bytes),
// loaded into V12–V27 with four VLD1s: neon64Exp (1/2! … 1/13!, log₂e,
// magic, ln2hi, ln2lo) and neon64Log (2/3 … 2/21, 2, ½, log1pSplit, ln2,
// ln2hi, ln2lo). softplus, which needs both, loads each once per
// iteration.

DATA ·neon64Exp+0(SB)/8, $0x3fe0000000000000 // 1/2!
DATA ·neon64Exp+8(SB)/8, $0x3fe0000000000000
DATA ·neon64Exp+16(SB)/8, $0x3fc5555555555555 // 1/3!
DATA ·neon64Exp+24(SB)/8, $0x3fc5555555555555
DATA ·neon64Exp+32(SB)/8, $0x3fa5555555555555 // 1/4!
DATA ·neon64Exp+40(SB)/8, $0x3fa5555555555555
DATA ·neon64Exp+48(SB)/8, $0x3f81111111111111 // 1/5!
DATA ·neon64Exp+56(SB)/8, $0x3f81111111111111
DATA ·neon64Exp+64(SB)/8, $0x3f56c16c16c16c17 // 1/6!
DATA ·neon64Exp+72(SB)/8, $0x3f56c16c16c16c17
DATA ·neon64Exp+80(SB)/8, $0x3f2a01a01a01a01a // 1/7!
DATA ·neon64Exp+88(SB)/8, $0x3f2a01a01a01a01a
DATA ·neon64Exp+96(SB)/8, $0x3efa01a01a01a01a // 1/8!
DATA ·neon64Exp+104(SB)/8, $0x3efa01a01a01a01a
DATA ·neon64Exp+112(SB)/8, $0x3ec71de3a556c734 // 1/9!
DATA ·neon64Exp+120(SB)/8, $0x3ec71de3a556c734
DATA ·neon64Exp+128(SB)/8, $0x3e927e4fb7789f5c // 1/10!
DATA ·neon64Exp+136(SB)/8, $0x3e927e4fb7789f5c
DATA ·neon64Exp+144(SB)/8, $0x3e5ae64567f544e4 // 1/11!
DATA ·neon64Exp+152(SB)/8, $0x3e5ae64567f544e4
DATA ·neon64Exp+160(SB)/8, $0x3e21eed8eff8d898 // 1/12!
DATA ·neon64Exp+168(SB)/8, $0x3e21eed8eff8d898
DATA ·neon64Exp+176(SB)/8, $0x3de6124613a86d09 // 1/13!
DATA ·neon64Exp+184(SB)/8, $0x3de6124613a86d09
DATA ·neon64Exp+192(SB)/8, $0x3ff71547652b82fe // log₂e
DATA ·neon64Exp+200(SB)/8, $0x3ff71547652b82fe
DATA ·neon64Exp+208(SB)/8, $0x4338000000000000 // magic = 1.5·2⁵²
DATA ·neon64Exp+216(SB)/8, $0x4338000000000000
DATA ·neon64Exp+224(SB)/8, $0x3fe62e42fee00000 // ln2hi
DATA ·neon64Exp+232(SB)/8, $0x3fe62e42fee00000
DATA ·neon64Exp+240(SB)/8, $0x3dea39ef35793c76 // ln2lo
DATA ·neon64Exp+248(SB)/8, $0x3dea39ef35793c76
GLOBL ·neon64Exp(SB), RODATA|NOPTR, $256

DATA ·neon64Log+0(SB)/8, $0x3fe5555555555555 // 2/3
DATA ·neon64Log+8(SB)/8, $0x3fe5555555555555
DATA ·neon64Log+16(SB)/8, $0x3fd999999999999a // 2/5
DATA ·neon64Log+24(SB)/8, $0x3fd999999999999a
DATA ·neon64Log+32(SB)/8, $0x3fd2492492492492 // 2/7
DATA ·neon64Log+40(SB)/8, $0x3fd2492492492492
DATA ·neon64Log+48(SB)/8, $0x3fcc71c71c71c71c // 2/9
DATA ·neon64Log+56(SB)/8, $0x3fcc71c71c71c71c
DATA ·neon64Log+64(SB)/8, $0x3fc745d1745d1746 // 2/11
DATA ·neon64Log+72(SB)/8, $0x3fc745d1745d1746
DATA ·neon64Log+80(SB)/8, $0x3fc3b13b13b13b14 // 2/13
DATA ·neon64Log+88(SB)/8, $0x3fc3b13b13b13b14
DATA ·neon64Log+96(SB)/8, $0x3fc1111111111111 // 2/15
DATA ·neon64Log+104(SB)/8, $0x3fc1111111111111
DATA ·neon64Log+112(SB)/8, $0x3fbe1e1e1e1e1e1e // 2/17
DATA ·neon64Log+120(SB)/8, $0x3fbe1e1e1e1e1e1e
DATA ·neon64Log+128(SB)/8, $0x3fbaf286bca1af28 // 2/19
DATA ·neon64Log+136(SB)/8, $0x3fbaf286bca1af28
DATA ·neon64Log+144(SB)/8, $0x3fb8618618618618 // 2/21
DATA ·neon64Log+152(SB)/8, $0x3fb8618618618618
DATA ·neon64Log+160(SB)/8, $0x4000000000000000 // 2
DATA ·neon64Log+168(SB)/8, $0x4000000000000000
DATA ·neon64Log+176(SB)/8, $0x3fe0000000000000 // ½
DATA ·neon64Log+184(SB)/8, $0x3fe0000000000000
DATA ·neon64Log+192(SB)/8, $0x3fda827999fcef32 // log1pSplit
DATA ·neon64Log+200(SB)/8, $0x3fda827999fcef32
DATA ·neon64Log+208(SB)/8, $0x3fe62e42fefa39ef // ln2
DATA ·neon64Log+216(SB)/8, $0x3fe62e42fefa39ef
DATA ·neon64Log+224(SB)/8, $0x3fe62e42fee00000 // ln2hi
DATA ·neon64Log+232(SB)/8, $0x3fe62e42fee00000
DATA ·neon64Log+240(SB)/8, $0x3dea39ef35793c76 // ln2lo
DATA ·neon64Log+248(SB)/8, $0x3dea39ef35793c76
GLOBL ·neon64Log(SB), RODATA|NOPTR, $256
#define EX2 12
#define EX3 13
#define EX4 14
#define EX5 15
#define EX6 16
#define EX7 17
#define EX8 18
#define EX9 19
#define EX10 20
#define EX11 21
#define EX12 22
#define EX13 23
#define LOG2E 24
#define MAGIC 25
#define LN2HI 26
#define LN2LO 27
#define LG1 12
#define LG2 13
#define LG3 14
#define LG4 15
#define LG5 16
#define LG6 17
#define LG7 18
#define LG8 19
#define LG9 20
#define LG10 21
#define TWO 22
#define HALF 23
#define SPLIT 24
#define LN2 25
#define ONE 28
#define LO 29 // lower clamp: expMin, or −40 in softplus′
#define HI 30 // upper clamp: expMax, 20 in tanh, 709 in softplus′
#define SIGN 31
#define TTWO 29 // tanh's 2 (tanh has no lower clamp)
#define ZERO 30 // softplus's 0 (it has no upper clamp)

// log's other constants.
#define MINNORM 8
#define TWO52 9
#define SQRTHALF 10
#define MANTMASK 11
#define QNAN 24
#define NINF 25
#define C52 29
#define LZERO 30
#define PINF 31

// LDC loads the float64 with the bits v into both lanes of V.
#define LDC(v, V) MOVD $v, R5; VDUP R5, V.D2

// LDTAB loads the table tab into V12–V27.
#define LDTAB(tab) \
	MOVD $tab(SB), R7; \
	VLD1.P 64(R7), [V12.D2, V13.D2, V14.D2, V15.D2]; \
	VLD1.P 64(R7), [V16.D2, V17.D2, V18.D2, V19.D2]; \
	VLD1.P 64(R7), [V20.D2, V21.D2, V22.D2, V23.D2]; \
	VLD1 (R7), [V24.D2, V25.D2, V26.D2, V27.D2]

// REDUCE sets T = X·log₂e + magic (two roundings, as in Go), whose low
// mantissa bits hold k = round(X·log₂e), and R = X − k·ln2hi − k·ln2lo
// (each step fused); it uses K.
#define REDUCE(X, T, K, R) \
	FMUL2(LOG2E, X, T); \
	FADD2(MAGIC, T, T); \
	FSUB2(MAGIC, T, K); \
	MOV16(X, R); \
	FMLS2(LN2HI, K, R); \
	FMLS2(LN2LO, K, R)

// EXPM1 sets Y = eᴿ − 1 = R + W·(E(W) + R·O(W)), W = R², the two Horner
// chains alternating between A and TA, B and TB (Y may be A, B or TB).
#define EXPM1(R, W, A, TA, B, TB, Y) \
	FMUL2(R, R, W); \
	MOV16(EX12, A); \
	MOV16(EX10, TA); \
	FMLA2(A, W, TA); \
	MOV16(EX8, A); \
	FMLA2(TA, W, A); \
	MOV16(EX6, TA); \
	FMLA2(A, W, TA); \
	MOV16(EX4, A); \
	FMLA2(TA, W, A); \
	MOV16(EX2, TA); \
	FMLA2(A, W, TA); \
	MOV16(EX13, B); \
	MOV16(EX11, TB); \
	FMLA2(B, W, TB); \
	MOV16(EX9, B); \
	FMLA2(TB, W, B); \
	MOV16(EX7, TB); \
	FMLA2(B, W, TB); \
	MOV16(EX5, B); \
	FMLA2(TB, W, B); \
	MOV16(EX3, TB); \
	FMLA2(B, W, TB); \
	FMLA2(TB, R, TA); \
	MOV16(R, Y); \
	FMLA2(TA, W, Y)

// EXP sets Y = e^X for X in [expMin, expMax] or NaN: (1 + expm1(r))
// scaled by 2^k1 and then 2^(k − k1), k1 = ⌊k/2⌋, both exact powers of
// two (k1·2⁵² plus the bits of 1), so that k in [−1077, 1025] works and a
// denormal result is rounded once. It uses V1–V4 and V8–V10.
#define EXP(X, Y) \
	REDUCE(X, 1, 2, 3); \
	EXPM1(3, 4, 2, 8, 9, 10, Y); \
	FADD2(ONE, Y, Y); \
	SUB2(MAGIC, 1, 1); \
	SSHR2(1, 1, 2); \
	SUB2(2, 1, 1); \
	SHL2(52, 2, 2); \
	ADD2(ONE, 2, 2); \
	SHL2(52, 1, 1); \
	ADD2(ONE, 1, 1); \
	FMUL2(2, Y, Y); \
	FMUL2(1, Y, Y)

// LOG1PCORR sets B = c with ln(1 + F) = F − c: c = F²/2 − S·(F²/2 + R),
// S = F/(2 + F), R = W·(lg1 + W·(lg2 + …)), W = S² (the chain alternates
// between A and TA).
#define LOG1PCORR(F, S, W, A, TA, B) \
	FADD2(TWO, F, B); \
	FDIV2(B, F, S); \
	FMUL2(S, S, W); \
	MOV16(LG10, A); \
	MOV16(LG9, TA); \
	FMLA2(A, W, TA); \
	MOV16(LG8, A); \
	FMLA2(TA, W, A); \
	MOV16(LG7, TA); \
	FMLA2(A, W, TA); \
	MOV16(LG6, A); \
	FMLA2(TA, W, A); \
	MOV16(LG5, TA); \
	FMLA2(A, W, TA); \
	MOV16(LG4, A); \
	FMLA2(TA, W, A); \
	MOV16(LG3, TA); \
	FMLA2(A, W, TA); \
	MOV16(LG2, A); \
	FMLA2(TA, W, A); \
	MOV16(LG1, TA); \
	FMLA2(A, W, TA); \
	FMUL2(W, TA, A); \
	FMUL2(HALF, F, B); \
	FMUL2(F, B, B); \
	FADD2(B, A, A); \
	FMLS2(A, S, B)

#define BODYEXP \
	FMAX2(LO, 0, 0); \
	FMIN2(HI, 0, 0); \
	EXP(0, 0)

// tanh|x| = t/(t + 2), t = e^2a − 1 = 2ᵏ·expm1(r) + (2ᵏ − 1), a =
// min(|x|, 20) (k is in [0, 58]); the quotient y = t/d, d = t + 2, is
// corrected by (t − y·d − y·e)/d, e = (max(t, 2) − d) + min(t, 2); the
// sign of x is put back with an or.
#define BODYTANH \
	FABS2(0, 5); \
	FMIN2(HI, 5, 5); \
	FADD2(5, 5, 5); \
	REDUCE(5, 1, 2, 3); \
	EXPM1(3, 4, 2, 8, 9, 10, 6); \
	SHL2(52, 1, 1); \
	ADD2(ONE, 1, 1); \
	FSUB2(ONE, 1, 7); \
	FMLA2(6, 1, 7); \
	FADD2(TTWO, 7, 1); \
	FMAX2(TTWO, 7, 2); \
	FSUB2(1, 2, 2); \
	FMIN2(TTWO, 7, 3); \
	FADD2(3, 2, 2); \
	FDIV2(1, 7, 3); \
	FMLS2(3, 1, 7); \
	FMLS2(3, 2, 7); \
	FDIV2(1, 7, 7); \
	FADD2(7, 3, 7); \
	AND16(SIGN, 0, 0); \
	ORR16(7, 0, 0)

// σ(x) = n/(1 + e), e = e^−|x|, n = e where x has its sign bit set, else 1.
#define BODYSIGMOID \
	ORR16(SIGN, 0, 5); \
	FMAX2(LO, 5, 5); \
	EXP(5, 6); \
	SSHR2(63, 0, 7); \
	BSL16(ONE, 6, 7); \
	FADD2(ONE, 6, 6); \
	FDIV2(6, 7, 0)

// softplus(x) = max(x, 0) + log1p(u), u = e^−|x|; log1p(u) = u − c(u), or
// ln2 + (f − c(f)), f = (u − 1)/2, for u above √2 − 1. The exponential's
// table is loaded before the body (LOOP's PRE), log1p's in the middle.
#define BODYSOFTPLUS \
	ORR16(SIGN, 0, 5); \
	FMAX2(LO, 5, 5); \
	EXP(5, 6); \
	LDTAB(·neon64Log); \
	FCMGT2(SPLIT, 6, 7); \
	FSUB2(ONE, 6, 5); \
	FMUL2(HALF, 5, 5); \
	BIT16(7, 5, 6); \
	AND16(LN2, 7, 7); \
	LOG1PCORR(6, 1, 2, 3, 4, 5); \
	FSUB2(5, 6, 5); \
	FADD2(5, 7, 7); \
	FMAX2(ZERO, 0, 0); \
	FADD2(7, 0, 0)

// ln x = e·ln2hi + (f − (c(f) − e·ln2lo)), x = 2ᵉ·(1 + f) read from the
// bits as in the Go code; denormals are scaled by 2⁵² first. Then x < 0
// or NaN → NaN, ±0 → −Inf, +Inf → +Inf.
#define BODYLOG \
	FCMGT2(0, MINNORM, 1); \
	FMUL2(TWO52, 0, 2); \
	BIF16(1, 0, 2); \
	SUB2(SQRTHALF, 2, 2); \
	SSHR2(52, 2, 7); \
	SCVTF2(7, 7); \
	AND16(C52, 1, 1); \
	FSUB2(1, 7, 7); \
	AND16(MANTMASK, 2, 2); \
	ADD2(SQRTHALF, 2, 2); \
	FSUB2(ONE, 2, 2); \
	LOG1PCORR(2, 3, 4, 5, 6, 1); \
	FMLS2(LN2LO, 7, 1); \
	FSUB2(1, 2, 1); \
	FMLA2(LN2HI, 7, 1); \
	FCMGE2(LZERO, 0, 2); \
	BIF16(2, QNAN, 1); \
	FCMEQ2(LZERO, 0, 2); \
	BIT16(2, NINF, 1); \
	FCMEQ2(PINF, 0, 2); \
	BIF16(2, 1, 0)

#define BODYSQRT \
	FSQRT2(0, 0)

// LOOP runs PRE and BODY over z = R0, x = R1, n = R2 elements.
#define LOOP(PRE, BODY) \
	AND $1, R2, R4; \
	LSR $1, R2, R2; \
	CBZ R2, tail; \
loop: \
	VLD1.P 16(R1), [V0.D2]; \
	PRE; \
	BODY; \
	VST1.P [V0.D2], 16(R0); \
	SUBS $1, R2, R2; \
	BNE loop; \
tail: \
	CBZ R4, done; \
	VEOR V0.B16, V0.B16, V0.B16; \
	VLD1 (R1), V0.D[0]; \
	PRE; \
	BODY; \
	VST1 V0.D[0], (R0); \
done: \
	RET

#define NOPRE \
	NOP

// ARGS2 and ARGS3 load the arguments of a map (z, x) and of a backward
// map (z, g, y): z in R0, its length in R2, x or g in R1, y in R3.
#define ARGS2 \
	MOVD z_base+0(FP), R0; \
	MOVD z_len+8(FP), R2; \
	MOVD x_base+24(FP), R1

#define ARGS3 \
	MOVD z_base+0(FP), R0; \
	MOVD z_len+8(FP), R2; \
	MOVD g_base+24(FP), R1; \
	MOVD y_base+48(FP), R3

// func exp64NEON(z, x []float64)
TEXT ·exp64NEON(SB), NOSPLIT, $0-48
	ARGS2
	LDTAB(·neon64Exp)
	LDC(0x3ff0000000000000, V28) // 1
	LDC(0xc087500000000000, V29) // expMin = −746
	LDC(0x4086300000000000, V30) // expMax = 710
	LOOP(NOPRE, BODYEXP)

// func tanh64NEON(z, x []float64)
TEXT ·tanh64NEON(SB), NOSPLIT, $0-48
	ARGS2
	LDTAB(·neon64Exp)
	LDC(0x3ff0000000000000, V28) // 1
	LDC(0x4000000000000000, V29) // 2
	LDC(0x4034000000000000, V30) // 20
	LDC(0x8000000000000000, V31) // sign bit
	LOOP(NOPRE, BODYTANH)

// func sigmoid64NEON(z, x []float64)
TEXT ·sigmoid64NEON(SB), NOSPLIT, $0-48
	ARGS2
	LDTAB(·neon64Exp)
	LDC(0x3ff0000000000000, V28) // 1
	LDC(0xc087500000000000, V29) // expMin
	LDC(0x8000000000000000, V31) // sign bit
	LOOP(NOPRE, BODYSIGMOID)

// func softplus64NEON(z, x []float64)
TEXT ·softplus64NEON(SB), NOSPLIT, $0-48
	ARGS2
	LDC(0x3ff0000000000000, V28) // 1
	LDC(0xc087500000000000, V29) // expMin
	LDC(0x0000000000000000, V30) // 0
	LDC(0x8000000000000000, V31) // sign bit
	LOOP(LDTAB(·neon64Exp), BODYSOFTPLUS)

// func log64NEON(z, x []float64)
TEXT ·log64NEON(SB), NOSPLIT, $0-48
	ARGS2
	LDTAB(·neon64Log)
	LDC(0x0010000000000000, V8)  // 2⁻¹⁰²², the smallest normal number
	LDC(0x4330000000000000, V9)  // 2⁵²
	LDC(0x3fe6a09e667f3bcd, V10) // bits of √2/2
	LDC(0x000fffffffffffff, V11) // mantissa mask
	LDC(0x7ff8000000000000, V24) // NaN
	LDC(0xfff0000000000000, V25) // −Inf
	LDC(0x3ff0000000000000, V28) // 1
	LDC(0x404a000000000000, V29) // 52
	LDC(0x0000000000000000, V30) // 0
	LDC(0x7ff0000000000000, V31) // +Inf
	LOOP(NOPRE, BODYLOG)

// func sqrt64NEON(z, x []float64)
TEXT ·sqrt64NEON(SB), NOSPLIT, $0-48
	ARGS2
	LOOP(NOPRE, BODYSQRT)

// The backward maps, with the Go signature func(z, g, y []float64): V0
// holds g and V1 holds y on entry to a body, and the new z on exit.

// tanh′: g·(1 − y²), 1 − y² in one fused, once-rounded step.
#define BODYTANHBWD \
	MOV16(ONE, 2); \
	FMLS2(1, 1, 2); \
	FMUL2(2, 0, 0)

// σ′: g·(y − y²), likewise.
#define BODYSIGMOIDBWD \
	MOV16(1, 2); \
	FMLS2(1, 1, 2); \
	FMUL2(2, 0, 0)

// softplus′: g·((1 − 2ᵏ) − 2ᵏ·expm1(r)), −y = k·ln2 + r clamped to
// [−40, 709] (a NaN y gets through; k is in [−58, 1023]).
#define BODYSOFTPLUSBWD \
	EOR16(SIGN, 1, 5); \
	FMAX2(LO, 5, 5); \
	FMIN2(HI, 5, 5); \
	REDUCE(5, 1, 2, 3); \
	EXPM1(3, 4, 2, 8, 9, 10, 6); \
	SHL2(52, 1, 1); \
	ADD2(ONE, 1, 1); \
	FSUB2(1, ONE, 7); \
	FMLS2(6, 1, 7); \
	FMUL2(7, 0, 0)

// ACC adds z, from R0, to V0 in the main loop; ACCTAIL loads the last
// element of z into V2 and adds it; NOACC does nothing. The product is
// rounded before it is added (two roundings, as on every path).
#define ACC \
	VLD1 (R0), [V2.D2]; \
	FADD2(2, 0, 0)

#define ACCTAIL \
	VLD1 (R0), V2.D[0]; \
	FADD2(2, 0, 0)

#define NOACC \
	NOP

// LOOP3 runs BODY, then ACC (ACCT in the tail), over z = R0, g = R1,
// y = R3, n = R2 elements.
#define LOOP3(BODY, ACC, ACCT) \
	AND $1, R2, R4; \
	LSR $1, R2, R2; \
	CBZ R2, tail; \
loop: \
	VLD1.P 16(R1), [V0.D2]; \
	VLD1.P 16(R3), [V1.D2]; \
	BODY; \
	ACC; \
	VST1.P [V0.D2], 16(R0); \
	SUBS $1, R2, R2; \
	BNE loop; \
tail: \
	CBZ R4, done; \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VLD1 (R1), V0.D[0]; \
	VLD1 (R3), V1.D[0]; \
	BODY; \
	ACCT; \
	VST1 V0.D[0], (R0); \
done: \
	RET

// func tanhBwd64NEON(z, g, y []float64)
TEXT ·tanhBwd64NEON(SB), NOSPLIT, $0-72
	ARGS3
	LDC(0x3ff0000000000000, V28) // 1
	LOOP3(BODYTANHBWD, NOACC, NOACC)

// func tanhBwdAcc64NEON(z, g, y []float64)
TEXT ·tanhBwdAcc64NEON(SB), NOSPLIT, $0-72
	ARGS3
	LDC(0x3ff0000000000000, V28) // 1
	LOOP3(BODYTANHBWD, ACC, ACCTAIL)

// func sigmoidBwd64NEON(z, g, y []float64)
TEXT ·sigmoidBwd64NEON(SB), NOSPLIT, $0-72
	ARGS3
	LOOP3(BODYSIGMOIDBWD, NOACC, NOACC)

// func sigmoidBwdAcc64NEON(z, g, y []float64)
TEXT ·sigmoidBwdAcc64NEON(SB), NOSPLIT, $0-72
	ARGS3
	LOOP3(BODYSIGMOIDBWD, ACC, ACCTAIL)

// func softplusBwd64NEON(z, g, y []float64)
TEXT ·softplusBwd64NEON(SB), NOSPLIT, $0-72
	ARGS3
	LDTAB(·neon64Exp)
	LDC(0x3ff0000000000000, V28) // 1
	LDC(0xc044000000000000, V29) // −40
	LDC(0x4086280000000000, V30) // 709
	LDC(0x8000000000000000, V31) // sign bit
	LOOP3(BODYSOFTPLUSBWD, NOACC, NOACC)

// func softplusBwdAcc64NEON(z, g, y []float64)
TEXT ·softplusBwdAcc64NEON(SB), NOSPLIT, $0-72
	ARGS3
	LDTAB(·neon64Exp)
	LDC(0x3ff0000000000000, V28) // 1
	LDC(0xc044000000000000, V29) // −40
	LDC(0x4086280000000000, V30) // 709
	LDC(0x8000000000000000, V31) // sign bit
	LOOP3(BODYSOFTPLUSBWD, ACC, ACCTAIL)
