package tensor

import "unsafe"

// Winograd's minimal filtering F(2×2, 3×3) for stride-1 3×3
// convolutions (Lavin and Gray, 2016).
//
// The output is cut into 2×2 tiles; the 4×4 input patch d under a tile
// gives it as Y = Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A, with
//
//	Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
//	G  = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]
//	Aᵀ = [1 1 1 0; 0 1 −1 −1]
//
// Summed over input channels, the elementwise products become 16 GEMMs,
// one per position ξ of the 4×4 transformed tile:
//
//	M[ξ] (Co × tiles) = U[ξ] (Co × C) · V[ξ] (C × tiles)
//
// with U = G g Gᵀ the transformed filter and V = Bᵀ d B the transformed
// input: 16 multiplications per tile and channel pair where the direct
// convolution (im2col and one GEMM) takes 36, for transforms that cost
// additions only. The filter gradient is the transpose of the same maps:
// dU[ξ] = Σ_tiles (A dY Aᵀ)[ξ] · V[ξ]ᵀ and dg = Gᵀ dU G. Results differ
// from the direct convolution's by rounding only (the transforms' entries
// are 0, ±½ and ±1): a few ulps of the largest products summed. The
// transforms add only the terms with nonzero entries, so an infinite input
// reaches the outputs that read it and no others, as in the direct
// convolution, but mostly as NaN where the direct one gives ±Inf (opposite
// infinities meet in the transformed sums).

// winograd reports whether s is computed with F(2×2, 3×3): a 3×3 kernel
// at stride 1 with enough channels that the GEMMs' savings outweigh the
// transforms. The GEMMs save in proportion to C·Co, the transforms cost in
// proportion to C + Co. On one core (BenchmarkWinogradChannels: 28×28,
// batch 32, C = Co) Winograd takes, of im2col's time, 1.6× at 4 channels,
// 1.2× at 8, 0.87× at 12, 0.77× at 16, 0.69× at 32 and 0.60× at 64 with
// the AVX-512 transforms, so the assembly transforms (fast: float32 on the
// avx512 or avx2 kernel path) take it from C·Co/(C + Co) ≥ 6
// (C = Co = 12). On the avx2 path, with the AVX2 transforms and GEMMs, it
// measured 1.06–1.12× at 4 channels, 0.88× at 8, 0.67–0.70× at 12,
// 0.49–0.72× at 16 and 0.57–0.63× at 64 (BenchmarkWinogradAlternating,
// medians of 21 alternating rounds, three runs, ADAMNODE_CPU=avx2 on a
// shared 2-core AVX-512 Xeon, not an AVX2-only CPU): the same threshold.
// With the transforms in Go (float64, or the generic path) it measured
// 1.25× at 16 channels, even at 32 and 0.64× at 64 (float32, -tags
// purego), so the others take it from C·Co/(C + Co) ≥ 16.
func (s convShape) winograd(fast bool) bool {
	least := winogradMinHarmonic
	if least == 0 {
		least = 16
		if fast {
			least = 6
		}
	}
	return s.kh == 3 && s.kw == 3 && s.stride == 1 && s.c*s.co >= least*(s.c+s.co)
}

// winogradMinHarmonic, when not 0, replaces winograd's thresholds (tests
// and benchmarks set it).
var winogradMinHarmonic = 0

// tiles returns the numbers of 2×2 output tiles down and across s's
// output, and the length of a channel's plane in V and M: th rows of
// tw + 1 tiles, the last of each row unused (it lets the transforms run on
// whole planes, winoInput).
func (s convShape) tiles() (th, tw, n int) {
	th, tw = (s.oh+1)/2, (s.ow+1)/2
	return th, tw, th * (tw + 1)
}

// winoSizes returns the lengths of a part's buffers for s: the
// transformed input V [16, C, n], the products M [16, Co, n] (n from
// tiles) and the scratch the transforms share: winoInput's four parity
// planes of the padded channel and their row combinations, winoOutput's
// twelve planes, winoOutputGrad's thirteen.
func winoSizes(s convShape) (v, m, scratch int) {
	th, tw, n := s.tiles()
	pl := (th + 1) * (tw + 1)
	return 16 * s.c * n, 16 * s.co * n, max(4*pl+8*n+2, 13*n)
}

