//go:build !purego

#include "textflag.h"

// The elementwise kernels of winograd.go's transforms, 16 lanes of
// float32 at a time, the last lanes under the mask K1. They compute what
// the Go loops compute, in the same order, so the two agree bit for bit.
// Operands are read at (reg)(AX*1); BX counts the elements left.

// WINOLOOP runs LOAD; BODY; STORE over whole vectors, then once more under
// a mask for the rest (K1 all ones until then).
#define WINOLOOP(LOAD, BODY, STORE, MLOAD, MSTORE) \
	XORQ AX, AX; \
loop: \
	CMPQ BX, $16; \
	JB   tail; \
	LOAD; \
	BODY; \
	STORE; \
	ADDQ $64, AX; \
	SUBQ $16, BX; \
	JMP  loop; \
tail: \
	TESTQ BX, BX; \
	JZ    done; \
	MOVL  $1, R13; \
	MOVQ  BX, R12; \
	XCHGQ R12, CX; \
	SHLL  CX, R13; \
	XCHGQ R12, CX; \
	DECL  R13; \
	KMOVW R13, K1; \
	MLOAD; \
	BODY; \
	MSTORE; \
done: \
	VZEROUPPER; \
	RET

// Four operands from R8–R11 into Z0–Z3, whole or masked.
#define LOAD4 \
	VMOVUPS (R8)(AX*1), Z0; \
	VMOVUPS (R9)(AX*1), Z1; \
	VMOVUPS (R10)(AX*1), Z2; \
	VMOVUPS (R11)(AX*1), Z3

#define MLOAD4 \
	VMOVUPS.Z (R8)(AX*1), K1, Z0; \
	VMOVUPS.Z (R9)(AX*1), K1, Z1; \
	VMOVUPS.Z (R10)(AX*1), K1, Z2; \
	VMOVUPS.Z (R11)(AX*1), K1, Z3

// (Z4, Z5, Z6, Z7) = (r0 − r2, r1 + r2, r2 − r1, r1 − r3)
#define COMBINE \
	VSUBPS Z2, Z0, Z4; \
	VADDPS Z2, Z1, Z5; \
	VSUBPS Z1, Z2, Z6; \
	VSUBPS Z3, Z1, Z7

#define STORECOMBINE \
	VMOVUPS Z4, (DI)(AX*1); \
	VMOVUPS Z5, (SI)(AX*1); \
	VMOVUPS Z6, (DX)(AX*1); \
	VMOVUPS Z7, (CX)(AX*1)

#define MSTORECOMBINE \
	VMOVUPS Z4, K1, (DI)(AX*1); \
	VMOVUPS Z5, K1, (SI)(AX*1); \
	VMOVUPS Z6, K1, (DX)(AX*1); \
	VMOVUPS Z7, K1, (CX)(AX*1)

// func winoCombineAVX512(c0, c1, c2, c3, r0, r1, r2, r3 *float32, n int)
// (c0, c1, c2, c3) = (r0 − r2, r1 + r2, r2 − r1, r1 − r3)
TEXT ·winoCombineAVX512(SB), NOSPLIT, $0-72
	MOVQ c0+0(FP), DI
	MOVQ c1+8(FP), SI
	MOVQ c2+16(FP), DX
	MOVQ c3+24(FP), CX
	MOVQ r0+32(FP), R8
	MOVQ r1+40(FP), R9
	MOVQ r2+48(FP), R10
	MOVQ r3+56(FP), R11
	MOVQ n+64(FP), BX
	WINOLOOP(LOAD4, COMBINE, STORECOMBINE, MLOAD4, MSTORECOMBINE)

// (Z4, Z5) = (((m0 + m1) + m2) + bias, ((m1 − m2) − m3) + bias), bias in Z8
#define DOWN \
	VADDPS Z1, Z0, Z4; \
	VADDPS Z2, Z4, Z4; \
	VADDPS Z8, Z4, Z4; \
	VSUBPS Z2, Z1, Z5; \
	VSUBPS Z3, Z5, Z5; \
	VADDPS Z8, Z5, Z5

