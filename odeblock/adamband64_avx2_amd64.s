//go:build !purego

#include "textflag.h"

// The float64 AdamNODE kernels on AVX2; their loops are in
// adamband_avx2_amd64.h.

#define LANES 4
#define ESHIFT 3
#define VMOVU VMOVUPD
#define VMASKMOV VMASKMOVPD
#define VADD VADDPD
#define VSUB VSUBPD
#define VMUL VMULPD
#define VDIV VDIVPD
#define VXOR VXORPD
#define VAND VANDPD
#define VCMP VCMPPD
#define VBCAST VBROADCASTSD

DATA cone<>+0(SB)/8, $0x3ff0000000000000
GLOBL cone<>(SB), RODATA|NOPTR, $8
DATA csign<>+0(SB)/8, $0x8000000000000000
GLOBL csign<>(SB), RODATA|NOPTR, $8
DATA chalf<>+0(SB)/8, $0x3fe0000000000000
GLOBL chalf<>(SB), RODATA|NOPTR, $8

#define CONE cone<>(SB)
#define CSIGN csign<>(SB)
#define CHALF chalf<>(SB)

// SUMTERMS adds the four terms in Y3 into Y12 and those in Y7 into Y13.
#define SUMTERMS \
	VADDPD Y3, Y12, Y12; \
	VADDPD Y7, Y13, Y13

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

#include "adamband_avx2_amd64.h"

// func adamBand64AVX2(a *adamBandArgs[float64])
TEXT ·adamBand64AVX2(SB), NOSPLIT, $256-8
	BANDPROLOGUE
	LOOPY(BANDSTEP, BANDSTEPM, NOP)

// func adamBandPost64AVX2(a *adamBandArgs[float64])
TEXT ·adamBandPost64AVX2(SB), NOSPLIT, $256-8
	BANDPROLOGUE
	LOOPY(BANDPOSTSTEP, BANDPOSTSTEPM, NOP)

// func adamRHSBwd64AVX2(a *adamBwdArgs[float64])
TEXT ·adamRHSBwd64AVX2(SB), NOSPLIT, $256-8
	BWDPROLOGUE
	LOOPY(BWDSTEP, BWDSTEPM, BWDSUMS)

// func adamRHSBwdPost64AVX2(a *adamBwdArgs[float64])
TEXT ·adamRHSBwdPost64AVX2(SB), NOSPLIT, $256-8
	BWDPROLOGUE
	LOOPY(BWDPOSTSTEP, BWDPOSTSTEPM, BWDSUMS)

// func adamRHSFwd64AVX2(a *adamFwdArgs[float64])
TEXT ·adamRHSFwd64AVX2(SB), NOSPLIT, $256-8
	FWDPROLOGUE
	LOOPY(FWDSTEP, FWDSTEPM, NOP)

// func adamRHSFwdEps64AVX2(a *adamFwdArgs[float64])
TEXT ·adamRHSFwdEps64AVX2(SB), NOSPLIT, $256-8
	FWDPROLOGUE
	LOOPY(FWDEPSSTEP, FWDEPSSTEPM, NOP)

// func norm2F64AVX2(x *float64, n int) float64
// norm2F64AVX512's sum, to the bit: fused multiply-adds into two
// accumulators of 8 lanes (Y2:Y3 and Y4:Y5), 16 elements at a time, then
// 8 into the first, the last 1 to 7 under a mask into the second, then
// norm2F64AVX512's tree.
TEXT ·norm2F64AVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), BX
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5

nrm16:
	CMPQ        BX, $16
	JB          nrm8
	VMOVUPD     (SI), Y0
	VMOVUPD     32(SI), Y1
	VFMADD231PD Y0, Y0, Y2
	VFMADD231PD Y1, Y1, Y3
	VMOVUPD     64(SI), Y0
	VMOVUPD     96(SI), Y1
	VFMADD231PD Y0, Y0, Y4
	VFMADD231PD Y1, Y1, Y5
	ADDQ        $128, SI
	SUBQ        $16, BX
	JMP         nrm16

nrm8:
	CMPQ        BX, $8
	JB          nrmtail
	VMOVUPD     (SI), Y0
	VMOVUPD     32(SI), Y1
	VFMADD231PD Y0, Y0, Y2
	VFMADD231PD Y1, Y1, Y3
	ADDQ        $64, SI
	SUBQ        $8, BX

nrmtail:
	TESTQ       BX, BX
	JZ          nrmsum
	MOVQ        $4, R8
	CMPQ        BX, $4
	CMOVQCS     BX, R8
	LEAQ        tailmask<>+32(SB), CX
	SHLQ        $3, R8
	SUBQ        R8, CX
	VMOVDQU     (CX), Y15
	VMASKMOVPD  (SI), Y15, Y0
	VFMADD231PD Y0, Y0, Y4
	SUBQ        $4, BX
	JBE         nrmsum
	LEAQ        tailmask<>+32(SB), CX
	SHLQ        $3, BX
	SUBQ        BX, CX
	VMOVDQU     (CX), Y15
	VMASKMOVPD  32(SI), Y15, Y1
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
