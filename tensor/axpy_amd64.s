//go:build !purego

#include "textflag.h"

// func axpyAVX512(a float32, x, y *float32, n int)
// y[i] = y[i] + a·x[i], the product rounded before the sum (as gonum's
// Saxpy), 16 lanes at a time, the last under a mask.
TEXT ·axpyAVX512(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Z8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), BX
	XORQ R8, R8

loop:
	CMPQ BX, $32
	JB   single
	VMOVUPS (SI)(R8*1), Z0
	VMOVUPS 64(SI)(R8*1), Z1
	VMULPS  Z8, Z0, Z0
	VMULPS  Z8, Z1, Z1
	VADDPS  (DI)(R8*1), Z0, Z0
	VADDPS  64(DI)(R8*1), Z1, Z1
	VMOVUPS Z0, (DI)(R8*1)
	VMOVUPS Z1, 64(DI)(R8*1)
	ADDQ    $128, R8
	SUBQ    $32, BX
	JMP     loop

single:
	CMPQ BX, $16
	JB   tail
	VMOVUPS (SI)(R8*1), Z0
	VMULPS  Z8, Z0, Z0
	VADDPS  (DI)(R8*1), Z0, Z0
	VMOVUPS Z0, (DI)(R8*1)
	ADDQ    $64, R8
	SUBQ    $16, BX

tail:
	TESTQ BX, BX
	JZ    done
	MOVL  $1, AX
	MOVQ  BX, CX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z (SI)(R8*1), K1, Z0
	VMOVUPS.Z (DI)(R8*1), K1, Z1
	VMULPS  Z8, Z0, Z0
	VADDPS  Z1, Z0, Z0
	VMOVUPS Z0, K1, (DI)(R8*1)

done:
	VZEROUPPER
	RET

// func colSumsAVX512(dst, x *float32, rows, cols int)
// dst[j] += Σ_i x[i·cols + j] for j < cols, i < rows: the column sums of a
// row-major [rows, cols] block, kept in registers while the rows stream by.
// Blocks of 64 columns take 8 accumulators (even rows in Z0–Z3, odd rows in
// Z4–Z7, so that no add waits on the one before it); the last 1 to 63
// columns go 16 at a time, the last 1 to 15 under a mask. Each column's sum
// is (Σ even rows + Σ odd rows), each in row order, then added to dst.
TEXT ·colSumsAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ rows+16(FP), BX
	MOVQ cols+24(FP), R10
	MOVQ R10, R9
	SHLQ $2, R9 // row stride in bytes

wide:
	CMPQ   R10, $64
	JB     narrow
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ   SI, R11
	MOVQ   BX, CX

wpair:
	CMPQ   CX, $2
	JB     wlast
	VADDPS (R11), Z0, Z0
	VADDPS 64(R11), Z1, Z1
	VADDPS 128(R11), Z2, Z2
	VADDPS 192(R11), Z3, Z3
	VADDPS (R11)(R9*1), Z4, Z4
	VADDPS 64(R11)(R9*1), Z5, Z5
	VADDPS 128(R11)(R9*1), Z6, Z6
	VADDPS 192(R11)(R9*1), Z7, Z7
	LEAQ   (R11)(R9*2), R11
	SUBQ   $2, CX
	JMP    wpair

wlast:
	TESTQ  CX, CX
	JZ     wstore
	VADDPS (R11), Z0, Z0
	VADDPS 64(R11), Z1, Z1
	VADDPS 128(R11), Z2, Z2
	VADDPS 192(R11), Z3, Z3

wstore:
	VADDPS  Z4, Z0, Z0
	VADDPS  Z5, Z1, Z1
	VADDPS  Z6, Z2, Z2
	VADDPS  Z7, Z3, Z3
	VADDPS  (DI), Z0, Z0
	VADDPS  64(DI), Z1, Z1
	VADDPS  128(DI), Z2, Z2
	VADDPS  192(DI), Z3, Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, SI
	ADDQ    $256, DI
	SUBQ    $64, R10
	JMP     wide

narrow:
	TESTQ R10, R10
	JZ    done
	MOVL  $-1, AX
	CMPQ  R10, $16
	JAE   nmask
	MOVL  $1, AX
	MOVQ  R10, CX
	SHLL  CX, AX
	DECL  AX

nmask:
	KMOVW  AX, K1
	VPXORD Z0, Z0, Z0
	VPXORD Z4, Z4, Z4
	MOVQ   SI, R11
	MOVQ   BX, CX

npair:
	CMPQ   CX, $2
	JB     nlast
	VADDPS (R11), Z0, K1, Z0
	VADDPS (R11)(R9*1), Z4, K1, Z4
	LEAQ   (R11)(R9*2), R11
	SUBQ   $2, CX
	JMP    npair

nlast:
	TESTQ  CX, CX
	JZ     nstore
	VADDPS (R11), Z0, K1, Z0

nstore:
	VADDPS    Z4, Z0, Z0
	VMOVUPS.Z (DI), K1, Z4
	VADDPS    Z4, Z0, Z0
	VMOVUPS   Z0, K1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $16, R10
	JA        narrow

done:
	VZEROUPPER
	RET

