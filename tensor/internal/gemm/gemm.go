// Package gemm is the blocked GEMM driver that packages sgemm (float32)
// and dgemm (float64) share: the algorithm of Goto and van de Geijn (as in
// BLIS) around micro-kernels the caller provides.
//
// A Driver packs B, a KC×NC block at a time, into panels of NR columns
// (narrower at the right edge, PanelWidth) and A, an MC×KC block at a
// time, into panels of MR rows, both zero-padded; a micro-kernel then
// computes each MR×NR tile of C, storing partial tiles through a column
// mask. Where packing does not pay, operands are read in place: an
// untransposed B when C has at most DirectBMaxM rows, and A (all its
// panels of MR rows but a last partial one) when C is narrower than
// PackAMinN. The bias of a linear layer is added as the first block of k
// stores C. Pack buffers come from a free list, so a call allocates
// nothing in the steady state.
//
// The argument checks (CheckArgs) panic as gonum's do; Gemm and GemmBias
// fall back to the driver's Fallback (gonum's) where there is no kernel.
package gemm

import (
	"sync"

	"gonum.org/v1/gonum/blas"
)

// Float is the element type of a Driver.
type Float interface{ float32 | float64 }

// Kernel computes a tile of C = alpha·A·B + beta·C (+ bias) of rows rows
// (at most the kernel's) and the columns set in mask, for k steps:
// element (i, p) of A at a[p·ka + i] for the packed and transposed kernels
// (a[i·ka + p] for those reading untransposed rows of A in place), element
// (p, j) of B at b[p·ldb + j], C's rows ldc apart. When beta is 0, C is not
// read; bias (nil for none, and beta is then 0) is added to column j as
// bias[j].
type Kernel[T Float] func(k int, a *T, ka int, b *T, ldb int, c *T, ldc int, alpha, beta T, rows int, mask uint32, bias *T)

// Driver is a blocked GEMM: its blocking, its kernels and its fallback.
// Use it by pointer; it is safe for concurrent use.
type Driver[T Float] struct {
	// MR × NR is the register tile; a KC×NR panel of B stays in L1, an
	// MC×KC block of A in L2, a KC×NC block of B in L3.
	MR, NR, KC, MC, NC int
	// DirectBMaxM is the largest m for which an untransposed B is read in
	// place rather than packed: packing pays when many panels of A reuse B.
	DirectBMaxM int
	// PackAMinN is the width of C from which every panel of A is packed:
	// then many panels of B reuse each one, read faster packed.
	PackAMinN int
	// Enabled reports whether the kernels can run; without them Gemm and
	// GemmBias are Fallback.
	Enabled bool

	// PanelWidth is the width of the packed panel of B, and of the kernel,
	// that computes w ≤ NR columns of C.
	PanelWidth func(w int) int
	// InPlaceTiles computes the tiles of C's rows [0, edge), MR at a time,
	// reading A in place (row i's panel at a[i] when trans, else at
	// a[i·lda]) against one panel of w columns of B: the loop is the
	// packages' own, so that it calls their assembly kernels directly (a
	// call through a func value goes through an ABI wrapper, a few
	// nanoseconds a tile, measurable on small products). It may be nil
	// when PackAMinN is 0: every panel of A is then packed.
	InPlaceTiles func(trans bool, w, kb int, a []T, lda, edge int, b *T, ldb int, c []T, ldc int, alpha, beta T, mask uint32, bias *T)
	// Edge returns the packed-A kernel for a panel of rows ≤ MR rows and w
	// columns: the one computing the fewest rows that covers them.
	Edge func(rows, w int) Kernel[T]
	// PackPanel writes a panel of kb steps of w lanes into d, lane l of
	// step p at d[p·s + l], lanes w..s−1 zero. With perStep the w values of
	// step p lie contiguous at src[base + p·ld]; otherwise the kb values of
	// lane l lie contiguous at src[base + l·ld].
	PackPanel func(d []T, s, w, kb int, perStep bool, src []T, base, ld int)
	// Fallback is the GEMM without kernels (gonum's), with BLAS's contract.
	Fallback func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

	mu   sync.Mutex
	free []*buffers[T]
}

// buffers are the pack buffers of one call: panels of A and of B.
type buffers[T Float] struct{ a, b []T }

// getBuffers takes a pair of pack buffers from the free list (as many as
// calls ever ran at once; a sync.Pool drops buffers at random under the
// race detector and at each GC, which then shows as allocation), or new
// ones.
func (d *Driver[T]) getBuffers() *buffers[T] {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.free); n > 0 {
		b := d.free[n-1]
		d.free = d.free[:n-1]
		return b
	}
	return new(buffers[T])
}

