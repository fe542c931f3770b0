//go:build ignore

// gen_avx512 writes kernel_amd64.s, the AVX-512 micro-kernels of the
// blocked GEMM of package sgemm or dgemm (see sgemm.go, dgemm.go), and for
// sgemm pack_amd64.s, its packing routines, into the current directory,
// as the packages' go:generate directives run it: go run
// ../gemm/gen_avx512.go ../gemm/gen_common.go sgemm (or dgemm). The files
// name it gen.go, the generator's name when each package had its own.
//
// The register tile is 12 rows × 2 vectors of 16 float32 or 8 float64
// (kernels of 1 vector too, and for float64 of a 4-wide YMM vector).
package main

import (
	"fmt"
	"strings"
)

// mr is the register tile's row count (see sgemm.go, dgemm.go).
const mr = 12

// shift is log2(es), set by main.
var shift int

// vr names the vector registers of the kernel being written: "Z" (16
// float32, 8 float64), or "Y" (4 float64) for dgemm's 4-wide kernels,
// whose 256-bit FMAs Zen 4 issues at twice the rate of 512-bit ones.
var vr = "Z"

// vf replaces the vector register prefix V in format by vr.
func vf(format string) string {
	return strings.NewReplacer(" V%", " "+vr+"%", " V2", " "+vr+"2").Replace(format)
}

// aAddr is the address of A(i, p) within a k step: contiguous rows (AX plus
// es·i; AX advances by ka bytes a step) or strided rows (row 3q+r at
// (R10+q)(AX·r); the row pointers advance es bytes a step).
func aAddr(strided bool, i, p int) string {
	if !strided {
		return fmt.Sprintf("%d(AX)", es*i)
	}
	q, r := i/3, i%3
	base := fmt.Sprintf("%d(R%d)", es*p, 10+q)
	if r == 0 {
		return base
	}
	return fmt.Sprintf("%s(AX*%d)", base, r)
}

// step is one k step: load nv vectors of B, one FMA per accumulator (rk
// rows) with the row's A value broadcast.
func step(strided bool, nv, rk, p int) {
	for v := range nv {
		w(vf("\tVMOVUP"+letter+".Z %d(BX), K%d, V%d"), v*64, v+1, 24+v)
	}
	for i := range rk {
		if nv == 1 {
			w(vf("\tVFMADD231P"+letter+".BCST %s, V%d, V%d"), aAddr(strided, i, p), 24, i)
			continue
		}
		// Broadcast once into a register for both vectors: an FMA with a
		// broadcast operand loads it again, and 24 loads a step, besides
		// B's two, are more than Intel's cores issue in the 12 cycles of
		// 24 FMAs.
		bz := 26 + i%6
		w(vf("\tVBROADCASTS"+letter+" %s, V%d"), aAddr(strided, i, p), bz)
		for v := range nv {
			w(vf("\tVFMADD231P"+letter+" V%d, V%d, V%d"), bz, 24+v, i*nv+v)
		}
	}
	if !strided {
		w("\tADDQ R11, AX")
	}
	w("\tADDQ DX, BX")
}

