//go:build !purego

#include "textflag.h"
#include "vecmath_neon_arm64.h"

// The NEON (Advanced SIMD) kernels of vecmath.go: 4 float32 lanes in the
// 128-bit V registers. Each map has the Go signature func(z, x []float32)
// and sets z[i] = f(x[i]) for i < len(z) (the Go wrappers check len(x) ≥
// len(z)); the backward maps take g and y in place of x. The main loop
// takes 4 elements at a time; the last 1 to 3 are loaded lane by lane into
// a zeroed register, go through the same body, and are stored lane by
// lane, so nothing outside the slices is read or written and every element
// gets the same instructions. The algorithms, constants and order of
// operations are those of the AVX2 kernels (vecmath_amd64.s): the same
// products are rounded and the same ones fused, so their error bounds
// carry over. FMAX and FMIN return NaN when either operand is NaN, so the
// clamps let a NaN through as VMAXPS with x first does.
//
// The arithmetic is in the WORD macros of vecmath_neon_arm64.h, on
// register numbers. V0 holds x on entry to a body and f(x) on exit; V1–V7
// are scratch; the constants are loaded once per call into V8–V31:

#define Q0 8
#define Q1 9
#define Q2 10
#define Q3 11
#define Q4 12
#define Q5 13
#define Q6 14
#define Q7 15
#define LOG2E 16
#define MAGIC 17
#define LN2HI 18
#define LN2LO 19
#define P0 20
#define P1 21
#define P2 22
#define P3 23
#define P4 24
#define ONE 25
#define LO 26 // lower clamp: expMin, or −30 in softplus′
#define HI 27 // upper clamp: expMax, 9.5 in tanh, 88 in softplus′
#define SIGN 28
#define TWO 29   // tanh
#define SPLIT 29 // softplus: log1pSplit
#define LN2 30   // softplus
#define ZERO 27  // softplus (which has no upper clamp), the ReLU kernels
#define SLOPE 30 // the LeakyReLU kernels
#define Q8 31

// log reuses the registers of the exponential's constants.
#define MINNORM 16
#define TWO23 17
#define C23 20
#define SQRTHALF 21
#define MANTMASK 22
#define QNAN 23
#define NINF 24
#define PINF 26
#define LZERO 27

// LDC loads the float32 with the bits v into every lane of V.
#define LDC(v, V) MOVW $v, R5; VDUP R5, V.S4

// LDEXP loads the exponential's constants: log₂e, magic = 1.5·2²³, ln2hi,
// ln2lo, p0 = 0.5, p1…p4, 1 and the sign bit; LDLOG1P loads q0…q8.
#define LDEXP \
	LDC(0x3fb8aa3b, V16); \
	LDC(0x4b400000, V17); \
	LDC(0x3f317200, V18); \
	LDC(0x35bfbe8e, V19); \
	LDC(0x3f000000, V20); \
	LDC(0x3e2aaa6e, V21); \
	LDC(0x3d2aaa5c, V22); \
	LDC(0x3c0905b9, V23); \
	LDC(0x3ab6baa6, V24); \
	LDC(0x3f800000, V25); \
	LDC(0x80000000, V28)

#define LDLOG1P \
	LDC(0xbeffffff, V8); \
	LDC(0x3eaaaaa4, V9); \
	LDC(0xbe8000fc, V10); \
	LDC(0x3e4cd3de, V11); \
	LDC(0xbe2a47b8, V12); \
	LDC(0x3e1122dc, V13); \
	LDC(0xbe05dce9, V14); \
	LDC(0x3e04476d, V15); \
	LDC(0xbda52a0e, V31)

// REDUCE sets T = X·log₂e + magic (two roundings, as in Go), whose low
// mantissa bits hold k = round(X·log₂e), and R = X − k·ln2hi − k·ln2lo
// (each step fused); it uses K.
#define REDUCE(X, T, K, R) \
	FMUL4(LOG2E, X, T); \
	FADD4(MAGIC, T, T); \
	FSUB4(MAGIC, T, K); \
	MOV16(X, R); \
	FMLS4(LN2HI, K, R); \
	FMLS4(LN2LO, K, R)

