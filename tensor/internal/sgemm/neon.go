package sgemm

//go:generate go run ../gemm/gen_neon.go ../gemm/gen_common.go sgemm

import (
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

// The NEON register tile (mrNEON × nrNEON: 24 accumulators of 4 lanes in
// the 32 V registers, see ../gemm/gen_neon.go) and its cache blocks: a
// kcNEON×8 panel of B (8 KiB) stays in L1, a 168×256 block of A
// (168 KiB) in L2, a 256×4096 block of B (4 MiB) in L2 or L3. kcNEON is
// kc, so that every path sums each element of C in the same order. The
// blocks are the AVX2 driver's, not tuned on an arm64 CPU.
const (
	mrNEON = 12
	nrNEON = 8
	kcNEON = kc
	mcNEON = 168
	ncNEON = 4096
)

// driverNEON is Sgemm's blocked GEMM on the NEON path. Enabled wherever
// the CPU runs the kernels (every arm64 CPU outside the purego build), so
// that the tests can call it under ADAMNODE_CPU=generic too; Sgemm takes
// it only when isa.Current is isa.NEON. The kernels read whole vectors of
// A and B, and NEON has no masked loads, so every panel of A and B is
// packed (zero-padded; PackAMinN and DirectBMaxM 0) by the driver's
// portable loops, and InPlaceTiles is nil.
var driverNEON = &gemm.Driver[float32]{
	MR: mrNEON, NR: nrNEON, KC: kcNEON, MC: mcNEON, NC: ncNEON,
	DirectBMaxM: 0,
	PackAMinN:   0,
	Enabled:     hasNEON,
	PanelWidth:  panelWidthNEON,
	Edge:        edgeKernelNEON,
	PackPanel:   gemm.PackPanelGo[float32],
	Fallback:    gonum.Implementation{}.Sgemm,
}

// panelWidthNEON is the width of the NEON kernel that computes a panel of
// w ≤ 8 columns of C: one vector of 4, or two.
func panelWidthNEON(w int) int {
	if w <= 4 {
		return 4
	}
	return nrNEON
}

// edgeKernelNEON returns the NEON kernel for a panel of rows rows (at most
// 12) and w columns: the one computing the fewest rows that covers them
// (4, 8 or 12) and the fewest vectors (1 or 2).
func edgeKernelNEON(rows, w int) gemm.Kernel[float32] {
	wide := w > 4
	switch {
	case rows <= 4 && wide:
		return neonP8r4
	case rows <= 4:
		return neonP4r4
	case rows <= 8 && wide:
		return neonP8r8
	case rows <= 8:
		return neonP4r8
	case wide:
		return neonP8
	}
	return neonP4
}
