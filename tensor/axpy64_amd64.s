//go:build !purego

#include "textflag.h"

// func axpy64AVX512(a float64, x, y *float64, n int)
// axpyAVX512 on float64: y[i] = y[i] + a·x[i], the product rounded before
// the sum (as gonum's Daxpy), 8 lanes at a time, the last under a mask.
TEXT ·axpy64AVX512(SB), NOSPLIT, $0-32
	VBROADCASTSD a+0(FP), Z8
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), BX
	XORQ R8, R8

ax64loop:
	CMPQ BX, $16
	JB   ax64single
	VMOVUPD (SI)(R8*1), Z0
	VMOVUPD 64(SI)(R8*1), Z1
	VMULPD  Z8, Z0, Z0
	VMULPD  Z8, Z1, Z1
	VADDPD  (DI)(R8*1), Z0, Z0
	VADDPD  64(DI)(R8*1), Z1, Z1
	VMOVUPD Z0, (DI)(R8*1)
	VMOVUPD Z1, 64(DI)(R8*1)
	ADDQ    $128, R8
	SUBQ    $16, BX
	JMP     ax64loop

ax64single:
	CMPQ BX, $8
	JB   ax64tail
	VMOVUPD (SI)(R8*1), Z0
	VMULPD  Z8, Z0, Z0
	VADDPD  (DI)(R8*1), Z0, Z0
	VMOVUPD Z0, (DI)(R8*1)
	ADDQ    $64, R8
	SUBQ    $8, BX

ax64tail:
	TESTQ BX, BX
	JZ    ax64done
	MOVL  $1, AX
	MOVQ  BX, CX
	SHLL  CX, AX
	DECL  AX
	KMOVB AX, K1
	VMOVUPD.Z (SI)(R8*1), K1, Z0
	VMOVUPD.Z (DI)(R8*1), K1, Z1
	VMULPD  Z8, Z0, Z0
	VADDPD  Z1, Z0, Z0
	VMOVUPD Z0, K1, (DI)(R8*1)

ax64done:
	VZEROUPPER
	RET

// func linComb64AVX512(dst, base *float64, n int, coef *float64, src **float64, m int)
// linCombAVX512 on float64: dst[i] = base[i] + coef[0]·src[0][i] + … for
// i < n (base nil: 0 + …), each product rounded before it is added, the
// terms in order, 32 elements at a time with the sums in registers, then
// 8, then the last under a mask.
TEXT ·linComb64AVX512(SB), NOSPLIT, $0-48
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
	VPXORQ  Z0, Z0, Z0
	VPXORQ  Z1, Z1, Z1
	VPXORQ  Z2, Z2, Z2
	VPXORQ  Z3, Z3, Z3
	TESTQ   SI, SI
	JZ      lc32terms
	VMOVUPD (SI)(AX*1), Z0
	VMOVUPD 64(SI)(AX*1), Z1
	VMOVUPD 128(SI)(AX*1), Z2
	VMOVUPD 192(SI)(AX*1), Z3

lc32terms:
	XORQ CX, CX

lc32j:
	CMPQ         CX, R10
	JAE          lc32store
	VBROADCASTSD (R8)(CX*8), Z8
	MOVQ         (R9)(CX*8), R11
	VMULPD       (R11)(AX*1), Z8, Z4
	VMULPD       64(R11)(AX*1), Z8, Z5
	VMULPD       128(R11)(AX*1), Z8, Z6
	VMULPD       192(R11)(AX*1), Z8, Z7
	VADDPD       Z4, Z0, Z0
	VADDPD       Z5, Z1, Z1
	VADDPD       Z6, Z2, Z2
	VADDPD       Z7, Z3, Z3
	INCQ         CX
	JMP          lc32j

lc32store:
	VMOVUPD Z0, (DI)(AX*1)
	VMOVUPD Z1, 64(DI)(AX*1)
	VMOVUPD Z2, 128(DI)(AX*1)
	VMOVUPD Z3, 192(DI)(AX*1)
	ADDQ    $256, AX
	SUBQ    $32, BX
	JMP     lc32

lc8:
	TESTQ BX, BX
	JZ    lc64done
	MOVL  $0xff, DX
	CMPQ  BX, $8
	JAE   lc8mask
	MOVQ  BX, CX
	MOVL  $1, DX
	SHLL  CX, DX
	DECL  DX

lc8mask:
	KMOVB     DX, K1
	VPXORQ    Z0, Z0, Z0
	TESTQ     SI, SI
	JZ        lc8terms
	VMOVUPD.Z (SI)(AX*1), K1, Z0

lc8terms:
	XORQ CX, CX

lc8j:
	CMPQ         CX, R10
	JAE          lc8store
	VBROADCASTSD (R8)(CX*8), Z8
	MOVQ         (R9)(CX*8), R11
	VMULPD.Z     (R11)(AX*1), Z8, K1, Z4
	VADDPD       Z4, Z0, Z0
	INCQ         CX
	JMP          lc8j

lc8store:
	VMOVUPD Z0, K1, (DI)(AX*1)
	ADDQ    $64, AX
	SUBQ    $8, BX
	JA      lc8

lc64done:
	VZEROUPPER
	RET
