package tensor

// im2col writes the patches of one sample x [C, H, W] into col [K, P], K =
// C·KH·KW rows ordered (c, i, j) and P = OH·OW columns ordered (p, q):
//
//	col[(c,i,j), (p,q)] = x[c, p·s−pad+i, q·s−pad+j], or 0 outside x.
func im2col[T Float](col, x []T, s convShape) {
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
						d = d[ix : ix+qhi-qlo]
						for q, v := range sp[qlo:qhi] {
							d[q] += v
						}
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
