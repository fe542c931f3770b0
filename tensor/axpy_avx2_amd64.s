//go:build !purego

#include "textflag.h"

// The slice kernels of axpy_amd64.s, axpy64_amd64.s and relu64_amd64.s on
// 256-bit registers (AVX2 and FMA, no AVX-512): the same operations in the
// same order, each rounded alike (no fused multiply-adds), the last 1 to 7
// float32 (1 to 3 float64) loaded and stored under a vector mask
// (VMASKMOVPS/PD neither read nor write the lanes left out).

// ·avx2TailMask: 8 dwords of all ones, then 8 of zeros. The 32 bytes at
// ·avx2TailMask+32−4r select the first r float32 lanes, those at
// ·avx2TailMask+32−8r the first r float64 lanes.
DATA ·avx2TailMask+0(SB)/8, $0xffffffffffffffff
DATA ·avx2TailMask+8(SB)/8, $0xffffffffffffffff
DATA ·avx2TailMask+16(SB)/8, $0xffffffffffffffff
DATA ·avx2TailMask+24(SB)/8, $0xffffffffffffffff
DATA ·avx2TailMask+32(SB)/8, $0
DATA ·avx2TailMask+40(SB)/8, $0
DATA ·avx2TailMask+48(SB)/8, $0
DATA ·avx2TailMask+56(SB)/8, $0
GLOBL ·avx2TailMask(SB), RODATA|NOPTR, $64

// MASK32(R, M) loads into M the mask of the first R (1 to 8) float32
// lanes; it uses CX.
#define MASK32(R, M) \
	LEAQ    ·avx2TailMask+32(SB), CX; \
	SHLQ    $2, R; \
	SUBQ    R, CX; \
	SHRQ    $2, R; \
	VMOVDQU (CX), M

// MASK64(R, M) loads into M the mask of the first R (1 to 4) float64
// lanes; it uses CX.
#define MASK64(R, M) \
	LEAQ    ·avx2TailMask+32(SB), CX; \
	SHLQ    $3, R; \
	SUBQ    R, CX; \
	SHRQ    $3, R; \
	VMOVDQU (CX), M

// func axpyAVX2(a float32, x, y *float32, n int)
// y[i] = y[i] + a·x[i], the product rounded before the sum, 16 lanes at a
// time, then 8, then the last under a mask.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Y8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), BX
	XORQ R8, R8

loop:
	CMPQ BX, $16
	JB   single
	VMULPS  (SI)(R8*1), Y8, Y0
	VMULPS  32(SI)(R8*1), Y8, Y1
	VADDPS  (DI)(R8*1), Y0, Y0
	VADDPS  32(DI)(R8*1), Y1, Y1
	VMOVUPS Y0, (DI)(R8*1)
	VMOVUPS Y1, 32(DI)(R8*1)
	ADDQ    $64, R8
	SUBQ    $16, BX
	JMP     loop

single:
	CMPQ BX, $8
	JB   tail
	VMULPS  (SI)(R8*1), Y8, Y0
	VADDPS  (DI)(R8*1), Y0, Y0
	VMOVUPS Y0, (DI)(R8*1)
	ADDQ    $32, R8
	SUBQ    $8, BX

tail:
	TESTQ BX, BX
	JZ    done
	MASK32(BX, Y9)
	VMASKMOVPS (SI)(R8*1), Y9, Y0
	VMASKMOVPS (DI)(R8*1), Y9, Y1
	VMULPS     Y8, Y0, Y0
	VADDPS     Y1, Y0, Y0
	VMASKMOVPS Y0, Y9, (DI)(R8*1)

done:
	VZEROUPPER
	RET

// func colSumsAVX2(dst, x *float32, rows, cols int)
// colSumsAVX512's sums: for each column (Σ even rows + Σ odd rows), each
// in row order, then + dst[j]; blocks of 32 columns in 8 accumulators
// (even rows in Y0–Y3, odd rows in Y4–Y7), then 8 columns at a time under
// a mask (all ones but for the last 1 to 7).
TEXT ·colSumsAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ rows+16(FP), BX
	MOVQ cols+24(FP), R10
	MOVQ R10, R9
	SHLQ $2, R9 // row stride in bytes