// EXPM1 sets B = eᴿ − 1 = R + R²·P(R) (Estrin's scheme), using R2, A.
#define EXPM1(R, R2, A, B) \
	FMUL4(R, R, R2); \
	MOV16(P0, A); \
	FMLA4(P1, R, A); \
	MOV16(P2, B); \
	FMLA4(P3, R, B); \
	FMLA4(P4, R2, B); \
	FMLA4(B, R2, A); \
	MOV16(R, B); \
	FMLA4(A, R2, B)

// EXP sets Y = e^X for X in [expMin, expMax] or NaN: (1 + expm1(r))
// scaled by 2^⌊k/2⌋ and then 2^(k − ⌊k/2⌋), both exact powers of two
// (k·2²³ plus the bits of 1), so that k in [−150, 128] works and a
// denormal result is rounded once. It uses V1–V4.
#define EXP(X, Y) \
	REDUCE(X, 1, 2, 3); \
	EXPM1(3, 4, 2, Y); \
	FADD4(ONE, Y, Y); \
	SUB4(MAGIC, 1, 1); \
	SSHR4(1, 1, 2); \
	SUB4(2, 1, 1); \
	SHL4(23, 2, 2); \
	ADD4(ONE, 2, 2); \
	SHL4(23, 1, 1); \
	ADD4(ONE, 1, 1); \
	FMUL4(2, Y, Y); \
	FMUL4(1, Y, Y)

// LOG1P sets F = ln(1 + F) = F + F²·Q(F), using F2, F4, A, B, C.
#define LOG1P(F, F2, F4, A, B, C) \
	FMUL4(F, F, F2); \
	FMUL4(F2, F2, F4); \
	MOV16(Q0, A); \
	FMLA4(Q1, F, A); \
	MOV16(Q2, B); \
	FMLA4(Q3, F, B); \
	FMLA4(B, F2, A); \
	MOV16(Q4, C); \
	FMLA4(Q5, F, C); \
	MOV16(Q6, B); \
	FMLA4(Q7, F, B); \
	FMLA4(B, F2, C); \
	FMLA4(Q8, F4, C); \
	FMLA4(C, F4, A); \
	FMLA4(A, F2, F)

#define BODYEXP \
	FMAX4(LO, 0, 0); \
	FMIN4(HI, 0, 0); \
	EXP(0, 0)

// tanh|x| = t/(t + 2), t = e^2a − 1 = 2ᵏ·expm1(r) + (2ᵏ − 1), a =
// min(|x|, 9.5) (k is in [0, 28]); the sign of x is put back with an or.
#define BODYTANH \
	FABS4(0, 5); \
	FMIN4(HI, 5, 5); \
	FADD4(5, 5, 5); \
	REDUCE(5, 1, 2, 3); \
	EXPM1(3, 4, 2, 6); \
	SHL4(23, 1, 1); \
	ADD4(ONE, 1, 1); \
	FSUB4(ONE, 1, 7); \
	FMLA4(6, 1, 7); \
	FADD4(TWO, 7, 1); \
	FDIV4(1, 7, 7); \
	AND16(SIGN, 0, 0); \
	ORR16(7, 0, 0)

// σ(x) = n/(1 + e), e = e^−|x|, n = e where x has its sign bit set, else 1
// (the mask is x shifted right arithmetically by 31).
#define BODYSIGMOID \
	ORR16(SIGN, 0, 5); \
	FMAX4(LO, 5, 5); \
	EXP(5, 6); \
	SSHR4(31, 0, 7); \
	BSL16(ONE, 6, 7); \
	FADD4(ONE, 6, 6); \
	FDIV4(6, 7, 0)

// softplus(x) = max(x, 0) + log1p(u), u = e^−|x|; log1p(u) = L(u), or
// ln2 + L((u − 1)/2) for u above √2 − 1.
#define BODYSOFTPLUS \
	ORR16(SIGN, 0, 5); \
	FMAX4(LO, 5, 5); \
	EXP(5, 6); \
	FCMGT4(SPLIT, 6, 7); \
	FSUB4(ONE, 6, 5); \
	FMUL4(P0, 5, 5); \
	BIT16(7, 5, 6); \
	AND16(LN2, 7, 7); \
	LOG1P(6, 1, 2, 3, 4, 5); \
	FADD4(6, 7, 7); \
	FMAX4(ZERO, 0, 0); \
	FADD4(7, 0, 0)

