// The AdamNODE kernels of adamband_amd64.h on 256-bit registers (AVX2, no
// AVX-512), for adamband_avx2_amd64.s (float32) and adamband64_avx2_amd64.s
// (float64): the same operations in the same order, rounded alike (no
// fused multiply-adds), LANES elements at a time, the last 1 to LANES−1
// loaded and stored under a vector mask (VMASKMOVPS/PD neither read nor
// write the lanes left out). The including file defines, for its element
// type:
//
//	LANES, ESHIFT     the elements in a Y register, log2 of their size
//	VMOVU, VMASKMOV, VADD, VSUB, VMUL, VDIV, VXOR, VAND, VCMP, VBCAST
//	CONE, CSIGN, CHALF  1, the sign bit and ½ as one element in memory
//	SUMTERMS          adds the sums' terms Y3 and Y7 into the float64
//	                  accumulators Y12 and Y13 (uses Y14)
//	BAND_*, BWD_*, FWD_*  the argument blocks' offsets, as for adamband_amd64.h
//
// The constants are broadcast into the frame (32 bytes each): 1, the sign
// bit, a1, a2, −a1, 2·a2, ½ and ε, used as memory operands.

#define F_ONE 0(SP)
#define F_SIGN 32(SP)
#define F_A1 64(SP)
#define F_A2 96(SP)
#define F_NA1 128(SP)
#define F_2A2 160(SP)
#define F_HALF 192(SP)
#define F_EPS 224(SP)

// tailmask<>: 8 dwords of all ones, then 8 of zeros.
DATA tailmask<>+0(SB)/8, $0xffffffffffffffff
DATA tailmask<>+8(SB)/8, $0xffffffffffffffff
DATA tailmask<>+16(SB)/8, $0xffffffffffffffff
DATA tailmask<>+24(SB)/8, $0xffffffffffffffff
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// FRAMECONSTS broadcasts 1, the sign bit and ½ into the frame (uses Y8).
#define FRAMECONSTS \
	VBCAST CONE, Y8; \
	VMOVU  Y8, F_ONE; \
	VBCAST CSIGN, Y8; \
	VMOVU  Y8, F_SIGN; \
	VBCAST CHALF, Y8; \
	VMOVU  Y8, F_HALF

// FRAMESCALARS(A1, A2, EPS) broadcasts the argument block's a1, a2 and ε
// (at those offsets from DI) into the frame, and −a1 and 2·a2 (uses Y8, Y9).
#define FRAMESCALARS(A1, A2, EPS) \
	VBCAST A1(DI), Y8; \
	VMOVU  Y8, F_A1; \
	VXOR   F_SIGN, Y8, Y8; \
	VMOVU  Y8, F_NA1; \
	VBCAST A2(DI), Y8; \
	VMOVU  Y8, F_A2; \
	VADD   Y8, Y8, Y8; \
	VMOVU  Y8, F_2A2; \
	VBCAST EPS(DI), Y8; \
	VMOVU  Y8, F_EPS

// LOOPY runs STEP on the BX elements at byte offset AX of every array,
// LANES at a time, then STEPM once for the last 1 to LANES−1 under the
// mask in Y15, then END; it uses CX and SI and returns.
#define LOOPY(STEP, STEPM, END) \
	XORQ AX, AX; \
loop: \
	CMPQ BX, $LANES; \
	JB   tail; \
	STEP; \
	ADDQ $32, AX; \
	SUBQ $LANES, BX; \
	JMP  loop; \
tail: \
	TESTQ   BX, BX; \
	JZ      end; \
	LEAQ    tailmask<>+32(SB), CX; \
	MOVQ    BX, SI; \
	SHLQ    $ESHIFT, SI; \
	SUBQ    SI, CX; \
	VMOVDQU (CX), Y15; \
	STEPM; \
end: \
	END; \
	VZEROUPPER; \
	RET

