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
