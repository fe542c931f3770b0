//go:build !purego

#include "textflag.h"

// The elementwise kernels of winograd.go's transforms on the sse2 kernel
// path: 4 lanes of float32 in XMM registers, SSE2 only. They compute what
// the Go loops compute, in the same order, one rounding per operation (the
// transforms only add and subtract), so the two agree bit for bit, as the
// AVX2 kernels do. Each takes any length and finishes the last 1 to 3
// elements one at a time (in the low lane, with the same operations). The
// fused channel kernels have no SSE2 version: on this path the transforms
// run as two passes of these.

// COMBSSE applies winoCombine to A, B, C, D (r0–r3) into O0–O3:
// (r0 − r2, r1 + r2, r2 − r1, r1 − r3), SSE's two-operand form.
#define COMBSSE(A, B, C, D, O0, O1, O2, O3) \
	MOVAPS A, O0; \
	SUBPS  C, O0; \
	MOVAPS B, O1; \
	ADDPS  C, O1; \
	MOVAPS C, O2; \
	SUBPS  B, O2; \
	MOVAPS B, O3; \
	SUBPS  D, O3

// func winoCombineSSE2(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int)
// (c0, c1, c2, c3) = (r0 − r2, r1 + r2, r2 − r1, r1 − r3)
TEXT ·winoCombineSSE2(SB), NOSPLIT, $0-72
	MOVQ c0+0(FP), DI
	MOVQ c1+8(FP), SI
	MOVQ c2+16(FP), DX
	MOVQ c3+24(FP), CX
	MOVQ r0+32(FP), R8
	MOVQ r1+40(FP), R9
	MOVQ r2+48(FP), R10
	MOVQ r3+56(FP), R11
	MOVQ n+64(FP), BX
	XORQ AX, AX

combLoop:
	CMPQ   BX, $4
	JB     combTail
	MOVUPS (R8)(AX*1), X0
	MOVUPS (R9)(AX*1), X1
	MOVUPS (R10)(AX*1), X2
	MOVUPS (R11)(AX*1), X3
	COMBSSE(X0, X1, X2, X3, X4, X5, X6, X7)
	MOVUPS X4, (DI)(AX*1)
	MOVUPS X5, (SI)(AX*1)
	MOVUPS X6, (DX)(AX*1)
	MOVUPS X7, (CX)(AX*1)
	ADDQ   $16, AX
	SUBQ   $4, BX
	JMP    combLoop

combTail:
	TESTQ BX, BX
	JZ    combDone
	MOVSS (R8)(AX*1), X0
	MOVSS (R9)(AX*1), X1
	MOVSS (R10)(AX*1), X2
	MOVSS (R11)(AX*1), X3
	COMBSSE(X0, X1, X2, X3, X4, X5, X6, X7)
	MOVSS X4, (DI)(AX*1)
	MOVSS X5, (SI)(AX*1)
	MOVSS X6, (DX)(AX*1)
	MOVSS X7, (CX)(AX*1)
	ADDQ  $4, AX
	DECQ  BX
	JMP   combTail

combDone:
	RET

// DOWNSSE applies winoDown to M0–M3 with the bias BIAS into (A, B):
// A = ((m0 + m1) + m2) + bias, B = ((m1 − m2) − m3) + bias.
#define DOWNSSE(M0, M1, M2, M3, BIAS, A, B) \
	MOVAPS M0, A; \
	ADDPS  M1, A; \
	ADDPS  M2, A; \
	ADDPS  BIAS, A; \
	MOVAPS M1, B; \
	SUBPS  M2, B; \
	SUBPS  M3, B; \
	ADDPS  BIAS, B

// func winoDownSSE2(a, b, m0, m1, m2, m3 *float32, n int, bias float32)
// a = ((m0 + m1) + m2) + bias, b = ((m1 − m2) − m3) + bias
TEXT ·winoDownSSE2(SB), NOSPLIT, $0-60
	MOVQ   a+0(FP), DI
	MOVQ   b+8(FP), SI
	MOVQ   m0+16(FP), R8
	MOVQ   m1+24(FP), R9
	MOVQ   m2+32(FP), R10
	MOVQ   m3+40(FP), R11
	MOVQ   n+48(FP), BX
	MOVSS  bias+56(FP), X8
	SHUFPS $0, X8, X8
	XORQ   AX, AX

downLoop:
	CMPQ   BX, $4
	JB     downTail
	MOVUPS (R8)(AX*1), X0
	MOVUPS (R9)(AX*1), X1
	MOVUPS (R10)(AX*1), X2
	MOVUPS (R11)(AX*1), X3
	DOWNSSE(X0, X1, X2, X3, X8, X4, X5)
	MOVUPS X4, (DI)(AX*1)
	MOVUPS X5, (SI)(AX*1)
	ADDQ   $16, AX
	SUBQ   $4, BX
	JMP    downLoop