// PTRS8 loads the argument block's address into DI and its first eight
// pointers into R8–R14 and DX.
#define PTRS8 \
	MOVQ a+0(FP), DI; \
	MOVQ 0(DI), R8; \
	MOVQ 8(DI), R9; \
	MOVQ 16(DI), R10; \
	MOVQ 24(DI), R11; \
	MOVQ 32(DI), R12; \
	MOVQ 40(DI), R13; \
	MOVQ 48(DI), R14; \
	MOVQ 56(DI), DX

// LOADS8 loads the eight arrays R8–R14, DX point to into Y0–Y7; LOADS8M
// under the mask Y15.
#define LOADS8 \
	VMOVU (R8)(AX*1), Y0; \
	VMOVU (R9)(AX*1), Y1; \
	VMOVU (R10)(AX*1), Y2; \
	VMOVU (R11)(AX*1), Y3; \
	VMOVU (R12)(AX*1), Y4; \
	VMOVU (R13)(AX*1), Y5; \
	VMOVU (R14)(AX*1), Y6; \
	VMOVU (DX)(AX*1), Y7

#define LOADS8M \
	VMASKMOV (R8)(AX*1), Y15, Y0; \
	VMASKMOV (R9)(AX*1), Y15, Y1; \
	VMASKMOV (R10)(AX*1), Y15, Y2; \
	VMASKMOV (R11)(AX*1), Y15, Y3; \
	VMASKMOV (R12)(AX*1), Y15, Y4; \
	VMASKMOV (R13)(AX*1), Y15, Y5; \
	VMASKMOV (R14)(AX*1), Y15, Y6; \
	VMASKMOV (DX)(AX*1), Y15, Y7

// POST turns r and σ(v) in Y6 and Y7 into s and s′ as scaleDerivInto's
// last loop does: s′ = σ(v)·(½/r) where r > 0 (else +0), s = r + ε
// (uses Y8, Y9).
#define POST \
	VXOR   Y9, Y9, Y9; \
	VCMP   $0x1e, Y9, Y6, Y8; \
	VMOVU  F_HALF, Y9; \
	VDIV   Y6, Y9, Y9; \
	VMUL   Y9, Y7, Y7; \
	VAND   Y8, Y7, Y7; \
	VADD   F_EPS, Y6, Y6

// BODY, the adjoint's update: Y0 g, Y1 m, Y2 v, Y3 ah, Y4 am, Y5 av, Y6 s,
// Y7 ds in; Y9 dh, Y10 dm, Y11 dv, Y12 dam, Y13 dav out:
//
//	inv = 1/s, dh = (−m)·inv, dm = a1·((−g) − m), dv = a2·(g·g − v),
//	dam = ah·inv + a1·am, dav = ((((−ah)·m)·ds)·inv)·inv + a2·av.
#define BODY \
	VMOVU F_ONE, Y8; \
	VDIV  Y6, Y8, Y8; \
	VXOR  F_SIGN, Y1, Y9; \
	VMUL  Y8, Y9, Y9; \
	VXOR  F_SIGN, Y0, Y10; \
	VSUB  Y1, Y10, Y10; \
	VMUL  F_A1, Y10, Y10; \
	VMUL  Y0, Y0, Y11; \
	VSUB  Y2, Y11, Y11; \
	VMUL  F_A2, Y11, Y11; \
	VMUL  Y8, Y3, Y12; \
	VMUL  F_A1, Y4, Y4; \
	VADD  Y4, Y12, Y12; \
	VXOR  F_SIGN, Y3, Y13; \
	VMUL  Y1, Y13, Y13; \
	VMUL  Y7, Y13, Y13; \
	VMUL  Y8, Y13, Y13; \
	VMUL  Y8, Y13, Y13; \
	VMUL  F_A2, Y5, Y5; \
	VADD  Y5, Y13, Y13

