package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// Reshape returns x viewed with a new shape of the same number of elements;
// one dimension may be −1, inferred from the others. The result shares x's
// storage.
//
// Backward: ∂L/∂x += g viewed with x's shape.
func Reshape[T tensor.Float](x Var[T], shape ...int) Var[T] {
	t, xe := use1("Reshape", x)
	z := t.viewOf(xe.value, shape)
	e := t.record("Reshape", z, reshapeRule[T]{}, xe, nil, nil)
	e.view = z
	return t.varOf(e)
}

// viewOf returns x viewed with shape. The slot the result will take keeps
// the view it made in the previous pass; when that one fits (same storage,
// same shape) it is reused, so that a reused tape reshapes without
// allocating.
func (t *Tape[T]) viewOf(x *tensor.Tensor[T], shape []int) *tensor.Tensor[T] {
	if c := t.n / chunkSize; c < len(t.chunks) {
		if v := t.chunks[c][t.n%chunkSize].view; v != nil && sameStorage(v, x) && v.Rank() == len(shape) {
			fits := true
			for i, d := range shape {
				fits = fits && (d == -1 || d == v.Dim(i))
			}
			if fits {
				return v
			}
		}
	}
	return x.Reshape(append([]int(nil), shape...)...) // copied: shape must not escape
}

// sameStorage reports whether a and b are views of the same elements. It
// compares their host memory's addresses, reading no element (so that no
// value a device holds newer is copied, and no write is counted).
func sameStorage[T tensor.Float](a, b *tensor.Tensor[T]) bool {
	ad, bd := a.HostMemory(), b.HostMemory()
	return len(ad) == len(bd) && (len(ad) == 0 || &ad[0] == &bd[0])
}

type reshapeRule[T tensor.Float] struct{}

// backward adds e's output gradient, viewed with the input's shape, into
// the input's: the view is kept in the slot (gview) and reused while it
// fits, so that a reused tape's backward allocates nothing.
func (reshapeRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, g := e.in[0], e.grad
	if v := e.gview; v != nil && sameStorage(v, g) && v.SameShape(x.value) {
		g = v
	} else {
		g = g.Reshape(x.value.Shape()...)
		e.gview = g
	}
	t.addScaledGrad(x, 1, g)
}

// Flatten returns x [B, d1, d2, ...] viewed as [B, d1·d2·…], sharing storage.
//
// Backward: ∂L/∂x += g viewed with x's shape.
func Flatten[T tensor.Float](x Var[T]) Var[T] {
	xt := x.use("Flatten").value
	if xt.Rank() < 1 {
		panic(&tensor.ShapeError{Op: "autograd.Flatten", Msg: fmt.Sprintf("shape %v has no batch axis", xt.Shape())})
	}
	b := xt.Dim(0)
	rest := 0
	if b > 0 {
		rest = xt.Len() / b
	}
	return Reshape(x, b, rest)
}

// axisSplit returns the sizes (outer, inner) around axis of x's shape, and
// axis made non-negative.
func axisSplit[T tensor.Float](op string, x *tensor.Tensor[T], axis int) (outer, inner, ax int) {
	r := x.Rank()
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("axis %d out of range for shape %v", axis, x.Shape())})
	}
	outer, inner = 1, 1
	for i := 0; i < axis; i++ {
		outer *= x.Dim(i)
	}
	for i := axis + 1; i < r; i++ {
		inner *= x.Dim(i)
	}
	return outer, inner, axis
}

