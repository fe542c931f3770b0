//go:build ignore

// gen_sse2 writes kernel_sse2_amd64.s, the SSE2 micro-kernel of the
// blocked GEMM of package sgemm or dgemm on the sse2 kernel path (see
// their sse2.go), into the current directory, as the packages'
// go:generate directives run it: go run ../gemm/gen_sse2.go
// ../gemm/gen_common.go sgemm (or dgemm).
//
// SSE2 has 16 XMM registers of 4 float32 or 2 float64 lanes and no fused
// multiply-add. The register tile is mr × 2 vectors: 12 accumulators (6
// rows of two vectors: 6×8 float32, 6×4 float64), the two vectors of B of
// the current step, the broadcast A value and one register for a product,
// which MULPS (MULPD) writes and ADDPS (ADDPD) adds. Each k step loads 2
// vectors of B and broadcasts 6 values of A for 12 multiplies and 12
// adds: one of each a cycle, the SSE peak of the CPUs without AVX
// (Nehalem, Westmere, Core 2).
//
// The kernel reads its panels whole: every panel of B is packed (NR wide,
// zero-padded), every panel of A too (mr rows), and a tile narrower than
// NR is stored through a copy in Go (sse2.go), since SSE2 has no masked
// loads or stores. sse2RowsA and sse2RowsB pack a whole panel whose steps
// lie in rows of the source (copy's call for each step of 24 or 32 bytes
// took most of the packing's time), sse2ColsA and sse2ColsB one whose
// lanes do (a transpose in registers, a vector of steps at a time,
// instead of a Go loop's element at a time).
package main

import (
	"fmt"
	"strings"
)

// The element's instructions, set by main: lanes elements an XMM
// register, ps the packed instructions' suffix (PS or PD), ss the scalar
// load's (SS or SD).
var (
	lanes  int
	ps, ss string
)

// The register tile: mr rows of nv vectors.
const (
	mr = 6
	nv = 2
)

// The vector registers: accumulators X0–X11 (row i, vector v in
// X(i·nv + v)), B's vectors X12 and X13, the broadcast A value X14, the
// product X15.
const (
	xB     = 12
	xA     = 14
	xT     = 15
	vBytes = 16 // bytes a vector
)

// bcast writes the broadcast of the element at addr to every lane of
// register x (SSE2 has no broadcast load: a scalar load, then a shuffle).
func bcast(addr string, x int) {
	w("\tMOV%s %s, X%d", ss, addr, x)
	if es == 4 {
		w("\tSHUFPS $0, X%d, X%d", x, x)
	} else {
		w("\tUNPCKLPD X%d, X%d", x, x)
	}
}

// step is k step p of an unrolled group: A(i, p) at es·i + p·ka from AX
// ((AX), (AX)(R11·1), (AX)(R11·2), (AX)(R13·1): R11 = ka, R13 = 3·ka in
// bytes), B's vectors at (BX) likewise with DX = ldb and R12 = 3·ldb.
func step(p int) {
	idx := []string{"", "(R11*1)", "(R11*2)", "(R13*1)"}[p]
	bidx := []string{"", "(DX*1)", "(DX*2)", "(R12*1)"}[p]
	for v := range nv {
		w("\tMOVUP%s %d(BX)%s, X%d", ps[1:], vBytes*v, bidx, xB+v)
	}
	for i := range mr {
		bcast(fmt.Sprintf("%d(AX)%s", es*i, idx), xA)
		for v := range nv {
			acc := i*nv + v
			if v < nv-1 {
				w("\tMOVAP%s X%d, X%d", ps[1:], xA, xT)
				w("\tMUL%s X%d, X%d", ps, xB+v, xT)
				w("\tADD%s X%d, X%d", ps, xT, acc)
			} else { // the last product may overwrite the broadcast
				w("\tMUL%s X%d, X%d", ps, xB+v, xA)
				w("\tADD%s X%d, X%d", ps, xA, acc)
			}
		}
	}
}

