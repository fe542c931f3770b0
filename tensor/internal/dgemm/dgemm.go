// Package dgemm is a float64 GEMM for amd64 with AVX-512: the blocked
// algorithm of Goto and van de Geijn (as in BLIS) around micro-kernels in Go
// assembly, the float64 counterpart of package sgemm. Elsewhere, and in the
// purego build, it is gonum's Dgemm.
//
// Dgemm packs B, a KC×NC block at a time, into panels of 16 columns (the
// last one 8 or 4 when at most that many remain) and A, an MC×KC block at
// a time, into panels of 12 rows, both zero-padded; a 12×16 (or 12×8,
// 12×4) kernel with the accumulators in vector registers then computes
// each tile of C, storing
// partial tiles at the edges through masks (a block's last panel of A, of
// fewer than 12 rows, runs a kernel of 4 or 8 rows where that covers it).
// An untransposed B is read in place when C has few rows, a transposed A
// in place (and an untransposed one by rows) when C is narrow, as in
// package sgemm.
//
// The register tile is 12×16: 24 accumulators (12 rows of two 8-lane
// vectors), the two vectors of B of the current step and 6 registers for
// the broadcast A values fill the 32 ZMM registers. Each k step loads 2
// vectors of B and 12 scalars of A for 24 FMAs, the best ratio of FMAs to
// loads that 32 registers allow with two vectors of B (a 16×8 tile would
// need 16 loads of A for 16 FMAs; 8×24 has 24 FMAs for 11 loads but
// leaves MLP widths of 16 and 64 columns with a partly masked third
// vector). Pack buffers come from a free list, so a call allocates nothing
// in the steady state.
package dgemm

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
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

// buffers are the pack buffers of one call: panels of A and of B.
type buffers struct{ a, b []float64 }

// free holds the pack buffers of finished calls: as many as calls ever ran
// at once. (A sync.Pool would do, but drops buffers at random under the
// race detector and at each GC, which then shows as allocation.)
var free struct {
	sync.Mutex
	list []*buffers
}

// getBuffers takes a pair of pack buffers from the free list, or new ones.
func getBuffers() *buffers {
	free.Lock()
	defer free.Unlock()
	if n := len(free.list); n > 0 {
		b := free.list[n-1]
		free.list = free.list[:n-1]
		return b
	}
	return new(buffers)
}

// putBuffers returns b to the free list.
func putBuffers(b *buffers) {
	free.Lock()
	free.list = append(free.list, b)
	free.Unlock()
}

// Enabled reports whether Dgemm runs the assembly kernels (rather than
// gonum's Dgemm).
func Enabled() bool { return hasKernel }

// Dgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices,
// where op(A) is m×k, op(B) is k×n and C is m×n, with the contract of
// blas.Float64's Dgemm: when beta is 0, C is not read.
func Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	checkArgs(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if !hasKernel {
		gonum.Implementation{}.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if k == 0 || alpha == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	blocked(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, nil, c, ldc)
}

// DgemmBias computes C = alpha·op(A)·op(B) + 1·biasᵀ, bias (of length at
// least n) added to every row of the product, without reading C: the
// affine map of a linear layer, the bias added as the kernels store C
// instead of in a pass of its own.
func DgemmBias(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, bias, c []float64, ldc int) {
	checkArgs(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
	if len(bias) < n {
		panic("dgemm: bias shorter than n")
	}
	if m == 0 || n == 0 {
		return
	}
	if !hasKernel || k == 0 || alpha == 0 {
		broadcastRows(m, n, bias, c, ldc)
		if k > 0 && alpha != 0 {
			gonum.Implementation{}.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, 1, c, ldc)
		}
		return
	}
	blocked(tA, tB, m, n, k, alpha, a, lda, b, ldb, 0, bias[:n], c, ldc)
}

// broadcastRows sets the first n elements of each of the m rows of c (ldc
// apart) to bias[:n].
func broadcastRows(m, n int, bias, c []float64, ldc int) {
	for i := range m {
		copy(c[i*ldc:i*ldc+n], bias[:n])
	}
}

// blocked is Dgemm by the kernels, for positive m, n, k and alpha ≠ 0,
// with the bias (nil for none) added at the first block of k, where beta
// must then be 0.
func blocked(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, bias, c []float64, ldc int) {
	transA, transB := tA != blas.NoTrans, tB != blas.NoTrans
	buf := getBuffers()
	kb0 := min(kc, k)
	if need := roundUp(min(mc, m), mr) * kb0; len(buf.a) < need {
		buf.a = make([]float64, need)
	}
	if need := roundUp(min(nc, n), nr) * kb0; len(buf.b) < need {
		buf.b = make([]float64, need)
	}
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			bm := bMatrix{b: buf.b}
			if !transB && m <= directBMaxM {
				bm = bMatrix{b: b[pc*ldb+jc:], ldb: ldb}
			} else {
				packB(buf.b, transB, b, ldb, pc, jc, kb, nb)
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
				blk := aBlock{trans: transA, kb: kb, mb: mb}
				if packAll || nb >= packAMinN {
					packA(buf.a, transA, a, lda, ic, pc, mb, kb)
					blk.edge = 0
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
						packA(buf.a, transA, a, lda, ic+blk.edge, pc, mb-blk.edge, kb)
					}
				}
				macroKernel(&blk, buf.a, &bm, c[ic*ldc+jc:], ldc, nb, alpha, bet, bi)
			}
		}
	}
	putBuffers(buf)
}

// directBMaxM is the largest m for which an untransposed B is read in
// place rather than packed: packing pays when many panels of A reuse B.
var directBMaxM = 96

// bMatrix is a kb×nb block of op(B): packed (ldb = 0), or rows of B in place.
type bMatrix struct {
	b   []float64
	ldb int
}

// panel returns the panel of columns j0.. of B and its stride.
func (bm *bMatrix) panel(j0, kb, w int) (*float64, int) {
	if bm.ldb != 0 {
		return &bm.b[j0], bm.ldb
	}
	return &bm.b[j0*kb], panelWidth(w)
}

// packAll makes Dgemm pack every panel of A (else only the edge panels).
var packAll = false

// packAMinN is the width of C from which A is packed: then many panels of
// B reuse each panel of A, which is read faster packed (package sgemm's
// threshold, not tuned again for float64).
const packAMinN = 512

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

// roundUp rounds x up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }

// aBlock is an mb×kb block of op(A): its panels of mr rows below edge are
// read in place (a[p·lda + i] when trans, else a[i·lda + p]), the last one,
// from edge on, from the packed buffer.
type aBlock struct {
	a      []float64
	lda    int
	trans  bool
	kb, mb int
	edge   int
}

// macroKernel runs the micro-kernel over the mb×nb block of C from the A
// block and the B block (kb×nb), each B panel against every A panel, adding
// bias[j] (nil for none; beta is then 0) to column j.
func macroKernel(blk *aBlock, pa []float64, bm *bMatrix, c []float64, ldc, nb int, alpha, beta float64, bias []float64) {
	kb := blk.kb
	for j0 := 0; j0 < nb; j0 += nr {
		w := min(nr, nb-j0)
		mask := lanes(w)
		bp, ldb := bm.panel(j0, kb, w)
		var bi *float64
		if bias != nil {
			bi = &bias[j0]
		}
		i0 := 0
		for ; i0 < blk.edge; i0 += mr {
			cp := &c[i0*ldc+j0]
			if blk.trans {
				edgeKernel(mr, w)(kb, &blk.a[i0], blk.lda, bp, ldb, cp, ldc, alpha, beta, mr, mask, bi)
			} else {
				rowKernel(w)(kb, &blk.a[i0*blk.lda], blk.lda, bp, ldb, cp, ldc, alpha, beta, mr, mask, bi)
			}
		}
		for ; i0 < blk.mb; i0 += mr {
			rows := min(mr, blk.mb-i0)
			edgeKernel(rows, w)(kb, &pa[(i0-blk.edge)*kb], mr, bp, ldb, &c[i0*ldc+j0], ldc, alpha, beta, rows, mask, bi)
		}
	}
}

