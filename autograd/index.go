package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// IndexSelect returns the slabs of x at the given indices along axis
// (torch.index_select): the result is shaped like x with len(idx) along
// axis, and
//
//	z[o, j, i] = x[o, idx[j], i]    (x viewed as [outer, n, inner])
//
// Indices may repeat; each must lie in [0, n). idx is read during the call
// only.
//
// Backward: ∂L/∂x[o, idx[j], i] += g[o, j, i] (repeats add up).
// It panics with a *tensor.ShapeError for an index out of range.
func IndexSelect[T tensor.Float](x Var[T], axis int, idx []int) Var[T] {
	t, xe := use1("IndexSelect", x)
	xt := xe.value
	outer, n, inner, ax := axisSplitN("IndexSelect", xt, axis)
	for j, k := range idx {
		if k < 0 || k >= n {
			panic(&tensor.ShapeError{Op: "autograd.IndexSelect", Msg: fmt.Sprintf("index %d (at %d) out of range for axis %d of shape %v", k, j, ax, xt.Shape())})
		}
	}
	var buf [maxPooledRank]int
	dims := buf[:0]
	for i := 0; i < xt.Rank(); i++ {
		dims = append(dims, xt.Dim(i))
	}
	dims[ax] = len(idx)
	z := t.arena.get(dims...)
	zd, xd, m := z.Data(), xt.Data(), len(idx)
	for o := range outer {
		for j, k := range idx {
			copy(zd[(o*m+j)*inner:(o*m+j+1)*inner], xd[(o*n+k)*inner:(o*n+k+1)*inner])
		}
	}
	e := t.record("IndexSelect", z, indexSelectRule[T]{}, xe, nil, nil)
	if e.rule != nil {
		e.ix = append(e.ix[:0], idx...)
		e.n[0], e.n[1], e.n[2] = outer, n, inner
	}
	return t.varOf(e)
}

// indexSelectRule is IndexSelect's backward, a scatter-add of slabs: ix
// holds the indices, n outer, n and inner.
type indexSelectRule[T tensor.Float] struct{}

func (indexSelectRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	outer, n, inner, m := e.n[0], e.n[1], e.n[2], len(e.ix)
	d, gd := dst.Data(), e.grad.Data()
	if !acc {
		clear(d)
	}
	for o := range outer {
		for j, k := range e.ix {
			dd := d[(o*n+k)*inner : (o*n+k+1)*inner]
			for i, v := range gd[(o*m+j)*inner : (o*m+j+1)*inner] {
				dd[i] += v
			}
		}
	}
}

// gradVars: the scatter-add by flat offsets (the gather's own).
func (indexSelectRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	outer, n, inner := e.n[0], e.n[1], e.n[2]
	ix := make([]int, 0, outer*len(e.ix)*inner)
	for o := range outer {
		for _, k := range e.ix {
			for i := range inner {
				ix = append(ix, (o*n+k)*inner+i)
			}
		}
	}
	return one(indexOp("ScatterAdd", putRule[T]{}, g, ix, e.in[0].value.Shape()))
}

// Gather returns the elements of x picked along axis by the indices idx
// (torch.gather(x, axis, index)). idx holds the index tensor flattened
// row-major, and shape its shape, which is also the result's: of x's rank,
// with shape[d] ≤ x's size along every axis d other than axis. For x of
// rank 3 and axis 1:
//
//	z[a, b, c] = x[a, idx[a, b, c], c]
//
// Each index must lie in [0, x's size along axis); idx and shape are read
// during the call only.
//
// Backward: ∂L/∂x[a, idx[a, b, c], c] += g[a, b, c] (repeats add up).
// It panics with a *tensor.ShapeError naming both shapes when shape does
// not fit x or len(idx) is not shape's size, and for an index out of range.
func Gather[T tensor.Float](x Var[T], axis int, idx []int, shape []int) Var[T] {
	t, xe := use1("Gather", x)
	xt := xe.value
	r := xt.Rank()
	_, _, ax := axisSplit("Gather", xt, axis)
	ok := len(shape) == r && r <= maxPermRank
	size := 1
	for d := 0; ok && d < r; d++ {
		ok = shape[d] >= 0 && (d == ax || shape[d] <= xt.Dim(d))
		size *= shape[d]
	}
	if !ok || size != len(idx) {
		panic(&tensor.ShapeError{Op: "autograd.Gather", Msg: fmt.Sprintf("index of shape %v (%d indices) does not fit input of shape %v along axis %d (want the input's rank, and no larger than it off the axis)", shape, len(idx), xt.Shape(), ax)})
	}
	n := xt.Dim(ax)
	var xs, pos [maxPermRank]int
	stride := 1
	for d := r - 1; d >= 0; d-- {
		xs[d] = stride
		stride *= xt.Dim(d)
	}
	z := t.arena.get(shape...)
	e := t.record("Gather", z, takeRule[T]{}, xe, nil, nil)
	ix := e.ix[:0]
	base := 0 // the offset of pos in x, but along axis
	for p, k := range idx {
		if k < 0 || k >= n {
			panic(&tensor.ShapeError{Op: "autograd.Gather", Msg: fmt.Sprintf("index %d (at %d) out of range for axis %d of shape %v", k, p, ax, xt.Shape())})
		}
		ix = append(ix, base+k*xs[ax])
		for d := r - 1; d >= 0; d-- {
			pos[d]++
			if d != ax {
				base += xs[d]
			}
			if pos[d] < shape[d] {
				break
			}
			if d != ax {
				base -= xs[d] * shape[d]
			}
			pos[d] = 0
		}
	}
	e.ix = ix
	takeInto(z.Data(), xt.Data(), ix)
	return t.varOf(e)
}