// ln x = e·ln2hi + (e·ln2lo + L(m − 1)), from the bits as the Go code;
// denormals are scaled by 2²³ first. Then x < 0 or NaN → NaN, ±0 → −Inf,
// +Inf → +Inf.
#define BODYLOG \
	FCMGT4(0, MINNORM, 1); \
	FMUL4(TWO23, 0, 2); \
	BIF16(1, 0, 2); \
	SUB4(SQRTHALF, 2, 2); \
	SSHR4(23, 2, 7); \
	SCVTF4(7, 7); \
	AND16(C23, 1, 1); \
	FSUB4(1, 7, 7); \
	AND16(MANTMASK, 2, 2); \
	ADD4(SQRTHALF, 2, 2); \
	FSUB4(ONE, 2, 2); \
	LOG1P(2, 3, 4, 5, 6, 1); \
	FMLA4(LN2LO, 7, 2); \
	FMLA4(LN2HI, 7, 2); \
	FCMGE4(LZERO, 0, 1); \
	BIF16(1, QNAN, 2); \
	FCMEQ4(LZERO, 0, 1); \
	BIT16(1, NINF, 2); \
	FCMEQ4(PINF, 0, 1); \
	BIF16(1, 2, 0)

#define BODYSQRT \
	FSQRT4(0, 0)

// relu: x where x is not ≤ 0 (x > 0 or NaN), else +0.
#define BODYRELU \
	FCMGE4(0, ZERO, 1); \
	BIC16(1, 0, 0)

// leaky: x where x > 0, else slope·x.
#define BODYLEAKY \
	FMUL4(SLOPE, 0, 2); \
	FCMGT4(ZERO, 0, 1); \
	BIF16(1, 2, 0)

// LOOP runs BODY over z = R0, x = R1, n = R2 elements.
#define LOOP(BODY) \
	AND $3, R2, R4; \
	LSR $2, R2, R2; \
	CBZ R2, tail; \
loop: \
	VLD1.P 16(R1), [V0.S4]; \
	BODY; \
	VST1.P [V0.S4], 16(R0); \
	SUBS $1, R2, R2; \
	BNE loop; \
tail: \
	CBZ R4, done; \
	VEOR V0.B16, V0.B16, V0.B16; \
	VLD1 (R1), V0.S[0]; \
	CMP $1, R4; \
	BEQ tailbody; \
	ADD $4, R1, R6; \
	VLD1 (R6), V0.S[1]; \
	CMP $2, R4; \
	BEQ tailbody; \
	ADD $8, R1, R6; \
	VLD1 (R6), V0.S[2]; \
tailbody: \
	BODY; \
	VST1 V0.S[0], (R0); \
	CMP $1, R4; \
	BEQ done; \
	ADD $4, R0, R6; \
	VST1 V0.S[1], (R6); \
	CMP $2, R4; \
	BEQ done; \
	ADD $8, R0, R6; \
	VST1 V0.S[2], (R6); \
done: \
	RET

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

// func expNEON(z, x []float32)
TEXT ·expNEON(SB), NOSPLIT, $0-48
	ARGS2
	LDEXP
	LDC(0xc2d00000, V26) // expMin = −104
	LDC(0x42b20000, V27) // expMax = 89
	LOOP(BODYEXP)

// func tanhNEON(z, x []float32)
TEXT ·tanhNEON(SB), NOSPLIT, $0-48
	ARGS2
	LDEXP
	LDC(0x41180000, V27) // 9.5
	LDC(0x40000000, V29) // 2
	LOOP(BODYTANH)

// func sigmoidNEON(z, x []float32)
TEXT ·sigmoidNEON(SB), NOSPLIT, $0-48
	ARGS2
	LDEXP
	LDC(0xc2d00000, V26) // expMin
	LOOP(BODYSIGMOID)

// func softplusNEON(z, x []float32)
TEXT ·softplusNEON(SB), NOSPLIT, $0-48
	ARGS2
	LDEXP
	LDLOG1P
	LDC(0xc2d00000, V26) // expMin
	LDC(0x00000000, V27) // 0
	LDC(0x3ed413cd, V29) // log1pSplit
	LDC(0x3f317218, V30) // ln2
	LOOP(BODYSOFTPLUS)

