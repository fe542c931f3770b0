//go:build !purego

#include "textflag.h"

// LOOP16 runs STEP on the BX elements at byte offset AX of every array, 16
// at a time, then once under the mask K1 for the last 1 to 15 (K1 all ones
// before), then END; it uses CX and SI and returns.
#define LOOP16(STEP, END) \
	KXNORW K1, K1, K1; \
	XORQ   AX, AX; \
loop: \
	CMPQ BX, $16; \
	JB   tail; \
	STEP; \
	ADDQ $64, AX; \
	SUBQ $16, BX; \
	JMP  loop; \
tail: \
	TESTQ BX, BX; \
	JZ    end; \
	MOVQ  BX, CX; \
	MOVL  $1, SI; \
	SHLL  CX, SI; \
	DECL  SI; \
	KMOVW SI, K1; \
	STEP; \
end: \
	END; \
	VZEROUPPER; \
	RET

// func adamBandAVX512(a *adamBandArgs)
// The elementwise part of AdamNODE's adjoint (adamWork.band, after s and
// s′), 16 lanes at a time, the last under a mask, with the operations of
// the Go loop in its order, rounded alike (no fused multiply-adds):
//
//	inv = 1/s, dh = (−m)·inv, dm = a1·((−g) − m), dv = a2·(g·g − v),
//	dam = ah·inv + a1·am, dav = ((((−ah)·m)·ds)·inv)·inv + a2·av.
//
// func adamBandPostAVX512(a *adamBandArgs) is the same where s holds
// r = √softplus(v) and ds holds σ(v) on entry: it first forms, as
// scaleDerivInto's loop does, ds = σ(v)·(0.5/r) where r > 0 (else 0) and
// s = r + eps, in registers (s and ds are left as they were).
//
// adamBandArgs: 13 pointers (g, m, v, ah, am, av, s, ds, dh, dm, dv, dam,
// dav) at 0–96, n at 104, a1 at 112, a2 at 116, eps at 120.

// PTRS8 loads the argument block's address into DI and its first eight
// pointers into R8–R14 and DX.
#define PTRS8 \
	MOVQ         a+0(FP), DI; \
	MOVQ         0(DI), R8; \
	MOVQ         8(DI), R9; \
	MOVQ         16(DI), R10; \
	MOVQ         24(DI), R11; \
	MOVQ         32(DI), R12; \
	MOVQ         40(DI), R13; \
	MOVQ         48(DI), R14; \
	MOVQ         56(DI), DX

// CONSTS sets Z22 = 1, Z23 = the sign bit, Z24 = 0 and Z25 = ½ in every
// lane, using CX.
#define CONSTS \
	MOVL         $0x3f800000, CX; \
	VPBROADCASTD CX, Z22; \
	MOVL         $0x80000000, CX; \
	VPBROADCASTD CX, Z23; \
	VPXORD       Z24, Z24, Z24; \
	MOVL         $0x3f000000, CX; \
	VPBROADCASTD CX, Z25


#define LOADS \
	VMOVUPS.Z (R8)(AX*1), K1, Z0; \
	VMOVUPS.Z (R9)(AX*1), K1, Z1; \
	VMOVUPS.Z (R10)(AX*1), K1, Z2; \
	VMOVUPS.Z (R11)(AX*1), K1, Z3; \
	VMOVUPS.Z (R12)(AX*1), K1, Z12; \
	VMOVUPS.Z (R13)(AX*1), K1, Z13; \
	VMOVUPS.Z (R14)(AX*1), K1, Z14; \
	VMOVUPS.Z (DX)(AX*1), K1, Z15

// POST turns r and σ(v) in Z14 and Z15 into s and s′.
#define POST \
	VCMPPS    $0x1e, Z24, Z14, K2; \
	VDIVPS    Z14, Z25, Z16; \
	VMULPS    Z16, Z15, Z15; \
	VMOVAPS.Z Z15, K2, Z15; \
	VADDPS    Z26, Z14, Z14

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

// STORES writes Z5, Z6, Z7, Z8, Z10 through K1.
#define STORES \
	MOVQ    64(DI), CX; \
	VMOVUPS Z5, K1, (CX)(AX*1); \
	MOVQ    72(DI), CX; \
	VMOVUPS Z6, K1, (CX)(AX*1); \
	MOVQ    80(DI), CX; \
	VMOVUPS Z7, K1, (CX)(AX*1); \
	MOVQ    88(DI), CX; \
	VMOVUPS Z8, K1, (CX)(AX*1); \
	MOVQ    96(DI), CX; \
	VMOVUPS Z10, K1, (CX)(AX*1)

// BANDPROLOGUE loads the operands' addresses, n and the constants.
#define BANDPROLOGUE \
	PTRS8; \
	MOVQ         104(DI), BX; \
	VBROADCASTSS 112(DI), Z20; \
	VBROADCASTSS 116(DI), Z21; \
	VBROADCASTSS 120(DI), Z26; \
	CONSTS