// Concat returns xs joined along axis (axis 1 is the channel axis of
// [B, C, H, W]); all must match except along axis.
//
// Backward: each ∂L/∂xs[i] += its slab of g along axis.
func Concat[T tensor.Float](axis int, xs ...Var[T]) Var[T] {
	if len(xs) == 0 {
		panic(usage("Concat: no operands"))
	}
	t, fe := use1("Concat", xs[0])
	first := fe.value
	outer, inner, ax := axisSplit("Concat", first, axis)
	r := first.Rank()
	var buf [maxPooledRank]int
	dims := buf[:0]
	for i := 0; i < r; i++ {
		dims = append(dims, first.Dim(i))
	}
	dims[ax] = 0
	for _, xv := range xs {
		x := useOpt("Concat", t, xv)
		if x == nil {
			panic(usage("Concat: zero Var operand"))
		}
		ok := x.value.Rank() == r
		for i := 0; ok && i < r; i++ {
			ok = i == ax || x.value.Dim(i) == first.Dim(i)
		}
		if !ok {
			panic(&tensor.ShapeError{Op: "autograd.Concat", Msg: fmt.Sprintf("shapes %v and %v do not match except along axis %d", first.Shape(), x.value.Shape(), ax)})
		}
		dims[ax] += x.value.Dim(ax)
	}
	z := t.arena.get(dims...)
	switch {
	case t.blocks != nil:
		t.blocksConcat(z, xs, outer, inner, dims[ax]*inner, ax)
	case t.onDevice && outer == 1:
		t.ewConcat(z, xs, inner, ax)
	default:
		concatInto(t, z.Data(), xs, outer, inner, dims[ax]*inner, ax)
	}
	e := t.newEntry("Concat")
	t.setValue(e, z)
	e.n[0] = ax
	t.recordVariadic(e, concatRule[T]{}, xs)
	return t.varOf(e)
}

// concatInto copies the operands xs into zd, the flat [outer, n] result,
// each operand's block of its rows after the last's.
func concatInto[T tensor.Float](t *Tape[T], zd []T, xs []Var[T], outer, inner, n, ax int) {
	at := 0
	for _, xv := range xs {
		x := t.entryAt(int(xv.i))
		m := x.value.Dim(ax) * inner
		xd := x.value.Data()
		for o := 0; o < outer; o++ {
			copy(zd[o*n+at:o*n+at+m], xd[o*m:(o+1)*m])
		}
		at += m
	}
}

type concatRule[T tensor.Float] struct{}

func (concatRule[T]) backward(t *Tape[T], e *entry[T]) {
	g := e.grad
	outer, inner, ax := axisSplit("Concat", g, e.n[0])
	if t.blocks != nil && !gradsShare(e.ins, g) {
		t.blocksConcatGrad(e, g, outer, inner, ax)
		return
	}
	if t.onDevice && outer == 1 {
		t.ewConcatGrad(e, g, inner, ax)
		return
	}
	gd, n := g.Data(), g.Dim(ax)*inner
	at := 0
	for _, x := range e.ins {
		m := x.value.Dim(ax) * inner
		if dst, acc := t.gradDst(x); dst != nil {
			d := dst.Data()
			for o := 0; o < outer; o++ {
				src, dd := gd[o*n+at:o*n+at+m], d[o*m:(o+1)*m]
				if acc {
					for i, v := range src {
						dd[i] += v
					}
				} else {
					copy(dd, src)
				}
			}
		}
		at += m
	}
}

// Narrow returns the slab of x of the given length along axis starting at
// start, as a new tensor.
//
// Backward: ∂L/∂x += g placed at that slab (zero elsewhere).
func Narrow[T tensor.Float](x Var[T], axis, start, length int) Var[T] {
	t, xe := use1("Narrow", x)
	outer, inner, ax := axisSplit("Narrow", xe.value, axis)
	n := xe.value.Dim(ax)
	if start < 0 || length < 0 || start+length > n {
		panic(&tensor.ShapeError{Op: "autograd.Narrow", Msg: fmt.Sprintf("range [%d:%d] out of bounds along axis %d of shape %v", start, start+length, ax, xe.value.Shape())})
	}
	r := xe.value.Rank()
	var buf [maxPooledRank]int
	dims := buf[:0]
	for i := 0; i < r; i++ {
		dims = append(dims, xe.value.Dim(i))
	}
	dims[ax] = length
	z := t.arena.get(dims...)
	if t.blocks != nil {
		// z's blocks cover it whole: the engine does not read it.
		m := length * inner
		t.blocks.CopyBlocks(z, xe.value, 1, tensor.Blocks{Count: outer, Len: m, ZStride: m, XOff: start * inner, XStride: n * inner}, false)
	} else if t.onDevice && outer == 1 {
		t.ew.Copy(z, flatRange(xe.value, start*inner, (start+length)*inner))
	} else {
		zd, xd := z.Data(), xe.value.Data()
		m := length * inner
		for o := 0; o < outer; o++ {
			copy(zd[o*m:(o+1)*m], xd[(o*n+start)*inner:(o*n+start)*inner+m])
		}
	}
	e := t.record("Narrow", z, narrowRule[T]{}, xe, nil, nil)
	e.n[0], e.n[1] = ax, start
	return t.varOf(e)
}