#define STOREDOWN \
	VMOVUPS Z4, (DI)(AX*1); \
	VMOVUPS Z5, (SI)(AX*1)

#define MSTOREDOWN \
	VMOVUPS Z4, K1, (DI)(AX*1); \
	VMOVUPS Z5, K1, (SI)(AX*1)

// func winoDownAVX512(a, b, m0, m1, m2, m3 *float32, n int, bias float32)
// a = ((m0 + m1) + m2) + bias, b = ((m1 − m2) − m3) + bias
TEXT ·winoDownAVX512(SB), NOSPLIT, $0-60
	MOVQ a+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ m0+16(FP), R8
	MOVQ m1+24(FP), R9
	MOVQ m2+32(FP), R10
	MOVQ m3+40(FP), R11
	MOVQ n+48(FP), BX
	VBROADCASTSS bias+56(FP), Z8
	WINOLOOP(LOAD4, DOWN, STOREDOWN, MLOAD4, MSTOREDOWN)

// The even/odd column kernels of splitColumns and joinColumns: VPERMT2PS
// picks 16 lanes from the 32 of two registers (index bit 4 chooses the
// register), 32 row elements per step, the last 1 to 31 under masks.
// winoPermIdx holds the four index vectors: even lanes 0, 2, …, 30; odd
// lanes 1, 3, …, 31; interleaved low 0, 16, 1, 17, …, 7, 23; interleaved
// high 8, 24, …, 15, 31.
DATA ·winoPermIdx+0(SB)/4, $0
DATA ·winoPermIdx+4(SB)/4, $2
DATA ·winoPermIdx+8(SB)/4, $4
DATA ·winoPermIdx+12(SB)/4, $6
DATA ·winoPermIdx+16(SB)/4, $8
DATA ·winoPermIdx+20(SB)/4, $10
DATA ·winoPermIdx+24(SB)/4, $12
DATA ·winoPermIdx+28(SB)/4, $14
DATA ·winoPermIdx+32(SB)/4, $16
DATA ·winoPermIdx+36(SB)/4, $18
DATA ·winoPermIdx+40(SB)/4, $20
DATA ·winoPermIdx+44(SB)/4, $22
DATA ·winoPermIdx+48(SB)/4, $24
DATA ·winoPermIdx+52(SB)/4, $26
DATA ·winoPermIdx+56(SB)/4, $28
DATA ·winoPermIdx+60(SB)/4, $30
DATA ·winoPermIdx+64(SB)/4, $1
DATA ·winoPermIdx+68(SB)/4, $3
DATA ·winoPermIdx+72(SB)/4, $5
DATA ·winoPermIdx+76(SB)/4, $7
DATA ·winoPermIdx+80(SB)/4, $9
DATA ·winoPermIdx+84(SB)/4, $11
DATA ·winoPermIdx+88(SB)/4, $13
DATA ·winoPermIdx+92(SB)/4, $15
DATA ·winoPermIdx+96(SB)/4, $17
DATA ·winoPermIdx+100(SB)/4, $19
DATA ·winoPermIdx+104(SB)/4, $21
DATA ·winoPermIdx+108(SB)/4, $23
DATA ·winoPermIdx+112(SB)/4, $25
DATA ·winoPermIdx+116(SB)/4, $27
DATA ·winoPermIdx+120(SB)/4, $29
DATA ·winoPermIdx+124(SB)/4, $31
DATA ·winoPermIdx+128(SB)/4, $0
DATA ·winoPermIdx+132(SB)/4, $16
DATA ·winoPermIdx+136(SB)/4, $1
DATA ·winoPermIdx+140(SB)/4, $17
DATA ·winoPermIdx+144(SB)/4, $2
DATA ·winoPermIdx+148(SB)/4, $18
DATA ·winoPermIdx+152(SB)/4, $3
DATA ·winoPermIdx+156(SB)/4, $19
DATA ·winoPermIdx+160(SB)/4, $4
DATA ·winoPermIdx+164(SB)/4, $20
DATA ·winoPermIdx+168(SB)/4, $5
DATA ·winoPermIdx+172(SB)/4, $21
DATA ·winoPermIdx+176(SB)/4, $6
DATA ·winoPermIdx+180(SB)/4, $22
DATA ·winoPermIdx+184(SB)/4, $7
DATA ·winoPermIdx+188(SB)/4, $23
DATA ·winoPermIdx+192(SB)/4, $8
DATA ·winoPermIdx+196(SB)/4, $24
DATA ·winoPermIdx+200(SB)/4, $9
DATA ·winoPermIdx+204(SB)/4, $25
DATA ·winoPermIdx+208(SB)/4, $10
DATA ·winoPermIdx+212(SB)/4, $26
DATA ·winoPermIdx+216(SB)/4, $11
DATA ·winoPermIdx+220(SB)/4, $27
DATA ·winoPermIdx+224(SB)/4, $12
DATA ·winoPermIdx+228(SB)/4, $28
DATA ·winoPermIdx+232(SB)/4, $13
DATA ·winoPermIdx+236(SB)/4, $29
DATA ·winoPermIdx+240(SB)/4, $14
DATA ·winoPermIdx+244(SB)/4, $30
DATA ·winoPermIdx+248(SB)/4, $15
DATA ·winoPermIdx+252(SB)/4, $31
GLOBL ·winoPermIdx(SB), RODATA|NOPTR, $256