// winoFilter sets u [16, Co, C] to G g Gᵀ for each filter g [3, 3] of
// w [Co, C, 3, 3].
func winoFilter[T Float](u, w []T, co, c int) {
	plane := co * c
	for o := range co {
		for i := range c {
			g := w[(o*c+i)*9 : (o*c+i)*9+9]
			// t = G g (4×3), then u = t Gᵀ (4×4).
			var t [12]T
			for j := range 3 {
				g0, g1, g2 := g[j], g[3+j], g[6+j]
				t[j] = g0
				t[3+j] = (g0 + g1 + g2) / 2
				t[6+j] = (g0 - g1 + g2) / 2
				t[9+j] = g2
			}
			at := o*c + i
			for r := range 4 {
				t0, t1, t2 := t[3*r], t[3*r+1], t[3*r+2]
				u[(4*r+0)*plane+at] = t0
				u[(4*r+1)*plane+at] = (t0 + t1 + t2) / 2
				u[(4*r+2)*plane+at] = (t0 - t1 + t2) / 2
				u[(4*r+3)*plane+at] = t2
			}
		}
	}
}

// winoFilterGrad adds Gᵀ du G, for each du [4, 4] of du [16, Co, C], to
// dw [Co, C, 3, 3] (or sets it, without add).
func winoFilterGrad[T Float](dw, du []T, co, c int, add bool) {
	plane := co * c
	var sign [16]T // winoOutputGrad stores positions (2, k) and (i, 2) negated
	for xi := range sign {
		sign[xi] = 1
		if xi/4 == 2 {
			sign[xi] = -sign[xi]
		}
		if xi%4 == 2 {
			sign[xi] = -sign[xi]
		}
	}
	for at := range plane {
		var m [16]T
		for xi := range 16 {
			m[xi] = sign[xi] * du[xi*plane+at]
		}
		// t = Gᵀ m (3×4), then g = t G (3×3). The halves are rounded
		// before they are added (T(…)): the compiler turns x/2 into x·½,
		// and on arm64 it would fuse that product and the sum into one
		// multiply-add, which rounds differently where x/2 is inexact
		// (subnormal x), so the bits would depend on GOARCH.
		var t [12]T
		for j := range 4 {
			m0, m1, m2, m3 := m[j], m[4+j], m[8+j], m[12+j]
			h := T((m1 + m2) / 2)
			t[j] = m0 + h
			t[4+j] = (m1 - m2) / 2
			t[8+j] = h + m3
		}
		g := dw[at*9 : at*9+9]
		for r := range 3 {
			t0, t1, t2, t3 := t[4*r], t[4*r+1], t[4*r+2], t[4*r+3]
			h := T((t1 + t2) / 2)
			v0, v1, v2 := t0+h, T((t1-t2)/2), h+t3
			if add {
				g[3*r] += v0
				g[3*r+1] += v1
				g[3*r+2] += v2
			} else {
				g[3*r], g[3*r+1], g[3*r+2] = v0, v1, v2
			}
		}
	}
}