wide:
	CMPQ   R10, $32
	JB     narrow
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   SI, R11
	MOVQ   BX, DX

wpair:
	CMPQ   DX, $2
	JB     wlast
	VADDPS (R11), Y0, Y0
	VADDPS 32(R11), Y1, Y1
	VADDPS 64(R11), Y2, Y2
	VADDPS 96(R11), Y3, Y3
	VADDPS (R11)(R9*1), Y4, Y4
	VADDPS 32(R11)(R9*1), Y5, Y5
	VADDPS 64(R11)(R9*1), Y6, Y6
	VADDPS 96(R11)(R9*1), Y7, Y7
	LEAQ   (R11)(R9*2), R11
	SUBQ   $2, DX
	JMP    wpair

wlast:
	TESTQ  DX, DX
	JZ     wstore
	VADDPS (R11), Y0, Y0
	VADDPS 32(R11), Y1, Y1
	VADDPS 64(R11), Y2, Y2
	VADDPS 96(R11), Y3, Y3

wstore:
	VADDPS  Y4, Y0, Y0
	VADDPS  Y5, Y1, Y1
	VADDPS  Y6, Y2, Y2
	VADDPS  Y7, Y3, Y3
	VADDPS  (DI), Y0, Y0
	VADDPS  32(DI), Y1, Y1
	VADDPS  64(DI), Y2, Y2
	VADDPS  96(DI), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, R10
	JMP     wide

narrow:
	TESTQ R10, R10
	JZ    done
	MOVQ  $8, R12
	CMPQ  R10, $8
	CMOVQCS R10, R12
	MASK32(R12, Y15)
	VXORPS Y0, Y0, Y0
	VXORPS Y4, Y4, Y4
	MOVQ   SI, R11
	MOVQ   BX, DX

npair:
	CMPQ       DX, $2
	JB         nlast
	VMASKMOVPS (R11), Y15, Y8
	VMASKMOVPS (R11)(R9*1), Y15, Y9
	VADDPS     Y8, Y0, Y0
	VADDPS     Y9, Y4, Y4
	LEAQ       (R11)(R9*2), R11
	SUBQ       $2, DX
	JMP        npair

nlast:
	TESTQ      DX, DX
	JZ         nstore
	VMASKMOVPS (R11), Y15, Y8
	VADDPS     Y8, Y0, Y0

nstore:
	VADDPS     Y4, Y0, Y0
	VMASKMOVPS (DI), Y15, Y4
	VADDPS     Y4, Y0, Y0
	VMASKMOVPS Y0, Y15, (DI)
	ADDQ       $32, SI
	ADDQ       $32, DI
	SUBQ       $8, R10
	JA         narrow

done:
	VZEROUPPER
	RET

// func sumAVX2(x *float32, n int) float64
// sumAVX512's sum, to the bit: each float32 converted exactly, 32 at a
// time into four sums of 8 lanes (Y0:Y1, Y2:Y3, Y4:Y5, Y6:Y7), then 8 at a
// time into the first, the last 1 to 7 under a mask into the second, and
// the lanes added in sumAVX512's tree.
TEXT ·sumAVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

sum32:
	CMPQ      BX, $32
	JB        sum8
	VCVTPS2PD (SI), Y8
	VCVTPS2PD 16(SI), Y9
	VCVTPS2PD 32(SI), Y10
	VCVTPS2PD 48(SI), Y11
	VADDPD    Y8, Y0, Y0
	VADDPD    Y9, Y1, Y1
	VADDPD    Y10, Y2, Y2
	VADDPD    Y11, Y3, Y3
	VCVTPS2PD 64(SI), Y8
	VCVTPS2PD 80(SI), Y9
	VCVTPS2PD 96(SI), Y10
	VCVTPS2PD 112(SI), Y11
	VADDPD    Y8, Y4, Y4
	VADDPD    Y9, Y5, Y5
	VADDPD    Y10, Y6, Y6
	VADDPD    Y11, Y7, Y7
	ADDQ      $128, SI
	SUBQ      $32, BX
	JMP       sum32

