//go:build !purego

#include "textflag.h"

// func errScaleAVX512(e, y0, y1 *float32, n int, atol, rtol float32)
// e[i] = e[i] / (atol + rtol·max(|y0[i]|, |y1[i]|)), 16 lanes at a time,
// the last under a mask: the operations of the Go loop, rounded alike (a
// NaN in y1 propagates: it is VMAXPS's second source).
TEXT ·errScaleAVX512(SB), NOSPLIT, $0-40
	MOVQ e+0(FP), DI
	MOVQ y0+8(FP), SI
	MOVQ y1+16(FP), DX
	MOVQ n+24(FP), BX
	VBROADCASTSS atol+32(FP), Z8
	VBROADCASTSS rtol+36(FP), Z9
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z10
	XORQ R8, R8

loop:
	CMPQ BX, $16
	JB   tail
	VMOVUPS (SI)(R8*1), Z0
	VMOVUPS (DX)(R8*1), Z1
	VPANDD  Z10, Z0, Z0
	VPANDD  Z10, Z1, Z1
	VMAXPS  Z1, Z0, Z2
	VMULPS  Z9, Z2, Z2
	VADDPS  Z8, Z2, Z2
	VMOVUPS (DI)(R8*1), Z3
	VDIVPS  Z2, Z3, Z3
	VMOVUPS Z3, (DI)(R8*1)
	ADDQ    $64, R8
	SUBQ    $16, BX
	JMP     loop

tail:
	TESTQ BX, BX
	JZ    done
	MOVL  $1, AX
	MOVQ  BX, CX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	VMOVUPS.Z (SI)(R8*1), K1, Z0
	VMOVUPS.Z (DX)(R8*1), K1, Z1
	VPANDD  Z10, Z0, Z0
	VPANDD  Z10, Z1, Z1
	VMAXPS  Z1, Z0, Z2
	VMULPS  Z9, Z2, Z2
	VADDPS  Z8, Z2, Z2
	VMOVUPS.Z (DI)(R8*1), K1, Z3
	VDIVPS  Z2, Z3, Z3
	VMOVUPS Z3, K1, (DI)(R8*1)

done:
	VZEROUPPER
	RET

// func allFiniteAVX512(x *float32, n int) bool
// Whether no x[i] (i < n) is NaN or ±Inf: v − v is 0 for a finite v and NaN
// otherwise, summed into two accumulators of 16 lanes (the last 1 to 15
// elements under a mask), which stay 0 exactly when every v is finite.
TEXT ·allFiniteAVX512(SB), NOSPLIT, $0-17
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3

fin32:
	CMPQ    BX, $32
	JB      fin16
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VSUBPS  Z0, Z0, Z0
	VSUBPS  Z1, Z1, Z1
	VADDPS  Z0, Z2, Z2
	VADDPS  Z1, Z3, Z3
	ADDQ    $128, SI
	SUBQ    $32, BX
	JMP     fin32

fin16:
	TESTQ     BX, BX
	JZ        finend
	MOVL      $-1, AX
	CMPQ      BX, $16
	JAE       finmask
	MOVQ      BX, CX
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX

finmask:
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	VSUBPS    Z0, Z0, Z0
	VADDPS    Z0, Z2, Z2
	ADDQ      $64, SI
	SUBQ      $16, BX
	JA        fin16

finend:
	VADDPS    Z3, Z2, Z2
	VCMPPS    $3, Z2, Z2, K2 // unordered: a lane is NaN
	KORTESTW  K2, K2
	SETEQ     ret+16(FP)
	VZEROUPPER
	RET

// func errScale64AVX512(e, y0, y1 *float64, n int, atol, rtol float64)
// errScaleAVX512 on float64: 8 lanes at a time, the last under a mask.
TEXT ·errScale64AVX512(SB), NOSPLIT, $0-48
	MOVQ e+0(FP), DI
	MOVQ y0+8(FP), SI
	MOVQ y1+16(FP), DX
	MOVQ n+24(FP), BX
	VBROADCASTSD atol+32(FP), Z8
	VBROADCASTSD rtol+40(FP), Z9
	MOVQ $0x7fffffffffffffff, AX
	VPBROADCASTQ AX, Z10
	XORQ R8, R8

loop64:
	CMPQ BX, $8
	JB   tail64
	VMOVUPD (SI)(R8*1), Z0
	VMOVUPD (DX)(R8*1), Z1
	VPANDQ  Z10, Z0, Z0
	VPANDQ  Z10, Z1, Z1
	VMAXPD  Z1, Z0, Z2
	VMULPD  Z9, Z2, Z2
	VADDPD  Z8, Z2, Z2
	VMOVUPD (DI)(R8*1), Z3
	VDIVPD  Z2, Z3, Z3
	VMOVUPD Z3, (DI)(R8*1)
	ADDQ    $64, R8
	SUBQ    $8, BX
	JMP     loop64

tail64:
	TESTQ BX, BX
	JZ    done64
	MOVL  $1, AX
	MOVQ  BX, CX
	SHLL  CX, AX
	DECL  AX
	KMOVB AX, K1
	VMOVUPD.Z (SI)(R8*1), K1, Z0
	VMOVUPD.Z (DX)(R8*1), K1, Z1
	VPANDQ  Z10, Z0, Z0
	VPANDQ  Z10, Z1, Z1
	VMAXPD  Z1, Z0, Z2
	VMULPD  Z9, Z2, Z2
	VADDPD  Z8, Z2, Z2
	VMOVUPD.Z (DI)(R8*1), K1, Z3
	VDIVPD  Z2, Z3, Z3
	VMOVUPD Z3, K1, (DI)(R8*1)

done64:
	VZEROUPPER
	RET

// func allFinite64AVX512(x *float64, n int) bool
// allFiniteAVX512 on float64: v − v summed into two accumulators of 8
// lanes (the last 1 to 7 elements under a mask).
TEXT ·allFinite64AVX512(SB), NOSPLIT, $0-17
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3

fin64x16:
	CMPQ    BX, $16
	JB      fin64x8
	VMOVUPD (SI), Z0
	VMOVUPD 64(SI), Z1
	VSUBPD  Z0, Z0, Z0
	VSUBPD  Z1, Z1, Z1
	VADDPD  Z0, Z2, Z2
	VADDPD  Z1, Z3, Z3
	ADDQ    $128, SI
	SUBQ    $16, BX
	JMP     fin64x16

fin64x8:
	TESTQ     BX, BX
	JZ        fin64end
	MOVL      $0xff, AX
	CMPQ      BX, $8
	JAE       fin64mask
	MOVQ      BX, CX
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX

fin64mask:
	KMOVB     AX, K1
	VMOVUPD.Z (SI), K1, Z0
	VSUBPD    Z0, Z0, Z0
	VADDPD    Z0, Z2, Z2
	ADDQ      $64, SI
	SUBQ      $8, BX
	JA        fin64x8

fin64end:
	VADDPD    Z3, Z2, Z2
	VCMPPD    $3, Z2, Z2, K2 // unordered: a lane is NaN
	KORTESTB  K2, K2
	SETEQ     ret+16(FP)
	VZEROUPPER
	RET
