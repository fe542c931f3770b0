//go:build ignore

// gen_neon writes kernel_neon_arm64.s, the arm64 Advanced SIMD (NEON)
// micro-kernels of the blocked GEMM of package sgemm or dgemm (see their
// neon.go), into the current directory, as the packages' go:generate
// directives run it: go run ../gemm/gen_neon.go ../gemm/gen_common.go
// sgemm (or dgemm).
//
// The float32 register tile is 12 rows × 2 vectors of 4 lanes: with 32 V
// registers, 24 accumulators (V0–V23, row i's vector v in V(2i + v)), the
// 12 values of A of the current step in V24–V26 (4 lanes each) and the two
// vectors of B in V28 and V29. Each k step loads 3 vectors of A and 2 of
// B (two LD1s) for 24 FMLAs by element: FMLA Vd.4S, Vn.4S, Vm.S[i]
// multiplies a vector of B by lane i of a vector of A, so no value of A is
// broadcast. Go's assembler has only the vector form of FMLA (VFMLA) and no
// FMUL or FADD on vectors, so those three are WORDs, each with its
// mnemonic in a comment (the encodings are the Arm ARM's, checked against
// llvm-mc's disassembly). The float64 tile is 6 rows × 4 vectors of 2
// lanes (row i's vector v in V(4i + v), B's four vectors in V28–V31), with
// kernels of 8, 4 and 2 columns.
//
// The kernels read whole vectors of packed, zero-padded panels of A and B
// (the NEON driver packs every panel) and store C by whole vectors where
// the tile is whole; a partial tile (fewer rows, or fewer columns than the
// kernel's) is spilled to the frame and stored element by element, as
// NEON has no masked loads or stores.
package main

import (
	"fmt"
	"strings"
)

// The element's instructions and the tile, set by main.
var (
	shift  int    // log2(es)
	lanes  int    // elements a V register
	arr    string // the arrangement's element letter: V0.S4, V0.D[i]
	fsuf   string // the scalar instructions' suffix: FMOVS, FADDD
	double int    // the sz bit of the vector instructions' encodings
	lower  string // the arrangement in lower case, as in the comments: 4s
)

// mr is the register tile's row count (12 float32, 6 float64); edgeRows
// the row counts of the edge kernels, for the last panel of a block (fewer
// than mr rows): for float32 rows 1–4 run a kernel of 4, 5–8 one of 8
// (for float64 1–2 one of 2, 3–4 one of 4); widths the kernels' widths in
// vectors, the first the widest (8 columns).
var (
	mr       int
	edgeRows []int
	widths   []int
)

// tileBytes is the frame's spill area for a partial tile: mr rows of the
// widest kernel's vectors.
var tileBytes int

// The vector registers: accumulators V0–V23, A's vectors from V24, B's
// from V28; alpha in V24 and beta in V25 once the loop is done.
const (
	regA     = 24
	regB     = 28
	regAlpha = 24
	regBeta  = 25
)

// vreg names V register r with the element arrangement: V3.S4.
func vreg(r int) string { return fmt.Sprintf("V%d.%s%d", r, arr, lanes) }

