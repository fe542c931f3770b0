//go:build !purego

#include "textflag.h"

// The float64 AdamNODE kernels; their loops are in adamband_amd64.h.

#define LANES 8
#define VMOVU VMOVUPD
#define VMOVUZ VMOVUPD.Z
#define VMOVAZ VMOVAPD.Z
#define VADD VADDPD
#define VSUB VSUBPD
#define VMUL VMULPD
#define VDIV VDIVPD
#define VXOR VXORPD
#define VCMP VCMPPD
#define VBCAST VBROADCASTSD

#define SIGN \
	MOVQ         $1, CX; \
	SHLQ         $63, CX; \
	VPBROADCASTQ CX, Z23

#define CONSTS \
	MOVQ         $0x3ff0000000000000, CX; \
	VPBROADCASTQ CX, Z22; \
	SIGN; \
	VPXORQ       Z24, Z24, Z24; \
	MOVQ         $0x3fe0000000000000, CX; \
	VPBROADCASTQ CX, Z25

// SUMTERMS adds the eight terms in Z11 into Z28 and those in Z16 into Z30
// (Z29 and Z31 stay 0).
#define SUMTERMS \
	VADDPD Z11, Z28, Z28; \
	VADDPD Z16, Z30, Z30

#define BAND_N 104
#define BAND_A1 112
#define BAND_A2 120
#define BAND_EPS 128
#define BWD_N 72
#define BWD_A1 80
#define BWD_A2 88
#define BWD_EPS 96
#define BWD_SR1 104
#define BWD_SR2 112
#define FWD_N 48
#define FWD_A1 56
#define FWD_A2 64
#define FWD_EPS 72

#include "adamband_amd64.h"

// func adamBand64AVX512(a *adamBandArgs[float64])
TEXT ·adamBand64AVX512(SB), NOSPLIT, $0-8
	BANDPROLOGUE
	LOOPZ(BANDSTEP, NOP)

// func adamBandPost64AVX512(a *adamBandArgs[float64])
TEXT ·adamBandPost64AVX512(SB), NOSPLIT, $0-8
	BANDPROLOGUE
	LOOPZ(BANDPOSTSTEP, NOP)

// func adamRHSBwd64AVX512(a *adamBwdArgs[float64])
TEXT ·adamRHSBwd64AVX512(SB), NOSPLIT, $0-8
	BWDPROLOGUE
	LOOPZ(BWDSTEP, BWDSUMS)

// func adamRHSBwdPost64AVX512(a *adamBwdArgs[float64])
TEXT ·adamRHSBwdPost64AVX512(SB), NOSPLIT, $0-8
	BWDPROLOGUE
	LOOPZ(BWDPOSTSTEP, BWDSUMS)

// func adamRHSFwd64AVX512(a *adamFwdArgs[float64])
TEXT ·adamRHSFwd64AVX512(SB), NOSPLIT, $0-8
	FWDPROLOGUE
	LOOPZ(FWDSTEP, NOP)

// func adamRHSFwdEps64AVX512(a *adamFwdArgs[float64])
TEXT ·adamRHSFwdEps64AVX512(SB), NOSPLIT, $0-8
	FWDPROLOGUE
	LOOPZ(FWDEPSSTEP, NOP)

// func norm2F64AVX512(x *float64, n int) float64
// Σ x[i]² for i < n: fused multiply-adds into two accumulators of 8 lanes
// (the last elements under a mask), then added up.
TEXT ·norm2F64AVX512(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3

nrm16:
	CMPQ        BX, $16
	JB          nrm8
	VMOVUPD     (SI), Z0
	VMOVUPD     64(SI), Z1
	VFMADD231PD Z0, Z0, Z2
	VFMADD231PD Z1, Z1, Z3
	ADDQ        $128, SI
	SUBQ        $16, BX
	JMP         nrm16

nrm8:
	CMPQ        BX, $8
	JB          nrmtail
	VMOVUPD     (SI), Z0
	VFMADD231PD Z0, Z0, Z2
	ADDQ        $64, SI
	SUBQ        $8, BX

nrmtail:
	TESTQ       BX, BX
	JZ          nrmsum
	MOVQ        BX, CX
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVUPD.Z   (SI), K1, Z1
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