// winoInput sets v [16, C, n] to Bᵀ d B for every 4×4 input patch d
// of the sample x [C, H, W] under a 2×2 output tile (zero outside x);
// tile (ti, tj) is at ti·(tw + 1) + tj. scratch is of winoSizes' length.
//
// Each channel, zero-padded, is first split by the parity of its rows and
// columns into four planes of (th + 1) × (tw + 1): the patch of tile
// (ti, tj) covers rows ti and ti + 1 and columns tj and tj + 1 of each.
// Bᵀ applied down the patches' rows, then across their columns, is then
// two and four elementwise combinations of whole planes (winoCombine),
// one shifted by a row or a column; the extra tile of each row takes what
// the shift brings in and is never read. In float32 on the avx512 and
// avx2 kernel paths one kernel per channel does both combinations
// (winoInputChannelAVX512, winoInputChannelAVX2: on planes of 8 positions
// or more), without the planes between them.
func winoInput[T Float](v, x, scratch []T, s convShape) {
	th, tw, n := s.tiles()
	we := tw + 1
	pl := (th + 1) * we
	par := scratch[: 4*pl+1 : 4*pl+1]   // plane (rp, cp) at (2·rp + cp)·pl
	cmb := scratch[4*pl+1 : 4*pl+8*n+2] // Bᵀ's row i on columns of parity cp at (2·i + cp)·n
	clear(par)                          // the padding stays zero: every channel writes the same places
	rows := min(s.h, 2*th+2-s.pad)
	cols := min(s.w, 2*we-s.pad)
	plane := s.c * n
	for c := range s.c {
		xc := x[c*s.h*s.w : (c+1)*s.h*s.w]
		for q := range 2 { // the rows y with y + pad of parity q, one call
			y0 := (q - s.pad) & 1
			if y0 >= rows {
				continue
			}
			at := ((y0+s.pad)>>1)*we + 2*q*pl
			end := (2*q + 1) * pl // of the even-column plane of these rows
			splitColumnRows(par[at:end], par[pl+at:pl+end], xc[y0*s.w:], cols, (rows-y0+1)/2, 2*s.w, we, s.pad)
		}
		if k := fusedWino[T](n); k != winoGo {
			_, _ = par[4*pl], v[15*plane+c*n+n-1] // what the kernel reads and writes
			if k == winoOnAVX512 {
				winoInputChannelAVX512(f32(v[c*n:]), plane, f32(par), pl, we, n)
			} else {
				winoInputChannelAVX2(f32(v[c*n:]), plane, f32(par), pl, we, n)
			}
			continue
		}
		for cp := range 2 {
			r0, r1 := par[cp*pl:], par[(2+cp)*pl:] // even and odd rows
			winoCombine(cmb[cp*n:cp*n+n], cmb[(2+cp)*n:(2+cp)*n+n], cmb[(4+cp)*n:(4+cp)*n+n], cmb[(6+cp)*n:(6+cp)*n+n], r0[:n], r1[:n], r0[we:we+n], r1[we:we+n])
		}
		for i := range 4 {
			e, o := cmb[2*i*n:], cmb[(2*i+1)*n:] // even and odd columns
			b := 4*i*plane + c*n
			winoCombine(v[b:b+n], v[b+plane:b+plane+n], v[b+2*plane:b+2*plane+n], v[b+3*plane:b+3*plane+n], e[:n], o[:n], e[1:n+1], o[1:n+1])
		}
	}
}

// winoFused has winoInput, winoOutput and winoOutputGrad run their two
// passes as one kernel where they have one (float32 on the avx512 and avx2
// kernel paths; sse2 has none); tests turn it off to compare.
var winoFused = true

// winoKernels is a set of kernels for the transforms' elementwise loops.
type winoKernels uint8

const (
	winoGo       winoKernels = iota // the Go loops of this file
	winoOnAVX2                      // winograd_avx2_amd64.s: 8 lanes, YMM registers
	winoOnAVX512                    // winograd_amd64.s: 16 lanes, ZMM registers and masks
	winoOnSSE2                      // winograd_sse2_amd64.s: 4 lanes, XMM registers, no fused kernels
)

// String names the kernels as the kernel paths are named.
func (k winoKernels) String() string { return [...]string{"go", "avx2", "avx512", "sse2"}[k] }

// fast reports whether Winograd takes its lower threshold with the
// kernels k (see convShape.winograd): the AVX2 and AVX-512 ones, whose
// fused transforms make it pay on smaller convolutions. The SSE2 kernels
// keep the Go loops' threshold: their transforms are the Go loops' two
// passes, each in vector code.
func (k winoKernels) fast() bool { return k == winoOnAVX2 || k == winoOnAVX512 }

// winoKernFor returns the kernels of T's transforms: winoKern in float32,
// the Go loops in float64.
func winoKernFor[T Float]() winoKernels {
	if isFloat32[T]() {
		return winoKern
	}
	return winoGo
}

// fusedWino returns the fused kernels that the transforms of T run on
// planes of n positions, winoGo for the two passes: the AVX2 kernels need
// a whole vector (n ≥ 8), the AVX-512 ones a position; the SSE2 kernels
// have none.
func fusedWino[T Float](n int) winoKernels {
	k := winoKernFor[T]()
	if !winoFused || n < 1 || k == winoOnAVX2 && n < 8 || k == winoOnSSE2 {
		return winoGo
	}
	return k
}