#define BANDSTEP LOADS; BODY; STORES
#define BANDPOSTSTEP LOADS; POST; BODY; STORES

TEXT ·adamBandAVX512(SB), NOSPLIT, $0-8
	BANDPROLOGUE
	LOOP16(BANDSTEP, NOP)

TEXT ·adamBandPostAVX512(SB), NOSPLIT, $0-8
	BANDPROLOGUE
	LOOP16(BANDPOSTSTEP, NOP)

// func adamRHSBwdAVX512(a *adamBwdArgs), func adamRHSBwdPostAVX512(...)
// The loop of adamRHS's backward: with inv = 1/s,
//
//	gg = (−a1)·cm + ((2·a2)·g)·cv
//	gm = (−ch)·inv − a1·cm            (into s's array)
//	gv = (((ch·m)·ds)·inv)·inv − a2·cv (into ds's array)
//
// rounded as the Go loop rounds them, and sr1 = Σ cm·((−g) − m),
// sr2 = Σ cv·(g·g − v): each term in float32 as the Go loop forms it, the
// sums in float64 (in 16 lanes, then added up), where the Go loop sums
// blocks of 64 in float32 first. The Post kernel first turns r and σ(v)
// into s and s′ as adamBandPostAVX512 does.
//
// adamBwdArgs: 9 pointers (g, m, v, ch, cm, cv, s, ds, gg) at 0–64, n at
// 72, a1 at 80, a2 at 84, eps at 88, sr1 at 96, sr2 at 104 (written).

#define BWDLOADS \
	VMOVUPS.Z (R8)(AX*1), K1, Z0; \
	VMOVUPS.Z (R9)(AX*1), K1, Z1; \
	VMOVUPS.Z (R10)(AX*1), K1, Z2; \
	VMOVUPS.Z (R11)(AX*1), K1, Z3; \
	VMOVUPS.Z (R12)(AX*1), K1, Z12; \
	VMOVUPS.Z (R13)(AX*1), K1, Z13; \
	VMOVUPS.Z (R14)(AX*1), K1, Z14; \
	VMOVUPS.Z (DX)(AX*1), K1, Z15

// BWDBODY: Z0 g, Z1 m, Z2 v, Z3 ch, Z12 cm, Z13 cv, Z14 s, Z15 ds in;
// Z5 gg, Z7 gm, Z9 gv out; the terms of the sums into Z28–Z31.
#define BWDBODY \
	VDIVPS        Z14, Z22, Z4; \
	VMULPS        Z12, Z17, Z5; \
	VMULPS        Z0, Z27, Z6; \
	VMULPS        Z13, Z6, Z6; \
	VADDPS        Z6, Z5, Z5; \
	VXORPS        Z23, Z3, Z7; \
	VMULPS        Z4, Z7, Z7; \
	VMULPS        Z12, Z20, Z8; \
	VSUBPS        Z8, Z7, Z7; \
	VMULPS        Z1, Z3, Z9; \
	VMULPS        Z15, Z9, Z9; \
	VMULPS        Z4, Z9, Z9; \
	VMULPS        Z4, Z9, Z9; \
	VMULPS        Z13, Z21, Z10; \
	VSUBPS        Z10, Z9, Z9; \
	VXORPS        Z23, Z0, Z11; \
	VSUBPS        Z1, Z11, Z11; \
	VMULPS        Z11, Z12, Z11; \
	VMULPS        Z0, Z0, Z16; \
	VSUBPS        Z2, Z16, Z16; \
	VMULPS        Z16, Z13, Z16; \
	VCVTPS2PD     Y11, Z18; \
	VADDPD        Z18, Z28, Z28; \
	VEXTRACTF32X8 $1, Z11, Y11; \
	VCVTPS2PD     Y11, Z18; \
	VADDPD        Z18, Z29, Z29; \
	VCVTPS2PD     Y16, Z18; \
	VADDPD        Z18, Z30, Z30; \
	VEXTRACTF32X8 $1, Z16, Y16; \
	VCVTPS2PD     Y16, Z18; \
	VADDPD        Z18, Z31, Z31

#define BWDSTORES \
	MOVQ    64(DI), CX; \
	VMOVUPS Z5, K1, (CX)(AX*1); \
	VMOVUPS Z7, K1, (R14)(AX*1); \
	VMOVUPS Z9, K1, (DX)(AX*1)

// HSUM sets X0 to the sum of the eight float64 lanes of A + B.
#define HSUM(A, B) \
	VADDPD        B, A, Z0; \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPD        Y1, Y0, Y0; \
	VEXTRACTF128  $1, Y0, X1; \
	VADDPD        X1, X0, X0; \
	VPERMILPD     $1, X0, X1; \
	VADDSD        X1, X0, X0

#define BWDPROLOGUE \
	PTRS8; \
	MOVQ         72(DI), BX; \
	VBROADCASTSS 80(DI), Z20; \
	VBROADCASTSS 84(DI), Z21; \
	VBROADCASTSS 88(DI), Z26; \
	VADDPS       Z21, Z21, Z27; \
	CONSTS; \
	VXORPS       Z23, Z20, Z17; \
	VXORPD       Z28, Z28, Z28; \
	VXORPD       Z29, Z29, Z29; \
	VXORPD       Z30, Z30, Z30; \
	VXORPD       Z31, Z31, Z31

