// Package dgemm is a float64 GEMM for amd64: the blocked algorithm of Goto
// and van de Geijn (as in BLIS) around micro-kernels in Go assembly, for
// AVX-512 and for AVX2 with FMA, the float64 counterpart of package sgemm,
// on the kernel path that package isa decides (isa.Current). On the
// generic path — elsewhere, in the purego build, or forced by
// ADAMNODE_CPU=generic — it is gonum's Dgemm.
//
// On the AVX-512 path Dgemm packs B, a KC×NC block at a time, into panels
// of 16 columns (the last one 8 or 4 when at most that many remain) and A,
// an MC×KC block at a time, into panels of 12 rows, both zero-padded; a
// 12×16 (or 12×8, 12×4) kernel with the accumulators in vector registers
// then computes each tile of C, storing partial tiles at the edges through
// masks (a block's last panel of A, of fewer than 12 rows, runs a kernel
// of 4 or 8 rows where that covers it). An untransposed B is read in place
// when C has few rows, a transposed A in place (and an untransposed one by
// rows) when C is narrow, as in package sgemm.
//
// The register tile is 12×16: 24 accumulators (12 rows of two 8-lane
// vectors), the two vectors of B of the current step and 6 registers for
// the broadcast A values fill the 32 ZMM registers. Each k step loads 2
// vectors of B and 12 scalars of A for 24 FMAs, the best ratio of FMAs to
// loads that 32 registers allow with two vectors of B (a 16×8 tile would
// need 16 loads of A for 16 FMAs; 8×24 has 24 FMAs for 11 loads but
// leaves MLP widths of 16 and 64 columns with a partly masked third
// vector). The blocking is gemm.Driver's, shared with package sgemm.
//
// The AVX2 path (avx2.go) is the same driver around 6×8 (or 6×4) kernels
// in the 16 YMM registers, whose edges load and store the last partial
// vector through VMASKMOVPD (a block's last panel of A, of fewer than 6
// rows, runs a kernel of 2 or 4 rows where that covers it), with the same
// in-place reads of A and B, packing by copies of whole vectors and 4×4
// transposes in registers.
package dgemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
	"github.com/adamnode/adamnode/tensor/internal/isa"
)

// The register tile (mr × nr) and the cache blocks: a kc×nr panel of B stays
// in L1 (32 KiB), an mc×kc block of A in L2 (384 KiB), a kc×nc block of B in
// L3 (4 MiB): the bytes of package sgemm's blocks.
const (
	mr = 12
	nr = 16
	kc = 256
	mc = 192
	nc = 2048
)

// driver is Dgemm's blocked GEMM on the AVX-512 path.
var driver = &gemm.Driver[float64]{
	MR: mr, NR: nr, KC: kc, MC: mc, NC: nc,
	DirectBMaxM:  96,
	PackAMinN:    512, // package sgemm's threshold, not tuned again for float64
	Enabled:      hasKernel,
	PanelWidth:   panelWidth,
	InPlaceTiles: inPlaceTiles,
	Edge:         edgeKernel,
	PackPanel:    gemm.PackPanelGo[float64],
	Fallback:     gonum.Implementation{}.Dgemm,
}

// driverGonum is Dgemm on the generic path: no kernels, gonum's Dgemm.
var driverGonum = &gemm.Driver[float64]{Fallback: gonum.Implementation{}.Dgemm}

// driverFor returns the driver of the kernel path p: the AVX-512 or the
// AVX2 kernels, or gonum's Dgemm.
func driverFor(p isa.Path) *gemm.Driver[float64] {
	switch p {
	case isa.AVX512:
		return driver
	case isa.AVX2:
		return driverAVX2
	}
	return driverGonum
}

// active is the driver Dgemm and DgemmBias run, that of isa.Current.
var active = driverFor(isa.Current())

// Enabled reports whether Dgemm runs assembly kernels, AVX-512 or AVX2
// (isa.Current says which), rather than gonum's Dgemm.
func Enabled() bool { return active.Enabled }

// Dgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices,
// where op(A) is m×k, op(B) is k×n and C is m×n, with the contract of
// blas.Float64's Dgemm: when beta is 0, C is not read.
func Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	active.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// DgemmBias computes C = alpha·op(A)·op(B) + 1·biasᵀ, bias (of length at
// least n) added to every row of the product, without reading C: the
// affine map of a linear layer, the bias added as the kernels store C
// instead of in a pass of its own.
func DgemmBias(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, bias, c []float64, ldc int) {
	active.GemmBias(tA, tB, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc)
}

// inPlaceTiles computes C's rows [0, edge), 12 at a time, reading A in
// place against a panel of w columns of B (gemm.Driver.InPlaceTiles):
// transposed by the packed-A kernels, by rows by kernS16 and the like.
func inPlaceTiles(trans bool, w, kb int, a []float64, lda, edge int, b *float64, ldb int, c []float64, ldc int, alpha, beta float64, mask uint32, bias *float64) {
	kern, step := rowKernel(w), lda
	if trans {
		kern, step = edgeKernel(mr, w), 1
	}
	for i0 := 0; i0 < edge; i0 += mr {
		kern(kb, &a[i0*step], lda, b, ldb, &c[i0*ldc], ldc, alpha, beta, mr, mask, bias)
	}
}

// panelWidth is the width of the kernel that computes a panel of w columns
// of C (w ≤ nr): 4, 8 or nr.
func panelWidth(w int) int {
	switch {
	case w <= 4:
		return 4
	case w <= 8:
		return 8
	}
	return nr
}

// edgeKernel returns the packed-A kernel for a panel of rows rows (at most
// mr) and w columns: the one computing the fewest rows that covers them
// (4, 8 or mr) and the fewest columns (4, 8 or nr), so that a last panel
// of a few rows or columns does not cost a full one.
func edgeKernel(rows, w int) gemm.Kernel[float64] {
	var ks [3]gemm.Kernel[float64] // the kernels of 4, 8 and mr rows
	switch panelWidth(w) {
	case 4:
		ks = [3]gemm.Kernel[float64]{kernP4r4, kernP4r8, kernP4}
	case 8:
		ks = [3]gemm.Kernel[float64]{kernP8r4, kernP8r8, kernP8}
	default:
		ks = [3]gemm.Kernel[float64]{kernP16r4, kernP16r8, kernP16}
	}
	switch {
	case rows <= 4:
		return ks[0]
	case rows <= 8:
		return ks[1]
	}
	return ks[2]
}

// rowKernel returns the kernel reading rows of A in place (kernS16 and
// the like) for a panel of w columns.
func rowKernel(w int) gemm.Kernel[float64] {
	switch panelWidth(w) {
	case 4:
		return kernS4
	case 8:
		return kernS8
	}
	return kernS16
}