sum8:
	CMPQ      BX, $8
	JB        sumtail
	VCVTPS2PD (SI), Y8
	VCVTPS2PD 16(SI), Y9
	VADDPD    Y8, Y0, Y0
	VADDPD    Y9, Y1, Y1
	ADDQ      $32, SI
	SUBQ      $8, BX
	JMP       sum8

sumtail:
	TESTQ        BX, BX
	JZ           sumtree
	MASK32(BX, Y12)
	VMASKMOVPS   (SI), Y12, Y8
	VCVTPS2PD    X8, Y9
	VEXTRACTF128 $1, Y8, X8
	VCVTPS2PD    X8, Y10
	VADDPD       Y9, Y2, Y2
	VADDPD       Y10, Y3, Y3

sumtree:
	VADDPD       Y2, Y0, Y0
	VADDPD       Y3, Y1, Y1
	VADDPD       Y6, Y4, Y4
	VADDPD       Y7, Y5, Y5
	VADDPD       Y4, Y0, Y0
	VADDPD       Y5, Y1, Y1
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, ret+16(FP)
	VZEROUPPER
	RET

// func linCombAVX2(dst, base *float32, n int, coef *float32, src **float32, m int)
// dst[i] = base[i] + coef[0]·src[0][i] + … + coef[m−1]·src[m−1][i] for
// i < n (base nil: 0 + …), each product rounded before it is added, the
// terms added in order, 32 elements at a time with the sums in registers,
// then 8 at a time under a mask (all ones but for the last 1 to 7).
TEXT ·linCombAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ base+8(FP), SI
	MOVQ n+16(FP), BX
	MOVQ coef+24(FP), R8
	MOVQ src+32(FP), R9
	MOVQ m+40(FP), R10
	XORQ AX, AX // byte offset

lc32:
	CMPQ    BX, $32
	JB      lc8
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	TESTQ   SI, SI
	JZ      lc32terms
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS 32(SI)(AX*1), Y1
	VMOVUPS 64(SI)(AX*1), Y2
	VMOVUPS 96(SI)(AX*1), Y3

lc32terms:
	XORQ DX, DX

lc32j:
	CMPQ         DX, R10
	JAE          lc32store
	VBROADCASTSS (R8)(DX*4), Y8
	MOVQ         (R9)(DX*8), R11
	VMULPS       (R11)(AX*1), Y8, Y4
	VMULPS       32(R11)(AX*1), Y8, Y5
	VMULPS       64(R11)(AX*1), Y8, Y6
	VMULPS       96(R11)(AX*1), Y8, Y7
	VADDPS       Y4, Y0, Y0
	VADDPS       Y5, Y1, Y1
	VADDPS       Y6, Y2, Y2
	VADDPS       Y7, Y3, Y3
	INCQ         DX
	JMP          lc32j

lc32store:
	VMOVUPS Y0, (DI)(AX*1)
	VMOVUPS Y1, 32(DI)(AX*1)
	VMOVUPS Y2, 64(DI)(AX*1)
	VMOVUPS Y3, 96(DI)(AX*1)
	ADDQ    $128, AX
	SUBQ    $32, BX
	JMP     lc32

lc8:
	TESTQ   BX, BX
	JZ      lcdone
	MOVQ    $8, R12
	CMPQ    BX, $8
	CMOVQCS BX, R12
	MASK32(R12, Y15)
	VXORPS  Y0, Y0, Y0
	TESTQ   SI, SI
	JZ      lc8terms
	VMASKMOVPS (SI)(AX*1), Y15, Y0