#define BWDSTEP BWDLOADS; BWDBODY; BWDSTORES
#define BWDPOSTSTEP BWDLOADS; POST; BWDBODY; BWDSTORES
#define BWDSUMS HSUM(Z28, Z29); VMOVSD X0, 96(DI); HSUM(Z30, Z31); VMOVSD X0, 104(DI)

TEXT ·adamRHSBwdAVX512(SB), NOSPLIT, $0-8
	BWDPROLOGUE
	LOOP16(BWDSTEP, BWDSUMS)

TEXT ·adamRHSBwdPostAVX512(SB), NOSPLIT, $0-8
	BWDPROLOGUE
	LOOP16(BWDPOSTSTEP, BWDSUMS)

// func adamRHSFwdAVX512(a *adamFwdArgs), func adamRHSFwdEpsAVX512(...)
// The loop of adamRHS: dh = (−m)/s, dm = a1·((−g) − m), dv = a2·(g·g − v),
// rounded as the Go loop rounds them, with s read from dh's array (the Eps
// kernel first adds eps to it, as scaleInto's last step does).
//
// adamFwdArgs: 6 pointers (g, m, v, dh, dm, dv) at 0–40, n at 48, a1 at 56,
// a2 at 60, eps at 64.

#define FWDLOADS \
	VMOVUPS.Z (R8)(AX*1), K1, Z0; \
	VMOVUPS.Z (R9)(AX*1), K1, Z1; \
	VMOVUPS.Z (R10)(AX*1), K1, Z2; \
	VMOVUPS.Z (R11)(AX*1), K1, Z14

#define ADDEPS \
	VADDPS Z26, Z14, Z14

#define FWDBODY \
	VXORPS Z23, Z1, Z5; \
	VDIVPS Z14, Z5, Z5; \
	VXORPS Z23, Z0, Z6; \
	VSUBPS Z1, Z6, Z6; \
	VMULPS Z6, Z20, Z6; \
	VMULPS Z0, Z0, Z7; \
	VSUBPS Z2, Z7, Z7; \
	VMULPS Z7, Z21, Z7

#define FWDSTORES \
	VMOVUPS Z5, K1, (R11)(AX*1); \
	VMOVUPS Z6, K1, (R12)(AX*1); \
	VMOVUPS Z7, K1, (R13)(AX*1)

#define FWDPROLOGUE \
	MOVQ         a+0(FP), DI; \
	MOVQ         0(DI), R8; \
	MOVQ         8(DI), R9; \
	MOVQ         16(DI), R10; \
	MOVQ         24(DI), R11; \
	MOVQ         32(DI), R12; \
	MOVQ         40(DI), R13; \
	MOVQ         48(DI), BX; \
	VBROADCASTSS 56(DI), Z20; \
	VBROADCASTSS 60(DI), Z21; \
	VBROADCASTSS 64(DI), Z26; \
	MOVL         $0x80000000, CX; \
	VPBROADCASTD CX, Z23

#define FWDSTEP FWDLOADS; FWDBODY; FWDSTORES
#define FWDEPSSTEP FWDLOADS; ADDEPS; FWDBODY; FWDSTORES

TEXT ·adamRHSFwdAVX512(SB), NOSPLIT, $0-8
	FWDPROLOGUE
	LOOP16(FWDSTEP, NOP)

TEXT ·adamRHSFwdEpsAVX512(SB), NOSPLIT, $0-8
	FWDPROLOGUE
	LOOP16(FWDEPSSTEP, NOP)


// func norm2AVX512(x *float32, n int) float64
// Σ x[i]² for i < n in float64: each square exact, summed in 16 lanes of
// two accumulators (the last elements under a mask), then added up.
TEXT ·norm2AVX512(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3

nrm16:
	CMPQ        BX, $16
	JB          nrmtail
	VCVTPS2PD   (SI), Z0
	VCVTPS2PD   32(SI), Z1
	VFMADD231PD Z0, Z0, Z2
	VFMADD231PD Z1, Z1, Z3
	ADDQ        $64, SI
	SUBQ        $16, BX
	JMP         nrm16

nrmtail:
	TESTQ       BX, BX
	JZ          nrmsum
	MOVQ        BX, CX
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVUPS.Z   (SI), K1, Z4
	VCVTPS2PD   Y4, Z0
	VEXTRACTF32X8 $1, Z4, Y4
	VCVTPS2PD   Y4, Z1
	VFMADD231PD Z0, Z0, Z2
	VFMADD231PD Z1, Z1, Z3

nrmsum:
	VADDPD        Z3, Z2, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VPERMILPD     $1, X0, X1
	VADDSD        X1, X0, X0
	VMOVSD        X0, ret+16(FP)
	VZEROUPPER
	RET