// splitColumns writes row, shifted right by pad, into the even and odd
// columns ev and od of a padded row: column x′ = x + pad of it goes to
// ev[x′/2] or od[x′/2].
func splitColumns[T Float](ev, od, row []T, pad int) {
	splitColumnRows(ev, od, row, len(row), 1, 0, 0, pad)
}

// splitColumnRows is splitColumns on rows rows of cols elements: row r of
// x at r·xStride into ev and od at r·dStride.
func splitColumnRows[T Float](ev, od, x []T, cols, rows, xStride, dStride, pad int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	a, b := ev[pad/2:], od[pad/2:] // x[2k] and x[2k+1] for even pad
	if pad&1 == 1 {
		a, b = od[pad/2:], ev[pad/2+1:]
	}
	n := cols / 2
	last := (rows - 1) * dStride
	a, b, x = a[:last+n+cols&1], b[:last+n], x[:(rows-1)*xStride+cols] // the extents, checked here
	if k := winoKernFor[T](); k != winoGo && cols > 1 {
		switch k {
		case winoOnAVX512:
			splitAVX512(f32(a), f32(b), f32(x), cols, rows, xStride, dStride)
		case winoOnAVX2:
			splitAVX2(f32(a), f32(b), f32(x), cols, rows, xStride, dStride)
		default:
			splitSSE2(f32(a), f32(b), f32(x), cols, rows, xStride, dStride)
		}
		return
	}
	for r := range rows {
		row, ar, br := x[r*xStride:r*xStride+cols], a[r*dStride:], b[r*dStride:]
		ar, br = ar[:n+cols&1], br[:n]
		for k := range n {
			p := row[2*k : 2*k+2 : 2*k+2]
			ar[k], br[k] = p[0], p[1]
		}
		if cols&1 == 1 {
			ar[n] = row[2*n]
		}
	}
}

// winoCombine sets (c0, c1, c2, c3) = (r0 − r2, r1 + r2, r2 − r1, r1 − r3)
// elementwise: Bᵀ applied to four rows, or across the columns of tiles.
func winoCombine[T Float](c0, c1, c2, c3, r0, r1, r2, r3 []T) {
	n := len(c0)
	c1, c2, c3, r0, r1, r2, r3 = c1[:n], c2[:n], c3[:n], r0[:n], r1[:n], r2[:n], r3[:n]
	if n == 0 {
		return
	}
	switch winoKernFor[T]() {
	case winoOnAVX512:
		winoCombineAVX512(f32(c0), f32(c1), f32(c2), f32(c3), f32(r0), f32(r1), f32(r2), f32(r3), n)
		return
	case winoOnAVX2:
		winoCombineAVX2(f32(c0), f32(c1), f32(c2), f32(c3), f32(r0), f32(r1), f32(r2), f32(r3), n)
		return
	case winoOnSSE2:
		winoCombineSSE2(f32(c0), f32(c1), f32(c2), f32(c3), f32(r0), f32(r1), f32(r2), f32(r3), n)
		return
	}
	for k := range n {
		a, b, c, d := r0[k], r1[k], r2[k], r3[k]
		c0[k], c1[k], c2[k], c3[k] = a-c, b+c, c-b, b-d
	}
}

// winoDown sets a = m0 + m1 + m2 + bias and b = m1 − m2 − m3 + bias
// elementwise (summed left to right): Aᵀ applied to four rows.
func winoDown[T Float](a, b, m0, m1, m2, m3 []T, bias T) {
	n := len(a)
	b, m0, m1, m2, m3 = b[:n], m0[:n], m1[:n], m2[:n], m3[:n]
	if n == 0 {
		return
	}
	switch winoKernFor[T]() {
	case winoOnAVX512:
		winoDownAVX512(f32(a), f32(b), f32(m0), f32(m1), f32(m2), f32(m3), n, float32(bias))
		return
	case winoOnAVX2:
		winoDownAVX2(f32(a), f32(b), f32(m0), f32(m1), f32(m2), f32(m3), n, float32(bias))
		return
	case winoOnSSE2:
		winoDownSSE2(f32(a), f32(b), f32(m0), f32(m1), f32(m2), f32(m3), n, float32(bias))
		return
	}
	for t := range n {
		p, q := m1[t], m2[t]
		a[t] = m0[t] + p + q + bias
		b[t] = p - q - m3[t] + bias
	}
}

