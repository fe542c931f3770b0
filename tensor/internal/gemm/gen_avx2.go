//go:build ignore

// gen_avx2 writes kernel_avx2_amd64.s, the AVX2 micro-kernels of the
// blocked GEMM of package sgemm or dgemm (see their avx2.go), into the
// current directory, as the packages' go:generate directives run it: go
// run ../gemm/gen_avx2.go ../gemm/gen_common.go sgemm (or dgemm).
//
// The register tile is mr × 2 vectors (6×16 float32, 6×8 float64): with
// 16 YMM registers, 12 accumulators (6 rows of two vectors), the two
// vectors of B of the current step, one register for the broadcast A
// value and one for the column mask of a partial last vector. Each k step
// loads 2 vectors of B and broadcasts 6 values of A for 12 FMAs: 8 loads,
// within the two a cycle that Haswell and Zen 3 issue beside their two
// FMAs a cycle.
package main

import (
	"fmt"
	"strings"
)

// The element's instructions, set by main: lanes elements a YMM
// register, ps the packed instructions' suffix (PS or PD), ss the
// broadcast's (SS or SD).
var (
	lanes  int
	ps, ss string
)

// mr is the register tile's row count; edgeRows the row counts of the edge
// kernels, for the last panel of a block (fewer than mr rows): rows 1–2
// run a kernel of 2, 3–4 one of 4.
const mr = 6

var edgeRows = []int{2, 4}

// shortK is the k below which a full-height kernel prefetches the two
// tiles of C below its own as well (as the AVX-512 kernels do).
const shortK = 64

// The vector registers: accumulators Y0–Y11 (row i, vector v in
// Y(i·nv + v)), B's vectors Y12 and Y13, the broadcast A value Y14, the
// mask of the last vector Y15.
const (
	yB     = 12
	yA     = 14
	yMask  = 15
	vBytes = 32 // bytes a vector
)

// kern is one micro-kernel: strided reads A by rows in place
// (a[i·lda + p]), else a[p·ka + i]; nv vectors of B a step; rk rows
// computed.
type kern struct {
	name    string
	strided bool
	nv, rk  int
}

// aAddr is the address of A(i, p) in the p-th step of an unrolled group:
// packed, AX plus es·i at step p of (AX), (AX)(R11·1), (AX)(R11·2),
// (AX)(R13·1) (R11 = ka, R13 = 3·ka in bytes); strided, row 3q+r at
// (R10 or R11)(AX·r) plus es·p (AX = lda in bytes; the row pointers move
// on after each group).
func aAddr(strided bool, i, p int) string {
	if strided {
		base := []string{"R10", "R11"}[i/3]
		if r := i % 3; r > 0 {
			return fmt.Sprintf("%d(%s)(AX*%d)", es*p, base, r)
		}
		return fmt.Sprintf("%d(%s)", es*p, base)
	}
	return fmt.Sprintf("%d(AX)%s", es*i, []string{"", "(R11*1)", "(R11*2)", "(R13*1)"}[p])
}

// bAddr is the address of B's vector v in the p-th step of an unrolled
// group: (BX), (BX)(DX·1), (BX)(DX·2), (BX)(R12·1) (DX = ldb, R12 = 3·ldb
// in bytes).
func bAddr(v, p int) string {
	return fmt.Sprintf("%d(BX)%s", vBytes*v, []string{"", "(DX*1)", "(DX*2)", "(R12*1)"}[p])
}

// load writes the load of a vector from addr into register y: masked
// (VMASKMOV, lanes off read as 0 and never touched) when masked.
func load(masked bool, addr string, y int) {
	if masked {
		w("\tVMASKMOV%s %s, Y%d, Y%d", ps, addr, yMask, y)
		return
	}
	w("\tVMOVU%s %s, Y%d", ps, addr, y)
}

// store writes the store of register y to addr, masked when masked.
func store(masked bool, y int, addr string) {
	if masked {
		w("\tVMASKMOV%s Y%d, Y%d, %s", ps, y, yMask, addr)
		return
	}
	w("\tVMOVU%s Y%d, %s", ps, y, addr)
}