// MASKW sets K to the low CX bits (CX ≤ 16), using AX.
#define MASKW(K) \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K

// ROWMASKS sets K1 to the first min(BX, 16) and K2 to the next
// max(BX − 16, 0) of 32 row elements, K3 to the first ⌈BX/2⌉ and K4 to the
// first ⌊BX/2⌋ of 16 column elements (BX < 32).
#define ROWMASKS \
	MOVQ BX, CX; \
	CMPQ CX, $16; \
	JBE  m1; \
	MOVQ $16, CX; \
m1: \
	MASKW(K1); \
	MOVQ BX, CX; \
	SUBQ $16, CX; \
	JAE  m2; \
	XORQ CX, CX; \
m2: \
	MASKW(K2); \
	MOVQ BX, CX; \
	INCQ CX; \
	SHRQ $1, CX; \
	MASKW(K3); \
	MOVQ BX, CX; \
	SHRQ $1, CX; \
	MASKW(K4)

// func splitAVX512(ev, od, src *float32, m, rows, srcStride, dstStride int)
// For each row r < rows: ev[r·dstStride + k] = src[r·srcStride + 2k] for
// k < ⌈m/2⌉ and od[r·dstStride + k] = src[r·srcStride + 2k + 1] for
// k < ⌊m/2⌋ (strides in elements). The tail's masks are made once.
TEXT ·splitAVX512(SB), NOSPLIT, $0-56
	MOVQ      ev+0(FP), DI
	MOVQ      od+8(FP), DX
	MOVQ      src+16(FP), SI
	MOVQ      m+24(FP), BX
	MOVQ      rows+32(FP), R9
	MOVQ      srcStride+40(FP), R10
	MOVQ      dstStride+48(FP), R11
	SHLQ      $2, R10
	SHLQ      $2, R11
	VMOVDQU32 ·winoPermIdx+0(SB), Z30
	VMOVDQU32 ·winoPermIdx+64(SB), Z31
	MOVQ      BX, R12
	ANDQ      $-32, R12 // elements in whole steps
	ANDQ      $31, BX   // the tail's
	ROWMASKS

srow:
	TESTQ R9, R9
	JZ    sdone
	MOVQ  SI, R13
	MOVQ  DI, R14
	MOVQ  DX, R8
	MOVQ  R12, CX

