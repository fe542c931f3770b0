//go:build !purego

#include "textflag.h"

// errscale_amd64.s's kernels on 256-bit registers (AVX2, no AVX-512): the
// same operations, rounded alike, the last elements loaded and stored
// under a vector mask (VMASKMOVPS/PD neither read nor write the lanes left
// out).

// tailmask<>: 8 dwords of all ones, then 8 of zeros; the 32 bytes at
// tailmask<>+32−4r select the first r float32 lanes, at +32−8r the first
// r float64 lanes.
DATA tailmask<>+0(SB)/8, $0xffffffffffffffff
DATA tailmask<>+8(SB)/8, $0xffffffffffffffff
DATA tailmask<>+16(SB)/8, $0xffffffffffffffff
DATA tailmask<>+24(SB)/8, $0xffffffffffffffff
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

DATA abs32<>+0(SB)/4, $0x7fffffff
GLOBL abs32<>(SB), RODATA|NOPTR, $4
DATA abs64<>+0(SB)/8, $0x7fffffffffffffff
GLOBL abs64<>(SB), RODATA|NOPTR, $8

// MASKY(R, SHIFT, M) loads into M the mask of the first R lanes of
// 1<<SHIFT bytes; it uses CX and R.
#define MASKY(R, SHIFT, M) \
	LEAQ    tailmask<>+32(SB), CX; \
	SHLQ    $SHIFT, R; \
	SUBQ    R, CX; \
	VMOVDQU (CX), M

// func errScaleAVX2(e, y0, y1 *float32, n int, atol, rtol float32)
// e[i] = e[i] / (atol + rtol·max(|y0[i]|, |y1[i]|)), 8 lanes at a time,
// the last under a mask: errScaleAVX512's operations (a NaN in y1
// propagates: it is VMAXPS's second source).
TEXT ·errScaleAVX2(SB), NOSPLIT, $0-40
	MOVQ         e+0(FP), DI
	MOVQ         y0+8(FP), SI
	MOVQ         y1+16(FP), DX
	MOVQ         n+24(FP), BX
	VBROADCASTSS atol+32(FP), Y8
	VBROADCASTSS rtol+36(FP), Y9
	VBROADCASTSS abs32<>(SB), Y10
	XORQ         R8, R8

loop:
	CMPQ    BX, $8
	JB      tail
	VANDPS  (SI)(R8*1), Y10, Y0
	VANDPS  (DX)(R8*1), Y10, Y1
	VMAXPS  Y1, Y0, Y2
	VMULPS  Y9, Y2, Y2
	VADDPS  Y8, Y2, Y2
	VMOVUPS (DI)(R8*1), Y3
	VDIVPS  Y2, Y3, Y3
	VMOVUPS Y3, (DI)(R8*1)
	ADDQ    $32, R8
	SUBQ    $8, BX
	JMP     loop

tail:
	TESTQ      BX, BX
	JZ         done
	MASKY(BX, 2, Y11)
	VMASKMOVPS (SI)(R8*1), Y11, Y0
	VMASKMOVPS (DX)(R8*1), Y11, Y1
	VANDPS     Y10, Y0, Y0
	VANDPS     Y10, Y1, Y1
	VMAXPS     Y1, Y0, Y2
	VMULPS     Y9, Y2, Y2
	VADDPS     Y8, Y2, Y2
	VMASKMOVPS (DI)(R8*1), Y11, Y3
	VDIVPS     Y2, Y3, Y3
	VMASKMOVPS Y3, Y11, (DI)(R8*1)

done:
	VZEROUPPER
	RET

// func errScale64AVX2(e, y0, y1 *float64, n int, atol, rtol float64)
// errScaleAVX2 on float64: 4 lanes at a time, the last under a mask.
TEXT ·errScale64AVX2(SB), NOSPLIT, $0-48
	MOVQ         e+0(FP), DI
	MOVQ         y0+8(FP), SI
	MOVQ         y1+16(FP), DX
	MOVQ         n+24(FP), BX
	VBROADCASTSD atol+32(FP), Y8
	VBROADCASTSD rtol+40(FP), Y9
	VBROADCASTSD abs64<>(SB), Y10
	XORQ         R8, R8

