//go:build ignore

// gen writes kernel_amd64.s: go run gen.go
package main

import (
	"fmt"
	"os"
	"strings"
)

// mr is the register tile's row count (see dgemm.go).
const mr = 12

var out strings.Builder

// vr names the vector registers of the kernel being written: "Z" (8
// float64), or "Y" (4) for the 4-wide kernels, whose 256-bit FMAs Zen 4
// issues at twice the rate of 512-bit ones.
var vr = "Z"

// vf replaces the vector register prefix V in format by vr.
func vf(format string) string {
	return strings.NewReplacer(" V%", " "+vr+"%", " V2", " "+vr+"2").Replace(format)
}

func w(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// aAddr is the address of A(i, p) within a k step: contiguous rows (AX plus
// 8i; AX advances by ka bytes a step) or strided rows (row 3q+r at
// (R10+q)(AX·r); the row pointers advance 8 bytes a step).
func aAddr(strided bool, i, p int) string {
	if !strided {
		return fmt.Sprintf("%d(AX)", 8*i)
	}
	q, r := i/3, i%3
	base := fmt.Sprintf("%d(R%d)", 8*p, 10+q)
	if r == 0 {
		return base
	}
	return fmt.Sprintf("%s(AX*%d)", base, r)
}

// step is one k step: load nv vectors of B (8 float64 each), one FMA per
// accumulator (rk rows) with the row's A value broadcast.
func step(strided bool, nv, rk, p int) {
	for v := range nv {
		w(vf("\tVMOVUPD.Z %d(BX), K%d, V%d"), v*64, v+1, 24+v)
	}
	for i := range rk {
		if nv == 1 {
			w(vf("\tVFMADD231PD.BCST %s, V%d, V%d"), aAddr(strided, i, p), 24, i)
			continue
		}
		// Broadcast once into a register for both vectors, rather than a
		// broadcast operand in each FMA loading it twice.
		bz := 26 + i%6
		w(vf("\tVBROADCASTSD %s, V%d"), aAddr(strided, i, p), bz)
		for v := range nv {
			w(vf("\tVFMADD231PD V%d, V%d, V%d"), bz, 24+v, i*nv+v)
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
	w("// func %s(k int, a *float64, %s int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64)", name, arg)
	w("TEXT ·%s(SB), NOSPLIT, $0-96", name)
	w("\tMOVQ k+0(FP), CX")
	w("\tMOVQ b+24(FP), BX")
	w("\tMOVQ ldb+32(FP), DX")
	w("\tSHLQ $3, DX")
	w("\tMOVQ c+40(FP), DI")
	w("\tMOVL mask+80(FP), R8")
	w("\tKMOVW R8, K1")
	if nv == 2 {
		w("\tSHRL $8, R8")
		w("\tKMOVW R8, K2")
	}
	// Prefetch the tile of C while the k steps run (as package sgemm's
	// kernels do): with a short k also the two tiles below it.
	w("\tMOVQ ldc+48(FP), SI")
	w("\tSHLQ $3, SI")
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
		w("\tSHLQ $3, AX")
		w("\tLEAQ (AX)(AX*2), R8")
		w("\tLEAQ (R10)(R8*1), R11")
		w("\tLEAQ (R11)(R8*1), R12")
		w("\tLEAQ (R12)(R8*1), R13")
	} else {
		w("\tMOVQ a+8(FP), AX")
		w("\tMOVQ ka+16(FP), R11")
		w("\tSHLQ $3, R11")
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
			w("\tADDQ $32, R%d", 10+q)
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
			w("\tADDQ $8, R%d", 10+q)
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
	w("\tMOVQ rows+72(FP), SI")
	w("\tMOVQ ldc+48(FP), DX")
	w("\tSHLQ $3, DX")
	w(vf("\tVBROADCASTSD alpha+56(FP), V26"))
	w(vf("\tVBROADCASTSD beta+64(FP), V27"))
	w("\tMOVQ beta+64(FP), R8")
	w("\tSHLQ $1, R8") // drop the sign: -0 is 0
	w("\tJZ store0")
	storeRows(nv, rk, func(i, v int) {
		w(vf("\tVMOVUPD.Z %d(DI), K%d, V%d"), 64*v, v+1, 28+v)
		w(vf("\tVMULPD V27, V%d, V%d"), 28+v, 28+v)
		w(vf("\tVFMADD231PD V26, V%d, V%d"), i*nv+v, 28+v)
		w(vf("\tVMOVUPD V%d, K%d, %d(DI)"), 28+v, v+1, 64*v)
	})
	w("\tJMP done")
	w("store0:")
	w("\tMOVQ bias+88(FP), R12")
	w("\tTESTQ R12, R12")
	w("\tJNZ storeb")
	storeRows(nv, rk, func(i, v int) {
		z := i*nv + v
		w(vf("\tVMULPD V26, V%d, V%d"), z, z)
		w(vf("\tVMOVUPD V%d, K%d, %d(DI)"), z, v+1, 64*v)
	})
	w("\tJMP done")
	w("storeb:")
	for v := range nv {
		w(vf("\tVMOVUPD.Z %d(R12), K%d, V%d"), 64*v, v+1, 28+v)
	}
	storeRows(nv, rk, func(i, v int) {
		z := i*nv + v
		w(vf("\tVFMADD213PD V%d, V26, V%d"), 28+v, z)
		w(vf("\tVMOVUPD V%d, K%d, %d(DI)"), z, v+1, 64*v)
	})
}

// edgeRows are the row counts of the edge kernels: the last panel of a
// block, of fewer than mr rows, runs the smallest kernel that covers it.
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
	kernel("kernP16", false, 2, mr)
	kernel("kernP8", false, 1, mr)
	kernel("kernS16", true, 2, mr)
	kernel("kernS8", true, 1, mr)
	for _, rk := range edgeRows {
		kernel(fmt.Sprintf("kernP16r%d", rk), false, 2, rk)
		kernel(fmt.Sprintf("kernP8r%d", rk), false, 1, rk)
	}
	vr = "Y"
	kernel("kernP4", false, 1, mr)
	kernel("kernS4", true, 1, mr)
	for _, rk := range edgeRows {
		kernel(fmt.Sprintf("kernP4r%d", rk), false, 1, rk)
	}
	vr = "Z"
	if err := os.WriteFile("kernel_amd64.s", []byte(out.String()), 0o644); err != nil {
		panic(err)
	}
}