// step is k step p of an unrolled group: B's nv vectors (the last masked
// when lastMasked), then each row's A value broadcast and its FMAs.
func (k kern) step(lastMasked bool, p int) {
	for v := range k.nv {
		load(lastMasked && v == k.nv-1, bAddr(v, p), yB+v)
	}
	for i := range k.rk {
		w("\tVBROADCAST%s %s, Y%d", ss, aAddr(k.strided, i, p), yA)
		for v := range k.nv {
			w("\tVFMADD231%s Y%d, Y%d, Y%d", ps, yA, yB+v, i*k.nv+v)
		}
	}
}

// body writes the k loop and the stores of the tile, with the last
// vector of B and C loaded and stored through the mask in Y15 when
// masked; sfx makes its labels unique.
func (k kern) body(masked bool, sfx string) {
	w("\tMOVQ CX, R9")
	w("\tSHRQ $2, R9")
	w("\tANDQ $3, CX")
	w("\tTESTQ R9, R9")
	w("\tJZ tail%s", sfx)
	w("loop4%s:", sfx)
	for p := range 4 {
		k.step(masked, p)
	}
	if k.strided {
		w("\tADDQ $%d, R10", 4*es)
		w("\tADDQ $%d, R11", 4*es)
	} else {
		w("\tLEAQ (AX)(R11*4), AX")
	}
	w("\tLEAQ (BX)(DX*4), BX")
	w("\tDECQ R9")
	w("\tJNZ loop4%s", sfx)
	w("tail%s:", sfx)
	w("\tTESTQ CX, CX")
	w("\tJZ store%s", sfx)
	w("loop1%s:", sfx)
	k.step(masked, 0)
	if k.strided {
		w("\tADDQ $%d, R10", es)
		w("\tADDQ $%d, R11", es)
	} else {
		w("\tADDQ R11, AX")
	}
	w("\tADDQ DX, BX")
	w("\tDECQ CX")
	w("\tJNZ loop1%s", sfx)
	w("store%s:", sfx)
	k.stores(masked, sfx)
}

// stores writes the three ways a kernel stores its tile: alpha·acc +
// beta·C when beta ≠ 0, alpha·acc when beta = 0 (C not read), alpha·acc +
// bias[j] when beta = 0 and bias is not nil. Y12 holds alpha, Y13 beta or
// the first vector of the bias, Y14 C's vector or the bias's second.
func (k kern) stores(masked bool, sfx string) {
	last := func(v int) bool { return masked && v == k.nv-1 }
	w("\tMOVQ rows+%d(FP), SI", offRows)
	w("\tMOVQ ldc+48(FP), DX")
	w("\tSHLQ $%d, DX", shift())
	w("\tVBROADCAST%s alpha+%d(FP), Y12", ss, offAlpha)
	if es == 4 {
		w("\tMOVL beta+%d(FP), R8", offBeta)
		w("\tANDL $0x7fffffff, R8") // -0 is 0
	} else {
		w("\tMOVQ beta+%d(FP), R8", offBeta)
		w("\tSHLQ $1, R8") // drop the sign: -0 is 0
	}
	w("\tJZ zero%s", sfx)
	w("\tVBROADCAST%s beta+%d(FP), Y13", ss, offBeta)
	k.storeRows(sfx, func(i, v int) {
		addr := fmt.Sprintf("%d(DI)", vBytes*v)
		load(last(v), addr, 14)
		w("\tVMUL%s Y13, Y14, Y14", ps)
		w("\tVFMADD231%s Y12, Y%d, Y14", ps, i*k.nv+v)
		store(last(v), 14, addr)
	})
	w("\tJMP done%s", sfx)
	w("zero%s:", sfx)
	w("\tMOVQ bias+%d(FP), R12", offBias)
	w("\tTESTQ R12, R12")
	w("\tJNZ bias%s", sfx)
	k.storeRows(sfx, func(i, v int) {
		y := i*k.nv + v
		w("\tVMUL%s Y12, Y%d, Y%d", ps, y, y)
		store(last(v), y, fmt.Sprintf("%d(DI)", vBytes*v))
	})
	w("\tJMP done%s", sfx)
	// With a bias: C[i, j] = alpha·acc + bias[j], the bias loaded once.
	w("bias%s:", sfx)
	for v := range k.nv {
		load(last(v), fmt.Sprintf("%d(R12)", vBytes*v), 13+v)
	}
	k.storeRows(sfx, func(i, v int) {
		y := i*k.nv + v
		w("\tVFMADD213%s Y%d, Y12, Y%d", ps, 13+v, y)
		store(last(v), y, fmt.Sprintf("%d(DI)", vBytes*v))
	})
	w("done%s:", sfx)
	w("\tVZEROUPPER")
	w("\tRET")
}