lc8terms:
	XORQ DX, DX

lc8j:
	CMPQ         DX, R10
	JAE          lc8store
	VBROADCASTSS (R8)(DX*4), Y8
	MOVQ         (R9)(DX*8), R11
	VMASKMOVPS   (R11)(AX*1), Y15, Y4
	VMULPS       Y8, Y4, Y4
	VADDPS       Y4, Y0, Y0
	INCQ         DX
	JMP          lc8j

lc8store:
	VMASKMOVPS Y0, Y15, (DI)(AX*1)
	ADDQ       $32, AX
	SUBQ       $8, BX
	JA         lc8

lcdone:
	VZEROUPPER
	RET

// func axpy64AVX2(a float64, x, y *float64, n int)
// axpyAVX2 on float64: 8 lanes at a time, then 4, then the last under a
// mask.
TEXT ·axpy64AVX2(SB), NOSPLIT, $0-32
	VBROADCASTSD a+0(FP), Y8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), BX
	XORQ R8, R8

ax64loop:
	CMPQ BX, $8
	JB   ax64single
	VMULPD  (SI)(R8*1), Y8, Y0
	VMULPD  32(SI)(R8*1), Y8, Y1
	VADDPD  (DI)(R8*1), Y0, Y0
	VADDPD  32(DI)(R8*1), Y1, Y1
	VMOVUPD Y0, (DI)(R8*1)
	VMOVUPD Y1, 32(DI)(R8*1)
	ADDQ    $64, R8
	SUBQ    $8, BX
	JMP     ax64loop

ax64single:
	CMPQ BX, $4
	JB   ax64tail
	VMULPD  (SI)(R8*1), Y8, Y0
	VADDPD  (DI)(R8*1), Y0, Y0
	VMOVUPD Y0, (DI)(R8*1)
	ADDQ    $32, R8
	SUBQ    $4, BX

ax64tail:
	TESTQ BX, BX
	JZ    ax64done
	MASK64(BX, Y9)
	VMASKMOVPD (SI)(R8*1), Y9, Y0
	VMASKMOVPD (DI)(R8*1), Y9, Y1
	VMULPD     Y8, Y0, Y0
	VADDPD     Y1, Y0, Y0
	VMASKMOVPD Y0, Y9, (DI)(R8*1)

ax64done:
	VZEROUPPER
	RET

// func linComb64AVX2(dst, base *float64, n int, coef *float64, src **float64, m int)
// linCombAVX2 on float64: 16 elements at a time with the sums in
// registers, then 4 at a time under a mask (all ones but for the last 1
// to 3).
TEXT ·linComb64AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ base+8(FP), SI
	MOVQ n+16(FP), BX
	MOVQ coef+24(FP), R8
	MOVQ src+32(FP), R9
	MOVQ m+40(FP), R10
	XORQ AX, AX // byte offset

lc16:
	CMPQ    BX, $16
	JB      lc4
	VXORPD  Y0, Y0, Y0
	VXORPD  Y1, Y1, Y1
	VXORPD  Y2, Y2, Y2
	VXORPD  Y3, Y3, Y3
	TESTQ   SI, SI
	JZ      lc16terms
	VMOVUPD (SI)(AX*1), Y0
	VMOVUPD 32(SI)(AX*1), Y1
	VMOVUPD 64(SI)(AX*1), Y2
	VMOVUPD 96(SI)(AX*1), Y3

lc16terms:
	XORQ DX, DX

lc16j:
	CMPQ         DX, R10
	JAE          lc16store
	VBROADCASTSD (R8)(DX*8), Y8
	MOVQ         (R9)(DX*8), R11
	VMULPD       (R11)(AX*1), Y8, Y4
	VMULPD       32(R11)(AX*1), Y8, Y5
	VMULPD       64(R11)(AX*1), Y8, Y6
	VMULPD       96(R11)(AX*1), Y8, Y7
	VADDPD       Y4, Y0, Y0
	VADDPD       Y5, Y1, Y1
	VADDPD       Y6, Y2, Y2
	VADDPD       Y7, Y3, Y3
	INCQ         DX
	JMP          lc16j

