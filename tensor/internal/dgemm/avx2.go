package dgemm

import (
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

//go:generate go run ../gemm/gen_avx2.go ../gemm/gen_common.go dgemm

// The AVX2 register tile (mrAVX2 × nrAVX2: 12 accumulators of 4 lanes in
// the 16 YMM registers, see ../gemm/gen_avx2.go) and its cache blocks: a
// kcAVX2×8 panel of B (16 KiB) stays in a 32 KiB L1, a 72×256 block of A
// (144 KiB) in a 256 KiB L2 (Haswell's; Zen 3 has 512 KiB), a 256×2048
// block of B (4 MiB) in L3. kcAVX2 is kc, so that both paths sum each
// element of C in the same order.
const (
	mrAVX2 = 6
	nrAVX2 = 8
	kcAVX2 = kc
	mcAVX2 = 72
	ncAVX2 = nc
)

// driverAVX2 is Dgemm's blocked GEMM on the AVX2 path. Enabled wherever
// the CPU runs the kernels, so that the tests can call it on any such
// CPU; Dgemm takes it only when isa.Current is isa.AVX2. Its thresholds
// are the AVX-512 driver's: PackAMinN 128 or 256, MC 48 to 144 and KC 128
// to 512 did not speed up BenchmarkDgemm's shapes (interleaved medians on
// an AVX-512 Xeon running these kernels, 2026-12). The tile is 6×8 rather
// than 4×12: both run the inner loop at the FMA peak there (8 and 7 loads
// for 12 FMAs, under Haswell's two a cycle too), and 8 divides the MLP
// widths 16 and 64, where 12 leaves a partial panel.
var driverAVX2 = &gemm.Driver[float64]{
	MR: mrAVX2, NR: nrAVX2, KC: kcAVX2, MC: mcAVX2, NC: ncAVX2,
	DirectBMaxM:  96,
	PackAMinN:    512,
	Enabled:      hasAVX2,
	PanelWidth:   panelWidthAVX2,
	InPlaceTiles: inPlaceTilesAVX2,
	Edge:         edgeKernelAVX2,
	PackPanel:    packPanelAVX2,
	Fallback:     gonum.Implementation{}.Dgemm,
}

// panelWidthAVX2 is the width of the AVX2 kernel that computes a panel of
// w ≤ 8 columns of C: one vector of 4, or two.
func panelWidthAVX2(w int) int {
	if w <= 4 {
		return 4
	}
	return nrAVX2
}

// inPlaceTilesAVX2 computes C's rows [0, edge), 6 at a time, reading A in
// place against a panel of w columns of B (gemm.Driver.InPlaceTiles):
// transposed (avx2P8, avx2P4) or by rows (avx2S8, avx2S4), called
// directly.
func inPlaceTilesAVX2(trans bool, w, kb int, a []float64, lda, edge int, b *float64, ldb int, c []float64, ldc int, alpha, beta float64, mask uint32, bias *float64) {
	for i0 := 0; i0 < edge; i0 += mrAVX2 {
		cp := &c[i0*ldc]
		switch {
		case trans && w > 4:
			avx2P8(kb, &a[i0], lda, b, ldb, cp, ldc, alpha, beta, mrAVX2, mask, bias)
		case trans:
			avx2P4(kb, &a[i0], lda, b, ldb, cp, ldc, alpha, beta, mrAVX2, mask, bias)
		case w > 4:
			avx2S8(kb, &a[i0*lda], lda, b, ldb, cp, ldc, alpha, beta, mrAVX2, mask, bias)
		default:
			avx2S4(kb, &a[i0*lda], lda, b, ldb, cp, ldc, alpha, beta, mrAVX2, mask, bias)
		}
	}
}

// edgeKernelAVX2 returns the packed-A AVX2 kernel for a panel of rows
// rows (at most 6) and w columns: the one computing the fewest rows that
// covers them (2, 4 or 6) and the fewest vectors (1 or 2).
func edgeKernelAVX2(rows, w int) gemm.Kernel[float64] {
	wide := w > 4
	switch {
	case rows <= 2 && wide:
		return avx2P8r2
	case rows <= 2:
		return avx2P4r2
	case rows <= 4 && wide:
		return avx2P8r4
	case rows <= 4:
		return avx2P4r4
	case wide:
		return avx2P8
	}
	return avx2P4
}

// packPanelAVX2 is the AVX2 driver's gemm.Driver.PackPanel: a panel whose
// steps lie in rows of the source (B as it lies, A transposed) by
// avx2Rows, one or two vectors a step; one whose lanes lie in rows (B
// transposed, A not) by avx2Trans, in blocks of 4 lanes and 4 steps. The
// Go loops took an eighth of the time of 512x256to256/dw.
func packPanelAVX2(d []float64, s, w, kb int, perStep bool, src []float64, base, ld int) {
	if kb == 0 {
		return
	}
	_ = d[kb*s-1] // the stores stay within the panel
	if perStep {
		_ = src[base+(kb-1)*ld+w-1] // and the loads within the source
		avx2Rows(&d[0], s, &src[base], ld, kb, gemm.Lanes(w), gemm.Lanes(s))
		return
	}
	_ = src[base+(w-1)*ld+kb-1]
	for q := range (s + 3) / 4 { // blocks of 4 lanes
		l0 := 4 * q
		if l0 >= w { // lanes of no row: zero
			for p := range kb {
				clear(d[p*s+l0 : p*s+min(s, l0+4)])
			}
			continue
		}
		rows := min(4, w-l0)
		smask := gemm.Lanes(min(4, s-l0))
		for p0 := 0; p0 < kb; p0 += 4 {
			cols := min(4, kb-p0)
			avx2Trans(&d[p0*s+l0], s, &src[base+l0*ld+p0], ld, rows, cols, gemm.Lanes(cols), smask)
		}
	}
}
