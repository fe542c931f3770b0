// The AdamNODE kernels of adamband_amd64.s (float32) and adamband64_amd64.s
// (float64), written once for both. The including file defines, for its
// element type:
//
//	LANES             the elements in a Z register (16 or 8)
//	VMOVU, VMOVUZ     the unaligned move and the zero-masking unaligned load
//	VMOVAZ            the zero-masking register move
//	VADD, VSUB, VMUL, VDIV, VXOR, VCMP, VBCAST (broadcast from memory)
//	CONSTS            Z22 = 1, Z23 = the sign bit, Z24 = 0, Z25 = ½ (uses CX)
//	SIGN              Z23 = the sign bit (uses CX)
//	SUMTERMS          adds the sums' terms Z11 and Z16 into Z28–Z31, in
//	                  float64 (uses Z18)
//	BAND_N, BAND_A1, BAND_A2, BAND_EPS       adamBandArgs' offsets
//	BWD_N, BWD_A1, BWD_A2, BWD_EPS, BWD_SR1, BWD_SR2   adamBwdArgs'
//	FWD_N, FWD_A1, FWD_A2, FWD_EPS           adamFwdArgs'
//
// Every pointer is at the same offset for both types; the scalars follow.

// LOOPZ runs STEP on the BX elements at byte offset AX of every array,
// LANES at a time, then once under the mask K1 for the last 1 to LANES−1
// (K1 all ones before), then END; it uses CX and SI and returns.
#define LOOPZ(STEP, END) \
	KXNORW K1, K1, K1; \
	XORQ   AX, AX; \
loop: \
	CMPQ BX, $LANES; \
	JB   tail; \
	STEP; \
	ADDQ $64, AX; \
	SUBQ $LANES, BX; \
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

// The adjoint's update (adamBandAVX512 and its kin): adamWork.band after s
// and s′, the operations of the Go loop in its order, rounded alike (no
// fused multiply-adds):
//
//	inv = 1/s, dh = (−m)·inv, dm = a1·((−g) − m), dv = a2·(g·g − v),
//	dam = ah·inv + a1·am, dav = ((((−ah)·m)·ds)·inv)·inv + a2·av.
//
// The Post kernels take r = √softplus(v) in s and σ(v) in ds and first
// form, as scaleDerivInto's loop does, ds = σ(v)·(0.5/r) where r > 0 (else
// 0) and s = r + eps, in registers (s and ds are left as they were).
//
// adamBandArgs: 13 pointers (g, m, v, ah, am, av, s, ds, dh, dm, dv, dam,
// dav) at 0–96, then n, a1, a2, eps.

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

// LOADS8 loads the eight arrays R8–R14, DX point to into Z0–Z3, Z12–Z15.
#define LOADS8 \
	VMOVUZ (R8)(AX*1), K1, Z0; \
	VMOVUZ (R9)(AX*1), K1, Z1; \
	VMOVUZ (R10)(AX*1), K1, Z2; \
	VMOVUZ (R11)(AX*1), K1, Z3; \
	VMOVUZ (R12)(AX*1), K1, Z12; \
	VMOVUZ (R13)(AX*1), K1, Z13; \
	VMOVUZ (R14)(AX*1), K1, Z14; \
	VMOVUZ (DX)(AX*1), K1, Z15

// POST turns r and σ(v) in Z14 and Z15 into s and s′.
#define POST \
	VCMP   $0x1e, Z24, Z14, K2; \
	VDIV   Z14, Z25, Z16; \
	VMUL   Z16, Z15, Z15; \
	VMOVAZ Z15, K2, Z15; \
	VADD   Z26, Z14, Z14

// BODY: Z0 g, Z1 m, Z2 v, Z3 ah, Z12 am, Z13 av, Z14 s, Z15 ds in;
// Z5 dh, Z6 dm, Z7 dv, Z8 dam, Z10 dav out.
#define BODY \
	VDIV Z14, Z22, Z4; \
	VXOR Z23, Z1, Z5; \
	VMUL Z4, Z5, Z5; \
	VXOR Z23, Z0, Z6; \
	VSUB Z1, Z6, Z6; \
	VMUL Z6, Z20, Z6; \
	VMUL Z0, Z0, Z7; \
	VSUB Z2, Z7, Z7; \
	VMUL Z7, Z21, Z7; \
	VMUL Z4, Z3, Z8; \
	VMUL Z12, Z20, Z9; \
	VADD Z9, Z8, Z8; \
	VXOR Z23, Z3, Z10; \
	VMUL Z1, Z10, Z10; \
	VMUL Z15, Z10, Z10; \
	VMUL Z4, Z10, Z10; \
	VMUL Z4, Z10, Z10; \
	VMUL Z13, Z21, Z11; \
	VADD Z11, Z10, Z10

// STORES writes Z5, Z6, Z7, Z8, Z10 through K1.
#define STORES \
	MOVQ  64(DI), CX; \
	VMOVU Z5, K1, (CX)(AX*1); \
	MOVQ  72(DI), CX; \
	VMOVU Z6, K1, (CX)(AX*1); \
	MOVQ  80(DI), CX; \
	VMOVU Z7, K1, (CX)(AX*1); \
	MOVQ  88(DI), CX; \
	VMOVU Z8, K1, (CX)(AX*1); \
	MOVQ  96(DI), CX; \
	VMOVU Z10, K1, (CX)(AX*1)

// BANDPROLOGUE loads the operands' addresses, n and the constants.
#define BANDPROLOGUE \
	PTRS8; \
	MOVQ   BAND_N(DI), BX; \
	VBCAST BAND_A1(DI), Z20; \
	VBCAST BAND_A2(DI), Z21; \
	VBCAST BAND_EPS(DI), Z26; \
	CONSTS