sloop:
	TESTQ     CX, CX
	JZ        stail
	VMOVUPS   (R13), Z0
	VMOVUPS   64(R13), Z1
	VMOVAPS   Z0, Z2
	VPERMT2PS Z1, Z30, Z0
	VPERMT2PS Z1, Z31, Z2
	VMOVUPS   Z0, (R14)
	VMOVUPS   Z2, (R8)
	ADDQ      $128, R13
	ADDQ      $64, R14
	ADDQ      $64, R8
	SUBQ      $32, CX
	JMP       sloop

stail:
	TESTQ     BX, BX
	JZ        snext
	VMOVUPS.Z (R13), K1, Z0
	VMOVUPS.Z 64(R13), K2, Z1
	VMOVAPS   Z0, Z2
	VPERMT2PS Z1, Z30, Z0
	VPERMT2PS Z1, Z31, Z2
	VMOVUPS   Z0, K3, (R14)
	VMOVUPS   Z2, K4, (R8)

snext:
	ADDQ R10, SI
	ADDQ R11, DI
	ADDQ R11, DX
	DECQ R9
	JMP  srow

sdone:
	VZEROUPPER
	RET

// func joinAVX512(dst, ev, od *float32, m int, add bool)
// dst[2k] = ev[k] and dst[2k+1] = od[k] for indices below m; with add,
// dst[i] + (the value) instead.
TEXT ·joinAVX512(SB), NOSPLIT, $0-33
	MOVQ      dst+0(FP), DI
	MOVQ      ev+8(FP), SI
	MOVQ      od+16(FP), DX
	MOVQ      m+24(FP), BX
	MOVBLZX   add+32(FP), R8
	VMOVDQU32 ·winoPermIdx+128(SB), Z30
	VMOVDQU32 ·winoPermIdx+192(SB), Z31

jloop:
	CMPQ      BX, $32
	JB        jtail
	VMOVUPS   (SI), Z0
	VMOVUPS   (DX), Z1
	VMOVAPS   Z0, Z2
	VPERMT2PS Z1, Z30, Z0
	VPERMT2PS Z1, Z31, Z2
	TESTQ     R8, R8
	JZ        jstore
	VADDPS    (DI), Z0, Z0
	VADDPS    64(DI), Z2, Z2

jstore:
	VMOVUPS Z0, (DI)
	VMOVUPS Z2, 64(DI)
	ADDQ    $128, DI
	ADDQ    $64, SI
	ADDQ    $64, DX
	SUBQ    $32, BX
	JMP     jloop

jtail:
	TESTQ     BX, BX
	JZ        jdone
	ROWMASKS
	VMOVUPS.Z (SI), K3, Z0
	VMOVUPS.Z (DX), K4, Z1
	VMOVAPS   Z0, Z2
	VPERMT2PS Z1, Z30, Z0
	VPERMT2PS Z1, Z31, Z2
	TESTQ     R8, R8
	JZ        jmstore
	VMOVUPS.Z (DI), K1, Z3
	VMOVUPS.Z 64(DI), K2, Z4
	VADDPS    Z3, Z0, Z0
	VADDPS    Z4, Z2, Z2

jmstore:
	VMOVUPS Z0, K1, (DI)
	VMOVUPS Z2, K2, 64(DI)

jdone:
	VZEROUPPER
	RET

// TAILMASK sets K1 to the lanes of the last BX (< 16) positions, with AX
// and R12 as scratch; CX is kept.
#define TAILMASK \
	MOVL  $1, AX; \
	MOVQ  BX, R12; \
	XCHGQ R12, CX; \
	SHLL  CX, AX; \
	XCHGQ R12, CX; \
	DECL  AX; \
	KMOVW AX, K1

// CHANCOL stores (e − e′, o + e′, e′ − o, o − o′) through K1 to the four
// planes at R12, DX bytes apart (CX = 3·DX).
#define CHANCOL(E, E1, O, O1) \
	VSUBPS E1, E, Z4; \
	VADDPS E1, O, Z5; \
	VSUBPS O, E1, Z6; \
	VSUBPS O1, O, Z7; \
	VMOVUPS Z4, K1, (R12); \
	VMOVUPS Z5, K1, (R12)(DX*1); \
	VMOVUPS Z6, K1, (R12)(DX*2); \
	VMOVUPS Z7, K1, (R12)(CX*1)