// func logNEON(z, x []float32)
TEXT ·logNEON(SB), NOSPLIT, $0-48
	ARGS2
	LDLOG1P
	LDC(0x00800000, V16) // 2⁻¹²⁶, the smallest normal number
	LDC(0x4b000000, V17) // 2²³
	LDC(0x3f317200, V18) // ln2hi
	LDC(0x35bfbe8e, V19) // ln2lo
	LDC(0x41b80000, V20) // 23
	LDC(0x3f3504f3, V21) // bits of √2/2
	LDC(0x007fffff, V22) // mantissa mask
	LDC(0x7fc00000, V23) // NaN
	LDC(0xff800000, V24) // −Inf
	LDC(0x3f800000, V25) // 1
	LDC(0x7f800000, V26) // +Inf
	LDC(0x00000000, V27) // 0
	LOOP(BODYLOG)

// func sqrtNEON(z, x []float32)
TEXT ·sqrtNEON(SB), NOSPLIT, $0-48
	ARGS2
	LOOP(BODYSQRT)

// func reluNEON(z, x []float32)
TEXT ·reluNEON(SB), NOSPLIT, $0-48
	ARGS2
	VEOR V27.B16, V27.B16, V27.B16
	LOOP(BODYRELU)

// func leakyNEON(z, x []float32, slope float32)
TEXT ·leakyNEON(SB), NOSPLIT, $0-52
	ARGS2
	MOVWU slope+48(FP), R5
	VDUP R5, V30.S4
	VEOR V27.B16, V27.B16, V27.B16
	LOOP(BODYLEAKY)

// The backward maps, with the Go signature func(z, g, y []float32) (slope
// float32 after them for LeakyReLU′): V0 holds g and V1 holds y on entry
// to a body, and the new z on exit.

// tanh′: g·(1 − y²), 1 − y² in one fused, once-rounded step.
#define BODYTANHBWD \
	MOV16(ONE, 2); \
	FMLS4(1, 1, 2); \
	FMUL4(2, 0, 0)

// σ′: g·(y − y²), likewise.
#define BODYSIGMOIDBWD \
	MOV16(1, 2); \
	FMLS4(1, 1, 2); \
	FMUL4(2, 0, 0)

// softplus′: g·((1 − 2ᵏ) − 2ᵏ·expm1(r)), −y = k·ln2 + r clamped to
// [−30, 88] (a NaN y gets through; k is in [−44, 127]).
#define BODYSOFTPLUSBWD \
	EOR16(SIGN, 1, 5); \
	FMAX4(LO, 5, 5); \
	FMIN4(HI, 5, 5); \
	REDUCE(5, 1, 2, 3); \
	EXPM1(3, 4, 2, 6); \
	SHL4(23, 1, 1); \
	ADD4(ONE, 1, 1); \
	FSUB4(1, ONE, 7); \
	FMLS4(6, 1, 7); \
	FMUL4(7, 0, 0)

// ReLU′: g where y > 0, else +0.
#define BODYRELUBWD \
	FCMGT4(ZERO, 1, 2); \
	AND16(2, 0, 0)

// LeakyReLU′: g where y > 0, else slope·g (NaN y included).
#define BODYLEAKYBWD \
	FMUL4(SLOPE, 0, 3); \
	FCMGT4(ZERO, 1, 2); \
	BIF16(2, 3, 0)

// ACC adds z, from R0, to V0 in the main loop; ACCTAIL loads the last R4
// elements of z into V2 lane by lane and adds them; NOACC and NOACCTAIL
// do nothing. The product is rounded before it is added (two roundings,
// as on every path).
#define ACC \
	VLD1 (R0), [V2.S4]; \
	FADD4(2, 0, 0)

#define ACCTAIL \
	VLD1 (R0), V2.S[0]; \
	CMP $1, R4; \
	BEQ acctail; \
	ADD $4, R0, R6; \
	VLD1 (R6), V2.S[1]; \
	CMP $2, R4; \
	BEQ acctail; \
	ADD $8, R0, R6; \
	VLD1 (R6), V2.S[2]; \
acctail: \
	FADD4(2, 0, 0)

#define NOACC \
	NOP

// LOOP3 runs BODY, then ACC (ACCT in the tail), over z = R0, g = R1,
// y = R3, n = R2 elements.
#define LOOP3(BODY, ACC, ACCT) \
	AND $3, R2, R4; \
	LSR $2, R2, R2; \
	CBZ R2, tail; \
