//go:build !purego

#include "textflag.h"

// The float64 ReLU and LeakyReLU backward masks (elementwise.go's
// reluMask64 and LeakyReLUBackward's loop), AVX-512 (8 lanes, the last
// under K1) and AVX2 (4 lanes, the last through VMASKMOVPD). y > 0 is the
// ordered comparison GT_OQ (0x1E): false for NaN, as the Go loops' y > 0.
// ReLU keeps g where y > 0 and gives +0 elsewhere (g ANDed with the mask);
// LeakyReLU gives g there and slope·g (one rounded product) elsewhere; the
// accumulating forms add that to z. The same arithmetic as the Go loops,
// so the two agree bit for bit. DI = z, SI = g, DX = y, BX = the length.

// The AVX2 tails take their masks from ·avx2TailMask (axpy_avx2_amd64.s):
// four lanes of ones, then four of zeros.

// ---- AVX-512: g in Z0, y in Z1, the result in Z0; Z9 = 0, Z8 = slope.

#define RELUZ \
	VCMPPD    $0x1E, Z9, Z1, K2; \
	VMOVAPD.Z Z0, K2, Z0

#define LEAKYZ \
	VCMPPD  $0x1E, Z9, Z1, K2; \
	VMULPD  Z8, Z0, Z2; \
	VMOVAPD Z0, K2, Z2; \
	VMOVAPD Z2, Z0

#define SETZ(ADDR)
#define ACCZ(ADDR) VADDPD ADDR, Z0, Z0
#define ACCZM(ADDR) VADDPD.Z ADDR, Z0, K1, Z0

#define LOOPZ(body, acc, macc) \
	XORQ R8, R8; \
loop: \
	CMPQ BX, $8; \
	JB   tail; \
	VMOVUPD (SI)(R8*1), Z0; \
	VMOVUPD (DX)(R8*1), Z1; \
	body; \
	acc((DI)(R8*1)); \
	VMOVUPD Z0, (DI)(R8*1); \
	ADDQ $64, R8; \
	SUBQ $8, BX; \
	JMP  loop; \
tail: \
	TESTQ BX, BX; \
	JZ    done; \
	MOVL  $1, AX; \
	MOVQ  BX, CX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVB AX, K1; \
	VMOVUPD.Z (SI)(R8*1), K1, Z0; \
	VMOVUPD.Z (DX)(R8*1), K1, Z1; \
	body; \
	macc((DI)(R8*1)); \
	VMOVUPD Z0, K1, (DI)(R8*1); \
done: \
	VZEROUPPER; \
	RET

#define ARGS \
	MOVQ   z_base+0(FP), DI; \
	MOVQ   z_len+8(FP), BX; \
	MOVQ   g_base+24(FP), SI; \
	MOVQ   y_base+48(FP), DX

// func reluBwd64AVX512(z, g, y []float64)
TEXT ·reluBwd64AVX512(SB), NOSPLIT, $0-72
	ARGS
	VPXORQ Z9, Z9, Z9
	LOOPZ(RELUZ, SETZ, SETZ)

// func reluBwdAcc64AVX512(z, g, y []float64)
TEXT ·reluBwdAcc64AVX512(SB), NOSPLIT, $0-72
	ARGS
	VPXORQ Z9, Z9, Z9
	LOOPZ(RELUZ, ACCZ, ACCZM)

// func leakyBwd64AVX512(z, g, y []float64, slope float64)
TEXT ·leakyBwd64AVX512(SB), NOSPLIT, $0-80
	ARGS
	VBROADCASTSD slope+72(FP), Z8
	VPXORQ       Z9, Z9, Z9
	LOOPZ(LEAKYZ, SETZ, SETZ)

// func leakyBwdAcc64AVX512(z, g, y []float64, slope float64)
TEXT ·leakyBwdAcc64AVX512(SB), NOSPLIT, $0-80
	ARGS
	VBROADCASTSD slope+72(FP), Z8
	VPXORQ       Z9, Z9, Z9
	LOOPZ(LEAKYZ, ACCZ, ACCZM)

// ---- AVX2: g in Y0, y in Y1, the result in Y0; Y9 = 0, Y8 = slope,
// Y10 the tail's mask.

#define RELUY \
	VCMPPD $0x1E, Y9, Y1, Y2; \
	VANDPD Y2, Y0, Y0

#define LEAKYY \
	VCMPPD    $0x1E, Y9, Y1, Y2; \
	VMULPD    Y8, Y0, Y3; \
	VBLENDVPD Y2, Y0, Y3, Y0

#define SETY(ADDR)
#define ACCY(ADDR) VADDPD ADDR, Y0, Y0
#define ACCYM(ADDR) \
	VMASKMOVPD ADDR, Y10, Y4; \
	VADDPD     Y4, Y0, Y0

#define LOOPY(body, acc, macc) \
	XORQ R8, R8; \
loop: \
	CMPQ BX, $4; \
	JB   tail; \
	VMOVUPD (SI)(R8*1), Y0; \
	VMOVUPD (DX)(R8*1), Y1; \
	body; \
	acc((DI)(R8*1)); \
	VMOVUPD Y0, (DI)(R8*1); \
	ADDQ $32, R8; \
	SUBQ $4, BX; \
	JMP  loop; \
tail: \
	TESTQ BX, BX; \
	JZ    done; \
	LEAQ  ·avx2TailMask+32(SB), CX; \
	SHLQ  $3, BX; \
	SUBQ  BX, CX; \
	VMOVDQU (CX), Y10; \
	VMASKMOVPD (SI)(R8*1), Y10, Y0; \
	VMASKMOVPD (DX)(R8*1), Y10, Y1; \
	body; \
	macc((DI)(R8*1)); \
	VMASKMOVPD Y0, Y10, (DI)(R8*1); \
done: \
	VZEROUPPER; \
	RET

// func reluBwd64AVX2(z, g, y []float64)
TEXT ·reluBwd64AVX2(SB), NOSPLIT, $0-72
	ARGS
	VXORPD Y9, Y9, Y9
	LOOPY(RELUY, SETY, SETY)

// func reluBwdAcc64AVX2(z, g, y []float64)
TEXT ·reluBwdAcc64AVX2(SB), NOSPLIT, $0-72
	ARGS
	VXORPD Y9, Y9, Y9
	LOOPY(RELUY, ACCY, ACCYM)

// func leakyBwd64AVX2(z, g, y []float64, slope float64)
TEXT ·leakyBwd64AVX2(SB), NOSPLIT, $0-80
	ARGS
	VBROADCASTSD slope+72(FP), Y8
	VXORPD       Y9, Y9, Y9
	LOOPY(LEAKYY, SETY, SETY)

// func leakyBwdAcc64AVX2(z, g, y []float64, slope float64)
TEXT ·leakyBwdAcc64AVX2(SB), NOSPLIT, $0-80
	ARGS
	VBROADCASTSD slope+72(FP), Y8
	VXORPD       Y9, Y9, Y9
	LOOPY(LEAKYY, ACCY, ACCYM)