// func winoInputChannelAVX512(v *float32, plane int, par *float32, pl, we, n int)
//
// Bᵀ d B for one channel: winoInput's two winoCombine passes (down the
// rows, then across the columns) in one pass over the four parity planes
// par (plane (rp, cp) at (2·rp + cp)·pl), without the row combinations'
// planes in between. Output ξ = 4i + j goes to v[ξ·plane + t] for the
// positions t < n. The same operations in the same order as the two
// passes, so the same bits at every position but a row's extra tile
// (t = ti·we + we − 1, never read), which the two passes fill from the
// scratch beyond the row combinations and this from the next plane row.
//
// Registers: R8 = &par[t], R9 = R8 + 4·we, R10 = 4·pl, R11 = 12·pl,
// DI = &v[t], DX = 4·plane, CX = 12·plane, R13 = 16·plane, BX the
// positions left; K1 the lanes of the last, partial vector.
TEXT ·winoInputChannelAVX512(SB), NOSPLIT, $0-48
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
	MOVL $0xffff, AX
	KMOVW AX, K1

chanLoop:
	CMPQ BX, $0
	JLE  chanDone
	CMPQ BX, $16
	JAE  chanFull
	TAILMASK

chanFull:
	// Row combinations (r0 − r2, r1 + r2, r2 − r1, r1 − r3) with r0, r1
	// the even and odd rows of a column parity at t, r2, r3 a plane row
	// further: E(t) in Z16–Z19, E(t+1) in Z20–Z23 (even columns), O(t)
	// in Z24–Z27, O(t+1) in Z28–Z31 (odd columns).
	VMOVUPS.Z (R8), K1, Z0
	VMOVUPS.Z (R8)(R10*2), K1, Z1
	VMOVUPS.Z (R9), K1, Z2
	VMOVUPS.Z (R9)(R10*2), K1, Z3
	VSUBPS Z2, Z0, Z16
	VADDPS Z2, Z1, Z17
	VSUBPS Z1, Z2, Z18
	VSUBPS Z3, Z1, Z19
	VMOVUPS.Z 4(R8), K1, Z0
	VMOVUPS.Z 4(R8)(R10*2), K1, Z1
	VMOVUPS.Z 4(R9), K1, Z2
	VMOVUPS.Z 4(R9)(R10*2), K1, Z3
	VSUBPS Z2, Z0, Z20
	VADDPS Z2, Z1, Z21
	VSUBPS Z1, Z2, Z22
	VSUBPS Z3, Z1, Z23
	VMOVUPS.Z (R8)(R10*1), K1, Z0
	VMOVUPS.Z (R8)(R11*1), K1, Z1
	VMOVUPS.Z (R9)(R10*1), K1, Z2
	VMOVUPS.Z (R9)(R11*1), K1, Z3
	VSUBPS Z2, Z0, Z24
	VADDPS Z2, Z1, Z25
	VSUBPS Z1, Z2, Z26
	VSUBPS Z3, Z1, Z27
	VMOVUPS.Z 4(R8)(R10*1), K1, Z0
	VMOVUPS.Z 4(R8)(R11*1), K1, Z1
	VMOVUPS.Z 4(R9)(R10*1), K1, Z2
	VMOVUPS.Z 4(R9)(R11*1), K1, Z3
	VSUBPS Z2, Z0, Z28
	VADDPS Z2, Z1, Z29
	VSUBPS Z1, Z2, Z30
	VSUBPS Z3, Z1, Z31

	// Across the columns, for each row combination i: (e − e′, o + e′,
	// e′ − o, o − o′) with e = E_i(t), e′ = E_i(t+1), o = O_i(t),
	// o′ = O_i(t+1), into v's planes 4i … 4i + 3.
	MOVQ DI, R12
	CHANCOL(Z16, Z20, Z24, Z28)
	ADDQ R13, R12
	CHANCOL(Z17, Z21, Z25, Z29)
	ADDQ R13, R12
	CHANCOL(Z18, Z22, Z26, Z30)
	ADDQ R13, R12
	CHANCOL(Z19, Z23, Z27, Z31)

	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, DI
	SUBQ $16, BX
	JMP  chanLoop