// isFloat32 reports whether T is float32.
func isFloat32[T Float]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}

// f32 returns the first element of x, a []float32, as a *float32.
func f32[T Float](x []T) *float32 { return (*float32)(unsafe.Pointer(&x[0])) }

// winoOutput sets (or adds to, with add) the sample y [Co, OH, OW] from the
// products m [16, Co, n]: Aᵀ m A per tile, plus bias[o] when bias is not
// nil: Aᵀ down the tiles' columns, then across, each on whole planes (in
// one kernel per channel in float32 on the avx512 and avx2 kernel paths),
// and the even and odd output columns joined. scratch is of winoSizes'
// length.
func winoOutput[T Float](y, m, bias, scratch []T, s convShape, add bool) {
	th, tw, n := s.tiles()
	we := tw + 1
	plane := s.co * n
	st := scratch[:12*n]
	p := func(k int) []T { return st[k*n : (k+1)*n] }
	for o := range s.co {
		var bo T
		if bias != nil {
			bo = bias[o]
		}
		at := o * n
		if k := fusedWino[T](n); k != winoGo {
			_, _ = st[12*n-1], m[15*plane+at+n-1] // what the kernel writes and reads
			if k == winoOnAVX512 {
				winoOutputChannelAVX512(f32(st[8*n:]), n, f32(m[at:]), plane, float32(bo))
			} else {
				winoOutputChannelAVX2(f32(st[8*n:]), n, f32(m[at:]), plane, float32(bo))
			}
		} else {
			for j := range 4 { // column j of the tiles: rows 0 and 1 of Aᵀ m into planes 2j, 2j + 1
				mj := func(i int) []T { return m[(4*i+j)*plane+at : (4*i+j)*plane+at+n] }
				winoDown(p(2*j), p(2*j+1), mj(0), mj(1), mj(2), mj(3), 0)
			}
			// Planes 8–11: the top rows' even and odd columns, the bottom rows'.
			winoDown(p(8), p(9), p(0), p(2), p(4), p(6), bo)
			winoDown(p(10), p(11), p(1), p(3), p(5), p(7), bo)
		}
		yo := y[o*s.oh*s.ow : (o+1)*s.oh*s.ow]
		for ti := range th {
			for k := range 2 {
				yr := 2*ti + k
				if yr >= s.oh {
					break
				}
				r := ti * we
				joinColumns(yo[yr*s.ow:(yr+1)*s.ow], p(8 + 2*k)[r:r+tw], p(9 + 2*k)[r:r+tw], add)
			}
		}
	}
}

// joinColumns sets (or adds to, with add) dst's even columns from even
// and its odd ones from odd.
func joinColumns[T Float](dst, even, odd []T, add bool) {
	n := len(dst) / 2
	even, odd = even[:n+len(dst)&1], odd[:n]
	if k := winoKernFor[T](); k != winoGo && len(dst) > 1 {
		switch k {
		case winoOnAVX512:
			joinAVX512(f32(dst), f32(even), f32(odd), len(dst), add)
		case winoOnAVX2:
			joinAVX2(f32(dst), f32(even), f32(odd), len(dst), add)
		default:
			joinSSE2(f32(dst), f32(even), f32(odd), len(dst), add)
		}
		return
	}
	if add {
		for t := range n {
			p := dst[2*t : 2*t+2 : 2*t+2]
			p[0] += even[t]
			p[1] += odd[t]
		}
		if len(dst)&1 == 1 {
			dst[2*n] += even[n]
		}
		return
	}
	for t := range n {
		p := dst[2*t : 2*t+2 : 2*t+2]
		p[0], p[1] = even[t], odd[t]
	}
	if len(dst)&1 == 1 {
		dst[2*n] = even[n]
	}
}