lc16store:
	VMOVUPD Y0, (DI)(AX*1)
	VMOVUPD Y1, 32(DI)(AX*1)
	VMOVUPD Y2, 64(DI)(AX*1)
	VMOVUPD Y3, 96(DI)(AX*1)
	ADDQ    $128, AX
	SUBQ    $16, BX
	JMP     lc16

lc4:
	TESTQ   BX, BX
	JZ      lc64done
	MOVQ    $4, R12
	CMPQ    BX, $4
	CMOVQCS BX, R12
	MASK64(R12, Y15)
	VXORPD  Y0, Y0, Y0
	TESTQ   SI, SI
	JZ      lc4terms
	VMASKMOVPD (SI)(AX*1), Y15, Y0

lc4terms:
	XORQ DX, DX

lc4j:
	CMPQ         DX, R10
	JAE          lc4store
	VBROADCASTSD (R8)(DX*8), Y8
	MOVQ         (R9)(DX*8), R11
	VMASKMOVPD   (R11)(AX*1), Y15, Y4
	VMULPD       Y8, Y4, Y4
	VADDPD       Y4, Y0, Y0
	INCQ         DX
	JMP          lc4j

lc4store:
	VMASKMOVPD Y0, Y15, (DI)(AX*1)
	ADDQ       $32, AX
	SUBQ       $4, BX
	JA         lc4

lc64done:
	VZEROUPPER
	RET

// RELU64Y keeps the lanes of Y0 that are above 0 or NaN (NLE_UQ) and
// zeroes the others (+0, so −0 gives +0), as max(x, 0); Y9 is 0.
#define RELU64Y \
	VCMPPD $0x06, Y9, Y0, Y1; \
	VANDPD Y1, Y0, Y0

// LEAKY64Y multiplies by the slope in Y8 the lanes of Y0 at or below 0
// (LE_OQ: NaN stays itself); Y9 is 0.
#define LEAKY64Y \
	VCMPPD    $0x12, Y9, Y0, Y1; \
	VMULPD    Y8, Y0, Y2; \
	VBLENDVPD Y1, Y2, Y0, Y0

// LOOP64Y(body) runs body over z[i] = f(x[i]), 4 lanes at a time, the last
// 1 to 3 under a mask; DI = z, SI = x, BX = the length.
#define LOOP64Y(body) \
	XORQ R8, R8; \
loop: \
	CMPQ BX, $4; \
	JB   tail; \
	VMOVUPD (SI)(R8*1), Y0; \
	body; \
	VMOVUPD Y0, (DI)(R8*1); \
	ADDQ $32, R8; \
	SUBQ $4, BX; \
	JMP  loop; \
tail: \
	TESTQ BX, BX; \
	JZ    done; \
	MASK64(BX, Y10); \
	VMASKMOVPD (SI)(R8*1), Y10, Y0; \
	body; \
	VMASKMOVPD Y0, Y10, (DI)(R8*1); \
done: \
	VZEROUPPER; \
	RET

// func relu64AVX2(z, x []float64)
TEXT ·relu64AVX2(SB), NOSPLIT, $0-48
	MOVQ   z_base+0(FP), DI
	MOVQ   z_len+8(FP), BX
	MOVQ   x_base+24(FP), SI
	VXORPD Y9, Y9, Y9
	LOOP64Y(RELU64Y)

// func leaky64AVX2(z, x []float64, slope float64)
TEXT ·leaky64AVX2(SB), NOSPLIT, $0-56
	MOVQ         z_base+0(FP), DI
	MOVQ         z_len+8(FP), BX
	MOVQ         x_base+24(FP), SI
	VBROADCASTSD slope+48(FP), Y8
	VXORPD       Y9, Y9, Y9
	LOOP64Y(LEAKY64Y)
