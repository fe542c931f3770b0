package autograd

import (
	"fmt"
	"slices"

	"github.com/adamnode/adamnode/tensor"
)

// maxPermRank is the largest rank Permute takes: the permutation is kept
// in one int of the slot, four bits an axis.
const maxPermRank = 16

// Permute returns x with its axes reordered, as PyTorch's x.permute(dims):
// axis k of the result is axis dims[k] of x (negative: from the end), as a
// new tensor. Transpose is Permute(x, 1, 0) for a matrix.
//
//	z[i_0, …, i_{r−1}] = x[j]  with j[dims[k]] = i_k
//
// Backward: ∂L/∂x += g permuted back (by the inverse permutation).
// It panics with a *tensor.ShapeError unless dims is a permutation of
// x's axes (at most 16).
func Permute[T tensor.Float](x Var[T], dims ...int) Var[T] {
	t, xe := use1("Permute", x)
	xt := xe.value
	r := xt.Rank()
	var perm, sdims, odims [maxPermRank]int
	ok := r <= maxPermRank && len(dims) == r
	seen := 0
	for k := 0; ok && k < r; k++ {
		d := dims[k]
		if d < 0 {
			d += r
		}
		ok = d >= 0 && d < r && seen&(1<<d) == 0
		seen |= 1 << max(d, 0)
		perm[k] = d
	}
	if !ok {
		panic(&tensor.ShapeError{Op: "autograd.Permute", Msg: fmt.Sprintf("dims %v are not a permutation of the axes of shape %v", slices.Clone(dims), xt.Shape())})
	}
	code := 0
	for k := 0; k < r; k++ {
		sdims[k] = xt.Dim(k)
		code |= perm[k] << (4 * k)
	}
	for k := 0; k < r; k++ {
		odims[k] = sdims[perm[k]]
	}
	z := t.arena.get(odims[:r]...)
	permuteInto(z.Data(), xt.Data(), sdims[:r], perm[:r], false)
	e := t.record("Permute", z, permuteRule[T]{}, xe, nil, nil)
	e.n[0], e.n[1] = code, r
	return t.varOf(e)
}

// permOf decodes the permutation kept in e.n, and its inverse.
func permOf[T tensor.Float](e *entry[T]) (perm, inv [maxPermRank]int, r int) {
	r = e.n[1]
	for k := 0; k < r; k++ {
		perm[k] = e.n[0] >> (4 * k) & 15
		inv[perm[k]] = k
	}
	return perm, inv, r
}

// permuteInto sets (or with acc adds) d = s permuted: s has dims sdims,
// and axis k of d is axis perm[k] of s.
func permuteInto[T tensor.Float](d, s []T, sdims, perm []int, acc bool) {
	r := len(sdims)
	if len(d) == 0 {
		return
	}
	if r == 0 {
		if acc {
			d[0] += s[0]
		} else {
			d[0] = s[0]
		}
		return
	}
	var ss, st, od, idx [maxPermRank]int
	stride := 1
	for a := r - 1; a >= 0; a-- {
		ss[a] = stride
		stride *= sdims[a]
	}
	for k := 0; k < r; k++ {
		st[k], od[k] = ss[perm[k]], sdims[perm[k]]
	}
	last, ls := od[r-1], st[r-1]
	off := 0
	for p := 0; p < len(d); p += last {
		row := d[p : p+last]
		if acc {
			for j := range row {
				row[j] += s[off+j*ls]
			}
		} else {
			for j := range row {
				row[j] = s[off+j*ls]
			}
		}
		for k := r - 2; k >= 0; k-- {
			idx[k]++
			off += st[k]
			if idx[k] < od[k] {
				break
			}
			off -= st[k] * od[k]
			idx[k] = 0
		}
	}
}

type permuteRule[T tensor.Float] struct{}

func (permuteRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	_, inv, r := permOf(e)
	var gdims [maxPermRank]int
	for k := 0; k < r; k++ {
		gdims[k] = e.grad.Dim(k)
	}
	permuteInto(dst.Data(), e.grad.Data(), gdims[:r], inv[:r], acc)
}

func (permuteRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	_, inv, r := permOf(e)
	return one(Permute(g, inv[:r]...))
}

// Stack returns xs, all of one shape, joined along a new axis (torch.stack):
// the result has len(xs) at axis (0 … rank; negative: from the end, −1
// being a new last axis), and z[…, k, …] = xs[k].
//
// Backward: ∂L/∂xs[k] += the k-th slab of g along axis.
// It panics with a *tensor.ShapeError naming both shapes when the operands'
// shapes differ.
func Stack[T tensor.Float](axis int, xs ...Var[T]) Var[T] {
	if len(xs) == 0 {
		panic(usage("Stack: no operands"))
	}
	t, fe := use1("Stack", xs[0])
	first := fe.value
	r := first.Rank()
	ax := axis
	if ax < 0 {
		ax += r + 1
	}
	if ax < 0 || ax > r {
		panic(&tensor.ShapeError{Op: "autograd.Stack", Msg: fmt.Sprintf("axis %d out of range for stacking shape %v", axis, first.Shape())})
	}
	for _, xv := range xs {
		x := useOpt("Stack", t, xv)
		if x == nil {
			panic(usage("Stack: zero Var operand"))
		}
		if !x.value.SameShape(first) {
			panic(&tensor.ShapeError{Op: "autograd.Stack", Msg: fmt.Sprintf("shapes %v and %v differ (Stack wants one shape)", first.Shape(), x.value.Shape())})
		}
	}
	var buf [maxPooledRank + 1]int
	dims := buf[:0]
	outer := 1
	for i := 0; i < ax; i++ {
		dims = append(dims, first.Dim(i))
		outer *= first.Dim(i)
	}
	dims = append(dims, len(xs))
	for i := ax; i < r; i++ {
		dims = append(dims, first.Dim(i))
	}
	m := 0
	if outer > 0 {
		m = first.Len() / outer
	}
	z := t.arena.get(dims...)
	zd, k := z.Data(), len(xs)
	for j, xv := range xs {
		xd := t.entryAt(int(xv.i)).value.Data()
		for o := 0; o < outer; o++ {
			copy(zd[(o*k+j)*m:(o*k+j+1)*m], xd[o*m:(o+1)*m])
		}
	}
	e := t.newEntry("Stack")
	t.setValue(e, z)
	e.n[0], e.n[1], e.n[2] = ax, outer, m
	t.recordVariadic(e, stackRule[T]{}, xs)
	return t.varOf(e)
}

type stackRule[T tensor.Float] struct{}

func (stackRule[T]) backward(t *Tape[T], e *entry[T]) {
	outer, m, k := e.n[1], e.n[2], len(e.ins)
	gd := e.grad.Data()
	for j, x := range e.ins {
		dst, acc := t.gradDst(x)
		if dst == nil {
			continue
		}
		d := dst.Data()
		for o := 0; o < outer; o++ {
			src, dd := gd[(o*k+j)*m:(o*k+j+1)*m], d[o*m:(o+1)*m]
			if acc {
				for i, v := range src {
					dd[i] += v
				}
			} else {
				copy(dd, src)
			}
		}
	}
}

func (stackRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	gs := make([]Var[T], len(e.ins))
	for j, x := range e.ins {
		if t.wants(x) {
			gs[j] = Reshape(Narrow(g, e.n[0], j, 1), x.value.Shape()...)
		}
	}
	return gs, nil
}
