package tensor

// im2col writes the patches of one sample x [C, H, W] into col [K, P], K =
// C·KH·KW rows ordered (c, i, j) and P = OH·OW columns ordered (p, q):
//
//	col[(c,i,j), (p,q)] = x[c, p·s−pad+i, q·s−pad+j], or 0 outside x.
func im2col[T Float](col, x []T, s convShape) {
	if s.stride == 1 && s.oh == s.h+2*s.pad-s.kh+1 {
		im2colStride1(col, x, s)
		return
	}
	row := 0
	for c := 0; c < s.c; c++ {
		xc := x[c*s.h*s.w : (c+1)*s.h*s.w]
		for i := 0; i < s.kh; i++ {
			for j := 0; j < s.kw; j++ {
				dst := col[row*s.p : (row+1)*s.p]
				row++
				qlo, qhi := validRange(s.w, s.ow, j, s.stride, s.pad)
				for p := 0; p < s.oh; p++ {
					d := dst[p*s.ow : (p+1)*s.ow]
					iy := p*s.stride - s.pad + i
					if iy < 0 || iy >= s.h || qlo >= qhi {
						clear(d)
						continue
					}
					clear(d[:qlo])
					clear(d[qhi:])
					src := xc[iy*s.w:]
					ix := qlo*s.stride - s.pad + j
					if s.stride == 1 {
						copy(d[qlo:qhi], src[ix:ix+qhi-qlo])
						continue
					}
					for q := qlo; q < qhi; q++ {
						d[q] = src[ix]
						ix += s.stride
					}
				}
			}
		}
	}
}

// col2im adds the columns of col [K, P] back into the sample dx [C, H, W]
// they were taken from: the adjoint of im2col.
func col2im[T Float](dx, col []T, s convShape) {
	row := 0
	for c := 0; c < s.c; c++ {
		dc := dx[c*s.h*s.w : (c+1)*s.h*s.w]
		for i := 0; i < s.kh; i++ {
			for j := 0; j < s.kw; j++ {
				src := col[row*s.p : (row+1)*s.p]
				row++
				qlo, qhi := validRange(s.w, s.ow, j, s.stride, s.pad)
				if qlo >= qhi {
					continue
				}
				for p := 0; p < s.oh; p++ {
					iy := p*s.stride - s.pad + i
					if iy < 0 || iy >= s.h {
						continue
					}
					d := dc[iy*s.w:]
					sp := src[p*s.ow : (p+1)*s.ow]
					ix := qlo*s.stride - s.pad + j
					if s.stride == 1 {
						AxpySlice(1, sp[qlo:qhi], d[ix:ix+qhi-qlo])
						continue
					}
					for q := qlo; q < qhi; q++ {
						d[ix] += sp[q]
						ix += s.stride
					}
				}
			}
		}
	}
}

// validRange returns the output columns [qlo, qhi) whose input column
// q·stride − pad + j lies inside [0, w).
func validRange(w, ow, j, stride, pad int) (qlo, qhi int) {
	// q·stride ≥ pad − j  and  q·stride ≤ w − 1 + pad − j
	lo := pad - j
	if lo > 0 {
		qlo = (lo + stride - 1) / stride
	}
	hiIn := w - 1 + pad - j
	if hiIn < 0 {
		return 0, 0
	}
	qhi = min(hiIn/stride+1, ow)
	if qlo > qhi {
		qlo = qhi
	}
	return qlo, qhi
}

// im2colStride1 is im2col for stride 1. Each row of col is the input channel
// shifted by (i−pad, j−pad): one contiguous copy of the shifted plane, then
// the columns that wrapped around from the neighbouring input row, and the
// rows above and below the input, set to zero.
func im2colStride1[T Float](col, x []T, s convShape) {
	row := 0
	for c := 0; c < s.c; c++ {
		xc := x[c*s.h*s.w : (c+1)*s.h*s.w]
		for i := 0; i < s.kh; i++ {
			// Output rows p whose input row p−pad+i lies inside [0, h).
			plo, phi := max(s.pad-i, 0), min(s.h+s.pad-i, s.oh)
			for j := 0; j < s.kw; j++ {
				dst := col[row*s.p : (row+1)*s.p]
				row++
				if plo >= phi {
					clear(dst)
					continue
				}
				clear(dst[:plo*s.ow])
				clear(dst[phi*s.ow:])
				dj := j - s.pad // input column = q + dj
				if s.ow == s.w {
					// Output and input rows have the same length: the valid
					// rows are one contiguous shifted copy.
					lo, hi := plo*s.ow, phi*s.ow
					src := (plo-s.pad+i)*s.w + dj
					a, b := lo, hi
					if src < 0 {
						a -= src // the first element reads before the plane
					}
					if src+(hi-lo) > len(xc) {
						b -= src + (hi - lo) - len(xc)
					}
					copy(dst[a:b], xc[src+(a-lo):src+(b-lo)])
					clear(dst[lo:a])
					clear(dst[b:hi])
					// Zero the columns whose input column is outside [0, w).
					qlo, qhi := max(-dj, 0), min(s.w-dj, s.ow)
					for p := plo; p < phi; p++ {
						r := dst[p*s.ow : (p+1)*s.ow]
						for q := 0; q < qlo; q++ {
							r[q] = 0
						}
						for q := max(qhi, 0); q < s.ow; q++ {
							r[q] = 0
						}
					}
					continue
				}
				qlo, qhi := validRange(s.w, s.ow, j, 1, s.pad)
				for p := plo; p < phi; p++ {
					d := dst[p*s.ow : (p+1)*s.ow]
					for q := 0; q < qlo; q++ {
						d[q] = 0
					}
					for q := qhi; q < s.ow; q++ {
						d[q] = 0
					}
					if qlo < qhi {
						src := xc[(p-s.pad+i)*s.w+qlo+dj:]
						copy(d[qlo:qhi], src[:qhi-qlo])
					}
				}
			}
		}
	}
}