// takeInto sets z[p] = x[ix[p]].
func takeInto[T tensor.Float](zd, xd []T, ix []int) {
	for p, o := range ix[:len(zd)] {
		zd[p] = xd[o]
	}
}

// takeRule is the backward of Gather, z[p] = x[ix[p]]
// with the flat offsets ix kept in the slot: a scatter-add.
type takeRule[T tensor.Float] struct{}

func (takeRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	d := dst.Data()
	if !acc {
		clear(d)
	}
	for p, g := range e.grad.Data() {
		d[e.ix[p]] += g
	}
}

func (takeRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(indexOp("ScatterAdd", putRule[T]{}, g, e.ix, e.in[0].value.Shape()))
}

// putRule is the backward of the scatter-add z[ix[p]] += g[p] (into zeros)
// that a gather's gradient is: a gather.
type putRule[T tensor.Float] struct{}

func (putRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	d, gd := dst.Data(), e.grad.Data()
	for p, o := range e.ix[:len(d)] {
		if acc {
			d[p] += gd[o]
		} else {
			d[p] = gd[o]
		}
	}
}

func (putRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(indexOp("Take", takeRule[T]{}, g, e.ix, e.in[0].value.Shape()))
}

// indexOp records, for the gradients written in ops, the gather
// z[p] = x[ix[p]] shaped as shape (r a takeRule) or the scatter-add
// z[ix[p]] += x[p] into zeros of shape (r a putRule).
func indexOp[T tensor.Float](op string, r rule[T], x Var[T], ix []int, shape []int) Var[T] {
	t, xe := use1(op, x)
	z := t.arena.get(shape...)
	zd, xd := z.Data(), xe.value.Data()
	if _, put := r.(putRule[T]); put {
		clear(zd)
		for p, o := range ix[:len(xd)] {
			zd[o] += xd[p]
		}
	} else {
		takeInto(zd, xd, ix)
	}
	e := t.record(op, z, r, xe, nil, nil)
	e.ix = append(e.ix[:0], ix...)
	return t.varOf(e)
}

// Where returns x where mask is nonzero and y elsewhere (torch.where with
// a constant condition). mask is read as a constant (a 0/1 tensor, say)
// and kept by reference until the tape is Reset; x and y are each shaped
// like mask or hold one element (a scalar, broadcast: torch.where(m, x, 0)
// is Where(m, x, tp.Scalar(0))).
//
//	z[i] = x[i] if mask[i] ≠ 0, else y[i]
//
// Backward: ∂L/∂x += g ⊙ [mask ≠ 0], ∂L/∂y += g ⊙ [mask = 0], summed for a
// scalar operand (a value not taken, ∞ or NaN, does not reach the
// gradient).
// It panics with a *tensor.ShapeError naming the shapes unless they fit.
func Where[T tensor.Float](mask *tensor.Tensor[T], x, y Var[T]) Var[T] {
	t, xe, ye := use2("Where", x, y)
	fits := func(v *entry[T]) bool { return v.value.SameShape(mask) || v.value.Len() == 1 }
	if mask == nil || !fits(xe) || !fits(ye) {
		var ms []int
		if mask != nil {
			ms = mask.Shape()
		}
		panic(&tensor.ShapeError{Op: "autograd.Where", Msg: fmt.Sprintf("mask of shape %v does not fit operands of shapes %v and %v (want each the mask's shape, or one element)", ms, xe.value.Shape(), ye.value.Shape())})
	}
	me := t.entryAt(int(t.Const(mask).i))
	z := t.arena.like(mask)
	zd, xd, yd, md := z.Data(), xe.value.Data(), ye.value.Data(), mask.Data()
	sx, sy := whereStride(xe, mask), whereStride(ye, mask)
	for i, m := range md[:len(zd)] {
		if m != 0 {
			zd[i] = xd[i*sx]
		} else {
			zd[i] = yd[i*sy]
		}
	}
	return t.varOf(t.record("Where", z, whereRule[T]{}, xe, ye, me))
}

// whereStride is 1 for an operand of Where shaped like mask, 0 for a
// broadcast scalar.
func whereStride[T tensor.Float](v *entry[T], mask *tensor.Tensor[T]) int {
	if v.value.SameShape(mask) {
		return 1
	}
	return 0
}

type whereRule[T tensor.Float] struct{}

