//go:build !purego

#include "textflag.h"

// func adamBandAVX512(a *adamBandArgs)
// The elementwise part of AdamNODE's adjoint (adamWork.band, after s and
// s′), 16 lanes at a time, the last under a mask, with the operations of
// the Go loop in its order, rounded alike (no fused multiply-adds):
//
//	inv = 1/s, dh = (−m)·inv, dm = a1·((−g) − m), dv = a2·(g·g − v),
//	dam = ah·inv + a1·am, dav = ((((−ah)·m)·ds)·inv)·inv + a2·av.
//
// adamBandArgs: 13 pointers (g, m, v, ah, am, av, s, ds, dh, dm, dv, dam,
// dav) at 0–96, n at 104, a1 at 112, a2 at 116.
#define LOADS(MASKED) \
	MASKED (R8)(AX*1), K1, Z0; \
	MASKED (R9)(AX*1), K1, Z1; \
	MASKED (R10)(AX*1), K1, Z2; \
	MASKED (R11)(AX*1), K1, Z3; \
	MASKED (R12)(AX*1), K1, Z12; \
	MASKED (R13)(AX*1), K1, Z13; \
	MASKED (R14)(AX*1), K1, Z14; \
	MASKED (DX)(AX*1), K1, Z15

// BODY: Z0 g, Z1 m, Z2 v, Z3 ah, Z12 am, Z13 av, Z14 s, Z15 ds in;
// Z5 dh, Z6 dm, Z7 dv, Z8 dam, Z10 dav out.
#define BODY \
	VDIVPS Z14, Z22, Z4; \
	VXORPS Z23, Z1, Z5; \
	VMULPS Z4, Z5, Z5; \
	VXORPS Z23, Z0, Z6; \
	VSUBPS Z1, Z6, Z6; \
	VMULPS Z6, Z20, Z6; \
	VMULPS Z0, Z0, Z7; \
	VSUBPS Z2, Z7, Z7; \
	VMULPS Z7, Z21, Z7; \
	VMULPS Z4, Z3, Z8; \
	VMULPS Z12, Z20, Z9; \
	VADDPS Z9, Z8, Z8; \
	VXORPS Z23, Z3, Z10; \
	VMULPS Z1, Z10, Z10; \
	VMULPS Z15, Z10, Z10; \
	VMULPS Z4, Z10, Z10; \
	VMULPS Z4, Z10, Z10; \
	VMULPS Z13, Z21, Z11; \
	VADDPS Z11, Z10, Z10

TEXT ·adamBandAVX512(SB), NOSPLIT, $0-8
	MOVQ         a+0(FP), DI
	MOVQ         0(DI), R8      // g
	MOVQ         8(DI), R9      // m
	MOVQ         16(DI), R10    // v
	MOVQ         24(DI), R11    // ah
	MOVQ         32(DI), R12    // am
	MOVQ         40(DI), R13    // av
	MOVQ         48(DI), R14    // s
	MOVQ         56(DI), DX     // ds
	MOVQ         104(DI), BX    // n
	VBROADCASTSS 112(DI), Z20   // a1
	VBROADCASTSS 116(DI), Z21   // a2
	MOVL         $0x3f800000, CX
	VPBROADCASTD CX, Z22        // 1
	MOVL         $0x80000000, CX
	VPBROADCASTD CX, Z23        // the sign bit
	KXNORW       K1, K1, K1
	XORQ         AX, AX         // byte offset

loop:
	CMPQ BX, $16
	JB   tail
	LOADS(VMOVUPS.Z)
	BODY
	MOVQ    64(DI), CX
	VMOVUPS Z5, (CX)(AX*1)
	MOVQ    72(DI), CX
	VMOVUPS Z6, (CX)(AX*1)
	MOVQ    80(DI), CX
	VMOVUPS Z7, (CX)(AX*1)
	MOVQ    88(DI), CX
	VMOVUPS Z8, (CX)(AX*1)
	MOVQ    96(DI), CX
	VMOVUPS Z10, (CX)(AX*1)
	ADDQ    $64, AX
	SUBQ    $16, BX
	JMP     loop

tail:
	TESTQ BX, BX
	JZ    done
	MOVQ  BX, CX
	MOVL  $1, SI
	SHLL  CX, SI
	DECL  SI
	KMOVW SI, K1
	LOADS(VMOVUPS.Z)
	BODY
	MOVQ    64(DI), CX
	VMOVUPS Z5, K1, (CX)(AX*1)
	MOVQ    72(DI), CX
	VMOVUPS Z6, K1, (CX)(AX*1)
	MOVQ    80(DI), CX
	VMOVUPS Z7, K1, (CX)(AX*1)
	MOVQ    88(DI), CX
	VMOVUPS Z8, K1, (CX)(AX*1)
	MOVQ    96(DI), CX
	VMOVUPS Z10, K1, (CX)(AX*1)

done:
	VZEROUPPER
	RET