chanDone:
	VZEROUPPER
	RET

// DOWNZ is winoDown's pair on Z0–Z3 with the bias in Z8, into (A, B):
// A = ((m0 + m1) + m2) + bias, B = ((m1 − m2) − m3) + bias.
#define DOWNZ(M0, M1, M2, M3, A, B) \
	VADDPS M1, M0, A; \
	VADDPS M2, A, A; \
	VADDPS Z8, A, A; \
	VSUBPS M2, M1, B; \
	VSUBPS M3, B, B; \
	VADDPS Z8, B, B

// OUTCOL loads m_{ij} for i < 4 from R12, R13 bytes apart (R11 = 3·R13),
// through K1, and applies DOWNZ into (A, B).
#define OUTCOL(A, B) \
	VMOVUPS.Z (R12), K1, Z0; \
	VMOVUPS.Z (R12)(R13*1), K1, Z1; \
	VMOVUPS.Z (R12)(R13*2), K1, Z2; \
	VMOVUPS.Z (R12)(R11*1), K1, Z3; \
	DOWNZ(Z0, Z1, Z2, Z3, A, B)

// func winoOutputChannelAVX512(st *float32, n int, m *float32, plane int, bias float32)
//
// Aᵀ m A's two winoDown passes for one output channel in one: from the
// products m[ξ·plane + t] (ξ = 4i + j) to the four planes st[k·n + t],
// k < 4, at the positions t < n: the top rows' even and odd columns, the
// bottom rows' (winoOutput's planes 8–11). The same operations in the same
// order as the six winoDown calls (the first pass adds a zero bias), so
// the same bits, without the eight planes between the passes.
//
// Registers: R8 = &m[t], DX = 4·plane, R13 = 16·plane, R11 = 48·plane,
// DI = &st[t], SI = 4·n, R9 = 12·n; Z8 the bias, then 0 for the first
// pass; BX the positions left, K1 the last vector's lanes.
TEXT ·winoOutputChannelAVX512(SB), NOSPLIT, $0-36
	MOVQ st+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ BX, SI
	SHLQ $2, SI
	LEAQ (SI)(SI*2), R9
	MOVQ m+16(FP), R8
	MOVQ plane+24(FP), DX
	SHLQ $2, DX
	MOVQ DX, R13
	SHLQ $2, R13
	LEAQ (R13)(R13*2), R11
	VBROADCASTSS bias+32(FP), Z10
	VPXORD Z9, Z9, Z9
	MOVL $0xffff, AX
	KMOVW AX, K1

outLoop:
	CMPQ BX, $0
	JLE  outDone
	CMPQ BX, $16
	JAE  outFull
	TAILMASK

outFull:
	// Down the tiles' column j: (A_j, B_j) into (Z16+j, Z20+j).
	VMOVAPS Z9, Z8
	MOVQ R8, R12
	OUTCOL(Z16, Z20)
	ADDQ DX, R12
	OUTCOL(Z17, Z21)
	ADDQ DX, R12
	OUTCOL(Z18, Z22)
	ADDQ DX, R12
	OUTCOL(Z19, Z23)
	// Across: (A0 … A3) and (B0 … B3) with the bias.
	VMOVAPS Z10, Z8
	DOWNZ(Z16, Z17, Z18, Z19, Z4, Z5)
	DOWNZ(Z20, Z21, Z22, Z23, Z6, Z7)
	VMOVUPS Z4, K1, (DI)
	VMOVUPS Z5, K1, (DI)(SI*1)
	VMOVUPS Z6, K1, (DI)(SI*2)
	VMOVUPS Z7, K1, (DI)(R9*1)

	ADDQ $64, R8
	ADDQ $64, DI
	SUBQ $16, BX
	JMP  outLoop