func (whereRule[T]) backward(t *Tape[T], e *entry[T]) {
	mask := e.in[2].value
	md, g := mask.Data(), e.grad.Data()
	for side, v := range [2]*entry[T]{e.in[0], e.in[1]} {
		dst, acc := t.gradDst(v)
		if dst == nil {
			continue
		}
		d := dst.Data()
		if whereStride(v, mask) == 0 {
			var s float64
			for i, m := range md {
				if (m != 0) == (side == 0) {
					s += float64(g[i])
				}
			}
			if !acc {
				d[0] = 0
			}
			d[0] += T(s)
			continue
		}
		for i, m := range md[:len(d)] {
			var gi T
			if (m != 0) == (side == 0) {
				gi = g[i]
			}
			if acc {
				d[i] += gi
			} else {
				d[i] = gi
			}
		}
	}
}

func (whereRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	mask := e.in[2].value
	side := func(v *entry[T], keep bool) func() Var[T] {
		return func() Var[T] {
			gv := Mul(g, t.constMap(mask, nil, func(m, _ T) T {
				if (m != 0) == keep {
					return 1
				}
				return 0
			}))
			if whereStride(v, mask) == 0 {
				gv = Reshape(Sum(gv), v.value.Shape()...)
			}
			return gv
		}
	}
	return []Var[T]{t.ifWants(e.in[0], side(e.in[0], true)), t.ifWants(e.in[1], side(e.in[1], false)), {}}, nil
}

// MaskedSum returns the sum of x along axis over the elements where the
// constant mask (shaped like x) is nonzero:
//
//	z[o, i] = Σ_k [mask[o, k, i] ≠ 0] · x[o, k, i]
//
// as SumAxis(Where(mask, x, 0), axis, keepDim) (masked-out values, even ∞
// or NaN, do not enter).
//
// Backward: ∂L/∂x[o, k, i] += g[o, i] where the mask is nonzero.
func MaskedSum[T tensor.Float](x Var[T], mask *tensor.Tensor[T], axis int, keepDim bool) Var[T] {
	t, xe := use1("MaskedSum", x)
	if mask == nil || !mask.SameShape(xe.value) {
		var ms []int
		if mask != nil {
			ms = mask.Shape()
		}
		panic(&tensor.ShapeError{Op: "autograd.MaskedSum", Msg: fmt.Sprintf("mask of shape %v does not match input of shape %v", ms, xe.value.Shape())})
	}
	return SumAxis(Where(mask, x, t.Scalar(0)), axis, keepDim)
}

// MaskedMean returns the mean of x along axis over the elements where the
// constant mask (shaped like x) is nonzero: MaskedSum divided by the count
// of those elements, a constant. Where the count is zero the mean is 0
// (and so is its gradient), not NaN.
//
// Backward: ∂L/∂x[o, k, i] += g[o, i] / count[o, i] where the mask is
// nonzero.
func MaskedMean[T tensor.Float](x Var[T], mask *tensor.Tensor[T], axis int, keepDim bool) Var[T] {
	s := MaskedSum(x, mask, axis, keepDim)
	t := s.t
	outer, n, inner, _ := axisSplitN("MaskedMean", mask, axis)
	inv := t.arena.like(s.use("MaskedMean").value)
	md, id := mask.Data(), inv.Data()
	for o := range outer {
		for i := range inner {
			c := 0
			for j := range n {
				if md[(o*n+j)*inner+i] != 0 {
					c++
				}
			}
			id[o*inner+i] = 0
			if c > 0 {
				id[o*inner+i] = T(1 / float64(c))
			}
		}
	}
	return Mul(s, t.Const(inv))
}

// RSub returns a − x for a constant a (PyTorch's a - x, x.rsub(a)).
//
// Backward: ∂L/∂x −= g.
func RSub[T tensor.Float](a T, x Var[T]) Var[T] {
	t, e := unaryMap("RSub", x, scaleRule[T]{}, tensor.MapScale, -1, 0)
	t.ew.Map(tensor.MapAddScalar, e.value, e.value, a, 0) // a + (−1·x), the bits of a − x
	e.f[0] = -1
	return t.varOf(e)
}

// RDiv returns a / x elementwise for a constant a (PyTorch's a / x,
// x.reciprocal() for a = 1).
//
// Backward: ∂L/∂x += −g ⊙ a / x² = −g ⊙ z / x.
func RDiv[T tensor.Float](a T, x Var[T]) Var[T] {
	t, e := unaryOp("RDiv", x, rdivRule[T]{}, func(z, x *tensor.Tensor[T]) {
		zd := z.Data()
		for i, v := range x.Data()[:len(zd)] {
			zd[i] = a / v
		}
	})
	e.f[0] = a
	return t.varOf(e)
}

type rdivRule[T tensor.Float] struct{}

func (rdivRule[T]) backward(t *Tape[T], e *entry[T]) {
	chain(t, e, func(x, y T) T { return -y / x })
}

func (rdivRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Neg(Mul(g, Div(t.v(e), t.v(e.in[0])))))
}