downTail:
	TESTQ BX, BX
	JZ    downDone
	MOVSS (R8)(AX*1), X0
	MOVSS (R9)(AX*1), X1
	MOVSS (R10)(AX*1), X2
	MOVSS (R11)(AX*1), X3
	DOWNSSE(X0, X1, X2, X3, X8, X4, X5)
	MOVSS X4, (DI)(AX*1)
	MOVSS X5, (SI)(AX*1)
	ADDQ  $4, AX
	DECQ  BX
	JMP   downTail

downDone:
	RET

// func splitSSE2(ev, od, src *float32, m, rows, srcStride, dstStride int)
// For each row r < rows: ev[r·dstStride + k] = src[r·srcStride + 2k] for
// k < ⌈m/2⌉ and od[r·dstStride + k] = src[r·srcStride + 2k + 1] for
// k < ⌊m/2⌋ (strides in elements). 8 row elements a step: SHUFPS picks
// the even (odd) elements of two registers, in order; then pairs.
TEXT ·splitSSE2(SB), NOSPLIT, $0-56
	MOVQ ev+0(FP), DI
	MOVQ od+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ m+24(FP), BX
	MOVQ rows+32(FP), R9
	MOVQ srcStride+40(FP), R10
	MOVQ dstStride+48(FP), R11
	SHLQ $2, R10
	SHLQ $2, R11

splitRow:
	TESTQ R9, R9
	JZ    splitDone
	MOVQ  SI, R13
	MOVQ  DI, R14
	MOVQ  DX, R8
	MOVQ  BX, CX

split8:
	CMPQ   CX, $8
	JB     split2
	MOVUPS (R13), X0
	MOVUPS 16(R13), X1
	MOVAPS X0, X2
	SHUFPS $0x88, X1, X2 // x0 x2 x4 x6
	SHUFPS $0xdd, X1, X0 // x1 x3 x5 x7
	MOVUPS X2, (R14)
	MOVUPS X0, (R8)
	ADDQ   $32, R13
	ADDQ   $16, R14
	ADDQ   $16, R8
	SUBQ   $8, CX
	JMP    split8

split2:
	CMPQ CX, $2
	JB   split1
	MOVL (R13), AX
	MOVL AX, (R14)
	MOVL 4(R13), AX
	MOVL AX, (R8)
	ADDQ $8, R13
	ADDQ $4, R14
	ADDQ $4, R8
	SUBQ $2, CX
	JMP  split2

split1:
	TESTQ CX, CX
	JZ    splitNext
	MOVL  (R13), AX
	MOVL  AX, (R14)

splitNext:
	ADDQ R10, SI
	ADDQ R11, DI
	ADDQ R11, DX
	DECQ R9
	JMP  splitRow

splitDone:
	RET

// func joinSSE2(dst, ev, od *float32, m int, add bool)
// dst[2k] = ev[k] and dst[2k+1] = od[k] for indices below m; with add,
// dst[i] + (the value) instead, dst[i] the first operand as in the Go
// loop (the NaN kept when both are NaN). 8 elements of dst a step:
// UNPCKLPS and UNPCKHPS interleave; then pairs, then the last even
// element.
TEXT ·joinSSE2(SB), NOSPLIT, $0-33
	MOVQ    dst+0(FP), DI
	MOVQ    ev+8(FP), SI
	MOVQ    od+16(FP), DX
	MOVQ    m+24(FP), BX
	MOVBLZX add+32(FP), R8

join8:
	CMPQ     BX, $8
	JB       join2
	MOVUPS   (SI), X0
	MOVUPS   (DX), X1
	MOVAPS   X0, X2
	UNPCKLPS X1, X2 // e0 o0 e1 o1
	UNPCKHPS X1, X0 // e2 o2 e3 o3
	TESTQ    R8, R8
	JZ       join8Store
	MOVUPS   (DI), X4
	MOVUPS   16(DI), X5
	ADDPS    X2, X4
	ADDPS    X0, X5
	MOVAPS   X4, X2
	MOVAPS   X5, X0

join8Store:
	MOVUPS X2, (DI)
	MOVUPS X0, 16(DI)
	ADDQ   $32, DI
	ADDQ   $16, SI
	ADDQ   $16, DX
	SUBQ   $8, BX
	JMP    join8

join2:
	CMPQ  BX, $2
	JB    join1
	MOVSS (SI), X0
	MOVSS (DX), X1
	TESTQ R8, R8
	JZ    join2Store
	MOVSS (DI), X4
	MOVSS 4(DI), X5
	ADDSS X0, X4
	ADDSS X1, X5
	MOVSS X4, X0
	MOVSS X5, X1

join2Store:
	MOVSS X0, (DI)
	MOVSS X1, 4(DI)
	ADDQ  $8, DI
	ADDQ  $4, SI
	ADDQ  $4, DX
	SUBQ  $2, BX
	JMP   join2

join1:
	TESTQ BX, BX
	JZ    joinDone
	MOVSS (SI), X0
	TESTQ R8, R8
	JZ    join1Store
	MOVSS (DI), X4
	ADDSS X0, X4
	MOVSS X4, X0

join1Store:
	MOVSS X0, (DI)

joinDone:
	RET
