package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// Conv2DTime returns Conv2D(ConcatTime(x, tv), w, b, p) without building
// the concatenation: the filter w [Co, C+1, KH, KW] sees x [B, C, H, W]
// through its first C input channels, and its last input channel sees the
// constant time channel tv, whose contribution is a per-position bias:
//
//	z[n, o, i, j] = Σ_{c<C,k,l} w[o, c, k, l]·x[n, c, i·s−pad+k, j·s−pad+l]
//	              + tv·Σ_{(k,l) inside} w[o, C, k, l] + b[o]
//
// where "(k, l) inside" are the filter taps that land inside the image
// (the zero padding sees no time channel, exactly as in the concatenation).
// The result equals the unfused pair up to the order of the sums, and
// saves the concatenated copy of x and its gradient.
//
// Backward: ∂L/∂x and the first C channels of ∂L/∂w as Conv2D's;
// ∂L/∂w[o, C, k, l] += tv·Σ_{n,(i,j): tap inside} g[n, o, i, j];
// ∂L/∂b[o] += Σ_{n,i,j} g[n, o, i, j]. tv is a constant (no gradient).
func Conv2DTime[T tensor.Float](x Var[T], tv T, w, b Var[T], p tensor.ConvParams) Var[T] {
	t, xe, we := use2("Conv2DTime", x, w)
	be := useOpt("Conv2DTime", t, b)
	xt, wt := xe.value, we.value
	if xt.Rank() != 4 || wt.Rank() != 4 || xt.Dim(1)+1 != wt.Dim(1) || p.Stride < 0 || p.Pad < 0 {
		panic(&tensor.ShapeError{Op: "autograd.Conv2DTime", Msg: fmt.Sprintf("input of shape %v does not fit filter of shape %v (want x [B, C, H, W] and w [Co, C+1, KH, KW]: one more input channel, for the time)", xt.Shape(), wt.Shape())})
	}
	oh, ow := tensor.ConvOutputSize(xt.Dim(2), wt.Dim(2), p), tensor.ConvOutputSize(xt.Dim(3), wt.Dim(3), p)
	if oh == 0 || ow == 0 {
		panic(&tensor.ShapeError{Op: "autograd.Conv2DTime", Msg: fmt.Sprintf("filter of shape %v does not fit input of shape %v with stride %d and padding %d", wt.Shape(), xt.Shape(), p.Stride, p.Pad)})
	}
	if be != nil {
		mustBias("Conv2DTime", we, be, wt.Dim(0))
	}
	co, c, kh, kw := wt.Dim(0), xt.Dim(1), wt.Dim(2), wt.Dim(3)
	var wx *tensor.Tensor[T]
	if t.onDevice {
		wx = t.timeFilters(wt).wx
	} else {
		wx = t.arena.get(co, c, kh, kw)
		gatherFilter(wx.Data(), wt.ReadData(), co, c, kh*kw)
	}
	z := t.arena.get(xt.Dim(0), co, oh, ow)
	var bt *tensor.Tensor[T]
	if be != nil {
		bt = be.value
	}
	t.eng.Conv2D(z, xt, wx, bt, p)
	switch {
	case tv != 0 && t.onDevice:
		t.ewTimeBias(z, xt, wt, tv, p)
	case tv != 0:
		tb := t.arena.get(co, oh, ow)
		timeBias(tb.Data(), wt.ReadData(), tv, co, c, xt.Dim(2), xt.Dim(3), kh, kw, oh, ow, p)
		addPerSample(t, z, tb)
		t.arena.put(tb, -1)
	}
	e := t.record("Conv2DTime", z, conv2DTimeRule[T]{}, xe, we, be)
	e.n[0], e.n[1] = p.Stride, p.Pad
	e.f[0] = tv
	switch {
	case e.rule != nil:
		e.aux = wx
	case !t.onDevice: // a cached filter is not the arena's
		t.arena.put(wx, -1)
	}
	return t.varOf(e)
}

type conv2DTimeRule[T tensor.Float] struct{}