// STORES writes Y9–Y13 to dh, dm, dv, dam, dav; STORESM under the mask.
#define STORES \
	MOVQ  64(DI), CX; \
	VMOVU Y9, (CX)(AX*1); \
	MOVQ  72(DI), CX; \
	VMOVU Y10, (CX)(AX*1); \
	MOVQ  80(DI), CX; \
	VMOVU Y11, (CX)(AX*1); \
	MOVQ  88(DI), CX; \
	VMOVU Y12, (CX)(AX*1); \
	MOVQ  96(DI), CX; \
	VMOVU Y13, (CX)(AX*1)

#define STORESM \
	MOVQ     64(DI), CX; \
	VMASKMOV Y9, Y15, (CX)(AX*1); \
	MOVQ     72(DI), CX; \
	VMASKMOV Y10, Y15, (CX)(AX*1); \
	MOVQ     80(DI), CX; \
	VMASKMOV Y11, Y15, (CX)(AX*1); \
	MOVQ     88(DI), CX; \
	VMASKMOV Y12, Y15, (CX)(AX*1); \
	MOVQ     96(DI), CX; \
	VMASKMOV Y13, Y15, (CX)(AX*1)

#define BANDPROLOGUE \
	PTRS8; \
	MOVQ BAND_N(DI), BX; \
	FRAMECONSTS; \
	FRAMESCALARS(BAND_A1, BAND_A2, BAND_EPS)

#define BANDSTEP LOADS8; BODY; STORES
#define BANDSTEPM LOADS8M; BODY; STORESM
#define BANDPOSTSTEP LOADS8; POST; BODY; STORES
#define BANDPOSTSTEPM LOADS8M; POST; BODY; STORESM

// BWDBODY, adamRHS's backward: Y0 g, Y1 m, Y2 v, Y3 ch, Y4 cm, Y5 cv,
// Y6 s, Y7 ds in; with inv = 1/s,
//
//	gg = (−a1)·cm + ((2·a2)·g)·cv      into Y9
//	gm = (−ch)·inv − a1·cm              into Y10
//	gv = (((ch·m)·ds)·inv)·inv − a2·cv  into Y11
//
// and the sums' terms cm·((−g) − m) into Y3, cv·(g·g − v) into Y7, added
// into Y12 and Y13 in float64 lanes.
#define BWDBODY \
	VMOVU F_ONE, Y8; \
	VDIV  Y6, Y8, Y8; \
	VMUL  F_NA1, Y4, Y9; \
	VMUL  F_2A2, Y0, Y10; \
	VMUL  Y5, Y10, Y10; \
	VADD  Y10, Y9, Y9; \
	VXOR  F_SIGN, Y3, Y10; \
	VMUL  Y8, Y10, Y10; \
	VMUL  F_A1, Y4, Y11; \
	VSUB  Y11, Y10, Y10; \
	VMUL  Y1, Y3, Y11; \
	VMUL  Y7, Y11, Y11; \
	VMUL  Y8, Y11, Y11; \
	VMUL  Y8, Y11, Y11; \
	VMUL  F_A2, Y5, Y6; \
	VSUB  Y6, Y11, Y11; \
	VXOR  F_SIGN, Y0, Y3; \
	VSUB  Y1, Y3, Y3; \
	VMUL  Y4, Y3, Y3; \
	VMUL  Y0, Y0, Y7; \
	VSUB  Y2, Y7, Y7; \
	VMUL  Y5, Y7, Y7; \
	SUMTERMS

// BWDSTORES writes gg, gm (over s) and gv (over ds); BWDSTORESM under the
// mask.
#define BWDSTORES \
	MOVQ  64(DI), CX; \
	VMOVU Y9, (CX)(AX*1); \
	VMOVU Y10, (R14)(AX*1); \
	VMOVU Y11, (DX)(AX*1)

#define BWDSTORESM \
	MOVQ     64(DI), CX; \
	VMASKMOV Y9, Y15, (CX)(AX*1); \
	VMASKMOV Y10, Y15, (R14)(AX*1); \
	VMASKMOV Y11, Y15, (DX)(AX*1)