// kernelFunc is a packed-A micro-kernel (kernP16 and the like).
type kernelFunc func(k int, a *float64, ka int, b *float64, ldb int, c *float64, ldc int, alpha, beta float64, rows int, mask uint32, bias *float64)

// edgeKernel returns the packed-A kernel for a panel of rows rows (at most
// mr) and w columns: the one computing the fewest rows that covers them
// (4, 8 or mr) and the fewest columns (4, 8 or nr), so that a last panel
// of a few rows or columns does not cost a full one.
func edgeKernel(rows, w int) kernelFunc {
	var ks [3]kernelFunc // the kernels of 4, 8 and mr rows
	switch panelWidth(w) {
	case 4:
		ks = [3]kernelFunc{kernP4r4, kernP4r8, kernP4}
	case 8:
		ks = [3]kernelFunc{kernP8r4, kernP8r8, kernP8}
	default:
		ks = [3]kernelFunc{kernP16r4, kernP16r8, kernP16}
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
func rowKernel(w int) kernelFunc {
	switch panelWidth(w) {
	case 4:
		return kernS4
	case 8:
		return kernS8
	}
	return kernS16
}

// packA packs the mb×kb block of op(A) at (ic, pc) into panels of mr rows:
// element (i, p) of panel q at dst[q·mr·kb + p·mr + i], rows past mb zero.
func packA(dst []float64, trans bool, a []float64, lda, ic, pc, mb, kb int) {
	for i0 := 0; i0 < mb; i0 += mr {
		// trans: op(A)(i, p) = a[p·lda + i], the rows of a panel contiguous
		// for each p; else a[i·lda + p], one row of A per lane.
		base := (ic+i0)*lda + pc
		if trans {
			base = pc*lda + ic + i0
		}
		packPanel(dst[i0*kb:i0*kb+kb*mr], mr, min(mr, mb-i0), kb, trans, a, base, lda)
	}
}

// packB packs the kb×nb block of op(B) at (pc, jc) into panels of nr
// columns (the last of 8 or 4 when at most that many remain): element (p, j) of the
// panel at column j0 at dst[j0·kb + p·s + j] with s its width, columns past
// nb zero.
func packB(dst []float64, trans bool, b []float64, ldb, pc, jc, kb, nb int) {
	for j0 := 0; j0 < nb; j0 += nr {
		w := min(nr, nb-j0)
		s := panelWidth(w)
		// trans: op(B)(p, j) = b[j·ldb + p], one row of B per lane; else
		// b[p·ldb + j], the columns of a panel contiguous for each p.
		base := pc*ldb + jc + j0
		if trans {
			base = (jc+j0)*ldb + pc
		}
		packPanel(dst[j0*kb:j0*kb+kb*s], s, w, kb, !trans, b, base, ldb)
	}
}

// packPanel writes a panel of kb steps of w lanes into d, lane l of step p
// at d[p·s + l], lanes w..s−1 zero. With perStep the w values of step p
// lie contiguous at src[base + p·ld]; otherwise the kb values of lane l
// lie contiguous at src[base + l·ld].
func packPanel(d []float64, s, w, kb int, perStep bool, src []float64, base, ld int) {
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

// lanes is the mask of the first n lanes, n ≤ 32 (the kernels read 16).
func lanes(n int) uint32 {
	if n >= 32 {
		return ^uint32(0)
	}
	return uint32(1)<<n - 1
}

// scale sets C = beta·C, not reading C when beta is 0.
func scale(m, n int, beta float64, c []float64, ldc int) {
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

// checkArgs panics as gonum's Dgemm does on invalid arguments.
func checkArgs(tA, tB blas.Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	okT := func(t blas.Transpose) bool {
		return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
	}
	if !okT(tA) {
		panic("blas: illegal transpose")
	}
	if !okT(tB) {
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
