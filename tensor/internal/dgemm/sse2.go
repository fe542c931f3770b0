package dgemm

import (
	"math/bits"
	"unsafe"

	"gonum.org/v1/gonum/blas/gonum"

	"github.com/adamnode/adamnode/tensor/internal/gemm"
)

//go:generate go run ../gemm/gen_sse2.go ../gemm/gen_common.go dgemm

// The SSE2 register tile (mrSSE2 × nrSSE2: 12 accumulators of 2 lanes in
// the 16 XMM registers, see ../gemm/gen_sse2.go) and its cache blocks: a
// kcSSE2×4 panel of B (8 KiB) stays in L1, a 60×256 block of A (120 KiB)
// in a 256 KiB L2 (Nehalem's, Sandy Bridge's), a 256×2048 block of B in
// L3 (4 MiB). kcSSE2 is kc, so that every path sums each element of C in the same
// order of blocks.
const (
	mrSSE2 = 6
	nrSSE2 = 4
	kcSSE2 = kc
	mcSSE2 = 60
	ncSSE2 = 2048
)

// driverSSE2 is Dgemm's blocked GEMM on the sse2 path. Every panel of A
// and of B is packed (DirectBMaxM 0, PackAMinN 0: the kernel reads whole
// vectors of both, and SSE2 has no masked loads), so InPlaceTiles is
// nil. Enabled wherever the CPU runs the kernel (every amd64 CPU
// outside the purego build), so that the tests can call it there; Sgemm
// takes it only when isa.Current is isa.SSE2.
var driverSSE2 = &gemm.Driver[float64]{
	MR: mrSSE2, NR: nrSSE2, KC: kcSSE2, MC: mcSSE2, NC: ncSSE2,
	DirectBMaxM: 0,
	PackAMinN:   0,
	Enabled:     hasSSE2,
	PanelWidth:  func(int) int { return nrSSE2 },
	Edge:        edgeKernelSSE2,
	PackPanel:   packPanelSSE2,
	Fallback:    gonum.Implementation{}.Dgemm,
}

// edgeKernelSSE2 returns the SSE2 kernel for a panel of rows ≤ 6 rows and
// w columns: sse2Kernel for a whole tile's width, sse2Narrow for fewer
// columns.
func edgeKernelSSE2(rows, w int) gemm.Kernel[float64] {
	if w < nrSSE2 {
		return sse2Narrow
	}
	return sse2Kernel
}

// sse2Narrow is sse2Kernel for a tile of fewer than 4 columns (those set
// in mask, a run from lane 0): the kernel stores into a whole tile on the
// stack, holding C's columns (when beta ≠ 0) and the bias's, which are
// then copied back; the arithmetic is sse2Kernel's, rounded alike. No
// element of C or of the bias outside the columns in mask is read or
// written.
func sse2Narrow(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64) {
	w := bits.TrailingZeros32(^mask)
	var t [mrSSE2 * nrSSE2]float64
	cs := unsafe.Slice(c, (rows-1)*ldc+w)
	if beta != 0 {
		for i := range rows {
			copy(t[i*nrSSE2:i*nrSSE2+w], cs[i*ldc:])
		}
	}
	var tb [nrSSE2]float64
	var bp *float64
	if bias != nil {
		copy(tb[:w], unsafe.Slice(bias, w))
		bp = &tb[0]
	}
	sse2Kernel(k, a, ka, b, ldb, &t[0], nrSSE2, alpha, beta, rows, mask, bp)
	for i := range rows {
		copy(cs[i*ldc:i*ldc+w], t[i*nrSSE2:])
	}
}

// packPanelSSE2 is the SSE2 driver's gemm.Driver.PackPanel. A whole panel
// (w = s, 6 or 4 lanes) whose steps lie in rows of the source (B not
// transposed, A transposed) is copied by sse2RowsA or sse2RowsB; one whose
// lanes lie in rows (B transposed, A not) is transposed by sse2ColsA or
// sse2ColsB, 2 steps a group, the last kb mod 2 steps by a Go loop; other
// panels by the Go loops. Copying a step of 48 or 32 bytes by copy took
// longer in its call than in the copy, and the Go loop's transpose an
// element at a time about as long (together a sixth of the MNIST model's
// time on this path).
func packPanelSSE2(d []float64, s, w, kb int, perStep bool, src []float64, base, ld int) {
	if w != s || kb == 0 || (s != mrSSE2 && s != nrSSE2) || !hasSSE2 {
		gemm.PackPanelGo(d, s, w, kb, perStep, src, base, ld)
		return
	}
	_ = d[kb*s-1] // the stores stay within the panel
	if perStep {
		_ = src[base+(kb-1)*ld+w-1] // and the loads within the source
		if s == mrSSE2 {
			sse2RowsA(&d[0], &src[base], ld, kb)
		} else {
			sse2RowsB(&d[0], &src[base], ld, kb)
		}
		return
	}
	_ = src[base+(w-1)*ld+kb-1]
	const g = 2 // steps a group: a vector
	if groups := kb / g; groups > 0 {
		if s == mrSSE2 {
			sse2ColsA(&d[0], &src[base], ld, groups)
		} else {
			sse2ColsB(&d[0], &src[base], ld, groups)
		}
	}
	for l := range w {
		row := src[base+l*ld : base+l*ld+kb]
		for p := kb / g * g; p < kb; p++ {
			d[p*s+l] = row[p]
		}
	}
}