// storeRows writes the store of each of the tile's rows i and vectors v
// by st(i, v), moving DI to the next row and leaving when the rows (SI)
// run out.
func storeRows(st func(i, v int)) {
	for i := range mr {
		for v := range nv {
			st(i, v)
		}
		if i < mr-1 {
			w("\tDECQ SI")
			w("\tJZ done")
			w("\tADDQ DX, DI")
		}
	}
}

// shift is log2 of es.
func shift() int {
	if es == 8 {
		return 3
	}
	return 2
}

func kernel(name string) {
	w("// func %s(k int, a *%s, ka int, b *%s, ldb int, c *%s, ldc int, alpha, beta %s, rows int, mask uint32, bias *%s)",
		name, typ, typ, typ, typ, typ)
	w("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	w("\tMOVQ k+0(FP), CX")
	w("\tMOVQ a+8(FP), AX")
	w("\tMOVQ ka+16(FP), R11")
	w("\tSHLQ $%d, R11", shift())
	w("\tLEAQ (R11)(R11*2), R13")
	w("\tMOVQ b+24(FP), BX")
	w("\tMOVQ ldb+32(FP), DX")
	w("\tSHLQ $%d, DX", shift())
	w("\tLEAQ (DX)(DX*2), R12")
	w("\tMOVQ c+40(FP), DI")
	for x := range mr * nv {
		w("\tXORPS X%d, X%d", x, x)
	}
	w("\tMOVQ CX, R9")
	w("\tSHRQ $2, R9")
	w("\tANDQ $3, CX")
	w("\tTESTQ R9, R9")
	w("\tJZ tail")
	w("loop4:")
	for p := range 4 {
		step(p)
	}
	w("\tLEAQ (AX)(R11*4), AX")
	w("\tLEAQ (BX)(DX*4), BX")
	w("\tDECQ R9")
	w("\tJNZ loop4")
	w("tail:")
	w("\tTESTQ CX, CX")
	w("\tJZ store")
	w("loop1:")
	step(0)
	w("\tADDQ R11, AX")
	w("\tADDQ DX, BX")
	w("\tDECQ CX")
	w("\tJNZ loop1")
	w("store:")
	// Three ways to store: alpha·acc + beta·C when beta ≠ 0, alpha·acc
	// when beta = 0 (C not read), alpha·acc + bias[j] when beta = 0 and
	// bias is not nil. X12 holds alpha, X13 beta or the bias's first
	// vector, X14 C's vector or the bias's second.
	w("\tMOVQ rows+%d(FP), SI", offRows)
	w("\tMOVQ ldc+48(FP), DX")
	w("\tSHLQ $%d, DX", shift())
	bcast(fmt.Sprintf("alpha+%d(FP)", offAlpha), 12)
	if es == 4 {
		w("\tMOVL beta+%d(FP), R8", offBeta)
		w("\tANDL $0x7fffffff, R8") // -0 is 0
	} else {
		w("\tMOVQ beta+%d(FP), R8", offBeta)
		w("\tSHLQ $1, R8") // drop the sign: -0 is 0
	}
	w("\tJZ zero")
	bcast(fmt.Sprintf("beta+%d(FP)", offBeta), 13)
	storeRows(func(i, v int) {
		acc := i*nv + v
		w("\tMOVUP%s %d(DI), X14", ps[1:], vBytes*v)
		w("\tMUL%s X13, X14", ps)
		w("\tMUL%s X12, X%d", ps, acc)
		w("\tADD%s X14, X%d", ps, acc)
		w("\tMOVUP%s X%d, %d(DI)", ps[1:], acc, vBytes*v)
	})
	w("\tRET")
	w("zero:")
	w("\tMOVQ bias+%d(FP), R12", offBias)
	w("\tTESTQ R12, R12")
	w("\tJNZ bias")
	storeRows(func(i, v int) {
		acc := i*nv + v
		w("\tMUL%s X12, X%d", ps, acc)
		w("\tMOVUP%s X%d, %d(DI)", ps[1:], acc, vBytes*v)
	})
	w("\tRET")
	// With a bias: C[i, j] = alpha·acc + bias[j], the bias loaded once.
	w("bias:")
	for v := range nv {
		w("\tMOVUP%s %d(R12), X%d", ps[1:], vBytes*v, 13+v)
	}
	storeRows(func(i, v int) {
		acc := i*nv + v
		w("\tMUL%s X12, X%d", ps, acc)
		w("\tADD%s X%d, X%d", ps, 13+v, acc)
		w("\tMOVUP%s X%d, %d(DI)", ps[1:], acc, vBytes*v)
	})
	w("done:")
	w("\tRET")
}

// rowsCopy writes name(d *T, src *T, ld int, kb int), which copies n
// elements a step for kb steps, the steps of src ld elements apart into d
// contiguous: 16 bytes a move, then 8 for a remainder (MOVSD moves any 8
// bytes).
func rowsCopy(name string, n int) {
	w("// func %s(d *%s, src *%s, ld int, kb int)", name, typ, typ)
	w("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	w("\tMOVQ d+0(FP), DI")
	w("\tMOVQ src+8(FP), SI")
	w("\tMOVQ ld+16(FP), DX")
	w("\tSHLQ $%d, DX", shift())
	w("\tMOVQ kb+24(FP), CX")
	w("\tTESTQ CX, CX")
	w("\tJZ %sdone", name)
	w("%sloop:", name)
	bytes := n * es
	for o := 0; o+16 <= bytes; o += 16 {
		w("\tMOVUPS %d(SI), X%d", o, o/16)
	}
	if bytes%16 != 0 {
		w("\tMOVSD %d(SI), X%d", bytes/16*16, 7)
	}
	for o := 0; o+16 <= bytes; o += 16 {
		w("\tMOVUPS X%d, %d(DI)", o/16, o)
	}
	if bytes%16 != 0 {
		w("\tMOVSD X%d, %d(DI)", 7, bytes/16*16)
	}
	w("\tADDQ DX, SI")
	w("\tADDQ $%d, DI", bytes)
	w("\tDECQ CX")
	w("\tJNZ %sloop", name)
	w("%sdone:", name)
	w("\tRET")
}

// rowAddr is the address of row l (< 9) of a gather's source at byte
// offset off: SI, R8 = SI + 3·ld and R9 = SI + 6·ld, each indexed by
// nothing, DX = ld or 2·DX.
func rowAddr(l, off int) string {
	base := []string{"SI", "R8", "R9"}[l/3]
	return fmt.Sprintf("%d(%s)%s", off, base, []string{"", "(DX*1)", "(DX*2)"}[l%3])
}

// colsCopy writes name(d *T, src *T, ld int, groups int), which packs a
// panel of n lanes whose lanes lie in rows of src (ld elements apart,
// lane l's steps contiguous from src + l·ld): groups groups of g steps
// (g = 16 bytes of elements), each loaded as one vector from every row
// and transposed in registers: in blocks of 4 rows by UNPCKLPS/UNPCKHPS
// and MOVLHPS/MOVHLPS (float32), in blocks of 2 rows by UNPCKLPD and
// UNPCKHPD (float64, and float32's last 2 rows of 6, each step's pair
// stored by MOVSD or MOVHPS).
func colsCopy(name string, n int) {
	g := 16 / es
	w("// func %s(d *%s, src *%s, ld int, groups int)", name, typ, typ)
	w("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	w("\tMOVQ d+0(FP), DI")
	w("\tMOVQ src+8(FP), SI")
	w("\tMOVQ ld+16(FP), DX")
	w("\tSHLQ $%d, DX", shift())
	w("\tLEAQ (SI)(DX*2), R8")
	w("\tADDQ DX, R8")
	w("\tLEAQ (R8)(DX*2), R9")
	w("\tADDQ DX, R9")
	w("\tMOVQ groups+24(FP), CX")
	w("\tTESTQ CX, CX")
	w("\tJZ %sdone", name)
	w("%sloop:", name)
	step := n * es // bytes a step of the panel
	l := 0
	for l < n {
		if es == 4 && n-l >= 4 {
			for r := range 4 {
				w("\tMOVUPS %s, X%d", rowAddr(l+r, 0), r)
			}
			w("\tMOVAPS X0, X4")
			w("\tUNPCKLPS X1, X4") // r0p0 r1p0 r0p1 r1p1
			w("\tUNPCKHPS X1, X0") // r0p2 r1p2 r0p3 r1p3
			w("\tMOVAPS X2, X5")
			w("\tUNPCKLPS X3, X5") // r2p0 r3p0 r2p1 r3p1
			w("\tUNPCKHPS X3, X2") // r2p2 r3p2 r2p3 r3p3
			w("\tMOVAPS X4, X6")
			w("\tMOVLHPS X5, X6") // step 0
			w("\tMOVHLPS X4, X5") // step 1
			w("\tMOVAPS X0, X7")
			w("\tMOVLHPS X2, X7") // step 2
			w("\tMOVHLPS X0, X2") // step 3
			for p, x := range []int{6, 5, 7, 2} {
				w("\tMOVUPS X%d, %d(DI)", x, p*step+l*es)
			}
			l += 4
			continue
		}
		// Two rows: their g steps interleaved, a step's pair in 8 (float32)
		// or 16 (float64) bytes.
		w("\tMOVUPS %s, X0", rowAddr(l, 0))
		w("\tMOVUPS %s, X1", rowAddr(l+1, 0))
		w("\tMOVAPS X0, X2")
		if es == 4 {
			w("\tUNPCKLPS X1, X2") // r0p0 r1p0 r0p1 r1p1
			w("\tUNPCKHPS X1, X0") // r0p2 r1p2 r0p3 r1p3
			w("\tMOVSD X2, %d(DI)", 0*step+l*es)
			w("\tMOVHPS X2, %d(DI)", 1*step+l*es)
			w("\tMOVSD X0, %d(DI)", 2*step+l*es)
			w("\tMOVHPS X0, %d(DI)", 3*step+l*es)
		} else {
			w("\tUNPCKLPD X1, X2") // r0p0 r1p0
			w("\tUNPCKHPD X1, X0") // r0p1 r1p1
			w("\tMOVUPS X2, %d(DI)", 0*step+l*es)
			w("\tMOVUPS X0, %d(DI)", 1*step+l*es)
		}
		l += 2
	}
	w("\tADDQ $16, SI")
	w("\tADDQ $16, R8")
	w("\tADDQ $16, R9")
	w("\tADDQ $%d, DI", g*step)
	w("\tDECQ CX")
	w("\tJNZ %sloop", name)
	w("%sdone:", name)
	w("\tRET")
}

func main() {
	setup("gen_sse2")
	lanes, ps, ss = 16/es, "P"+letter, "S"+letter
	w(`// Code generated by go run gen_sse2.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"

// The SSE2 micro-kernel of the blocked %[1]s (see sse2.go): C =
// alpha·A·B + beta·C (+ bias) for the first rows rows of a %[2]d×%[3]d tile,
// every column, from k steps of a packed panel of A (A(i, p) at
// a[p·ka + i]) and of B (NR = %[3]d values a step, ldb apart). The mask
// argument is not read: narrower tiles go through sse2Narrow.
`, strings.ToUpper(pkg[:1])+pkg[1:], mr, nv*lanes)
	kernel("sse2Kernel")
	w("")
	w("// sse2RowsA and sse2RowsB copy a panel that lies step by step in src")
	w("// (ld elements apart) into its packed form, %d or %d elements a step.", mr, nv*lanes)
	rowsCopy("sse2RowsA", mr)
	w("")
	rowsCopy("sse2RowsB", nv*lanes)
	w("")
	w("// sse2ColsA and sse2ColsB pack a panel whose lanes lie in rows of src,")
	w("// %d or %d lanes, %d steps a group.", mr, nv*lanes, lanes)
	colsCopy("sse2ColsA", mr)
	w("")
	colsCopy("sse2ColsB", nv*lanes)
	finish("kernel_sse2_amd64.s")
}
