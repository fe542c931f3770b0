package tensor

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
// are 0, ±½ and ±1): a few ulps of the largest products summed.

// winograd reports whether s is computed with F(2×2, 3×3): a 3×3 kernel
// at stride 1 with enough channels that the GEMMs' savings outweigh the
// transforms. The GEMMs save in proportion to C·Co, the transforms cost in
// proportion to C + Co: on one core (BenchmarkWinogradChannels, 28×28,
// C = Co) Winograd takes 2.6× im2col's time at 8 channels, 1.3× at 16, as
// much at 32 and 0.77× at 64 (the paper's 51 → 50: 0.8×), so it is used
// from C·Co/(C + Co) ≥ 20 (C = Co = 40).
func (s convShape) winograd() bool {
	return s.kh == 3 && s.kw == 3 && s.stride == 1 && s.c*s.co >= winogradMinHarmonic*(s.c+s.co)
}

// winogradMinHarmonic is the least C·Co/(C + Co) that takes the Winograd
// path; tests lower it.
var winogradMinHarmonic = 20

// tiles returns the numbers of 2×2 output tiles down and across s's output.
func (s convShape) tiles() (th, tw int) { return (s.oh + 1) / 2, (s.ow + 1) / 2 }

// winoSizes returns the lengths of a part's buffers for s: the
// transformed input V [16, C, tiles], the products M [16, Co, tiles] and
// the scratch the transforms share: winoInput's zero row and four padded
// rows, winoOutput's and winoOutputGrad's twelve half-rows.
func winoSizes(s convShape) (v, m, scratch int) {
	th, tw := s.tiles()
	wp := 2*tw + 2
	return 16 * s.c * th * tw, 16 * s.co * th * tw, max(s.w+4*wp, 12*tw)
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
	for at := range plane {
		var m [16]T
		for xi := range 16 {
			m[xi] = du[xi*plane+at]
		}
		// t = Gᵀ m (3×4), then g = t G (3×3).
		var t [12]T
		for j := range 4 {
			m0, m1, m2, m3 := m[j], m[4+j], m[8+j], m[12+j]
			t[j] = m0 + (m1+m2)/2
			t[4+j] = (m1 - m2) / 2
			t[8+j] = (m1+m2)/2 + m3
		}
		g := dw[at*9 : at*9+9]
		for r := range 3 {
			t0, t1, t2, t3 := t[4*r], t[4*r+1], t[4*r+2], t[4*r+3]
			v0, v1, v2 := t0+(t1+t2)/2, (t1-t2)/2, (t1+t2)/2+t3
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

// winoInput sets v [16, C, tiles] to Bᵀ d B for every 4×4 input patch d
// of the sample x [C, H, W] under a 2×2 output tile (zero outside x).
// scratch is of winoSizes' length.
func winoInput[T Float](v, x, scratch []T, s convShape) {
	th, tw := s.tiles()
	nt := th * tw
	wp := 2*tw + 2                     // padded width: column x' holds x's column x' − pad
	cols := min(s.w, max(wp-s.pad, 0)) // columns of x that tiles read
	zero := scratch[:s.w]              // a row above or below x
	comb := scratch[s.w : s.w+4*wp]    // Bᵀ's rows applied to four padded rows
	clear(zero)
	clear(comb) // its padding columns stay zero
	plane := s.c * nt
	for c := range s.c {
		xc := x[c*s.h*s.w : (c+1)*s.h*s.w]
		row := func(y int) []T {
			if y < 0 || y >= s.h {
				return zero[:cols]
			}
			return xc[y*s.w : y*s.w+cols]
		}
		for ti := range th {
			// The four input rows under tile row ti, combined as Bᵀ's rows,
			// then each combined row's columns as B's.
			y := 2*ti - s.pad
			p := s.pad
			winoCombine(comb[p:p+cols], comb[wp+p:wp+p+cols], comb[2*wp+p:2*wp+p+cols], comb[3*wp+p:3*wp+p+cols], row(y), row(y+1), row(y+2), row(y+3))
			at := c*nt + ti*tw
			for i := range 4 {
				o := 4 * i * plane
				winoCols(v[o+at:o+at+tw], v[o+plane+at:o+plane+at+tw], v[o+2*plane+at:o+2*plane+at+tw], v[o+3*plane+at:o+3*plane+at+tw], comb[i*wp:(i+1)*wp])
			}
		}
	}
}

// winoCombine sets (c0, c1, c2, c3) = (r0 − r2, r1 + r2, r2 − r1, r1 − r3)
// elementwise: Bᵀ applied to four rows (or, in winoCols, to four columns).
func winoCombine[T Float](c0, c1, c2, c3, r0, r1, r2, r3 []T) {
	n := len(c0)
	c1, c2, c3, r0, r1, r2, r3 = c1[:n], c2[:n], c3[:n], r0[:n], r1[:n], r2[:n], r3[:n]
	for k := range n {
		a, b, c, d := r0[k], r1[k], r2[k], r3[k]
		c0[k], c1[k], c2[k], c3[k] = a-c, b+c, c-b, b-d
	}
}

// winoCols sets d0…d3[t] to Bᵀ applied to r[2t : 2t+4], for the len(d0)
// tiles along the row r.
func winoCols[T Float](d0, d1, d2, d3, r []T) {
	n := len(d0)
	d1, d2, d3 = d1[:n], d2[:n], d3[:n]
	for t := range n {
		q := r[2*t : 2*t+4]
		a, b, c, d := q[0], q[1], q[2], q[3]
		d0[t], d1[t], d2[t], d3[t] = a-c, b+c, c-b, b-d
	}
}

// winoOutput sets (or adds to, with add) the sample y [Co, OH, OW] from the
// products m [16, Co, tiles]: Aᵀ m A per tile, plus bias[o] when bias is
// not nil. scratch is of winoSizes' length.
func winoOutput[T Float](y, m, bias, scratch []T, s convShape, add bool) {
	th, tw := s.tiles()
	nt := th * tw
	plane := s.co * nt
	rows := scratch[:8*tw]       // Aᵀ's two rows applied down each of the 4 columns
	out := scratch[8*tw : 12*tw] // the two output rows of a tile row
	top, bot := out[:2*tw], out[2*tw:]
	for o := range s.co {
		var bo T
		if bias != nil {
			bo = bias[o]
		}
		yo := y[o*s.oh*s.ow : (o+1)*s.oh*s.ow]
		for ti := range th {
			at := o*nt + ti*tw
			for j := range 4 {
				mj := func(i int) []T { return m[(4*i+j)*plane+at : (4*i+j)*plane+at+tw] }
				winoDown(rows[2*j*tw:(2*j+1)*tw], rows[(2*j+1)*tw:(2*j+2)*tw], mj(0), mj(1), mj(2), mj(3))
			}
			winoAcross(top, rows[0:tw], rows[2*tw:3*tw], rows[4*tw:5*tw], rows[6*tw:7*tw], bo)
			winoAcross(bot, rows[tw:2*tw], rows[3*tw:4*tw], rows[5*tw:6*tw], rows[7*tw:8*tw], bo)
			for k, r := range [2][]T{top, bot} {
				yr := 2*ti + k
				if yr >= s.oh {
					break
				}
				dst := yo[yr*s.ow : (yr+1)*s.ow]
				if add {
					AxpySlice(1, r[:s.ow], dst)
				} else {
					copy(dst, r[:s.ow])
				}
			}
		}
	}
}

// winoDown sets a = m0 + m1 + m2 and b = m1 − m2 − m3 elementwise: Aᵀ
// applied down one column of the 4×4 products of each tile.
func winoDown[T Float](a, b, m0, m1, m2, m3 []T) {
	n := len(a)
	b, m0, m1, m2, m3 = b[:n], m0[:n], m1[:n], m2[:n], m3[:n]
	for t := range n {
		p, q, r := m1[t], m2[t], m3[t]
		a[t] = m0[t] + p + q
		b[t] = p - q - r
	}
}

// winoAcross sets y[2t] = c0 + c1 + c2 + bias and y[2t+1] = c1 − c2 − c3 +
// bias for each tile t: Aᵀ applied across one row of Aᵀ m.
func winoAcross[T Float](y, c0, c1, c2, c3 []T, bias T) {
	n := len(c0)
	c1, c2, c3 = c1[:n], c2[:n], c3[:n]
	y = y[:2*n]
	for t := range n {
		p, q := c1[t], c2[t]
		y[2*t] = c0[t] + p + q + bias
		y[2*t+1] = p - q - c3[t] + bias
	}
}

// winoOutputGrad sets m [16, Co, tiles] to A dy Aᵀ for each 2×2 tile of
// the output gradient dy [Co, OH, OW] (zero beyond its edge): the
// transpose of winoOutput. scratch is of winoSizes' length.
func winoOutputGrad[T Float](m, dy, scratch []T, s convShape) {
	th, tw := s.tiles()
	nt := th * tw
	plane := s.co * nt
	w2 := 2 * tw
	top, bot := scratch[:w2], scratch[w2:2*w2]
	ag := scratch[2*w2 : 6*w2] // A's four rows applied to (top, bot)
	clear(top)
	clear(bot)
	for o := range s.co {
		dyo := dy[o*s.oh*s.ow : (o+1)*s.oh*s.ow]
		for ti := range th {
			copy(top, dyo[2*ti*s.ow:(2*ti+1)*s.ow])
			if 2*ti+1 < s.oh {
				copy(bot, dyo[(2*ti+1)*s.ow:(2*ti+2)*s.ow])
			} else {
				clear(bot)
			}
			winoRowsA(ag[:w2], ag[w2:2*w2], ag[2*w2:3*w2], ag[3*w2:], top, bot)
			at := o*nt + ti*tw
			for i := range 4 {
				d := func(k int) []T { return m[(4*i+k)*plane+at : (4*i+k)*plane+at+tw] }
				winoSplit(d(0), d(1), d(2), d(3), ag[i*w2:(i+1)*w2])
			}
		}
	}
}

// winoRowsA sets (r0, r1, r2, r3) = (g0, g0 + g1, g0 − g1, −g1)
// elementwise: A = [1 0; 1 1; 1 −1; 0 −1] applied to the rows g0, g1.
func winoRowsA[T Float](r0, r1, r2, r3, g0, g1 []T) {
	n := len(r0)
	r1, r2, r3, g0, g1 = r1[:n], r2[:n], r3[:n], g0[:n], g1[:n]
	for k := range n {
		p, q := g0[k], g1[k]
		r0[k], r1[k], r2[k], r3[k] = p, p+q, p-q, -q
	}
}

// winoSplit sets (d0, d1, d2, d3)[t] = A applied to (r[2t], r[2t+1]).
func winoSplit[T Float](d0, d1, d2, d3, r []T) {
	n := len(d0)
	d1, d2, d3 = d1[:n], d2[:n], d3[:n]
	for t := range n {
		q := r[2*t : 2*t+2]
		a, b := q[0], q[1]
		d0[t], d1[t], d2[t], d3[t] = a, a+b, a-b, -b
	}
}

// winoConv computes the convolution s of the sample x into y (adding to it
// with add) with the transformed filter j.wu and part p's buffers, plus
// bias when not nil.
func (j *convJob[T]) winoConv(p int, s convShape, x, y, bias []T, add bool) {
	v, m := j.wv[p], j.wm[p]
	th, tw := s.tiles()
	nt := th * tw
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
	th, tw := s.tiles()
	nt := th * tw
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