type narrowRule[T tensor.Float] struct{}

func (narrowRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, g := e.in[0], e.grad
	dst, acc := t.gradDst(x)
	if dst == nil {
		return
	}
	outer, inner, ax := axisSplit("Narrow", x.value, e.n[0])
	n, start, length := x.value.Dim(ax), e.n[1], g.Dim(ax)
	if t.blocks != nil && dst.Storage() != g.Storage() {
		t.blocksNarrowGrad(dst, acc, g, outer, inner, n, start, length)
		return
	}
	if t.onDevice && outer == 1 {
		if !acc {
			t.ew.Fill(dst, 0)
		}
		t.ewScaled(flatRange(dst, start*inner, (start+length)*inner), true, 1, g.Reshape(g.Len()))
		return
	}
	d, gd := dst.Data(), g.Data()
	if !acc {
		clear(d)
	}
	m := length * inner
	for o := 0; o < outer; o++ {
		dd := d[(o*n+start)*inner : (o*n+start)*inner+m]
		for i, v := range gd[o*m : (o+1)*m] {
			dd[i] += v
		}
	}
}

// Split returns consecutive slabs of x along axis with the given sizes, which
// must add up to x's size along axis (the inverse of Concat). Each piece is a
// Narrow of x.
func Split[T tensor.Float](x Var[T], axis int, sizes ...int) []Var[T] {
	xe := x.use("Split")
	_, _, ax := axisSplit("Split", xe.value, axis)
	total := 0
	for _, s := range sizes {
		total += s
	}
	if total != xe.value.Dim(ax) {
		panic(&tensor.ShapeError{Op: "autograd.Split", Msg: fmt.Sprintf("sizes %v add up to %d, shape %v has %d along axis %d", sizes, total, xe.value.Shape(), xe.value.Dim(ax), ax)})
	}
	out := make([]Var[T], len(sizes))
	at := 0
	for i, s := range sizes {
		out[i] = Narrow(x, ax, at, s)
		at += s
	}
	return out
}

// Chunk returns x split along axis into n slabs of equal size, as
// PyTorch's x.chunk(n, dim) when the size divides evenly (the mean and
// log-variance halves of an encoder's output); it panics, naming the
// shape, when it does not.
func Chunk[T tensor.Float](x Var[T], n, axis int) []Var[T] {
	xe := x.use("Chunk")
	_, _, ax := axisSplit("Chunk", xe.value, axis)
	if n < 1 || xe.value.Dim(ax)%n != 0 {
		panic(&tensor.ShapeError{Op: "autograd.Chunk", Msg: fmt.Sprintf("shape %v does not split into %d equal chunks along axis %d", xe.value.Shape(), n, ax)})
	}
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = xe.value.Dim(ax) / n
	}
	return Split(x, ax, sizes...)
}