func (conv2DTimeRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, w, b, g := e.in[0], e.in[1], e.in[2], e.grad
	wx := e.aux
	p := tensor.ConvParams{Stride: e.n[0], Pad: e.n[1]}
	tv := e.f[0]
	if dst, acc := t.gradDst(x); dst != nil {
		t.eng.Conv2DBackwardData(dst, g, wx, p, acc)
	}
	dw, accW := t.gradDst(w)
	db, accB := t.gradDst(b)
	if dw != nil {
		co, c, kh, kw := w.value.Dim(0), x.value.Dim(1), w.value.Dim(2), w.value.Dim(3)
		dwx := t.arena.like(wx)
		if db != nil && !accB {
			// The bias gradient in the same pass; dwx is a fresh buffer, so
			// this works only when db is not accumulated into either.
			t.eng.Conv2DBackwardFilter(dwx, db, g, x.value, p, false)
			db = nil
		} else {
			t.eng.Conv2DBackwardFilter(dwx, nil, g, x.value, p, false)
		}
		if t.blocks != nil {
			if !accW {
				// dw whole on the device first: the two parts below are
				// then written into its copy in place, with nothing of
				// dw uploaded for the elements they leave.
				t.ew.Fill(dw, 0)
			}
			taps := kh * kw
			t.blocks.CopyBlocks(dw, dwx, 1, tensor.Blocks{Count: co, Len: c * taps, ZStride: (c + 1) * taps, XStride: c * taps}, accW)
		} else {
			scatterFilter(dw.Data(), dwx.Data(), co, c, kh*kw, accW)
		}
		t.arena.put(dwx, -1)
		// The time channel's taps: tv times the sums of g over the
		// positions where each tap lands inside the image.
		if t.onDevice {
			t.ewTimeFilterGrad(dw, g, x.value, tv, p, accW)
		} else {
			oh, ow := g.Dim(2), g.Dim(3)
			s := t.arena.get(co, oh, ow)
			sumOverBatch(s.Data(), g.Data(), g.Dim(0))
			timeFilterGrad(dw.Data(), s.Data(), tv, co, c, x.value.Dim(2), x.value.Dim(3), kh, kw, oh, ow, p, accW)
			t.arena.put(s, -1)
		}
	}
	if db != nil {
		t.sumPerChannel(db, accB, g)
	}
}

// ewTimeBias adds the time channel's contribution tv·Σ_{(k,l) inside}
// w[o, c, k, l] to every sample of z on the engine (a tape with an
// Elementwise): the sums are the engine's convolution of an image of ones
// with the time channel's taps (its zero padding sees no time channel, as
// timeBias's tap ranges), scaled by tv and broadcast over the batch. Only
// the taps go to the device, not a bias image. The sums' order is the
// engine's.
func (t *Tape[T]) ewTimeBias(z, x, w *tensor.Tensor[T], tv T, p tensor.ConvParams) {
	co := w.Dim(0)
	wt := t.timeFilters(w).taps
	ones := t.arena.get(1, 1, x.Dim(2), x.Dim(3))
	t.ew.Fill(ones, 1)
	tb := t.arena.get(1, co, z.Dim(2), z.Dim(3))
	t.eng.Conv2D(tb, ones, wt, nil, p)
	t.ew.Map(tensor.MapScale, tb, tb, tv, 0)
	t.ew.Binary(tensor.BinaryAdd, z, z, tb)
	t.arena.put(tb, -1)
	t.arena.put(ones, -1)
}

// ewTimeFilterGrad sets (with acc adds) the time channel of dw
// [co, c+1, kh, kw] to tv times the engine's filter gradient of images of
// ones [B, 1, H, W] under the output gradient g: tv·Σ_{n,(i,j): tap
// inside} g[n, o, i, j], as timeFilterGrad. The taps' sums are scaled into
// dw by the engine's CopyBlocks where it has one (nothing copied to the
// host), else on the host (the sums and dw copied there).
func (t *Tape[T]) ewTimeFilterGrad(dw, g, x *tensor.Tensor[T], tv T, p tensor.ConvParams, acc bool) {
	co, c1, kh, kw := dw.Dim(0), dw.Dim(1), dw.Dim(2), dw.Dim(3)
	ones := t.arena.get(x.Dim(0), 1, x.Dim(2), x.Dim(3))
	t.ew.Fill(ones, 1)
	st := t.arena.get(co, 1, kh, kw)
	t.eng.Conv2DBackwardFilter(st, nil, g, ones, p, false)
	taps := kh * kw
	if t.blocks != nil {
		t.blocks.CopyBlocks(dw, st, tv, tensor.Blocks{Count: co, Len: taps, ZOff: (c1 - 1) * taps, ZStride: c1 * taps, XStride: taps}, acc)
		t.arena.put(st, -1)
		t.arena.put(ones, -1)
		return
	}
	d, sd := dw.Data(), st.ReadData()
	for o := 0; o < co; o++ {
		dt := d[(o*c1+c1-1)*taps : (o*c1+c1)*taps]
		for i, v := range sd[o*taps : (o+1)*taps] {
			if acc {
				dt[i] += tv * v
			} else {
				dt[i] = tv * v
			}
		}
	}
	t.arena.put(st, -1)
	t.arena.put(ones, -1)
}