loop: \
	VLD1.P 16(R1), [V0.S4]; \
	VLD1.P 16(R3), [V1.S4]; \
	BODY; \
	ACC; \
	VST1.P [V0.S4], 16(R0); \
	SUBS $1, R2, R2; \
	BNE loop; \
tail: \
	CBZ R4, done; \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VLD1 (R1), V0.S[0]; \
	VLD1 (R3), V1.S[0]; \
	CMP $1, R4; \
	BEQ tailbody; \
	ADD $4, R1, R6; \
	VLD1 (R6), V0.S[1]; \
	ADD $4, R3, R6; \
	VLD1 (R6), V1.S[1]; \
	CMP $2, R4; \
	BEQ tailbody; \
	ADD $8, R1, R6; \
	VLD1 (R6), V0.S[2]; \
	ADD $8, R3, R6; \
	VLD1 (R6), V1.S[2]; \
tailbody: \
	BODY; \
	ACCT; \
	VST1 V0.S[0], (R0); \
	CMP $1, R4; \
	BEQ done; \
	ADD $4, R0, R6; \
	VST1 V0.S[1], (R6); \
	CMP $2, R4; \
	BEQ done; \
	ADD $8, R0, R6; \
	VST1 V0.S[2], (R6); \
done: \
	RET

// func tanhBwdNEON(z, g, y []float32)
TEXT ·tanhBwdNEON(SB), NOSPLIT, $0-72
	ARGS3
	LDC(0x3f800000, V25) // 1
	LOOP3(BODYTANHBWD, NOACC, NOACC)

// func tanhBwdAccNEON(z, g, y []float32)
TEXT ·tanhBwdAccNEON(SB), NOSPLIT, $0-72
	ARGS3
	LDC(0x3f800000, V25) // 1
	LOOP3(BODYTANHBWD, ACC, ACCTAIL)

// func sigmoidBwdNEON(z, g, y []float32)
TEXT ·sigmoidBwdNEON(SB), NOSPLIT, $0-72
	ARGS3
	LOOP3(BODYSIGMOIDBWD, NOACC, NOACC)

// func sigmoidBwdAccNEON(z, g, y []float32)
TEXT ·sigmoidBwdAccNEON(SB), NOSPLIT, $0-72
	ARGS3
	LOOP3(BODYSIGMOIDBWD, ACC, ACCTAIL)

// func softplusBwdNEON(z, g, y []float32)
TEXT ·softplusBwdNEON(SB), NOSPLIT, $0-72
	ARGS3
	LDEXP
	LDC(0xc1f00000, V26) // −30
	LDC(0x42b00000, V27) // 88
	LOOP3(BODYSOFTPLUSBWD, NOACC, NOACC)

// func softplusBwdAccNEON(z, g, y []float32)
TEXT ·softplusBwdAccNEON(SB), NOSPLIT, $0-72
	ARGS3
	LDEXP
	LDC(0xc1f00000, V26) // −30
	LDC(0x42b00000, V27) // 88
	LOOP3(BODYSOFTPLUSBWD, ACC, ACCTAIL)

// func reluBwdNEON(z, g, y []float32)
TEXT ·reluBwdNEON(SB), NOSPLIT, $0-72
	ARGS3
	VEOR V27.B16, V27.B16, V27.B16
	LOOP3(BODYRELUBWD, NOACC, NOACC)

// func reluBwdAccNEON(z, g, y []float32)
TEXT ·reluBwdAccNEON(SB), NOSPLIT, $0-72
	ARGS3
	VEOR V27.B16, V27.B16, V27.B16
	LOOP3(BODYRELUBWD, ACC, ACCTAIL)

// func leakyBwdNEON(z, g, y []float32, slope float32)
TEXT ·leakyBwdNEON(SB), NOSPLIT, $0-76
	ARGS3
	MOVWU slope+72(FP), R5
	VDUP R5, V30.S4
	VEOR V27.B16, V27.B16, V27.B16
	LOOP3(BODYLEAKYBWD, NOACC, NOACC)

// func leakyBwdAccNEON(z, g, y []float32, slope float32)
TEXT ·leakyBwdAccNEON(SB), NOSPLIT, $0-76
	ARGS3
	MOVWU slope+72(FP), R5
	VDUP R5, V30.S4
	VEOR V27.B16, V27.B16, V27.B16
	LOOP3(BODYLEAKYBWD, ACC, ACCTAIL)