// func sumAVX512(x *float32, n int) float64
// Σ x[i] for i < n in float64: each float32 converted exactly, 32 at a time
// into four sums of 8 lanes, then 8 at a time into the first, the last 1
// to 7 under a mask into the second, and the lanes added in a tree.
TEXT ·sumAVX512(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VXORPD Z0, Z0, Z0
	VXORPD Z1, Z1, Z1
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3

sum32:
	CMPQ      BX, $32
	JB        sum8
	VCVTPS2PD (SI), Z4
	VCVTPS2PD 32(SI), Z5
	VCVTPS2PD 64(SI), Z6
	VCVTPS2PD 96(SI), Z7
	VADDPD    Z4, Z0, Z0
	VADDPD    Z5, Z1, Z1
	VADDPD    Z6, Z2, Z2
	VADDPD    Z7, Z3, Z3
	ADDQ      $128, SI
	SUBQ      $32, BX
	JMP       sum32

sum8:
	CMPQ      BX, $8
	JB        sumtail
	VCVTPS2PD (SI), Z4
	VADDPD    Z4, Z0, Z0
	ADDQ      $32, SI
	SUBQ      $8, BX
	JMP       sum8

sumtail:
	TESTQ       BX, BX
	JZ          sumtree
	MOVQ        BX, CX
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VCVTPS2PD.Z (SI), K1, Z4
	VADDPD      Z4, Z1, Z1

sumtree:
	VADDPD        Z1, Z0, Z0
	VADDPD        Z3, Z2, Z2
	VADDPD        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VPERMILPD     $1, X0, X1
	VADDSD        X1, X0, X0
	VMOVSD        X0, ret+16(FP)
	VZEROUPPER
	RET

// func linCombAVX512(dst, base *float32, n int, coef *float32, src **float32, m int)
// dst[i] = base[i] + coef[0]·src[0][i] + … + coef[m−1]·src[m−1][i] for
// i < n (base nil: 0 + …), each product rounded before it is added, the
// terms added in order: what a copy of base and m axpys give, in one pass
// with the sums in registers, 64 elements at a time, then 16, then the
// last under a mask.
TEXT ·linCombAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ base+8(FP), SI
	MOVQ n+16(FP), BX
	MOVQ coef+24(FP), R8
	MOVQ src+32(FP), R9
	MOVQ m+40(FP), R10
	XORQ AX, AX // byte offset

lc64:
	CMPQ    BX, $64
	JB      lc16
	VPXORD  Z0, Z0, Z0
	VPXORD  Z1, Z1, Z1
	VPXORD  Z2, Z2, Z2
	VPXORD  Z3, Z3, Z3
	TESTQ   SI, SI
	JZ      lc64terms
	VMOVUPS (SI)(AX*1), Z0
	VMOVUPS 64(SI)(AX*1), Z1
	VMOVUPS 128(SI)(AX*1), Z2
	VMOVUPS 192(SI)(AX*1), Z3

lc64terms:
	XORQ CX, CX

lc64j:
	CMPQ         CX, R10
	JAE          lc64store
	VBROADCASTSS (R8)(CX*4), Z8
	MOVQ         (R9)(CX*8), R11
	VMULPS       (R11)(AX*1), Z8, Z4
	VMULPS       64(R11)(AX*1), Z8, Z5
	VMULPS       128(R11)(AX*1), Z8, Z6
	VMULPS       192(R11)(AX*1), Z8, Z7
	VADDPS       Z4, Z0, Z0
	VADDPS       Z5, Z1, Z1
	VADDPS       Z6, Z2, Z2
	VADDPS       Z7, Z3, Z3
	INCQ         CX
	JMP          lc64j

lc64store:
	VMOVUPS Z0, (DI)(AX*1)
	VMOVUPS Z1, 64(DI)(AX*1)
	VMOVUPS Z2, 128(DI)(AX*1)
	VMOVUPS Z3, 192(DI)(AX*1)
	ADDQ    $256, AX
	SUBQ    $64, BX
	JMP     lc64

lc16:
	TESTQ BX, BX
	JZ    lcdone
	MOVL  $-1, DX
	CMPQ  BX, $16
	JAE   lcmask
	MOVQ  BX, CX
	MOVL  $1, DX
	SHLL  CX, DX
	DECL  DX

lcmask:
	KMOVW     DX, K1
	VPXORD    Z0, Z0, Z0
	TESTQ     SI, SI
	JZ        lc16terms
	VMOVUPS.Z (SI)(AX*1), K1, Z0

lc16terms:
	XORQ CX, CX

lc16j:
	CMPQ         CX, R10
	JAE          lc16store
	VBROADCASTSS (R8)(CX*4), Z8
	MOVQ         (R9)(CX*8), R11
	VMULPS.Z     (R11)(AX*1), Z8, K1, Z4
	VADDPS       Z4, Z0, Z0
	INCQ         CX
	JMP          lc16j

lc16store:
	VMOVUPS Z0, K1, (DI)(AX*1)
	ADDQ    $64, AX
	SUBQ    $16, BX
	JA      lc16

lcdone:
	VZEROUPPER
	RET