// vlist is the register list [Vr, Vr+1, ...] of n registers.
func vlist(r, n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = vreg(r + i)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// lower is the arrangement as the Arm mnemonics write it: 4s, 2d.

// fmlaElem writes FMLA Vd, Vn, Vm[idx]: Vd += Vn · lane idx of Vm.
func fmlaElem(d, n, m, idx int) {
	word := 0x4f801000 | uint32(double)<<22 | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
	word |= elemIndex(idx)
	w("\tWORD\t$0x%08x // FMLA V%d.%s, V%d.%s, V%d.%s[%d]", word, d, lower, n, lower, m, strings.ToLower(arr), idx)
}

// fmulElem writes FMUL Vd, Vn, Vm[idx]: Vd = Vn · lane idx of Vm.
func fmulElem(d, n, m, idx int) {
	word := 0x4f809000 | uint32(double)<<22 | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
	word |= elemIndex(idx)
	w("\tWORD\t$0x%08x // FMUL V%d.%s, V%d.%s, V%d.%s[%d]", word, d, lower, n, lower, m, strings.ToLower(arr), idx)
}

// elemIndex encodes a lane index in the H:L bits (H alone for doubles).
func elemIndex(idx int) uint32 {
	if double == 1 {
		return uint32(idx) << 11
	}
	return uint32(idx>>1)<<11 | uint32(idx&1)<<21
}

// fadd writes FADD Vd, Vn, Vm (vectors).
func fadd(d, n, m int) {
	word := 0x4e20d400 | uint32(double)<<22 | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
	w("\tWORD\t$0x%08x // FADD V%d.%s, V%d.%s, V%d.%s", word, d, lower, n, lower, m, lower)
}

// stores writes VST1.P of the registers r..r+n-1 to (dst), in lists of at
// most 4, advancing dst.
func stores(r, n int, dst string) {
	for n > 0 {
		q := min(4, n)
		w("\tVST1.P\t%s, %d(%s)", vlist(r, q), 16*q, dst)
		r, n = r+q, n-q
	}
}

// kernel writes one micro-kernel: rk rows computed, nv vectors of B.
func kernel(name string, rk, nv int) {
	na := rk / lanes // A's vectors a step
	acc := func(i, v int) int { return i*nv + v }
	cols := nv * lanes
	w("// func %s(k int, a *%s, ka int, b *%s, ldb int, c *%s, ldc int, alpha, beta %s, rows int, mask uint32, bias *%s)", name, typ, typ, typ, typ, typ)
	w("TEXT ·%s(SB), NOSPLIT, $%d-%d", name, tileBytes, frame)
	w("\tMOVD\tk+0(FP), R0")
	w("\tMOVD\ta+8(FP), R1")
	w("\tMOVD\tka+16(FP), R2")
	w("\tMOVD\tb+24(FP), R3")
	w("\tMOVD\tldb+32(FP), R4")
	w("\tMOVD\tc+40(FP), R5")
	w("\tMOVD\tldc+48(FP), R6")
	w("\tMOVD\trows+%d(FP), R7", offRows)
	w("\tMOVWU\tmask+%d(FP), R8", offMask)
	w("\tMOVD\tbias+%d(FP), R9", offBias)
	w("\tLSL\t$%d, R2", shift)
	w("\tLSL\t$%d, R4", shift)
	w("\tLSL\t$%d, R6", shift)
	for r := range rk * nv {
		w("\tVEOR\tV%d.B16, V%d.B16, V%d.B16", r, r, r)
	}
	w("\tCBZ\tR0, done")
	w("loop:")
	w("\tVLD1.P\t(R1)(R2), %s", vlist(regA, na))
	w("\tVLD1.P\t(R3)(R4), %s", vlist(regB, nv))
	for i := range rk {
		for v := range nv {
			fmlaElem(acc(i, v), regB+v, regA+i/lanes, i%lanes)
		}
	}
	w("\tSUBS\t$1, R0")
	w("\tBNE\tloop")
	w("done:")
	// C = alpha·acc (+ beta·C or + bias).
	w("\tFMOV%s\talpha+%d(FP), F%d", fsuf, offAlpha, regAlpha)
	w("\tFMOV%s\tbeta+%d(FP), F%d", fsuf, offBeta, regBeta)
	for r := range rk * nv {
		fmulElem(r, r, regAlpha, 0)
	}
	w("\tCLZW\tR8, R8")
	w("\tMOVD\t$32, R10")
	w("\tSUB\tR8, R10, R8 // the columns stored, w")
	w("\tCMP\t$%d, R7", rk)
	w("\tBNE\tpartial")
	w("\tCMP\t$%d, R8", cols)
	w("\tBNE\tpartial")
	w("\tFCMP%s\t$(0.0), F%d", fsuf, regBeta)
	w("\tBEQ\tnobeta")
	for i := range rk {
		w("\tVLD1\t(R5), %s", vlist(regB, nv))
		for v := range nv {
			fmlaElem(acc(i, v), regB+v, regBeta, 0)
		}
		w("\tVST1.P\t%s, (R5)(R6)", vlist(acc(i, 0), nv))
	}
	w("\tRET")
	w("nobeta:")
	w("\tCBZ\tR9, store")
	w("\tVLD1\t(R9), %s", vlist(regB, nv))
	for i := range rk {
		for v := range nv {
			fadd(acc(i, v), acc(i, v), regB+v)
		}
	}
	w("store:")
	for i := range rk {
		w("\tVST1.P\t%s, (R5)(R6)", vlist(acc(i, 0), nv))
	}
	w("\tRET")
	// A partial tile: the accumulators to the frame, row i's column j at
	// tile + (i·cols + j)·es, then rows × w elements one by one.
	w("partial:")
	w("\tCBZ\tR7, end")
	w("\tCBZ\tR8, end")
	w("\tMOVD\t$tile-%d(SP), R10", tileBytes)
	w("\tMOVD\tR10, R11")
	stores(0, rk*nv, "R11")
	w("\tFCMP%s\t$(0.0), F%d", fsuf, regBeta)
	w("\tBEQ\tpnobeta")
	partialRows("pbeta", fmt.Sprintf("\tFMOV%s\t(R5)(R12<<%d), F1\n\tFMADD%s\tF%d, F0, F1, F0 // F0 += C·beta", fsuf, shift, fsuf, regBeta), cols)
	w("pnobeta:")
	w("\tCBZ\tR9, pplain")
	partialRows("pbias", fmt.Sprintf("\tFMOV%s\t(R9)(R12<<%d), F1\n\tFADD%s\tF1, F0", fsuf, shift, fsuf), cols)
	w("pplain:")
	partialRows("pstore", "", cols)
	w("end:")
	w("\tRET")
	w("")
}

// partialRows writes the loop storing rows R7 × w R8 elements of the tile
// at R10 (cols a row) to C at R5, applying op to F0 (C's element at
// (R5)(R12<<shift)) before each store.
func partialRows(label, op string, cols int) {
	w("%s_row:", label)
	w("\tMOVD\tZR, R12")
	w("%s_col:", label)
	w("\tFMOV%s\t(R10)(R12<<%d), F0", fsuf, shift)
	if op != "" {
		w("%s", op)
	}
	w("\tFMOV%s\tF0, (R5)(R12<<%d)", fsuf, shift)
	w("\tADD\t$1, R12")
	w("\tCMP\tR8, R12")
	w("\tBLT\t%s_col", label)
	w("\tADD\tR6, R5")
	w("\tADD\t$%d, R10", cols*es)
	w("\tSUBS\t$1, R7")
	w("\tBNE\t%s_row", label)
	w("\tRET")
}

// peak writes neonPeak: n rounds of 24 independent vector FMLAs.
func peak() {
	w("// func neonPeak(n int)")
	w("TEXT ·neonPeak(SB), NOSPLIT, $0-8")
	w("\tMOVD\tn+0(FP), R0")
	for r := range 24 {
		w("\tVEOR\tV%d.B16, V%d.B16, V%d.B16", r, r, r)
	}
	w("\tCBZ\tR0, done")
	w("loop:")
	for r := range 24 {
		w("\tVFMLA\t%s, %s, %s", vreg(30), vreg(31), vreg(r))
	}
	w("\tSUBS\t$1, R0")
	w("\tBNE\tloop")
	w("done:")
	w("\tRET")
}

func main() {
	setup("gen_neon")
	shift, lanes, arr, fsuf, double = es/4+1, 16/es, letter, letter, es/8
	lower = fmt.Sprintf("%d%s", lanes, strings.ToLower(arr))
	if mr, edgeRows, widths = 12, []int{4, 8}, []int{2, 1}; es == 8 {
		mr, edgeRows, widths = 6, []int{2, 4}, []int{4, 2, 1}
	}
	tileBytes = mr * widths[0] * 16
	w("// Code generated by gen_neon.go; DO NOT EDIT.")
	w("")
	w("//go:build !purego")
	w("")
	w("#include \"textflag.h\"")
	w("")
	for _, nv := range widths {
		name := fmt.Sprintf("neonP%d", nv*lanes)
		kernel(name, mr, nv)
		for _, rk := range edgeRows {
			kernel(fmt.Sprintf("%sr%d", name, rk), rk, nv)
		}
	}
	peak()
	finish("kernel_neon_arm64.s")
}
