//go:build !purego

#include "textflag.h"

// The float32 AdamNODE kernels on AVX2; their loops are in
// adamband_avx2_amd64.h.

#define LANES 8
#define ESHIFT 2
#define VMOVU VMOVUPS
#define VMASKMOV VMASKMOVPS
#define VADD VADDPS
#define VSUB VSUBPS
#define VMUL VMULPS
#define VDIV VDIVPS
#define VXOR VXORPS
#define VAND VANDPS
#define VCMP VCMPPS
#define VBCAST VBROADCASTSS

DATA cone<>+0(SB)/4, $0x3f800000
GLOBL cone<>(SB), RODATA|NOPTR, $4
DATA csign<>+0(SB)/4, $0x80000000
GLOBL csign<>(SB), RODATA|NOPTR, $4
DATA chalf<>+0(SB)/4, $0x3f000000
GLOBL chalf<>(SB), RODATA|NOPTR, $4

#define CONE cone<>(SB)
#define CSIGN csign<>(SB)
#define CHALF chalf<>(SB)

// SUMTERMS widens the 8 terms in Y3 and in Y7 to float64 and adds them
// into Y12 and Y13, the low four first.
#define SUMTERMS \
	VCVTPS2PD    X3, Y14; \
	VADDPD       Y14, Y12, Y12; \
	VEXTRACTF128 $1, Y3, X3; \
	VCVTPS2PD    X3, Y14; \
	VADDPD       Y14, Y12, Y12; \
	VCVTPS2PD    X7, Y14; \
	VADDPD       Y14, Y13, Y13; \
	VEXTRACTF128 $1, Y7, X7; \
	VCVTPS2PD    X7, Y14; \
	VADDPD       Y14, Y13, Y13

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

#include "adamband_avx2_amd64.h"

// func adamBandAVX2(a *adamBandArgs[float32])
TEXT ·adamBandAVX2(SB), NOSPLIT, $256-8
	BANDPROLOGUE
	LOOPY(BANDSTEP, BANDSTEPM, NOP)

// func adamBandPostAVX2(a *adamBandArgs[float32])
TEXT ·adamBandPostAVX2(SB), NOSPLIT, $256-8
	BANDPROLOGUE
	LOOPY(BANDPOSTSTEP, BANDPOSTSTEPM, NOP)

// func adamRHSBwdAVX2(a *adamBwdArgs[float32])
TEXT ·adamRHSBwdAVX2(SB), NOSPLIT, $256-8
	BWDPROLOGUE
	LOOPY(BWDSTEP, BWDSTEPM, BWDSUMS)

// func adamRHSBwdPostAVX2(a *adamBwdArgs[float32])
TEXT ·adamRHSBwdPostAVX2(SB), NOSPLIT, $256-8
	BWDPROLOGUE
	LOOPY(BWDPOSTSTEP, BWDPOSTSTEPM, BWDSUMS)

// func adamRHSFwdAVX2(a *adamFwdArgs[float32])
TEXT ·adamRHSFwdAVX2(SB), NOSPLIT, $256-8
	FWDPROLOGUE
	LOOPY(FWDSTEP, FWDSTEPM, NOP)

// func adamRHSFwdEpsAVX2(a *adamFwdArgs[float32])
TEXT ·adamRHSFwdEpsAVX2(SB), NOSPLIT, $256-8
	FWDPROLOGUE
	LOOPY(FWDEPSSTEP, FWDEPSSTEPM, NOP)

// func norm2AVX2(x *float32, n int) float64
// norm2AVX512's sum, to the bit: each square exact in float64, 16 elements
// at a time into two accumulators of 8 lanes (Y2:Y3 and Y4:Y5), the last
// 1 to 15 under a mask, then norm2AVX512's tree.
TEXT ·norm2AVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5

nrm16:
	CMPQ        BX, $16
	JB          nrmtail
	VCVTPS2PD   (SI), Y0
	VCVTPS2PD   16(SI), Y1
	VFMADD231PD Y0, Y0, Y2
	VFMADD231PD Y1, Y1, Y3
	VCVTPS2PD   32(SI), Y0
	VCVTPS2PD   48(SI), Y1
	VFMADD231PD Y0, Y0, Y4
	VFMADD231PD Y1, Y1, Y5
	ADDQ        $64, SI
	SUBQ        $16, BX
	JMP         nrm16

nrmtail:
	TESTQ       BX, BX
	JZ          nrmsum
	MOVQ        $8, R8
	CMPQ        BX, $8
	CMOVQCS     BX, R8
	LEAQ        tailmask<>+32(SB), CX
	SHLQ        $2, R8
	SUBQ        R8, CX
	VMOVDQU     (CX), Y15
	VMASKMOVPS  (SI), Y15, Y6
	VCVTPS2PD   X6, Y0
	VEXTRACTF128 $1, Y6, X6
	VCVTPS2PD   X6, Y1
	VFMADD231PD Y0, Y0, Y2
	VFMADD231PD Y1, Y1, Y3
	SUBQ        $8, BX
	JBE         nrmsum
	LEAQ        tailmask<>+32(SB), CX
	SHLQ        $2, BX
	SUBQ        BX, CX
	VMOVDQU     (CX), Y15
	VMASKMOVPS  32(SI), Y15, Y6
	VCVTPS2PD   X6, Y0
	VEXTRACTF128 $1, Y6, X6
	VCVTPS2PD   X6, Y1
	VFMADD231PD Y0, Y0, Y4
	VFMADD231PD Y1, Y1, Y5

nrmsum:
	VADDPD       Y4, Y2, Y0
	VADDPD       Y5, Y3, Y1
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, ret+16(FP)
	VZEROUPPER
	RET
