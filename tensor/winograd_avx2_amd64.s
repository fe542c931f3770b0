//go:build !purego

#include "textflag.h"

// The elementwise kernels of winograd.go's transforms on the avx2 kernel
// path: 8 lanes of float32 in YMM registers (AVX2 has no mask registers).
// They compute what the Go loops compute, in the same order, one rounding
// per operation and no fused multiply-add (the transforms only add and
// subtract), so the two agree bit for bit. winoCombineAVX2, winoDownAVX2,
// splitAVX2 and joinAVX2 take any length and finish the last 1 to 7
// elements one at a time (in the low lane of XMM registers, with the same
// operations); the three fused channel kernels need n ≥ 8 and do the last
// partial vector as the whole vector ending at n, again: those elements
// are computed twice from the same inputs, so the same bits are stored
// twice (their outputs never overlap their inputs).

// COMB applies winoCombine to A, B, C, D (r0–r3) into O0–O3:
// (r0 − r2, r1 + r2, r2 − r1, r1 − r3). The operands may be YMM or XMM.
#define COMB(A, B, C, D, O0, O1, O2, O3) \
	VSUBPS C, A, O0; \
	VADDPS C, B, O1; \
	VSUBPS B, C, O2; \
	VSUBPS D, B, O3

// func winoCombineAVX2(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int)
// (c0, c1, c2, c3) = (r0 − r2, r1 + r2, r2 − r1, r1 − r3)
TEXT ·winoCombineAVX2(SB), NOSPLIT, $0-72
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
	CMPQ    BX, $8
	JB      combTail
	VMOVUPS (R8)(AX*1), Y0
	VMOVUPS (R9)(AX*1), Y1
	VMOVUPS (R10)(AX*1), Y2
	VMOVUPS (R11)(AX*1), Y3
	COMB(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VMOVUPS Y4, (DI)(AX*1)
	VMOVUPS Y5, (SI)(AX*1)
	VMOVUPS Y6, (DX)(AX*1)
	VMOVUPS Y7, (CX)(AX*1)
	ADDQ    $32, AX
	SUBQ    $8, BX
	JMP     combLoop

combTail:
	TESTQ  BX, BX
	JZ     combDone
	VMOVSS (R8)(AX*1), X0
	VMOVSS (R9)(AX*1), X1
	VMOVSS (R10)(AX*1), X2
	VMOVSS (R11)(AX*1), X3
	COMB(X0, X1, X2, X3, X4, X5, X6, X7)
	VMOVSS X4, (DI)(AX*1)
	VMOVSS X5, (SI)(AX*1)
	VMOVSS X6, (DX)(AX*1)
	VMOVSS X7, (CX)(AX*1)
	ADDQ   $4, AX
	DECQ   BX
	JMP    combTail

combDone:
	VZEROUPPER
	RET

// DOWN applies winoDown to M0–M3 with the bias BIAS into (A, B):
// A = ((m0 + m1) + m2) + bias, B = ((m1 − m2) − m3) + bias.
#define DOWN(M0, M1, M2, M3, BIAS, A, B) \
	VADDPS M1, M0, A; \
	VADDPS M2, A, A; \
	VADDPS BIAS, A, A; \
	VSUBPS M2, M1, B; \
	VSUBPS M3, B, B; \
	VADDPS BIAS, B, B

// func winoDownAVX2(a, b, m0, m1, m2, m3 *float32, n int, bias float32)
// a = ((m0 + m1) + m2) + bias, b = ((m1 − m2) − m3) + bias
TEXT ·winoDownAVX2(SB), NOSPLIT, $0-60
	MOVQ         a+0(FP), DI
	MOVQ         b+8(FP), SI
	MOVQ         m0+16(FP), R8
	MOVQ         m1+24(FP), R9
	MOVQ         m2+32(FP), R10
	MOVQ         m3+40(FP), R11
	MOVQ         n+48(FP), BX
	VBROADCASTSS bias+56(FP), Y8
	XORQ         AX, AX

downLoop:
	CMPQ    BX, $8
	JB      downTail
	VMOVUPS (R8)(AX*1), Y0
	VMOVUPS (R9)(AX*1), Y1
	VMOVUPS (R10)(AX*1), Y2
	VMOVUPS (R11)(AX*1), Y3
	DOWN(Y0, Y1, Y2, Y3, Y8, Y4, Y5)
	VMOVUPS Y4, (DI)(AX*1)
	VMOVUPS Y5, (SI)(AX*1)
	ADDQ    $32, AX
	SUBQ    $8, BX
	JMP     downLoop

downTail:
	TESTQ  BX, BX
	JZ     downDone
	VMOVSS (R8)(AX*1), X0
	VMOVSS (R9)(AX*1), X1
	VMOVSS (R10)(AX*1), X2
	VMOVSS (R11)(AX*1), X3
	DOWN(X0, X1, X2, X3, X8, X4, X5)
	VMOVSS X4, (DI)(AX*1)
	VMOVSS X5, (SI)(AX*1)
	ADDQ   $4, AX
	DECQ   BX
	JMP    downTail

downDone:
	VZEROUPPER
	RET

// func splitAVX2(ev, od, src *float32, m, rows, srcStride, dstStride int)
// For each row r < rows: ev[r·dstStride + k] = src[r·srcStride + 2k] for
// k < ⌈m/2⌉ and od[r·dstStride + k] = src[r·srcStride + 2k + 1] for
// k < ⌊m/2⌋ (strides in elements). 16 row elements a step: VSHUFPS picks
// the even (odd) elements of each 128-bit half of two registers, VPERMPD
// puts the halves' pairs in order; then 8 in XMM registers, then pairs.
TEXT ·splitAVX2(SB), NOSPLIT, $0-56
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

split16:
	CMPQ    CX, $16
	JB      split8
	VMOVUPS (R13), Y0
	VMOVUPS 32(R13), Y1
	VSHUFPS $0x88, Y1, Y0, Y2 // x0 x2 x8 x10 | x4 x6 x12 x14
	VSHUFPS $0xdd, Y1, Y0, Y3 // x1 x3 x9 x11 | x5 x7 x13 x15
	VPERMPD $0xd8, Y2, Y2
	VPERMPD $0xd8, Y3, Y3
	VMOVUPS Y2, (R14)
	VMOVUPS Y3, (R8)
	ADDQ    $64, R13
	ADDQ    $32, R14
	ADDQ    $32, R8
	SUBQ    $16, CX
	JMP     split16

split8:
	CMPQ    CX, $8
	JB      split2
	VMOVUPS (R13), X0
	VMOVUPS 16(R13), X1
	VSHUFPS $0x88, X1, X0, X2
	VSHUFPS $0xdd, X1, X0, X3
	VMOVUPS X2, (R14)
	VMOVUPS X3, (R8)
	ADDQ    $32, R13
	ADDQ    $16, R14
	ADDQ    $16, R8
	SUBQ    $8, CX

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
	VZEROUPPER
	RET

// func joinAVX2(dst, ev, od *float32, m int, add bool)
// dst[2k] = ev[k] and dst[2k+1] = od[k] for indices below m; with add,
// dst[i] + (the value) instead, dst[i] the first operand as in the Go
// loop (the NaN kept when both are NaN). 16 elements of
// dst a step: VUNPCKLPS and VUNPCKHPS interleave each 128-bit half,
// VPERM2F128 puts the halves in order; then 8 in XMM registers, then
// pairs, then the last even element.
TEXT ·joinAVX2(SB), NOSPLIT, $0-33
	MOVQ    dst+0(FP), DI
	MOVQ    ev+8(FP), SI
	MOVQ    od+16(FP), DX
	MOVQ    m+24(FP), BX
	MOVBLZX add+32(FP), R8

join16:
	CMPQ       BX, $16
	JB         join8
	VMOVUPS    (SI), Y0
	VMOVUPS    (DX), Y1
	VUNPCKLPS  Y1, Y0, Y2            // e0 o0 e1 o1 | e4 o4 e5 o5
	VUNPCKHPS  Y1, Y0, Y3            // e2 o2 e3 o3 | e6 o6 e7 o7
	VPERM2F128 $0x20, Y3, Y2, Y0
	VPERM2F128 $0x31, Y3, Y2, Y1
	TESTQ      R8, R8
	JZ         join16Store
	VMOVUPS    (DI), Y4
	VMOVUPS    32(DI), Y5
	VADDPS     Y0, Y4, Y0
	VADDPS     Y1, Y5, Y1

join16Store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	SUBQ    $16, BX
	JMP     join16

join8:
	CMPQ      BX, $8
	JB        join2
	VMOVUPS   (SI), X0
	VMOVUPS   (DX), X1
	VUNPCKLPS X1, X0, X2
	VUNPCKHPS X1, X0, X3
	TESTQ     R8, R8
	JZ        join8Store
	VMOVUPS   (DI), X4
	VMOVUPS   16(DI), X5
	VADDPS    X2, X4, X2
	VADDPS    X3, X5, X3

join8Store:
	VMOVUPS X2, (DI)
	VMOVUPS X3, 16(DI)
	ADDQ    $32, DI
	ADDQ    $16, SI
	ADDQ    $16, DX
	SUBQ    $8, BX

join2:
	CMPQ   BX, $2
	JB     join1
	VMOVSS (SI), X0
	VMOVSS (DX), X1
	TESTQ  R8, R8
	JZ     join2Store
	VMOVSS (DI), X4
	VMOVSS 4(DI), X5
	VADDSS X0, X4, X0
	VADDSS X1, X5, X1

join2Store:
	VMOVSS X0, (DI)
	VMOVSS X1, 4(DI)
	ADDQ   $8, DI
	ADDQ   $4, SI
	ADDQ   $4, DX
	SUBQ   $2, BX
	JMP    join2

join1:
	TESTQ  BX, BX
	JZ     joinDone
	VMOVSS (SI), X0
	TESTQ  R8, R8
	JZ     join1Store
	VMOVSS (DI), X4
	VADDSS X0, X4, X0

join1Store:
	VMOVSS X0, (DI)

joinDone:
	VZEROUPPER
	RET

// LASTVEC is the fused kernels' end of the loop: with BX (< 8) positions
// left, 0 ends it (JZ to DONE); else the pointers P1 and P2 move back by
// 8 − BX positions (AX bytes), BX becomes 8, and the loop runs once more,
// over the vector that ends at n.
#define LASTVEC(DONE, P1, P2) \
	TESTQ BX, BX; \
	JZ    DONE; \
	MOVQ  $8, AX; \
	SUBQ  BX, AX; \
	SHLQ  $2, AX; \
	SUBQ  AX, P1; \
	SUBQ  AX, P2; \
	MOVQ  $8, BX

// CHANCOL2 stores (e − e′, o + e′, e′ − o, o − o′) to the four planes at
// R12, DX bytes apart (CX = 3·DX), with Y12–Y15 as scratch.
#define CHANCOL2(E, E1, O, O1) \
	VSUBPS  E1, E, Y12; \
	VADDPS  E1, O, Y13; \
	VSUBPS  O, E1, Y14; \
	VSUBPS  O1, O, Y15; \
	VMOVUPS Y12, (R12); \
	VMOVUPS Y13, (R12)(DX*1); \
	VMOVUPS Y14, (R12)(DX*2); \
	VMOVUPS Y15, (R12)(CX*1)

// ROWS03 sets I0 = r0 − r2 and I3 = r1 − r3 for the rows of one column
// parity and shift: r0 at R0, r1 at R1, r2 and r3 a plane row further.
#define ROWS03(R0, R1, R2, R3, I0, I3) \
	VMOVUPS R0, Y0; \
	VSUBPS  R2, Y0, I0; \
	VMOVUPS R1, Y1; \
	VSUBPS  R3, Y1, I3

// ROWS12 sets I1 = r1 + r2 and I2 = r2 − r1.
#define ROWS12(R1, R2, I1, I2) \
	VMOVUPS R1, Y0; \
	VMOVUPS R2, Y1; \
	VADDPS  Y1, Y0, I1; \
	VSUBPS  Y0, Y1, I2

// func winoInputChannelAVX2(v *float32, plane int, par *float32, pl, we, n int)
//
// winoInputChannelAVX512 on YMM registers (n ≥ 8): Bᵀ d B for one channel
// from the four parity planes par (plane (rp, cp) at (2·rp + cp)·pl) to
// v[ξ·plane + t], ξ = 4i + j, t < n; the same bits as winoInput's two
// winoCombine passes at every position but a row's extra tile (never
// read). The row combinations i = 0 and 3 are made first for the four
// column variants E(t), E(t+1), O(t), O(t+1) (even and odd columns), then
// i = 1 and 2, eight registers at a time, each followed by its
// combinations across the columns.
//
// Registers: R8 = &par[t], R9 = R8 + 4·we, R10 = 4·pl, R11 = 12·pl,
// DI = &v[t], DX = 4·plane, CX = 12·plane, R13 = 16·plane, BX the
// positions left.
TEXT ·winoInputChannelAVX2(SB), NOSPLIT, $0-48
	MOVQ v+0(FP), DI
	MOVQ plane+8(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), CX
	MOVQ DX, R13
	SHLQ $2, R13
	MOVQ par+16(FP), R8
	MOVQ pl+24(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R11
	MOVQ we+32(FP), R9
	LEAQ (R8)(R9*4), R9
	MOVQ n+40(FP), BX

inLoop:
	CMPQ BX, $8
	JB   inTail

	// i = 0 and 3: E, E′, O, O′ into Y4–Y7 and Y8–Y11.
	ROWS03((R8), (R8)(R10*2), (R9), (R9)(R10*2), Y4, Y8)
	ROWS03(4(R8), 4(R8)(R10*2), 4(R9), 4(R9)(R10*2), Y5, Y9)
	ROWS03((R8)(R10*1), (R8)(R11*1), (R9)(R10*1), (R9)(R11*1), Y6, Y10)
	ROWS03(4(R8)(R10*1), 4(R8)(R11*1), 4(R9)(R10*1), 4(R9)(R11*1), Y7, Y11)
	MOVQ DI, R12
	CHANCOL2(Y4, Y5, Y6, Y7)
	LEAQ (R12)(R13*2), R12
	ADDQ R13, R12
	CHANCOL2(Y8, Y9, Y10, Y11)

	// i = 1 and 2.
	ROWS12((R8)(R10*2), (R9), Y4, Y8)
	ROWS12(4(R8)(R10*2), 4(R9), Y5, Y9)
	ROWS12((R8)(R11*1), (R9)(R10*1), Y6, Y10)
	ROWS12(4(R8)(R11*1), 4(R9)(R10*1), Y7, Y11)
	LEAQ (DI)(R13*1), R12
	CHANCOL2(Y4, Y5, Y6, Y7)
	ADDQ R13, R12
	CHANCOL2(Y8, Y9, Y10, Y11)

	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, DI
	SUBQ $8, BX
	JMP  inLoop

inTail:
	LASTVEC(inDone, R8, DI)
	SUBQ AX, R9
	JMP  inLoop

inDone:
	VZEROUPPER
	RET

// OUTCOL2 loads m_{ij} for i < 4 from R12, R13 bytes apart (R11 = 3·R13),
// and applies DOWN with the zero bias Y12 into (A, B).
#define OUTCOL2(A, B) \
	VMOVUPS (R12), Y0; \
	VMOVUPS (R12)(R13*1), Y1; \
	VMOVUPS (R12)(R13*2), Y2; \
	VMOVUPS (R12)(R11*1), Y3; \
	DOWN(Y0, Y1, Y2, Y3, Y12, A, B)

// func winoOutputChannelAVX2(st *float32, n int, m *float32, plane int, bias float32)
//
// winoOutputChannelAVX512 on YMM registers (n ≥ 8): winoOutput's six
// winoDown calls for one output channel, from the products m[ξ·plane + t]
// to the four planes st[k·n + t], t < n, the same bits.
//
// Registers: R8 = &m[t], DX = 4·plane, R13 = 16·plane, R11 = 48·plane,
// DI = &st[t], SI = 4·n, R9 = 12·n; Y12 zero (the first pass's bias),
// Y13 the bias; BX the positions left.
TEXT ·winoOutputChannelAVX2(SB), NOSPLIT, $0-36
	MOVQ         st+0(FP), DI
	MOVQ         n+8(FP), BX
	MOVQ         BX, SI
	SHLQ         $2, SI
	LEAQ         (SI)(SI*2), R9
	MOVQ         m+16(FP), R8
	MOVQ         plane+24(FP), DX
	SHLQ         $2, DX
	MOVQ         DX, R13
	SHLQ         $2, R13
	LEAQ         (R13)(R13*2), R11
	VBROADCASTSS bias+32(FP), Y13
	VXORPS       Y12, Y12, Y12

outLoop:
	CMPQ BX, $8
	JB   outTail

	// Down the tiles' column j: (A_j, B_j) into (Y4+j, Y8+j).
	MOVQ R8, R12
	OUTCOL2(Y4, Y8)
	ADDQ DX, R12
	OUTCOL2(Y5, Y9)
	ADDQ DX, R12
	OUTCOL2(Y6, Y10)
	ADDQ DX, R12
	OUTCOL2(Y7, Y11)

	// Across: (A0 … A3) and (B0 … B3) with the bias.
	DOWN(Y4, Y5, Y6, Y7, Y13, Y14, Y15)
	VMOVUPS Y14, (DI)
	VMOVUPS Y15, (DI)(SI*1)
	DOWN(Y8, Y9, Y10, Y11, Y13, Y14, Y15)
	VMOVUPS Y14, (DI)(SI*2)
	VMOVUPS Y15, (DI)(R9*1)

	ADDQ $32, R8
	ADDQ $32, DI
	SUBQ $8, BX
	JMP  outLoop

outTail:
	LASTVEC(outDone, R8, DI)
	JMP outLoop

outDone:
	VZEROUPPER
	RET

// GRADCOL2 stores, for e and o A's row on the even and odd columns,
// (0 − o, e + o, o − e, e − 0) to m's planes 3, 1, 2, 0 of that row at
// R12 (planes DX bytes apart, CX = 3·DX); Y15 is zero, Y0–Y3 scratch.
#define GRADCOL2(E, O) \
	VSUBPS  O, Y15, Y0; \
	VADDPS  O, E, Y1; \
	VSUBPS  E, O, Y2; \
	VSUBPS  Y15, E, Y3; \
	VMOVUPS Y3, (R12); \
	VMOVUPS Y1, (R12)(DX*1); \
	VMOVUPS Y2, (R12)(DX*2); \
	VMOVUPS Y0, (R12)(CX*1)

// func winoOutputGradChannelAVX2(m *float32, plane int, st *float32, n int)
//
// winoOutputGradChannelAVX512 on YMM registers (n ≥ 8): winoOutputGrad's
// six winoCombine calls for one channel, from dy's parity planes at st
// (n apart) to m's planes, t < n, the same bits.
//
// Registers: R8 = &st[t], SI = 4·n, R9 = 12·n; DI = &m[t], DX = 4·plane,
// CX = 12·plane, R13 = 16·plane, R11 = 48·plane; Y15 zero; BX the
// positions left.
TEXT ·winoOutputGradChannelAVX2(SB), NOSPLIT, $0-32
	MOVQ   m+0(FP), DI
	MOVQ   plane+8(FP), DX
	SHLQ   $2, DX
	LEAQ   (DX)(DX*2), CX
	MOVQ   DX, R13
	SHLQ   $2, R13
	LEAQ   (R13)(R13*2), R11
	MOVQ   st+16(FP), R8
	MOVQ   n+24(FP), BX
	MOVQ   BX, SI
	SHLQ   $2, SI
	LEAQ   (SI)(SI*2), R9
	VXORPS Y15, Y15, Y15

gradLoop:
	CMPQ BX, $8
	JB   gradTail

	// A's rows: (0 − b, a + b, b − a, a − 0) with a, b the even and odd
	// rows, on the even columns into Y4–Y7, the odd into Y8–Y11.
	VMOVUPS (R8), Y0
	VMOVUPS (R8)(SI*1), Y1
	VMOVUPS (R8)(SI*2), Y2
	VMOVUPS (R8)(R9*1), Y3
	VSUBPS  Y2, Y15, Y4
	VADDPS  Y2, Y0, Y5
	VSUBPS  Y0, Y2, Y6
	VSUBPS  Y15, Y0, Y7
	VSUBPS  Y3, Y15, Y8
	VADDPS  Y3, Y1, Y9
	VSUBPS  Y1, Y3, Y10
	VSUBPS  Y15, Y1, Y11

	// Row i of the result is A's row (3, 1, 2, 0)[i] across the columns.
	LEAQ (DI)(R11*1), R12
	GRADCOL2(Y4, Y8)
	LEAQ (DI)(R13*1), R12
	GRADCOL2(Y5, Y9)
	LEAQ (DI)(R13*2), R12
	GRADCOL2(Y6, Y10)
	MOVQ DI, R12
	GRADCOL2(Y7, Y11)

	ADDQ $32, R8
	ADDQ $32, DI
	SUBQ $8, BX
	JMP  gradLoop

gradTail:
	LASTVEC(gradDone, R8, DI)
	JMP gradLoop

gradDone:
	VZEROUPPER
	RET
