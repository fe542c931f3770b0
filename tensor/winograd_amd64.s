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