#define BANDSTEP LOADS8; BODY; STORES
#define BANDPOSTSTEP LOADS8; POST; BODY; STORES

// The loop of adamRHS's backward (adamRHSBwdAVX512 and its kin): with
// inv = 1/s,
//
//	gg = (−a1)·cm + ((2·a2)·g)·cv
//	gm = (−ch)·inv − a1·cm            (into s's array)
//	gv = (((ch·m)·ds)·inv)·inv − a2·cv (into ds's array)
//
// rounded as the Go loop rounds them, and sr1 = Σ cm·((−g) − m),
// sr2 = Σ cv·(g·g − v): each term in the element type as the Go loop forms
// it, the sums in float64 lanes, then added up (the Go loop sums blocks of
// 64 in the element type first). The Post kernels first turn r and σ(v)
// into s and s′ as the band's do.
//
// adamBwdArgs: 9 pointers (g, m, v, ch, cm, cv, s, ds, gg) at 0–64, then
// n, a1, a2, eps, sr1 and sr2 (written).

// BWDBODY: Z0 g, Z1 m, Z2 v, Z3 ch, Z12 cm, Z13 cv, Z14 s, Z15 ds in;
// Z5 gg, Z7 gm, Z9 gv out; the sums' terms into Z28–Z31.
#define BWDBODY \
	VDIV Z14, Z22, Z4; \
	VMUL Z12, Z17, Z5; \
	VMUL Z0, Z27, Z6; \
	VMUL Z13, Z6, Z6; \
	VADD Z6, Z5, Z5; \
	VXOR Z23, Z3, Z7; \
	VMUL Z4, Z7, Z7; \
	VMUL Z12, Z20, Z8; \
	VSUB Z8, Z7, Z7; \
	VMUL Z1, Z3, Z9; \
	VMUL Z15, Z9, Z9; \
	VMUL Z4, Z9, Z9; \
	VMUL Z4, Z9, Z9; \
	VMUL Z13, Z21, Z10; \
	VSUB Z10, Z9, Z9; \
	VXOR Z23, Z0, Z11; \
	VSUB Z1, Z11, Z11; \
	VMUL Z11, Z12, Z11; \
	VMUL Z0, Z0, Z16; \
	VSUB Z2, Z16, Z16; \
	VMUL Z16, Z13, Z16; \
	SUMTERMS

#define BWDSTORES \
	MOVQ  64(DI), CX; \
	VMOVU Z5, K1, (CX)(AX*1); \
	VMOVU Z7, K1, (R14)(AX*1); \
	VMOVU Z9, K1, (DX)(AX*1)

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
	MOVQ   BWD_N(DI), BX; \
	VBCAST BWD_A1(DI), Z20; \
	VBCAST BWD_A2(DI), Z21; \
	VBCAST BWD_EPS(DI), Z26; \
	VADD   Z21, Z21, Z27; \
	CONSTS; \
	VXOR   Z23, Z20, Z17; \
	VXORPD Z28, Z28, Z28; \
	VXORPD Z29, Z29, Z29; \
	VXORPD Z30, Z30, Z30; \
	VXORPD Z31, Z31, Z31

#define BWDSTEP LOADS8; BWDBODY; BWDSTORES
#define BWDPOSTSTEP LOADS8; POST; BWDBODY; BWDSTORES
#define BWDSUMS HSUM(Z28, Z29); VMOVSD X0, BWD_SR1(DI); HSUM(Z30, Z31); VMOVSD X0, BWD_SR2(DI)

// The loop of adamRHS (adamRHSFwdAVX512 and its kin): dh = (−m)/s,
// dm = a1·((−g) − m), dv = a2·(g·g − v), rounded as the Go loop rounds
// them, with s read from dh's array (the Eps kernels first add eps to it,
// as scaleInto's last step does).
//
// adamFwdArgs: 6 pointers (g, m, v, dh, dm, dv) at 0–40, then n, a1, a2,
// eps.

#define FWDLOADS \
	VMOVUZ (R8)(AX*1), K1, Z0; \
	VMOVUZ (R9)(AX*1), K1, Z1; \
	VMOVUZ (R10)(AX*1), K1, Z2; \
	VMOVUZ (R11)(AX*1), K1, Z14

#define ADDEPS \
	VADD Z26, Z14, Z14

#define FWDBODY \
	VXOR Z23, Z1, Z5; \
	VDIV Z14, Z5, Z5; \
	VXOR Z23, Z0, Z6; \
	VSUB Z1, Z6, Z6; \
	VMUL Z6, Z20, Z6; \
	VMUL Z0, Z0, Z7; \
	VSUB Z2, Z7, Z7; \
	VMUL Z7, Z21, Z7

#define FWDSTORES \
	VMOVU Z5, K1, (R11)(AX*1); \
	VMOVU Z6, K1, (R12)(AX*1); \
	VMOVU Z7, K1, (R13)(AX*1)

#define FWDPROLOGUE \
	MOVQ   a+0(FP), DI; \
	MOVQ   0(DI), R8; \
	MOVQ   8(DI), R9; \
	MOVQ   16(DI), R10; \
	MOVQ   24(DI), R11; \
	MOVQ   32(DI), R12; \
	MOVQ   40(DI), R13; \
	MOVQ   FWD_N(DI), BX; \
	VBCAST FWD_A1(DI), Z20; \
	VBCAST FWD_A2(DI), Z21; \
	VBCAST FWD_EPS(DI), Z26; \
	SIGN

#define FWDSTEP FWDLOADS; FWDBODY; FWDSTORES
#define FWDEPSSTEP FWDLOADS; ADDEPS; FWDBODY; FWDSTORES