loop:
	CMPQ    BX, $4
	JB      tail
	VANDPD  (SI)(R8*1), Y10, Y0
	VANDPD  (DX)(R8*1), Y10, Y1
	VMAXPD  Y1, Y0, Y2
	VMULPD  Y9, Y2, Y2
	VADDPD  Y8, Y2, Y2
	VMOVUPD (DI)(R8*1), Y3
	VDIVPD  Y2, Y3, Y3
	VMOVUPD Y3, (DI)(R8*1)
	ADDQ    $32, R8
	SUBQ    $4, BX
	JMP     loop

tail:
	TESTQ      BX, BX
	JZ         done
	MASKY(BX, 3, Y11)
	VMASKMOVPD (SI)(R8*1), Y11, Y0
	VMASKMOVPD (DX)(R8*1), Y11, Y1
	VANDPD     Y10, Y0, Y0
	VANDPD     Y10, Y1, Y1
	VMAXPD     Y1, Y0, Y2
	VMULPD     Y9, Y2, Y2
	VADDPD     Y8, Y2, Y2
	VMASKMOVPD (DI)(R8*1), Y11, Y3
	VDIVPD     Y2, Y3, Y3
	VMASKMOVPD Y3, Y11, (DI)(R8*1)

done:
	VZEROUPPER
	RET

// func allFiniteAVX2(x *float32, n int) bool
// Whether no x[i] (i < n) is NaN or ±Inf: v − v is 0 for a finite v and
// NaN otherwise, summed into two accumulators of 8 lanes (the last 1 to 7
// elements under a mask, the lanes left out 0), which stay 0 exactly when
// every v is finite.
TEXT ·allFiniteAVX2(SB), NOSPLIT, $0-17
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

fin16:
	CMPQ    BX, $16
	JB      fin8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSUBPS  Y0, Y0, Y0
	VSUBPS  Y1, Y1, Y1
	VADDPS  Y0, Y2, Y2
	VADDPS  Y1, Y3, Y3
	ADDQ    $64, SI
	SUBQ    $16, BX
	JMP     fin16

fin8:
	CMPQ    BX, $8
	JB      fintail
	VMOVUPS (SI), Y0
	VSUBPS  Y0, Y0, Y0
	VADDPS  Y0, Y2, Y2
	ADDQ    $32, SI
	SUBQ    $8, BX

fintail:
	TESTQ      BX, BX
	JZ         finend
	MASKY(BX, 2, Y11)
	VMASKMOVPS (SI), Y11, Y0
	VSUBPS     Y0, Y0, Y0
	VADDPS     Y0, Y3, Y3

finend:
	VADDPS    Y3, Y2, Y2
	VCMPPS    $3, Y2, Y2, Y2 // unordered: a lane is NaN
	VMOVMSKPS Y2, AX
	TESTL     AX, AX
	SETEQ     ret+16(FP)
	VZEROUPPER
	RET

// func allFinite64AVX2(x *float64, n int) bool
// allFiniteAVX2 on float64: two accumulators of 4 lanes.
TEXT ·allFinite64AVX2(SB), NOSPLIT, $0-17
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

fin8:
	CMPQ    BX, $8
	JB      fin4
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VSUBPD  Y0, Y0, Y0
	VSUBPD  Y1, Y1, Y1
	VADDPD  Y0, Y2, Y2
	VADDPD  Y1, Y3, Y3
	ADDQ    $64, SI
	SUBQ    $8, BX
	JMP     fin8

fin4:
	CMPQ    BX, $4
	JB      fintail
	VMOVUPD (SI), Y0
	VSUBPD  Y0, Y0, Y0
	VADDPD  Y0, Y2, Y2
	ADDQ    $32, SI
	SUBQ    $4, BX

fintail:
	TESTQ      BX, BX
	JZ         finend
	MASKY(BX, 3, Y11)
	VMASKMOVPD (SI), Y11, Y0
	VSUBPD     Y0, Y0, Y0
	VADDPD     Y0, Y3, Y3

finend:
	VADDPD    Y3, Y2, Y2
	VCMPPD    $3, Y2, Y2, Y2 // unordered: a lane is NaN
	VMOVMSKPD Y2, AX
	TESTL     AX, AX
	SETEQ     ret+16(FP)
	VZEROUPPER
	RET