outDone:
	VZEROUPPER
	RET

// GRADCOL stores, for e and o A's row i on the even and odd columns,
// (0 − o, e + o, o − e, e − 0) to m's planes 3, 1, 2, 0 of that row at R12
// (planes DX bytes apart, CX = 3·DX), through K1; Z9 is zero.
#define GRADCOL(E, O) \
	VSUBPS O, Z9, Z4; \
	VADDPS O, E, Z5; \
	VSUBPS E, O, Z6; \
	VSUBPS Z9, E, Z7; \
	VMOVUPS Z7, K1, (R12); \
	VMOVUPS Z5, K1, (R12)(DX*1); \
	VMOVUPS Z6, K1, (R12)(DX*2); \
	VMOVUPS Z4, K1, (R12)(CX*1)

// func winoOutputGradChannelAVX512(m *float32, plane int, st *float32, n int)
//
// winoOutputGrad's six winoCombine calls for one channel in one: from the
// parity planes of dy at st (n apart: even rows' even and odd columns, odd
// rows') to m's planes (4r + k)·plane, at the positions t < n. The same
// operations in the same order, the zero plane a zero register, so the
// same bits, without the eight planes of A's rows between the passes.
//
// Registers: R8 = &st[t], SI = 4·n, R9 = 12·n; DI = &m[t], DX = 4·plane,
// CX = 12·plane, R13 = 16·plane, R11 = 48·plane; Z9 zero; BX the positions
// left, K1 the last vector's lanes.
TEXT ·winoOutputGradChannelAVX512(SB), NOSPLIT, $0-32
	MOVQ m+0(FP), DI
	MOVQ plane+8(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), CX
	MOVQ DX, R13
	SHLQ $2, R13
	LEAQ (R13)(R13*2), R11
	MOVQ st+16(FP), R8
	MOVQ n+24(FP), BX
	MOVQ BX, SI
	SHLQ $2, SI
	LEAQ (SI)(SI*2), R9
	VPXORD Z9, Z9, Z9
	MOVL $0xffff, AX
	KMOVW AX, K1

gradLoop:
	CMPQ BX, $0
	JLE  gradDone
	CMPQ BX, $16
	JAE  gradFull
	TAILMASK

gradFull:
	// A's rows: (0 − b, a + b, b − a, a − 0) with a, b the even and odd
	// rows, on the even columns into Z16–Z19, the odd into Z20–Z23.
	VMOVUPS.Z (R8), K1, Z0
	VMOVUPS.Z (R8)(SI*1), K1, Z1
	VMOVUPS.Z (R8)(SI*2), K1, Z2
	VMOVUPS.Z (R8)(R9*1), K1, Z3
	VSUBPS Z2, Z9, Z16
	VADDPS Z2, Z0, Z17
	VSUBPS Z0, Z2, Z18
	VSUBPS Z9, Z0, Z19
	VSUBPS Z3, Z9, Z20
	VADDPS Z3, Z1, Z21
	VSUBPS Z1, Z3, Z22
	VSUBPS Z9, Z1, Z23

	// Row i of the result is A's row (3, 1, 2, 0)[i] across the columns.
	LEAQ (DI)(R11*1), R12
	GRADCOL(Z16, Z20)
	LEAQ (DI)(R13*1), R12
	GRADCOL(Z17, Z21)
	LEAQ (DI)(R13*2), R12
	GRADCOL(Z18, Z22)
	MOVQ DI, R12
	GRADCOL(Z19, Z23)

	ADDQ $64, R8
	ADDQ $64, DI
	SUBQ $16, BX
	JMP  gradLoop

gradDone:
	VZEROUPPER
	RET