// HSUMY sets the low lane of A to the sum of its four float64 lanes
// (uses Y14).
#define HSUMY(A, XA) \
	VEXTRACTF128 $1, A, X14; \
	VADDPD       X14, XA, XA; \
	VPERMILPD    $1, XA, X14; \
	VADDSD       X14, XA, XA

#define BWDPROLOGUE \
	PTRS8; \
	MOVQ   BWD_N(DI), BX; \
	FRAMECONSTS; \
	FRAMESCALARS(BWD_A1, BWD_A2, BWD_EPS); \
	VXORPD Y12, Y12, Y12; \
	VXORPD Y13, Y13, Y13

#define BWDSTEP LOADS8; BWDBODY; BWDSTORES
#define BWDSTEPM LOADS8M; BWDBODY; BWDSTORESM
#define BWDPOSTSTEP LOADS8; POST; BWDBODY; BWDSTORES
#define BWDPOSTSTEPM LOADS8M; POST; BWDBODY; BWDSTORESM
#define BWDSUMS HSUMY(Y12, X12); VMOVSD X12, BWD_SR1(DI); HSUMY(Y13, X13); VMOVSD X13, BWD_SR2(DI)

// The forward (adamRHSFwd and its kin): Y0 g, Y1 m, Y2 v, Y3 s (read from
// dh's array; the Eps kernels add ε first) in; dh = (−m)/s,
// dm = a1·((−g) − m), dv = a2·(g·g − v).
#define FWDLOADS \
	VMOVU (R8)(AX*1), Y0; \
	VMOVU (R9)(AX*1), Y1; \
	VMOVU (R10)(AX*1), Y2; \
	VMOVU (R11)(AX*1), Y3

#define FWDLOADSM \
	VMASKMOV (R8)(AX*1), Y15, Y0; \
	VMASKMOV (R9)(AX*1), Y15, Y1; \
	VMASKMOV (R10)(AX*1), Y15, Y2; \
	VMASKMOV (R11)(AX*1), Y15, Y3

#define ADDEPS \
	VADD F_EPS, Y3, Y3

#define FWDBODY \
	VXOR F_SIGN, Y1, Y5; \
	VDIV Y3, Y5, Y5; \
	VXOR F_SIGN, Y0, Y6; \
	VSUB Y1, Y6, Y6; \
	VMUL F_A1, Y6, Y6; \
	VMUL Y0, Y0, Y7; \
	VSUB Y2, Y7, Y7; \
	VMUL F_A2, Y7, Y7

#define FWDSTORES \
	VMOVU Y5, (R11)(AX*1); \
	VMOVU Y6, (R12)(AX*1); \
	VMOVU Y7, (R13)(AX*1)

#define FWDSTORESM \
	VMASKMOV Y5, Y15, (R11)(AX*1); \
	VMASKMOV Y6, Y15, (R12)(AX*1); \
	VMASKMOV Y7, Y15, (R13)(AX*1)

#define FWDPROLOGUE \
	MOVQ a+0(FP), DI; \
	MOVQ 0(DI), R8; \
	MOVQ 8(DI), R9; \
	MOVQ 16(DI), R10; \
	MOVQ 24(DI), R11; \
	MOVQ 32(DI), R12; \
	MOVQ 40(DI), R13; \
	MOVQ FWD_N(DI), BX; \
	FRAMECONSTS; \
	FRAMESCALARS(FWD_A1, FWD_A2, FWD_EPS)

#define FWDSTEP FWDLOADS; FWDBODY; FWDSTORES
#define FWDSTEPM FWDLOADSM; FWDBODY; FWDSTORESM
#define FWDEPSSTEP FWDLOADS; ADDEPS; FWDBODY; FWDSTORES
#define FWDEPSSTEPM FWDLOADSM; ADDEPS; FWDBODY; FWDSTORESM
