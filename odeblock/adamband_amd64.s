//go:build !purego

#include "textflag.h"

// The float32 AdamNODE kernels; their loops are in adamband_amd64.h.

#define LANES 16
#define VMOVU VMOVUPS
#define VMOVUZ VMOVUPS.Z
#define VMOVAZ VMOVAPS.Z
#define VADD VADDPS
#define VSUB VSUBPS
#define VMUL VMULPS
#define VDIV VDIVPS
#define VXOR VXORPS
#define VCMP VCMPPS
#define VBCAST VBROADCASTSS

#define SIGN \
	MOVL         $0x80000000, CX; \
	VPBROADCASTD CX, Z23

#define CONSTS \
	MOVL         $0x3f800000, CX; \
	VPBROADCASTD CX, Z22; \
	SIGN; \
	VPXORD       Z24, Z24, Z24; \
	MOVL         $0x3f000000, CX; \
	VPBROADCASTD CX, Z25

// SUMTERMS widens the 16 terms in Z11 and in Z16 to float64 and adds them
// into Z28, Z29 and Z30, Z31.
#define SUMTERMS \
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

#define BAND_N 104
#define BAND_A1 112
#define BAND_A2 116
#define BAND_EPS 120
#define BWD_N 72
#define BWD_A1 80
#define BWD_A2 84
#define BWD_EPS 88
#define BWD_SR1 96
#define BWD_SR2 104
#define FWD_N 48
#define FWD_A1 56
#define FWD_A2 60
#define FWD_EPS 64

#include "adamband_amd64.h"

// func adamBandAVX512(a *adamBandArgs[float32])
TEXT ·adamBandAVX512(SB), NOSPLIT, $0-8
	BANDPROLOGUE
	LOOPZ(BANDSTEP, NOP)

// func adamBandPostAVX512(a *adamBandArgs[float32])
TEXT ·adamBandPostAVX512(SB), NOSPLIT, $0-8
	BANDPROLOGUE
	LOOPZ(BANDPOSTSTEP, NOP)

// func adamRHSBwdAVX512(a *adamBwdArgs[float32])
TEXT ·adamRHSBwdAVX512(SB), NOSPLIT, $0-8
	BWDPROLOGUE
	LOOPZ(BWDSTEP, BWDSUMS)

// func adamRHSBwdPostAVX512(a *adamBwdArgs[float32])
TEXT ·adamRHSBwdPostAVX512(SB), NOSPLIT, $0-8
	BWDPROLOGUE
	LOOPZ(BWDPOSTSTEP, BWDSUMS)

// func adamRHSFwdAVX512(a *adamFwdArgs[float32])
TEXT ·adamRHSFwdAVX512(SB), NOSPLIT, $0-8
	FWDPROLOGUE
	LOOPZ(FWDSTEP, NOP)

// func adamRHSFwdEpsAVX512(a *adamFwdArgs[float32])
TEXT ·adamRHSFwdEpsAVX512(SB), NOSPLIT, $0-8
	FWDPROLOGUE
	LOOPZ(FWDEPSSTEP, NOP)

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