// Select returns the slab of x at index i along axis, with that axis
// dropped: PyTorch's x.select(dim, i), or x[:, i] for axis 1. A negative
// axis counts from the end; i must be in range.
//
// Backward: ∂L/∂x += g placed at that slab (Narrow's).
func Select[T tensor.Float](x Var[T], axis, i int) Var[T] {
	xe := x.use("Select")
	_, _, ax := axisSplit("Select", xe.value, axis)
	sh := xe.value.Shape()
	if i < 0 || i >= sh[ax] {
		panic(&tensor.ShapeError{Op: "autograd.Select", Msg: fmt.Sprintf("index %d out of range for axis %d of shape %v", i, ax, sh)})
	}
	return Reshape(Narrow(x, ax, i, 1), append(sh[:ax:ax], sh[ax+1:]...)...)
}

// ConcatTime returns x [B, C, ...] with one more channel (axis 1) appended,
// filled with the constant tv: the time channel of a time-dependent
// vector field f(h, t) = net([h, t]).
//
//	z[n, c, ...] = x[n, c, ...] for c < C,  z[n, C, ...] = tv
//
// Backward: ∂L/∂x += g without its last channel.
func ConcatTime[T tensor.Float](x Var[T], tv T) Var[T] {
	t, xe := use1("ConcatTime", x)
	xt := xe.value
	r := xt.Rank()
	if r < 2 {
		panic(&tensor.ShapeError{Op: "autograd.ConcatTime", Msg: fmt.Sprintf("shape %v has no channel axis (want [B, C, ...])", xt.Shape())})
	}
	var buf [maxPooledRank]int
	dims := buf[:0]
	for i := 0; i < r; i++ {
		dims = append(dims, xt.Dim(i))
	}
	dims[1]++
	z := t.arena.get(dims...)
	b, inner := xt.Dim(0), 1
	for i := 2; i < r; i++ {
		inner *= xt.Dim(i)
	}
	m := xt.Dim(1) * inner
	zd, xd := z.Data(), xt.Data()
	if z.Len() >= parallelMin && b > 1 {
		t.eng.Parallel(b, func(lo, hi int) { concatTimeRows(zd, xd, tv, m, inner, lo, hi) })
	} else {
		concatTimeRows(zd, xd, tv, m, inner, 0, b)
	}
	e := t.record("ConcatTime", z, concatTimeRule[T]{}, xe, nil, nil)
	e.f[0] = tv
	return t.varOf(e)
}

type concatTimeRule[T tensor.Float] struct{}

func (concatTimeRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, g := e.in[0], e.grad
	dst, acc := t.gradDst(x)
	if dst == nil {
		return
	}
	b := x.value.Dim(0)
	m := x.value.Len() / max(b, 1)
	inner := g.Len()/max(b, 1) - m
	d, gd := dst.Data(), g.Data()
	if g.Len() >= parallelMin && b > 1 {
		t.eng.Parallel(b, func(lo, hi int) { concatTimeGradRows(d, gd, acc, m, inner, lo, hi) })
		return
	}
	concatTimeGradRows(d, gd, acc, m, inner, 0, b)
}

// concatTimeRows writes samples [lo, hi) of ConcatTime: each sample's m
// values of x, then inner copies of tv.
func concatTimeRows[T tensor.Float](zd, xd []T, tv T, m, inner, lo, hi int) {
	for n := lo; n < hi; n++ {
		copy(zd[n*(m+inner):n*(m+inner)+m], xd[n*m:(n+1)*m])
		tc := zd[n*(m+inner)+m : (n+1)*(m+inner)]
		for i := range tc {
			tc[i] = tv
		}
	}
}

// concatTimeGradRows sets (or with acc adds) samples [lo, hi) of the input
// gradient of ConcatTime: g without its time channel.
func concatTimeGradRows[T tensor.Float](d, gd []T, acc bool, m, inner, lo, hi int) {
	for n := lo; n < hi; n++ {
		src, dd := gd[n*(m+inner):n*(m+inner)+m], d[n*m:(n+1)*m]
		if acc {
			for i, v := range src {
				dd[i] += v
			}
		} else {
			copy(dd, src)
		}
	}
}