// putBuffers returns b to the free list.
func (d *Driver[T]) putBuffers(b *buffers[T]) {
	d.mu.Lock()
	d.free = append(d.free, b)
	d.mu.Unlock()
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices,
// where op(A) is m×k, op(B) is k×n and C is m×n, with the contract of
// BLAS's xGEMM: when beta is 0, C is not read.
func (d *Driver[T]) Gemm(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	CheckArgs(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if !d.Enabled {
		d.Fallback(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if k == 0 || alpha == 0 {
		Scale(m, n, beta, c, ldc)
		return
	}
	d.blocked(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, nil, c, ldc)
}

// GemmBias computes C = alpha·op(A)·op(B) + 1·biasᵀ, bias (of length at
// least n) added to every row of the product, without reading C: the
// affine map of a linear layer, the bias added as the kernels store C
// instead of in a pass of its own.
func (d *Driver[T]) GemmBias(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, bias, c []T, ldc int) {
	CheckArgs(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	if len(bias) < n {
		panic("blas: bias shorter than n")
	}
	if m == 0 || n == 0 {
		return
	}
	if !d.Enabled || k == 0 || alpha == 0 {
		for i := range m {
			copy(c[i*ldc:i*ldc+n], bias[:n])
		}
		if k > 0 && alpha != 0 {
			d.Fallback(tA, tB, m, n, k, alpha, a, lda, b, ldb, 1, c, ldc)
		}
		return
	}
	d.blocked(tA, tB, m, n, k, alpha, a, lda, b, ldb, 0, bias[:n], c, ldc)
}

// blocked is Gemm by the kernels, for positive m, n, k and alpha ≠ 0, with
// the bias (nil for none) added at the first block of k, where beta must
// then be 0.
func (d *Driver[T]) blocked(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, bias, c []T, ldc int) {
	transA, transB := tA != blas.NoTrans, tB != blas.NoTrans
	mr, kc, mc, nc := d.MR, d.KC, d.MC, d.NC
	buf := d.getBuffers()
	kb0 := min(kc, k)
	if need := roundUp(min(mc, m), mr) * kb0; len(buf.a) < need {
		buf.a = make([]T, need)
	}
	if need := roundUp(min(nc, n), d.NR) * kb0; len(buf.b) < need {
		buf.b = make([]T, need)
	}
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			bm := bMatrix[T]{b: buf.b}
			if !transB && m <= d.DirectBMaxM {
				bm = bMatrix[T]{b: b[pc*ldb+jc:], ldb: ldb}
			} else {
				d.packB(buf.b, transB, b, ldb, pc, jc, kb, nb)
			}
			bet, bi := beta, bias
			if pc > 0 {
				bet, bi = 1, nil
			}
			if bi != nil {
				bi = bi[jc:]
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				blk := aBlock[T]{trans: transA, kb: kb, mb: mb}
				if nb >= d.PackAMinN {
					d.packA(buf.a, transA, a, lda, ic, pc, mb, kb)
				} else {
					if transA {
						blk.a = a[pc*lda+ic:]
					} else {
						blk.a = a[ic*lda+pc:]
					}
					blk.lda = lda
					// The last panel, of fewer than mr rows, is packed:
					// the kernels read all mr rows.
					blk.edge = mb / mr * mr
					if blk.edge < mb {
						d.packA(buf.a, transA, a, lda, ic+blk.edge, pc, mb-blk.edge, kb)
					}
				}
				d.macroKernel(&blk, buf.a, &bm, c[ic*ldc+jc:], ldc, nb, alpha, bet, bi)
			}
		}
	}
	d.putBuffers(buf)
}

// bMatrix is a kb×nb block of op(B): packed (ldb = 0), or rows of B in
// place.
type bMatrix[T Float] struct {
	b   []T
	ldb int
}

// aBlock is an mb×kb block of op(A): its panels of mr rows below edge are
// read in place (a[p·lda + i] when trans, else a[i·lda + p]), the last one,
// from edge on, from the packed buffer.
type aBlock[T Float] struct {
	a      []T
	lda    int
	trans  bool
	kb, mb int
	edge   int
}

// macroKernel runs the micro-kernels over the mb×nb block of C from the A
// block and the B block (kb×nb), each B panel against every A panel,
// adding bias[j] (nil for none; beta is then 0) to column j.
func (d *Driver[T]) macroKernel(blk *aBlock[T], pa []T, bm *bMatrix[T], c []T, ldc, nb int, alpha, beta T, bias []T) {
	kb, mr, nr := blk.kb, d.MR, d.NR
	for j0 := 0; j0 < nb; j0 += nr {
		w := min(nr, nb-j0)
		mask := Lanes(w)
		bp, ldb := &bm.b[j0], bm.ldb
		if ldb == 0 { // packed
			bp, ldb = &bm.b[j0*kb], d.PanelWidth(w)
		}
		var bi *T
		if bias != nil {
			bi = &bias[j0]
		}
		i0 := blk.edge
		if i0 > 0 {
			d.InPlaceTiles(blk.trans, w, kb, blk.a, blk.lda, i0, bp, ldb, c[j0:], ldc, alpha, beta, mask, bi)
		}
		if i0 < blk.mb {
			full := d.Edge(mr, w)
			for ; i0 < blk.mb; i0 += mr {
				kern, rows := full, blk.mb-i0
				if rows < mr {
					kern = d.Edge(rows, w)
				} else {
					rows = mr
				}
				kern(kb, &pa[(i0-blk.edge)*kb], mr, bp, ldb, &c[i0*ldc+j0], ldc, alpha, beta, rows, mask, bi)
			}
		}
	}
}

// packA packs the mb×kb block of op(A) at (ic, pc) into panels of MR rows:
// element (i, p) of panel q at dst[q·MR·kb + p·MR + i], rows past mb zero.
func (d *Driver[T]) packA(dst []T, trans bool, a []T, lda, ic, pc, mb, kb int) {
	mr := d.MR
	for i0 := 0; i0 < mb; i0 += mr {
		// trans: op(A)(i, p) = a[p·lda + i], the rows of a panel contiguous
		// for each p; else a[i·lda + p], one row of A per lane.
		base := (ic+i0)*lda + pc
		if trans {
			base = pc*lda + ic + i0
		}
		d.PackPanel(dst[i0*kb:i0*kb+kb*mr], mr, min(mr, mb-i0), kb, trans, a, base, lda)
	}
}

// packB packs the kb×nb block of op(B) at (pc, jc) into panels of NR
// columns (the last PanelWidth wide): element (p, j) of the panel at
// column j0 at dst[j0·kb + p·s + j] with s its width, columns past nb
// zero.
func (d *Driver[T]) packB(dst []T, trans bool, b []T, ldb, pc, jc, kb, nb int) {
	for j0 := 0; j0 < nb; j0 += d.NR {
		w := min(d.NR, nb-j0)
		s := d.PanelWidth(w)
		// trans: op(B)(p, j) = b[j·ldb + p], one row of B per lane; else
		// b[p·ldb + j], the columns of a panel contiguous for each p.
		base := pc*ldb + jc + j0
		if trans {
			base = (jc+j0)*ldb + pc
		}
		d.PackPanel(dst[j0*kb:j0*kb+kb*s], s, w, kb, !trans, b, base, ldb)
	}
}

// PackPanelGo is a Driver's PackPanel in Go.
func PackPanelGo[T Float](d []T, s, w, kb int, perStep bool, src []T, base, ld int) {
	if perStep {
		for p := range kb {
			dp := d[p*s : p*s+s]
			copy(dp, src[base+p*ld:][:w])
			clear(dp[w:])
		}
		return
	}
	for l := range w {
		for p, v := range src[base+l*ld:][:kb] {
			d[p*s+l] = v
		}
	}
	if w < s {
		for p := range kb {
			clear(d[p*s+w : p*s+s])
		}
	}
}

// roundUp rounds x up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }

// Lanes is the mask of the first n lanes, n ≤ 32.
func Lanes(n int) uint32 {
	if n >= 32 {
		return ^uint32(0)
	}
	return uint32(1)<<n - 1
}

// Scale sets the m×n matrix C = beta·C, not reading C when beta is 0.
func Scale[T Float](m, n int, beta T, c []T, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// CheckArgs panics as gonum's xGEMM does on invalid arguments.
func CheckArgs[T Float](tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	okT := func(t blas.Transpose) bool {
		return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
	}
	if !okT(tA) || !okT(tB) {
		panic("blas: illegal transpose")
	}
	if m < 0 {
		panic("blas: m < 0")
	}
	if n < 0 {
		panic("blas: n < 0")
	}
	if k < 0 {
		panic("blas: k < 0")
	}
	aTrans, bTrans := tA != blas.NoTrans, tB != blas.NoTrans
	if (!aTrans && lda < max(1, k)) || (aTrans && lda < max(1, m)) {
		panic("blas: bad leading dimension of A")
	}
	if (!bTrans && ldb < max(1, n)) || (bTrans && ldb < max(1, k)) {
		panic("blas: bad leading dimension of B")
	}
	if ldc < max(1, n) {
		panic("blas: bad leading dimension of C")
	}
	if m == 0 || n == 0 {
		return
	}
	if (!aTrans && len(a) < lda*(m-1)+k) || (aTrans && len(a) < lda*(k-1)+m) {
		panic("blas: insufficient length of a")
	}
	if (!bTrans && len(b) < ldb*(k-1)+n) || (bTrans && len(b) < ldb*(n-1)+k) {
		panic("blas: insufficient length of b")
	}
	if len(c) < ldc*(m-1)+n {
		panic("blas: insufficient length of c")
	}
}