// splitFilter is the two filters Conv2DTime forms from a filter w
// [co, c+1, kh, kw] on a tape with an Elementwise: wx [co, c, kh, kw], its
// first c input channels, and taps [co, 1, kh, kw], its time channel. They
// are kept (timeFilters) while w's storage version stands, so that a device
// receives them once, not on every evaluation of a field.
type splitFilter[T tensor.Float] struct {
	w        *tensor.Storage
	ver      uint64 // w's version they were formed at
	gen      uint32 // the tape's pass they were formed in
	shape    [4]int
	wx, taps *tensor.Tensor[T]
}

// maxSplitFilters is how many filters' splits a tape keeps.
const maxSplitFilters = 8

// timeFilters returns w's split filters, formed again when w changed since
// they were formed (or was never split); the least recently formed of
// maxSplitFilters gives way.
func (t *Tape[T]) timeFilters(w *tensor.Tensor[T]) *splitFilter[T] {
	co, c1, kh, kw := w.Dim(0), w.Dim(1), w.Dim(2), w.Dim(3)
	st, ver, shape := w.Storage(), w.Version(), [4]int{co, c1, kh, kw}
	var f *splitFilter[T]
	for i := range t.splits {
		if g := &t.splits[i]; g.w == st && g.shape == shape {
			if g.ver == ver {
				return g
			}
			f = g
			if g.gen == t.gen { // an op of this pass holds them: fresh ones
				g.wx, g.taps = tensor.New[T](co, c1-1, kh, kw), tensor.New[T](co, 1, kh, kw)
			}
			break
		}
	}
	if f == nil {
		if len(t.splits) == maxSplitFilters {
			t.splits = append(t.splits[:0], t.splits[1:]...)
		}
		t.splits = append(t.splits, splitFilter[T]{w: st, shape: shape,
			wx: tensor.New[T](co, c1-1, kh, kw), taps: tensor.New[T](co, 1, kh, kw)})
		f = &t.splits[len(t.splits)-1]
	}
	taps := kh * kw
	f.ver, f.gen = ver, t.gen
	if t.blocks != nil { // split on the engine's device, w not copied to the host
		t.blocks.CopyBlocks(f.wx, w, 1, tensor.Blocks{Count: co, Len: (c1 - 1) * taps, ZStride: (c1 - 1) * taps, XStride: c1 * taps}, false)
		t.blocks.CopyBlocks(f.taps, w, 1, tensor.Blocks{Count: co, Len: taps, ZStride: taps, XOff: (c1 - 1) * taps, XStride: c1 * taps}, false)
		return f
	}
	wd := w.ReadData()
	gatherFilter(f.wx.Data(), wd, co, c1-1, taps)
	d := f.taps.Data()
	for o := 0; o < co; o++ {
		copy(d[o*taps:(o+1)*taps], wd[(o*c1+c1-1)*taps:(o*c1+c1)*taps])
	}
	return f
}

// gatherFilter sets wx [co, c, taps] to the first c input channels of
// w [co, c+1, taps].
func gatherFilter[T tensor.Float](wx, w []T, co, c, taps int) {
	for o := 0; o < co; o++ {
		copy(wx[o*c*taps:(o+1)*c*taps], w[o*(c+1)*taps:o*(c+1)*taps+c*taps])
	}
}

