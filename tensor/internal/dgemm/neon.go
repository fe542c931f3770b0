package dgemm

//go:generate go run ../gemm/gen_neon.go ../gemm/gen_common.go dgemm

import (
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

// The NEON register tile (mrNEON × nrNEON: 24 accumulators of 2 lanes in
// the 32 V registers, see ../gemm/gen_neon.go) and its cache blocks: a
// kcNEON×8 panel of B (16 KiB) stays in L1, a 72×256 block of A
// (144 KiB) in L2, a 256×2048 block of B (4 MiB) in L2 or L3. kcNEON is
// kc, so that every path sums each element of C in the same order. The
// blocks are the AVX2 driver's, not tuned on an arm64 CPU.
const (
	mrNEON = 6
	nrNEON = 8
	kcNEON = kc
	mcNEON = 72
	ncNEON = nc
)

// driverNEON is Dgemm's blocked GEMM on the NEON path. Enabled wherever
// the CPU runs the kernels (every arm64 CPU outside the purego build), so
// that the tests can call it under ADAMNODE_CPU=generic too; Dgemm takes
// it only when isa.Current is isa.NEON. The kernels read whole vectors of
// A and B, and NEON has no masked loads, so every panel of A and B is
// packed (zero-padded; PackAMinN and DirectBMaxM 0) by the driver's
// portable loops, and InPlaceTiles is nil.
var driverNEON = &gemm.Driver[float64]{
	MR: mrNEON, NR: nrNEON, KC: kcNEON, MC: mcNEON, NC: ncNEON,
	DirectBMaxM: 0,
	PackAMinN:   0,
	Enabled:     hasNEON,
	PanelWidth:  panelWidthNEON,
	Edge:        edgeKernelNEON,
	PackPanel:   gemm.PackPanelGo[float64],
	Fallback:    gonum.Implementation{}.Dgemm,
}

// panelWidthNEON is the width of the NEON kernel that computes a panel of
// w ≤ 8 columns of C: one vector of 2, two or four.
func panelWidthNEON(w int) int {
	switch {
	case w <= 2:
		return 2
	case w <= 4:
		return 4
	}
	return nrNEON
}

// edgeKernelNEON returns the NEON kernel for a panel of rows rows (at most
// 6) and w columns: the one computing the fewest rows that covers them (2,
// 4 or 6) and the fewest vectors (1, 2 or 4).
func edgeKernelNEON(rows, w int) gemm.Kernel[float64] {
	var ks [3]gemm.Kernel[float64] // the kernels of 2, 4 and 6 rows
	switch panelWidthNEON(w) {
	case 2:
		ks = [3]gemm.Kernel[float64]{neonP2r2, neonP2r4, neonP2}
	case 4:
		ks = [3]gemm.Kernel[float64]{neonP4r2, neonP4r4, neonP4}
	default:
		ks = [3]gemm.Kernel[float64]{neonP8r2, neonP8r4, neonP8}
	}
	switch {
	case rows <= 2:
		return ks[0]
	case rows <= 4:
		return ks[1]
	}
	return ks[2]
}