// storeRows writes the store of each of the tile's rows i and vectors v
// by st(i, v), moving DI to the next row and leaving when the rows (SI)
// run out.
func (k kern) storeRows(sfx string, st func(i, v int)) {
	for i := range k.rk {
		for v := range k.nv {
			st(i, v)
		}
		if i < k.rk-1 {
			w("\tDECQ SI")
			w("\tJZ done%s", sfx)
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

// write writes the kernel: its entry (arguments, prefetches of C, zeroed
// accumulators), then a body with every vector of B and C whole when the
// last vector's lanes are all in mask, else one with that vector masked.
func (k kern) write() {
	arg := "ka"
	if k.strided {
		arg = "lda"
	}
	w("// func %s(k int, a *%s, %s int, b *%s, ldb int, c *%s, ldc int, alpha, beta %s, rows int, mask uint32, bias *%s)",
		k.name, typ, arg, typ, typ, typ, typ)
	w("TEXT ·%s(SB), NOSPLIT, $0-%d", k.name, frame)
	w("\tMOVQ k+0(FP), CX")
	w("\tMOVQ b+24(FP), BX")
	w("\tMOVQ ldb+32(FP), DX")
	w("\tSHLQ $%d, DX", shift())
	w("\tLEAQ (DX)(DX*2), R12")
	w("\tMOVQ c+40(FP), DI")
	// Prefetch the tile of C while the k steps run (C is often a fresh
	// buffer no cache holds); with a short k also the two tiles below.
	w("\tMOVQ ldc+48(FP), SI")
	w("\tSHLQ $%d, SI", shift())
	w("\tMOVQ DI, R9")
	prefetchRows := func(n int) {
		for range n {
			w("\tPREFETCHT0 (R9)")
			w("\tPREFETCHT0 %d(R9)", vBytes*k.nv-1)
			w("\tADDQ SI, R9")
		}
	}
	prefetchRows(k.rk)
	if k.rk == mr {
		w("\tCMPQ CX, $%d", shortK)
		w("\tJAE prefetched")
		prefetchRows(2 * mr)
		w("prefetched:")
	}
	if k.strided {
		w("\tMOVQ a+8(FP), R10")
		w("\tMOVQ lda+16(FP), AX")
		w("\tSHLQ $%d, AX", shift())
		w("\tLEAQ (AX)(AX*2), R11")
		w("\tADDQ R10, R11")
	} else {
		w("\tMOVQ a+8(FP), AX")
		w("\tMOVQ ka+16(FP), R11")
		w("\tSHLQ $%d, R11", shift())
		w("\tLEAQ (R11)(R11*2), R13")
	}
	for y := range k.rk * k.nv {
		w("\tVXORPS Y%d, Y%d, Y%d", y, y, y)
	}
	// The last vector's lanes of mask: all set, or a mask vector of them.
	w("\tMOVL mask+%d(FP), R8", offMask)
	if k.nv > 1 {
		w("\tSHRL $%d, R8", lanes*(k.nv-1))
	}
	w("\tANDL $%#x, R8", 1<<lanes-1)
	w("\tCMPL R8, $%#x", 1<<lanes-1)
	w("\tJNE partial")
	k.body(false, "")
	w("partial:")
	maskVector(yMask)
	k.body(true, "m")
	w("")
}

// maskVector writes the building of the vector mask in register y from
// the lane bits in R8.
func maskVector(y int) {
	if es == 4 {
		w("\tVMOVD R8, X%d", y)
		w("\tVPBROADCASTD X%d, Y%d", y, y)
		w("\tVPAND lanebits<>(SB), Y%d, Y%d", y, y)
		w("\tVPCMPEQD lanebits<>(SB), Y%d, Y%d", y, y)
		return
	}
	w("\tVMOVQ R8, X%d", y)
	w("\tVPBROADCASTQ X%d, Y%d", y, y)
	w("\tVPAND lanebits<>(SB), Y%d, Y%d", y, y)
	w("\tVPCMPEQQ lanebits<>(SB), Y%d, Y%d", y, y)
}

// rows writes avx2Rows, the packing of a panel whose steps lie in rows of
// the source: kb steps of up to two vectors, the lanes in lmask loaded
// (the rest read as 0), those in smask stored; whole vectors when both
// masks are full.
func rows() {
	full := 1<<lanes - 1
	w("// avx2Rows packs a panel whose steps lie in rows of the source (see")
	w("// packPanelAVX2).")
	w("// func avx2Rows(d *%s, s int, src *%s, ld int, kb int, lmask, smask uint32)", typ, typ)
	w("TEXT ·avx2Rows(SB), NOSPLIT, $0-48")
	w("\tMOVQ d+0(FP), DI")
	w("\tMOVQ s+8(FP), DX")
	w("\tSHLQ $%d, DX", shift())
	w("\tMOVQ src+16(FP), SI")
	w("\tMOVQ ld+24(FP), BX")
	w("\tSHLQ $%d, BX", shift())
	w("\tMOVQ kb+32(FP), CX")
	w("\tMOVL lmask+40(FP), R9")
	w("\tMOVL smask+44(FP), R10")
	w("\tCMPL R10, $%#x", full)
	w("\tJA two")
	// One vector: whole, or through the masks in Y14 (load), Y15 (store).
	w("\tCMPL R9, R10")
	w("\tJNE onemasked")
	w("\tCMPL R10, $%#x", full)
	w("\tJNE onemasked")
	w("one:")
	w("\tVMOVU%s (SI), Y0", ps)
	w("\tVMOVU%s Y0, (DI)", ps)
	w("\tADDQ BX, SI")
	w("\tADDQ DX, DI")
	w("\tDECQ CX")
	w("\tJNZ one")
	w("\tJMP done")
	w("onemasked:")
	w("\tMOVL R9, R8")
	maskVector(14)
	w("\tMOVL R10, R8")
	maskVector(15)
	w("onem:")
	w("\tVMASKMOV%s (SI), Y14, Y0", ps)
	w("\tVMASKMOV%s Y0, Y15, (DI)", ps)
	w("\tADDQ BX, SI")
	w("\tADDQ DX, DI")
	w("\tDECQ CX")
	w("\tJNZ onem")
	w("\tJMP done")
	// Two vectors: whole, or the first loaded through lmask's mask in Y12
	// and stored whole (s is more than a vector's lanes), the second
	// through the masks in Y14, Y15.
	w("two:")
	w("\tCMPL R9, R10")
	w("\tJNE twomasked")
	w("\tCMPL R10, $%#x", 1<<(2*lanes)-1)
	w("\tJNE twomasked")
	w("twoloop:")
	w("\tVMOVU%s (SI), Y0", ps)
	w("\tVMOVU%s %d(SI), Y1", ps, vBytes)
	w("\tVMOVU%s Y0, (DI)", ps)
	w("\tVMOVU%s Y1, %d(DI)", ps, vBytes)
	w("\tADDQ BX, SI")
	w("\tADDQ DX, DI")
	w("\tDECQ CX")
	w("\tJNZ twoloop")
	w("\tJMP done")
	w("twomasked:")
	w("\tMOVL R9, R8")
	maskVector(12)
	w("\tMOVL R9, R8")
	w("\tSHRL $%d, R8", lanes)
	maskVector(14)
	w("\tMOVL R10, R8")
	w("\tSHRL $%d, R8", lanes)
	maskVector(15)
	w("twom:")
	w("\tVMASKMOV%s (SI), Y12, Y0", ps)
	w("\tVMASKMOV%s %d(SI), Y14, Y1", ps, vBytes)
	w("\tVMOVU%s Y0, (DI)", ps)
	w("\tVMASKMOV%s Y1, Y15, %d(DI)", ps, vBytes)
	w("\tADDQ BX, SI")
	w("\tADDQ DX, DI")
	w("\tDECQ CX")
	w("\tJNZ twom")
	w("done:")
	w("\tVZEROUPPER")
	w("\tRET")
	w("")
}

// trans writes avx2Trans, the packing of a panel whose lanes lie in rows
// of the source: up to a vector's lanes of rows (the rest read as 0), each
// of cols values (those in lmask: whole when it is full, else through the
// mask), transposed in registers, and the first cols columns stored as
// rows of d (the lanes in smask: whole when it is full, else masked).
func trans() {
	full := 1<<lanes - 1
	w("// avx2Trans packs a block of a panel whose lanes lie in rows of the")
	w("// source (see packPanelAVX2): d[c·ds + r] = src[r·ss + c].")
	w("// func avx2Trans(d *%s, ds int, src *%s, ss int, rows, cols int, lmask, smask uint32)", typ, typ)
	w("TEXT ·avx2Trans(SB), NOSPLIT, $0-56")
	w("\tMOVQ d+0(FP), DI")
	w("\tMOVQ ds+8(FP), DX")
	w("\tSHLQ $%d, DX", shift())
	w("\tMOVQ src+16(FP), SI")
	w("\tMOVQ ss+24(FP), BX")
	w("\tSHLQ $%d, BX", shift())
	w("\tMOVQ rows+32(FP), CX")
	for y := range lanes {
		w("\tVXORPS Y%d, Y%d, Y%d", y, y, y)
	}
	w("\tMOVL lmask+48(FP), R8")
	w("\tCMPL R8, $%#x", full)
	w("\tJNE loadmasked")
	loads := func(masked bool) {
		for r := range lanes {
			load(masked, "(SI)", r)
			if r < lanes-1 {
				w("\tDECQ CX")
				w("\tJZ transpose")
				w("\tADDQ BX, SI")
			}
		}
		w("\tJMP transpose")
	}
	loads(false)
	w("loadmasked:")
	maskVector(yMask)
	loads(true)
	w("transpose:")
	// cols[c] writes column c of the block into Y8 from the rows.
	var col func(c int)
	if lanes == 8 {
		// Pairs of rows interleaved by 32 bits (Y8–Y15), then by 64 bits
		// (Y0–Y7: Y(4h+j) holds column j of rows 4h..4h+3 in its low
		// half, column j+4 in its high half); a column is then the halves
		// of Y(j) and Y(4+j).
		for q := range 4 {
			w("\tVUNPCKLPS Y%d, Y%d, Y%d", 2*q+1, 2*q, 8+2*q)
			w("\tVUNPCKHPS Y%d, Y%d, Y%d", 2*q+1, 2*q, 9+2*q)
		}
		for h := range 2 {
			t := 8 + 4*h
			w("\tVSHUFPS $0x44, Y%d, Y%d, Y%d", t+2, t, 4*h)
			w("\tVSHUFPS $0xEE, Y%d, Y%d, Y%d", t+2, t, 4*h+1)
			w("\tVSHUFPS $0x44, Y%d, Y%d, Y%d", t+3, t+1, 4*h+2)
			w("\tVSHUFPS $0xEE, Y%d, Y%d, Y%d", t+3, t+1, 4*h+3)
		}
		col = func(c int) {
			imm := 0x20
			if c >= 4 {
				imm = 0x31
			}
			w("\tVPERM2F128 $%#x, Y%d, Y%d, Y8", imm, 4+c%4, c%4)
		}
	} else {
		// Pairs of rows interleaved by 64 bits (Y4–Y7: Y(4+j) holds
		// columns j and j+2 of rows 0 and 1, Y(6+j) of rows 2 and 3); a
		// column is then halves of Y(4+j) and Y(6+j).
		w("\tVUNPCKLPD Y1, Y0, Y4")
		w("\tVUNPCKHPD Y1, Y0, Y5")
		w("\tVUNPCKLPD Y3, Y2, Y6")
		w("\tVUNPCKHPD Y3, Y2, Y7")
		col = func(c int) {
			imm := 0x20
			if c >= 2 {
				imm = 0x31
			}
			w("\tVPERM2F128 $%#x, Y%d, Y%d, Y8", imm, 6+c%2, 4+c%2)
		}
	}
	w("\tMOVQ cols+40(FP), CX")
	w("\tMOVL smask+52(FP), R8")
	w("\tCMPL R8, $%#x", full)
	w("\tJNE storemasked")
	stores := func(masked bool) {
		for c := range lanes {
			col(c)
			store(masked, 8, "(DI)")
			if c < lanes-1 {
				w("\tDECQ CX")
				w("\tJZ done")
				w("\tADDQ DX, DI")
			}
		}
		w("\tJMP done")
	}
	stores(false)
	w("storemasked:")
	maskVector(yMask)
	stores(true)
	w("done:")
	w("\tVZEROUPPER")
	w("\tRET")
	w("")
}

// peak writes fmaPeakAVX2: n rounds of 12 independent FMAs of a vector on
// registers, the ceiling of the AVX2 kernels.
func peak() {
	w("// func fmaPeakAVX2(n int)")
	w("TEXT ·fmaPeakAVX2(SB), NOSPLIT, $0-8")
	w("\tMOVQ n+0(FP), CX")
	for y := 0; y < 16; y++ {
		w("\tVXORPS Y%d, Y%d, Y%d", y, y, y)
	}
	w("\tTESTQ CX, CX")
	w("\tJLE done")
	w("loop:")
	for y := range 12 {
		w("\tVFMADD231%s Y14, Y15, Y%d", ps, y)
	}
	w("\tDECQ CX")
	w("\tJNZ loop")
	w("done:")
	w("\tVZEROUPPER")
	w("\tRET")
}

func main() {
	setup("gen_avx2")
	lanes, ps, ss = 32/es, "P"+letter, "S"+letter
	wide, narrow := 2*lanes, lanes
	w(`// Code generated by go run gen_avx2.go; DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"

// AVX2 micro-kernels of the blocked %[1]s (see avx2.go). Each computes a
// tile of up to %[2]d rows and NR = %[3]d or %[4]d columns of C from k steps of A and
// of B (NR values a step, ldb apart: a packed panel, ldb = NR, or rows of
// B in place):
//
//	C[i, j] = alpha·Σ_p A(i, p)·b[p·ldb + j] + beta·C[i, j]
//
// for the first rows rows and the columns j whose bit is set in mask (a
// run of lanes from 0, more than %[4]d for the %[3]d-wide kernels); C is not read
// when beta is 0 (or -0), and then bias, when not nil, points to values
// added to each row (C[i, j] = alpha·Σ + bias[j]). The avx2P kernels read
// A(i, p) at a[p·ka + i] (a packed panel, ka = %[2]d, or a column block of a
// transposed A, ka = lda); the avx2S kernels at a[i·lda + p] (rows of A in
// place). The accumulators are Y0–Y11 (row i in Y(2i), Y(2i+1)) or Y0–Y5;
// the avx2P%[3]drR and avx2P%[4]drR kernels compute only the first R rows (rows
// at most R), for the last panel of a block. When the last vector of the
// tile has lanes outside mask, it is loaded from B and C and stored
// through VMASKMOV%[5]s with the mask in Y15 (built from mask and lanebits),
// so that no element past the tile is read or written; else every vector
// moves whole.
`, strings.TrimSuffix(strings.ToUpper(pkg), "GEMM")+"GEMM", mr, wide, narrow, ps)
	w("// lanebits are the bits of a vector's lanes in mask.")
	for l := range lanes {
		w("DATA lanebits<>+%d(SB)/%d, $%d", es*l, es, 1<<l)
	}
	w("GLOBL lanebits<>(SB), RODATA|NOPTR, $%d", vBytes)
	w("")
	kerns := []kern{
		{fmt.Sprintf("avx2P%d", wide), false, 2, mr},
		{fmt.Sprintf("avx2P%d", narrow), false, 1, mr},
		{fmt.Sprintf("avx2S%d", wide), true, 2, mr},
		{fmt.Sprintf("avx2S%d", narrow), true, 1, mr},
	}
	for _, rk := range edgeRows {
		kerns = append(kerns,
			kern{fmt.Sprintf("avx2P%dr%d", wide, rk), false, 2, rk},
			kern{fmt.Sprintf("avx2P%dr%d", narrow, rk), false, 1, rk})
	}
	for _, k := range kerns {
		k.write()
	}
	rows()
	trans()
	peak()
	finish("kernel_avx2_amd64.s")
}
