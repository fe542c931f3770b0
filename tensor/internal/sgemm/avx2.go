package sgemm

import (
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

//go:generate go run ../gemm/gen_avx2.go ../gemm/gen_common.go sgemm

// The AVX2 register tile (mrAVX2 × nrAVX2: 12 accumulators of 8 lanes in
// the 16 YMM registers, see ../gemm/gen_avx2.go) and its cache blocks: a
// kcAVX2×16 panel of B (16 KiB) stays in a 32 KiB L1, a 168×256 block of
// A (168 KiB) in a 256 KiB L2 (Haswell's; Zen 3 has 512 KiB), a 256×4096
// block of B in L3. kcAVX2 is kc, so that both paths sum each element of
// C in the same order.
const (
	mrAVX2 = 6
	nrAVX2 = 16
	kcAVX2 = kc
	mcAVX2 = 168
	ncAVX2 = 4096
)

// driverAVX2 is Sgemm's blocked GEMM on the AVX2 path. Enabled wherever
// the CPU runs the kernels, so that the tests can call it on any such
// CPU; Sgemm takes it only when isa.Current is isa.AVX2. Its thresholds
// are the AVX-512 driver's: at BenchmarkSgemm's shapes (interleaved
// medians on an AVX-512 Xeon running these kernels, 2026-12) DirectBMaxM
// 48 or 192, PackAMinN 256 or 1024, MC 96 to 336 and KC 384 each moved the
// geometric mean by under 1%; the edge kernels of 2 and 4 rows gain 2–9%
// where m is 50, 16 or 5.
var driverAVX2 = &gemm.Driver[float32]{
	MR: mrAVX2, NR: nrAVX2, KC: kcAVX2, MC: mcAVX2, NC: ncAVX2,
	DirectBMaxM:  96,
	PackAMinN:    512,
	Enabled:      hasAVX2,
	PanelWidth:   panelWidthAVX2,
	InPlaceTiles: inPlaceTilesAVX2,
	Edge:         edgeKernelAVX2,
	PackPanel:    packPanelAVX2,
	Fallback:     gonum.Implementation{}.Sgemm,
}

// panelWidthAVX2 is the width of the AVX2 kernel that computes a panel of
// w ≤ 16 columns of C: one vector of 8, or two.
func panelWidthAVX2(w int) int {
	if w <= 8 {
		return 8
	}
	return nrAVX2
}

// inPlaceTilesAVX2 computes C's rows [0, edge), 6 at a time, reading A in
// place against a panel of w columns of B (gemm.Driver.InPlaceTiles):
// transposed (avx2P16, avx2P8) or by rows (avx2S16, avx2S8), called
// directly.
func inPlaceTilesAVX2(trans bool, w, kb int, a []float32, lda, edge int, b *float32, ldb int, c []float32, ldc int, alpha, beta float32, mask uint32, bias *float32) {
	for i0 := 0; i0 < edge; i0 += mrAVX2 {
		cp := &c[i0*ldc]
		switch {
		case trans && w > 8:
			avx2P16(kb, &a[i0], lda, b, ldb, cp, ldc, alpha, beta, mrAVX2, mask, bias)
		case trans:
			avx2P8(kb, &a[i0], lda, b, ldb, cp, ldc, alpha, beta, mrAVX2, mask, bias)
		case w > 8:
			avx2S16(kb, &a[i0*lda], lda, b, ldb, cp, ldc, alpha, beta, mrAVX2, mask, bias)
		default:
			avx2S8(kb, &a[i0*lda], lda, b, ldb, cp, ldc, alpha, beta, mrAVX2, mask, bias)
		}
	}
}

// edgeKernelAVX2 returns the packed-A AVX2 kernel for a panel of rows
// rows (at most 6) and w columns: the one computing the fewest rows that
// covers them (2, 4 or 6) and the fewest vectors (1 or 2).
func edgeKernelAVX2(rows, w int) gemm.Kernel[float32] {
	wide := w > 8
	switch {
	case rows <= 2 && wide:
		return avx2P16r2
	case rows <= 2:
		return avx2P8r2
	case rows <= 4 && wide:
		return avx2P16r4
	case rows <= 4:
		return avx2P8r4
	case wide:
		return avx2P16
	}
	return avx2P8
}

// packPanelAVX2 is the AVX2 driver's gemm.Driver.PackPanel: a panel whose
// steps lie in rows of the source (B not transposed, A transposed) by
// avx2Rows, one or two vectors a step; one whose lanes lie in rows (B
// transposed, A not) by avx2Trans, in blocks of 8 lanes and 8 steps. The
// Go loops' strided stores took a quarter of the time of the products
// with B transposed, its copies a tenth of those with B packed as it lies.
func packPanelAVX2(d []float32, s, w, kb int, perStep bool, src []float32, base, ld int) {
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
	for q := range (s + 7) / 8 { // blocks of 8 lanes
		l0 := 8 * q
		if l0 >= w { // lanes of no row: zero
			for p := range kb {
				clear(d[p*s+l0 : p*s+min(s, l0+8)])
			}
			continue
		}
		rows := min(8, w-l0)
		smask := gemm.Lanes(min(8, s-l0))
		for p0 := 0; p0 < kb; p0 += 8 {
			cols := min(8, kb-p0)
			avx2Trans(&d[p0*s+l0], s, &src[base+l0*ld+p0], ld, rows, cols, gemm.Lanes(cols), smask)
		}
	}
}
