//go:build !purego

#include "textflag.h"

// RELU64 keeps the lanes of Z0 that are above 0 or NaN (NLE_UQ) and
// zeroes the others (+0, so −0 gives +0), as max(x, 0).
#define RELU64 \
	VCMPPD    $0x06, Z9, Z0, K2; \
	VMOVAPD.Z Z0, K2, Z0

// LEAKY64 multiplies by the slope in Z8 the lanes of Z0 at or below 0
// (LE_OQ: NaN stays itself).
#define LEAKY64 \
	VCMPPD $0x12, Z9, Z0, K2; \
	VMULPD Z8, Z0, K2, Z0

// LOOP64(body) runs body over z[i] = f(x[i]), 8 lanes at a time, the last
// 1 to 7 under a mask; DI = z, SI = x, CX = the length.
#define LOOP64(body) \
	XORQ R8, R8; \
loop: \
	CMPQ CX, $8; \
	JB   tail; \
	VMOVUPD (SI)(R8*1), Z0; \
	body; \
	VMOVUPD Z0, (DI)(R8*1); \
	ADDQ $64, R8; \
	SUBQ $8, CX; \
	JMP  loop; \
tail: \
	TESTQ CX, CX; \
	JZ    done; \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVB AX, K1; \
	VMOVUPD.Z (SI)(R8*1), K1, Z0; \
	body; \
	VMOVUPD Z0, K1, (DI)(R8*1); \
done: \
	VZEROUPPER; \
	RET

// func relu64AVX512(z, x []float64)
TEXT ·relu64AVX512(SB), NOSPLIT, $0-48
	MOVQ   z_base+0(FP), DI
	MOVQ   z_len+8(FP), CX
	MOVQ   x_base+24(FP), SI
	VPXORQ Z9, Z9, Z9
	LOOP64(RELU64)

// func leaky64AVX512(z, x []float64, slope float64)
TEXT ·leaky64AVX512(SB), NOSPLIT, $0-56
	MOVQ         z_base+0(FP), DI
	MOVQ         z_len+8(FP), CX
	MOVQ         x_base+24(FP), SI
	VBROADCASTSD slope+48(FP), Z8
	VPXORQ       Z9, Z9, Z9
	LOOP64(LEAKY64)
