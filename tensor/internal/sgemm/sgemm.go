// Package sgemm is a float32 GEMM for amd64: the blocked algorithm of Goto
// and van de Geijn (as in BLIS) around micro-kernels in Go assembly, for
// AVX-512 and for AVX2 with FMA, the kernel path that package isa decides
// (isa.Current). On the generic path — elsewhere, in the purego build, or
// forced by ADAMNODE_CPU=generic — it is gonum's Sgemm.
//
// On the AVX-512 path Sgemm packs B, a KC×NC block at a time, into panels
// of 32 columns (the last one 16 when at most 16 remain) and A, an MC×KC
// block at a time, into panels of 12 rows, both zero-padded; a 12×32 (or
// 12×16) kernel with the accumulators in ZMM registers then computes each
// tile of C, storing partial tiles at the edges through masks (a block's
// last panel of A, of fewer than 12 rows, runs a kernel of 4 or 8 rows
// where that covers it). Each kernel prefetches its tile of C on entry
// (and, when k is under 64, the two tiles below it): C is often a fresh
// tape buffer no cache holds, and a short k gives the stores too little
// lead to fetch it otherwise. Pack buffers come from a free list, so a
// call allocates nothing in the steady state.
//
// The AVX2 path (avx2.go) is the same driver around 6×16 (or 6×8) kernels
// in the 16 YMM registers, whose edges load and store the last partial
// vector through VMASKMOVPS (a block's last panel of A, of fewer than 6
// rows, runs a kernel of 2 or 4 rows where that covers it), with the same
// in-place reads of A and B, packing by copies of whole vectors and 8×8
// transposes in registers.
package sgemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
	"github.com/adamnode/adamnode/tensor/internal/isa"
)

// The register tile (mr × nr) and the cache blocks: a kc×nr panel of B stays
// in L1, an mc×kc block of A in L2, a kc×nc block of B in L3 (gemm.Driver).
const (
	mr = 12
	nr = 32
	kc = 256
	mc = 384
	nc = 4096
)

// driver is Sgemm's blocked GEMM on the AVX-512 path.
var driver = &gemm.Driver[float32]{
	MR: mr, NR: nr, KC: kc, MC: mc, NC: nc,
	DirectBMaxM: 96,
	// From this width of C every panel of A is packed: square 1024, 97
	// against 75 GFLOP/s read in place.
	PackAMinN: 512,
	Enabled:   hasKernel,
	PanelWidth: func(w int) int {
		if w <= 16 {
			return 16
		}
		return nr
	},
	InPlaceTiles: inPlaceTiles,
	Edge:         edgeKernel,
	PackPanel:    packPanel,
	Fallback:     gonum.Implementation{}.Sgemm,
}

// driverGonum is Sgemm on the generic path: no kernels, gonum's Sgemm.
var driverGonum = &gemm.Driver[float32]{Fallback: gonum.Implementation{}.Sgemm}

// driverFor returns the driver of the kernel path p: the AVX-512 or the
// AVX2 kernels, or gonum's Sgemm.
func driverFor(p isa.Path) *gemm.Driver[float32] {
	switch p {
	case isa.AVX512:
		return driver
	case isa.AVX2:
		return driverAVX2
	}
	return driverGonum
}

// active is the driver Sgemm and SgemmBias run, that of isa.Current.
var active = driverFor(isa.Current())

// Enabled reports whether Sgemm runs assembly kernels, AVX-512 or AVX2
// (isa.Current says which), rather than gonum's Sgemm.
func Enabled() bool { return active.Enabled }

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices,
// where op(A) is m×k, op(B) is k×n and C is m×n, with the contract of
// blas.Float32's Sgemm: when beta is 0, C is not read.
func Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	active.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmBias computes C = alpha·op(A)·op(B) + 1·biasᵀ, bias (of length at
// least n) added to every row of the product, without reading C: the
// affine map of a linear layer, the bias added as the kernels store C
// instead of in a pass of its own.
func SgemmBias(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int) {
	active.GemmBias(tA, tB, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc)
}

// inPlaceTiles computes C's rows [0, edge), 12 at a time, reading A in
// place against a panel of w columns of B (gemm.Driver.InPlaceTiles):
// transposed (kernP32, kernP16) or by rows (kernS32, kernS16), called
// directly.
func inPlaceTiles(trans bool, w, kb int, a []float32, lda, edge int, b *float32, ldb int, c []float32, ldc int, alpha, beta float32, mask uint32, bias *float32) {
	for i0 := 0; i0 < edge; i0 += mr {
		cp := &c[i0*ldc]
		switch {
		case trans && w > 16:
			kernP32(kb, &a[i0], lda, b, ldb, cp, ldc, alpha, beta, mr, mask, bias)
		case trans:
			kernP16(kb, &a[i0], lda, b, ldb, cp, ldc, alpha, beta, mr, mask, bias)
		case w > 16:
			kernS32(kb, &a[i0*lda], lda, b, ldb, cp, ldc, alpha, beta, mr, mask, bias)
		default:
			kernS16(kb, &a[i0*lda], lda, b, ldb, cp, ldc, alpha, beta, mr, mask, bias)
		}
	}
}

// edgeKernel returns the packed-A kernel for a panel of rows rows (at most
// mr) and w columns: the one computing the fewest rows that covers them
// (4, 8 or mr), so that a last panel of a few rows does not cost a full
// one.
func edgeKernel(rows, w int) gemm.Kernel[float32] {
	wide := w > 16
	switch {
	case rows <= 4 && wide:
		return kernP32r4
	case rows <= 4:
		return kernP16r4
	case rows <= 8 && wide:
		return kernP32r8
	case rows <= 8:
		return kernP16r8
	case wide:
		return kernP32
	}
	return kernP16
}

// packPanel writes a panel of kb steps of w lanes into d, lane l of step p
// at d[p·s + l], lanes w..s−1 zero. With perStep the w values of step p
// lie contiguous at src[base + p·ld]; otherwise the kb values of lane l
// lie contiguous at src[base + l·ld].
func packPanel(d []float32, s, w, kb int, perStep bool, src []float32, base, ld int) {
	if hasKernel && kb > 0 {
		packPanelAsm(d, s, w, kb, perStep, src, base, ld)
		return
	}
	gemm.PackPanelGo(d, s, w, kb, perStep, src, base, ld)
}

// packPanel's AVX-512 path: a masked copy per step, or 16×16 blocks
// transposed in registers (at 256×256 two fifths and a sixth of the Go
// loops' time, BenchmarkPackB).
func packPanelAsm(d []float32, s, w, kb int, perStep bool, src []float32, base, ld int) {
	_ = d[kb*s-1] // the stores stay within the panel
	if perStep {
		_ = src[base+(kb-1)*ld+w-1]
		packRows(&d[0], s, &src[base], ld, kb, gemm.Lanes(w), gemm.Lanes(s))
		return
	}
	_ = src[base+(w-1)*ld+kb-1]
	for l0 := 0; l0 < s; l0 += 16 {
		if l0 >= w { // lanes of no row: zero
			for p := range kb {
				clear(d[p*s+l0 : p*s+min(s, l0+16)])
			}
			continue
		}
		rows := min(16, w-l0)
		smask := gemm.Lanes(min(16, s-l0))
		for p0 := 0; p0 < kb; p0 += 16 {
			cols := min(16, kb-p0)
			trans16(&d[p0*s+l0], s, &src[base+l0*ld+p0], ld, rows, cols, gemm.Lanes(cols), smask)
		}
	}
}