// header writes a kernel's entry: its arguments into registers, the
// column masks into K1 (and K2), the prefetches of C.
func header(name string, strided bool, nv, rk int) {
	arg := "ka"
	if strided {
		arg = "lda"
	}
	w("// func %[1]s(k int, a *%[3]s, %[2]s int, b *%[3]s, ldb int, c *%[3]s, ldc int, alpha, beta %[3]s, rows int, mask uint32, bias *%[3]s)", name, arg, typ)
	w("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	w("\tMOVQ k+0(FP), CX")
	w("\tMOVQ b+24(FP), BX")
	w("\tMOVQ ldb+32(FP), DX")
	w("\tSHLQ $%d, DX", shift)
	w("\tMOVQ c+40(FP), DI")
	w("\tMOVL mask+%d(FP), R8", offMask)
	w("\tKMOVW R8, K1")
	if nv == 2 {
		w("\tSHRL $%d, R8", 64/es)
		w("\tKMOVW R8, K2")
	}
	// Prefetch the tile of C while the k steps run: C is often memory no
	// cache holds (a tape's fresh buffer), and its lines would otherwise
	// arrive only as the stores wait for them. With a short k the steps
	// give too little lead: then also the two tiles below it (the
	// macro-kernel's next calls, mr and 2·mr rows down).
	w("\tMOVQ ldc+48(FP), SI")
	w("\tSHLQ $%d, SI", shift)
	w("\tMOVQ DI, R9")
	prefetchRows := func(n int) {
		for range n {
			for _, off := range cLineOffsets(nv) {
				w("\tPREFETCHT0 %d(R9)", off)
			}
			w("\tADDQ SI, R9")
		}
	}
	prefetchRows(rk)
	if rk == mr { // an edge kernel has no tiles below
		w("\tCMPQ CX, $%d", shortK)
		w("\tJAE prefetched")
		prefetchRows(2 * mr)
		w("prefetched:")
	}
	if strided {
		w("\tMOVQ a+8(FP), R10")
		w("\tMOVQ lda+16(FP), AX")
		w("\tSHLQ $%d, AX", shift)
		w("\tLEAQ (AX)(AX*2), R8")
		w("\tLEAQ (R10)(R8*1), R11")
		w("\tLEAQ (R11)(R8*1), R12")
		w("\tLEAQ (R12)(R8*1), R13")
	} else {
		w("\tMOVQ a+8(FP), AX")
		w("\tMOVQ ka+16(FP), R11")
		w("\tSHLQ $%d, R11", shift)
	}
}

// kernel writes a micro-kernel computing rk rows (mr, or fewer for the
// last panel of a block: see edgeRows) of nv vectors.
func kernel(name string, strided bool, nv, rk int) {
	header(name, strided, nv, rk)
	for z := range rk * nv {
		w("\tVPXORD Z%d, Z%d, Z%d", z, z, z)
	}
	w("\tMOVQ CX, R9")
	w("\tSHRQ $2, R9")
	w("\tANDQ $3, CX")
	w("\tTESTQ R9, R9")
	w("\tJZ tail")
	w("loop4:")
	for p := range 4 {
		step(strided, nv, rk, p)
	}
	if strided {
		for q := range 4 {
			w("\tADDQ $%d, R%d", 4*es, 10+q)
		}
	}
	w("\tDECQ R9")
	w("\tJNZ loop4")
	w("tail:")
	w("\tTESTQ CX, CX")
	w("\tJZ store")
	w("loop1:")
	step(strided, nv, rk, 0)
	if strided {
		for q := range 4 {
			w("\tADDQ $%d, R%d", es, 10+q)
		}
	}
	w("\tDECQ CX")
	w("\tJNZ loop1")
	w("store:")
	stores(nv, rk)
	w("done:")
	for z := 16; z < 32; z++ {
		w("\tVPXORD Z%d, Z%d, Z%d", z, z, z)
	}
	w("\tVZEROUPPER")
	w("\tRET")
	w("")
}

// stores writes the three ways a kernel stores its tile: alpha·acc +
// beta·C when beta ≠ 0, alpha·acc when beta = 0 (C not read), alpha·acc +
// bias[j] when beta = 0 and bias is not nil.
func stores(nv, rk int) {
	w("\tMOVQ rows+%d(FP), SI", offRows)
	w("\tMOVQ ldc+48(FP), DX")
	w("\tSHLQ $%d, DX", shift)
	w(vf("\tVBROADCASTS"+letter+" alpha+%d(FP), V26"), offAlpha)
	w(vf("\tVBROADCASTS"+letter+" beta+%d(FP), V27"), offBeta)
	if es == 4 {
		w("\tMOVL beta+%d(FP), R8", offBeta)
		w("\tANDL $0x7fffffff, R8")
	} else {
		w("\tMOVQ beta+%d(FP), R8", offBeta)
		w("\tSHLQ $1, R8")
	} // the sign dropped: -0 is 0
	w("\tJZ store0")
	storeRows(nv, rk, func(i, v int) {
		w(vf("\tVMOVUP"+letter+".Z %d(DI), K%d, V%d"), 64*v, v+1, 28+v)
		w(vf("\tVMULP"+letter+" V27, V%d, V%d"), 28+v, 28+v)
		w(vf("\tVFMADD231P"+letter+" V26, V%d, V%d"), i*nv+v, 28+v)
		w(vf("\tVMOVUP"+letter+" V%d, K%d, %d(DI)"), 28+v, v+1, 64*v)
	})
	w("\tJMP done")
	w("store0:")
	w("\tMOVQ bias+%d(FP), R12", offBias)
	w("\tTESTQ R12, R12")
	w("\tJNZ storeb")
	storeRows(nv, rk, func(i, v int) {
		z := i*nv + v
		w(vf("\tVMULP"+letter+" V26, V%d, V%d"), z, z)
		w(vf("\tVMOVUP"+letter+" V%d, K%d, %d(DI)"), z, v+1, 64*v)
	})
	w("\tJMP done")
	// With a bias: C[i, j] = alpha·acc + bias[j], the bias loaded once
	// through the column mask.
	w("storeb:")
	for v := range nv {
		w(vf("\tVMOVUP"+letter+".Z %d(R12), K%d, V%d"), 64*v, v+1, 28+v)
	}
	storeRows(nv, rk, func(i, v int) {
		z := i*nv + v
		w(vf("\tVFMADD213P"+letter+" V%d, V26, V%d"), 28+v, z)
		w(vf("\tVMOVUP"+letter+" V%d, K%d, %d(DI)"), z, v+1, 64*v)
	})
}

// edgeRows are the row counts of the edge kernels: the last panel of a
// block, of fewer than mr rows, runs the smallest kernel that covers it
// instead of computing all mr rows (a 50-row product: 52 rows computed,
// not 60).
var edgeRows = []int{4, 8}

// shortK is the k below which a kernel prefetches the two tiles of C
// below its own as well.
const shortK = 64

// cLineOffsets are the byte offsets, from a row's start, that touch each
// cache line of a row of the tile (nv vectors of 64 bytes, at any
// alignment).
func cLineOffsets(nv int) []int {
	if nv == 2 {
		return []int{0, 64, 127}
	}
	return []int{0, 63}
}

// storeRows writes the store of each of the tile's rk rows i and vectors v
// by store(i, v), moving DI to the next row and leaving when the rows (SI)
// run out.
func storeRows(nv, rk int, store func(i, v int)) {
	for i := range rk {
		for v := range nv {
			store(i, v)
		}
		if i < rk-1 {
			w("\tDECQ SI\n\tJZ done\n\tADDQ DX, DI")
		}
	}
}

func main() {
	setup("gen_avx512")
	shift = es/4 + 1
	wide, narrow := 2*64/es, 64/es // the kernels' widths in elements
	if pkg == "sgemm" {
		w(`// Code generated by go run gen.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 micro-kernels of the blocked SGEMM (see sgemm.go). Each computes
// a 12×NR tile of C (NR = 32 or 16) from k steps of A and of B (NR values
// a step, ldb apart: a packed panel, ldb = NR, or rows of B in place):
//
//	C[i, j] = alpha·Σ_p A(i, p)·b[p·ldb + j] + beta·C[i, j]
//
// for the first rows rows (1 to 12) and the columns j whose bit is set in
// mask (B is loaded through the same mask); C is not read when beta is 0,
// and then bias, when not nil, points to values added to each row
// (C[i, j] = alpha·Σ + bias[j]). The kernP kernels read A(i, p) at
// a[p·ka + i] (a packed panel, ka = 12, or a column block of a transposed A,
// ka = lda); the kernS kernels at a[i·lda + p] (rows of A in place). The
// accumulators are Z0–Z23 (row i in Z(2i), Z(2i+1)) or Z0–Z11; the
// kernP32rR and kernP16rR kernels are kernP32 and kernP16 computing only
// the first R rows (rows at most R), for the last panel of a block. Each A value
// is broadcast into one of Z26–Z31 for the two FMAs of its row (32 wide),
// or from memory into its FMA (16 wide). Before returning, the kernels zero
// Z16–Z31 and the upper halves of the rest (VZEROUPPER): dirty upper ZMM
// state slows later SSE code on Zen 5.
`)
	} else {
		w(`// Code generated by go run gen.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 micro-kernels of the blocked DGEMM (see dgemm.go). Each computes
// a 12×NR tile of C (NR = 16 or 8 float64) from k steps of A and of B (NR
// values a step, ldb apart: a packed panel, ldb = NR, or rows of B in
// place):
//
//	C[i, j] = alpha·Σ_p A(i, p)·b[p·ldb + j] + beta·C[i, j]
//
// for the first rows rows (1 to 12) and the columns j whose bit is set in
// mask (bits 0–7 the first vector, 8–15 the second; B is loaded through the
// same mask); C is not read when beta is 0, and then bias, when not nil,
// points to values added to each row (C[i, j] = alpha·Σ + bias[j]). The
// kernP kernels read A(i, p) at a[p·ka + i] (a packed panel, ka = 12, or a
// column block of a transposed A, ka = lda); the kernS kernels at
// a[i·lda + p] (rows of A in place). The accumulators are Z0–Z23 (row i in
// Z(2i), Z(2i+1)) or Z0–Z11; the kernP16rR and kernP8rR kernels are
// kernP16 and kernP8 computing only the first R rows (rows at most R), for
// the last panel of a block. Each A value is broadcast into one of Z26–Z31
// for the two FMAs of its row (16 wide), or from memory into its FMA (8
// wide). Before returning, the kernels zero Z16–Z31 and the upper halves of
// the rest (VZEROUPPER).
`)
	}
	kernel(fmt.Sprintf("kernP%d", wide), false, 2, mr)
	kernel(fmt.Sprintf("kernP%d", narrow), false, 1, mr)
	kernel(fmt.Sprintf("kernS%d", wide), true, 2, mr)
	kernel(fmt.Sprintf("kernS%d", narrow), true, 1, mr)
	for _, rk := range edgeRows {
		kernel(fmt.Sprintf("kernP%dr%d", wide, rk), false, 2, rk)
		kernel(fmt.Sprintf("kernP%dr%d", narrow, rk), false, 1, rk)
	}
	if pkg == "dgemm" {
		vr = "Y"
		kernel("kernP4", false, 1, mr)
		kernel("kernS4", true, 1, mr)
		for _, rk := range edgeRows {
			kernel(fmt.Sprintf("kernP4r%d", rk), false, 1, rk)
		}
		vr = "Z"
	}
	finish("kernel_amd64.s")
	if pkg == "sgemm" {
		out.Reset()
		packers()
		finish("pack_amd64.s")
	}
}

// packers writes pack_amd64.s: the two ways packPanel copies a panel.
func packers() {
	w(`// Code generated by go run gen.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"

// The packing routines of packPanel (see sgemm.go and pack_amd64.go).
`)
	// packRows: one masked load and store per 16 lanes and step.
	w("// func packRows(d *float32, s int, src *float32, ld int, kb int, lmask, smask uint32)")
	w("TEXT ·packRows(SB), NOSPLIT, $0-48")
	w("\tMOVQ d+0(FP), DI")
	w("\tMOVQ s+8(FP), DX")
	w("\tSHLQ $2, DX")
	w("\tMOVQ src+16(FP), SI")
	w("\tMOVQ ld+24(FP), BX")
	w("\tSHLQ $2, BX")
	w("\tMOVQ kb+32(FP), CX")
	w("\tMOVL lmask+40(FP), R8")
	w("\tKMOVW R8, K1")
	w("\tSHRL $16, R8")
	w("\tKMOVW R8, K2")
	w("\tMOVL smask+44(FP), R8")
	w("\tKMOVW R8, K3")
	w("\tSHRL $16, R8")
	w("\tKMOVW R8, K4")
	w("\tTESTL R8, R8")
	w("\tJZ one")
	w("two:")
	w("\tVMOVUPS.Z (SI), K1, Z0")
	w("\tVMOVUPS.Z 64(SI), K2, Z1")
	w("\tVMOVUPS Z0, K3, (DI)")
	w("\tVMOVUPS Z1, K4, 64(DI)")
	w("\tADDQ BX, SI")
	w("\tADDQ DX, DI")
	w("\tDECQ CX")
	w("\tJNZ two")
	w("\tJMP done")
	w("one:")
	w("\tVMOVUPS.Z (SI), K1, Z0")
	w("\tVMOVUPS Z0, K3, (DI)")
	w("\tADDQ BX, SI")
	w("\tADDQ DX, DI")
	w("\tDECQ CX")
	w("\tJNZ one")
	w("done:")
	w("\tVZEROUPPER")
	w("\tRET")
	w("")

	// trans16: load up to 16 rows (the rest zero), transpose 16×16 in
	// registers, store the first cols columns as rows of d.
	w("// func trans16(d *float32, ds int, src *float32, ss int, rows, cols int, lmask, smask uint32)")
	w("TEXT ·trans16(SB), NOSPLIT, $0-56")
	w("\tMOVQ d+0(FP), DI")
	w("\tMOVQ ds+8(FP), DX")
	w("\tSHLQ $2, DX")
	w("\tMOVQ src+16(FP), SI")
	w("\tMOVQ ss+24(FP), BX")
	w("\tSHLQ $2, BX")
	w("\tMOVQ rows+32(FP), CX")
	w("\tMOVL lmask+48(FP), R8")
	w("\tKMOVW R8, K1")
	w("\tMOVL smask+52(FP), R8")
	w("\tKMOVW R8, K2")
	for z := range 16 {
		w("\tVPXORD Z%d, Z%d, Z%d", z, z, z)
	}
	for r := range 16 {
		w("\tVMOVUPS.Z (SI), K1, Z%d", r)
		if r < 15 {
			w("\tDECQ CX\n\tJZ transpose\n\tADDQ BX, SI")
		}
	}
	w("transpose:")
	// Rows r0..r15 in Z0..Z15. Interleave pairs of rows by 32 bits ...
	for q := range 8 {
		w("\tVUNPCKLPS Z%d, Z%d, Z%d", 2*q+1, 2*q, 16+2*q)
		w("\tVUNPCKHPS Z%d, Z%d, Z%d", 2*q+1, 2*q, 17+2*q)
	}
	// ... then pairs of pairs by 64 bits: Z(4g+j) holds, in 128-bit lane
	// k, column 4k+j of rows 4g..4g+3 ...
	for g := range 4 {
		t := 16 + 4*g
		w("\tVUNPCKLPD Z%d, Z%d, Z%d", t+2, t, 4*g)
		w("\tVUNPCKHPD Z%d, Z%d, Z%d", t+2, t, 4*g+1)
		w("\tVUNPCKLPD Z%d, Z%d, Z%d", t+3, t+1, 4*g+2)
		w("\tVUNPCKHPD Z%d, Z%d, Z%d", t+3, t+1, 4*g+3)
	}
	// ... then gather the 128-bit lanes: column c ends in Z(c).
	for j := range 4 {
		w("\tVSHUFF32X4 $0x88, Z%d, Z%d, Z%d", 4+j, j, 16+4*j)
		w("\tVSHUFF32X4 $0xDD, Z%d, Z%d, Z%d", 4+j, j, 17+4*j)
		w("\tVSHUFF32X4 $0x88, Z%d, Z%d, Z%d", 12+j, 8+j, 18+4*j)
		w("\tVSHUFF32X4 $0xDD, Z%d, Z%d, Z%d", 12+j, 8+j, 19+4*j)
	}
	for j := range 4 {
		a, b, c, d := 16+4*j, 17+4*j, 18+4*j, 19+4*j
		w("\tVSHUFF32X4 $0x88, Z%d, Z%d, Z%d", c, a, j)
		w("\tVSHUFF32X4 $0xDD, Z%d, Z%d, Z%d", c, a, 8+j)
		w("\tVSHUFF32X4 $0x88, Z%d, Z%d, Z%d", d, b, 4+j)
		w("\tVSHUFF32X4 $0xDD, Z%d, Z%d, Z%d", d, b, 12+j)
	}
	w("\tMOVQ cols+40(FP), CX")
	for c := range 16 {
		w("\tVMOVUPS Z%d, K2, (DI)", c)
		if c < 15 {
			w("\tDECQ CX\n\tJZ done\n\tADDQ DX, DI")
		}
	}
	w("done:")
	for z := 16; z < 32; z++ {
		w("\tVPXORD Z%d, Z%d, Z%d", z, z, z)
	}
	w("\tVZEROUPPER")
	w("\tRET")
}