// winoOutputGrad sets m [16, Co, n] to A dy Aᵀ for each 2×2 tile of the
// output gradient dy [Co, OH, OW] (zero beyond its edge and in the unused
// tile of each row): the transpose of winoOutput, with the positions
// (2, k) and (i, 2) of each 4×4 result negated (winoFilterGrad undoes it).
// Each channel of dy is split by the parity of its rows and columns; A's
// rows (1, 1 + 1, 1 − 1, −1 applied to a tile's two rows) and then its
// columns are each one winoCombine of whole planes with a zero plane:
// combine(0, a, b, 0) = (−b, a + b, b − a, a); in float32 on the avx512
// and avx2 kernel paths, one kernel per channel does both. scratch is of
// winoSizes' length.
func winoOutputGrad[T Float](m, dy, scratch []T, s convShape) {
	_, tw, n := s.tiles()
	we := tw + 1
	plane := s.co * n
	st := scratch[:13*n]
	p := func(k int) []T { return st[k*n : (k+1)*n] }
	// Planes 0–3: dy's even rows' even and odd columns, its odd rows';
	// 4: zero; 5–12: A's rows on the even columns (5–8), the odd (9–12).
	clear(st[:5*n])
	for o := range s.co {
		dyo := dy[o*s.oh*s.ow : (o+1)*s.oh*s.ow]
		for yr := range s.oh {
			r := (yr>>1)*we + 2*(yr&1)*n
			splitColumns(st[r:r+we], st[n+r:n+r+we], dyo[yr*s.ow:(yr+1)*s.ow], 0)
		}
		if k := fusedWino[T](n); k != winoGo {
			_, _ = st[4*n-1], m[15*plane+o*n+n-1] // what the kernel reads and writes
			if k == winoOnAVX512 {
				winoOutputGradChannelAVX512(f32(m[o*n:]), plane, f32(st), n)
			} else {
				winoOutputGradChannelAVX2(f32(m[o*n:]), plane, f32(st), n)
			}
			continue
		}
		z := p(4)
		for cp := range 2 { // rows: (−b, a + b, −(a − b), a) for a, b the top and bottom rows
			winoCombine(p(5+4*cp), p(6+4*cp), p(7+4*cp), p(8+4*cp), z, p(cp), p(2+cp), z)
		}
		// p(5+i), p(9+i) hold A's row i' = (3, 1, 2, 0)[i] (even, odd columns).
		rowOf := [4]int{3, 1, 2, 0}
		for i := range 4 {
			e, od := p(5+i), p(9+i)
			at := func(k int) []T { return m[(4*rowOf[i]+k)*plane+o*n : (4*rowOf[i]+k)*plane+o*n+n] }
			winoCombine(at(3), at(1), at(2), at(0), z, e, od, z)
		}
	}
}

// winoConv computes the convolution s of the sample x into y (adding to it
// with add) with the transformed filter j.wu and part p's buffers, plus
// bias when not nil.
func (j *convJob[T]) winoConv(p int, s convShape, x, y, bias []T, add bool) {
	v, m := j.wv[p], j.wm[p]
	_, _, nt := s.tiles()
	winoInput(v, x, j.wrow[p], s)
	for xi := range 16 {
		j.gemm(false, false, s.co, nt, s.c, 1, j.wu[xi*s.co*s.c:], s.c, v[xi*s.c*nt:], nt, 0, m[xi*s.co*nt:], nt)
	}
	winoOutput(y, m, bias, j.wrow[p], s, add)
}

// winoFilterPass adds the filter gradient of samples lo to hi to dw (or
// sets it, without add) and their bias gradient to db when not nil, with
// part p's buffers.
func (j *convJob[T]) winoFilterPass(p, lo, hi int, dw, db []T, add bool) {
	s := j.s
	v, m, du := j.wv[p], j.wm[p], j.wdu[p]
	_, _, nt := s.tiles()
	xsz, ysz := s.c*s.h*s.w, s.co*s.p
	clear(du)
	for b := lo; b < hi; b++ {
		xb, dyb := j.x[b*xsz:(b+1)*xsz], j.y[b*ysz:(b+1)*ysz]
		winoInput(v, xb, j.wrow[p], s)
		winoOutputGrad(m, dyb, j.wrow[p], s)
		for xi := range 16 {
			j.gemm(false, true, s.co, s.c, nt, 1, m[xi*s.co*nt:], nt, v[xi*s.c*nt:], nt, 1, du[xi*s.co*s.c:], s.c)
		}
		if db != nil {
			for o := range db[:s.co] {
				db[o] += T(SumSlice(dyb[o*s.p : (o+1)*s.p]))
			}
		}
	}
	winoFilterGrad(dw, du, s.co, s.c, add)
}