// scatterFilter sets (with acc adds) the first c input channels of
// w [co, c+1, taps] to wx [co, c, taps].
func scatterFilter[T tensor.Float](w, wx []T, co, c, taps int, acc bool) {
	for o := 0; o < co; o++ {
		dst, src := w[o*(c+1)*taps:o*(c+1)*taps+c*taps], wx[o*c*taps:(o+1)*c*taps]
		if !acc {
			copy(dst, src)
			continue
		}
		for i, v := range src {
			dst[i] += v
		}
	}
}

// tapRange returns the filter taps k in [lo, hi) of a kernel of size kn
// that land inside an input of size n for output position i:
// 0 ≤ i·s − pad + k < n.
func tapRange(i, n, kn int, p tensor.ConvParams) (lo, hi int) {
	start := i*max(p.Stride, 1) - p.Pad
	return max(0, -start), min(kn, n-start)
}

// timeBias sets tb[o, i, j] = tv·Σ_{(k,l) inside} w[o, c, k, l]: the time
// channel's contribution at each output position, for the filter w
// [co, c+1, kh, kw] and an input of h × wd. The sum depends on the
// position only through its taps' ranges, which change only near the
// borders: a row whose range is its predecessor's is a copy of it, and
// within a row a sum is formed again only where the column range changes.
func timeBias[T tensor.Float](tb, w []T, tv T, co, c, h, wd, kh, kw, oh, ow int, p tensor.ConvParams) {
	taps := kh * kw
	for o := 0; o < co; o++ {
		wt := w[(o*(c+1)+c)*taps : (o*(c+1)+c+1)*taps]
		to := tb[o*oh*ow : (o+1)*oh*ow]
		plo, phi := -1, -1 // the previous row's tap range
		for i := 0; i < oh; i++ {
			row := to[i*ow : (i+1)*ow]
			klo, khi := tapRange(i, h, kh, p)
			if klo == plo && khi == phi {
				copy(row, to[(i-1)*ow:i*ow])
				continue
			}
			plo, phi = klo, khi
			var s T
			llo, lhi := -1, -1
			for j := range row {
				if lo, hi := tapRange(j, wd, kw, p); lo != llo || hi != lhi {
					llo, lhi, s = lo, hi, 0
					for k := klo; k < khi; k++ {
						for l := llo; l < lhi; l++ {
							s += wt[k*kw+l]
						}
					}
				}
				row[j] = tv * s
			}
		}
	}
}

// timeFilterGrad sets (with acc adds) the time channel of dw
// [co, c+1, kh, kw]: dw[o, c, k, l] = tv·Σ_{(i,j): tap inside} s[o, i, j],
// s being the output gradient summed over the batch.
func timeFilterGrad[T tensor.Float](dw, s []T, tv T, co, c, h, wd, kh, kw, oh, ow int, p tensor.ConvParams, acc bool) {
	taps := kh * kw
	for o := 0; o < co; o++ {
		dt := dw[(o*(c+1)+c)*taps : (o*(c+1)+c+1)*taps]
		if !acc {
			clear(dt)
		}
		so := s[o*oh*ow : (o+1)*oh*ow]
		for i := 0; i < oh; i++ {
			klo, khi := tapRange(i, h, kh, p)
			for j := 0; j < ow; j++ {
				llo, lhi := tapRange(j, wd, kw, p)
				v := tv * so[i*ow+j]
				for k := klo; k < khi; k++ {
					for l := llo; l < lhi; l++ {
						dt[k*kw+l] += v
					}
				}
			}
		}
	}
}

// addPerSample adds tb (shaped like one sample of z) to every sample of z,
// over the engine's workers for large z.
func addPerSample[T tensor.Float](t *Tape[T], z, tb *tensor.Tensor[T]) {
	b, m := z.Dim(0), tb.Len()
	zd, td := z.Data(), tb.Data()
	rows := func(lo, hi int) {
		for n := lo; n < hi; n++ {
			tensor.AxpySlice(1, td, zd[n*m:(n+1)*m])
		}
	}
	if z.Len() >= parallelMin && b > 1 {
		t.eng.Parallel(b, rows)
		return
	}
	rows(0, b)
}

// sumOverBatch sets s[i] = Σ_n g[n·len(s) + i] for the b samples of g.
func sumOverBatch[T tensor.Float](s, g []T, b int) {
	m := len(s)
	clear(s)
	for n := 0; n < b; n++ {
		tensor.AxpySlice(1, g[n*m:(n+1)*m], s)
	}
}
