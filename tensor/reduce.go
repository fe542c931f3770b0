package tensor

import (
	"fmt"
	"math"
	"slices"
)

// Sum returns the sum of all elements, accumulated in float64.
func (t *Tensor[T]) Sum() T {
	var s float64
	for _, v := range t.host() {
		s += float64(v)
	}
	return T(s)
}

// SumSlice returns Σ x[i], accumulated in float64 in interleaved sums (one
// chain of additions is bound by their latency): float32 on the avx512 and
// avx2 kernel paths in 32 lanes (the same sums on both), otherwise in four.
func SumSlice[T Float](x []T) float64 {
	if f, ok := any(x).([]float32); ok && axpyAVX && len(f) > 0 {
		return sumAsm(&f[0], len(f))
	}
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i])
		s1 += float64(x[i+1])
		s2 += float64(x[i+2])
		s3 += float64(x[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// Mean returns the mean of all elements (NaN for an empty tensor).
func (t *Tensor[T]) Mean() T { return T(float64(t.Sum()) / float64(len(t.data))) }

// Max returns the largest element. It panics on an empty tensor.
func (t *Tensor[T]) Max() T {
	if len(t.data) == 0 {
		panic(&ShapeError{Op: "Max", Msg: fmt.Sprintf("empty tensor of shape %v", t.shape)})
	}
	d := t.host()
	m := d[0]
	for _, v := range d[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

// Norm2 returns the Euclidean norm √(Σ x²), computed in float64 with scaling
// so that it neither overflows nor underflows.
func (t *Tensor[T]) Norm2() float64 {
	var scale, ssq float64 = 0, 1
	for _, v := range t.host() {
		if v == 0 {
			continue
		}
		a := math.Abs(float64(v))
		if scale < a {
			ssq = 1 + ssq*(scale/a)*(scale/a)
			scale = a
		} else {
			ssq += (a / scale) * (a / scale)
		}
	}
	return scale * math.Sqrt(ssq)
}

// Dot returns Σ x[i]·y[i], accumulated in float64.
func Dot[T Float](x, y *Tensor[T]) T {
	mustSameShape("Dot", x.shape, y.shape)
	var s float64
	yd := y.host()
	for i, v := range x.host() {
		s += float64(v) * float64(yd[i])
	}
	return T(s)
}

// axisLayout splits shape around axis into (outer, n, inner) sizes.
func axisLayout(op string, shape []int, axis int) (outer, n, inner, ax int) {
	if axis < 0 {
		axis += len(shape)
	}
	if axis < 0 || axis >= len(shape) {
		panic(&ShapeError{Op: op, Msg: fmt.Sprintf("axis %d out of range for shape %v", axis, shape)})
	}
	outer, inner = 1, 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	return outer, shape[axis], inner, axis
}

// reducedShape returns shape with the given axis removed.
func reducedShape(shape []int, axis int) []int {
	s := append(cloneInts(shape[:axis]), shape[axis+1:]...)
	return s
}

// SumAxis sets dst to the sum of x along axis (dst has x's shape with that
// axis removed) and returns dst.
func (dst *Tensor[T]) SumAxis(x *Tensor[T], axis int) *Tensor[T] {
	dst.wrote()
	outer, n, inner, ax := axisLayout("SumAxis", x.shape, axis)
	if !slices.Equal(dst.shape, reducedShape(x.shape, ax)) {
		panic(&ShapeError{Op: "SumAxis", Msg: fmt.Sprintf("destination shape %v does not fit the sum of shape %v over axis %d", dst.shape, x.shape, ax)})
	}
	clear(dst.data)
	xd := x.host()
	for o := 0; o < outer; o++ {
		d := dst.data[o*inner : (o+1)*inner]
		for k := 0; k < n; k++ {
			src := xd[(o*n+k)*inner : (o*n+k+1)*inner]
			for i, v := range src {
				d[i] += v
			}
		}
	}
	return dst
}

// ArgMax returns, for each position of x with axis removed, the index of the
// largest element along axis (the first one on ties). The result has x's shape
// with axis removed, flattened in row-major order. A NaN is never larger
// than the largest so far: a NaN first along the axis gives 0, a later one is
// passed over. ArgMaxOn computes it where an engine keeps x.
func ArgMax[T Float](x *Tensor[T], axis int) []int {
	outer, n, inner, _ := axisLayout("ArgMax", x.shape, axis)
	if n == 0 {
		panic(&ShapeError{Op: "ArgMax", Msg: fmt.Sprintf("empty axis %d of shape %v", axis, x.shape)})
	}
	out := make([]int, outer*inner)
	xd := x.host()
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			best, bi := xd[o*n*inner+i], 0
			for k := 1; k < n; k++ {
				if v := xd[(o*n+k)*inner+i]; v > best {
					best, bi = v, k
				}
			}
			out[o*inner+i] = bi
		}
	}
	return out
}

// MaxAxis sets dst to the maximum of x along axis (dst has x's shape with
// that axis removed) and returns dst. A NaN propagates, as in PyTorch: the
// first NaN along the axis is the result; otherwise the first of equal
// largest elements (so −0 or +0 as the first zero is).
func (dst *Tensor[T]) MaxAxis(x *Tensor[T], axis int) *Tensor[T] {
	dst.wrote()
	outer, n, inner, ax := axisLayout("MaxAxis", x.shape, axis)
	if !slices.Equal(dst.shape, reducedShape(x.shape, ax)) || n == 0 {
		panic(&ShapeError{Op: "MaxAxis", Msg: fmt.Sprintf("destination shape %v does not fit the max of shape %v over axis %d", dst.shape, x.shape, ax)})
	}
	xd := x.host()
	for o := 0; o < outer; o++ {
		d := dst.data[o*inner : (o+1)*inner]
		copy(d, xd[o*n*inner:(o*n+1)*inner])
		for k := 1; k < n; k++ {
			for i, v := range xd[(o*n+k)*inner : (o*n+k+1)*inner] {
				if m := d[i]; v > m || (v != v && m == m) {
					d[i] = v
				}
			}
		}
	}
	return dst
}

// Concat copies srcs, in order, into dst along axis and returns dst. All
// sources must match dst's shape except along axis, where their sizes add up
// to dst's.
func (dst *Tensor[T]) Concat(axis int, srcs ...*Tensor[T]) *Tensor[T] {
	dst.wrote()
	outer, n, inner, ax := axisLayout("Concat", dst.shape, axis)
	total := 0
	for _, s := range srcs {
		if len(s.shape) != len(dst.shape) {
			panic(newShapeError("Concat", dst.shape, s.shape))
		}
		for i := range s.shape {
			if i != ax && s.shape[i] != dst.shape[i] {
				panic(&ShapeError{Op: "Concat", Msg: fmt.Sprintf("source shape %v does not fit destination shape %v along axis %d", s.shape, dst.shape, ax)})
			}
		}
		total += s.shape[ax]
	}
	if total != n {
		panic(&ShapeError{Op: "Concat", Msg: fmt.Sprintf("sources add up to %d along axis %d, destination shape %v has %d", total, ax, dst.shape, n)})
	}
	for _, s := range srcs {
		s.sync()
	}
	for o := 0; o < outer; o++ {
		at := o * n * inner
		for _, s := range srcs {
			m := s.shape[ax] * inner
			copy(dst.data[at:at+m], s.data[o*m:(o+1)*m])
			at += m
		}
	}
	return dst
}

// SplitInto copies consecutive pieces of x along axis into dsts, the inverse
// of Concat.
func SplitInto[T Float](x *Tensor[T], axis int, dsts ...*Tensor[T]) {
	outer, n, inner, ax := axisLayout("Split", x.shape, axis)
	total := 0
	for _, d := range dsts {
		if len(d.shape) != len(x.shape) {
			panic(newShapeError("Split", x.shape, d.shape))
		}
		for i := range d.shape {
			if i != ax && d.shape[i] != x.shape[i] {
				panic(&ShapeError{Op: "Split", Msg: fmt.Sprintf("piece shape %v does not fit shape %v along axis %d", d.shape, x.shape, ax)})
			}
		}
		total += d.shape[ax]
	}
	if total != n {
		panic(&ShapeError{Op: "Split", Msg: fmt.Sprintf("pieces add up to %d along axis %d, shape %v has %d", total, ax, x.shape, n)})
	}
	for _, d := range dsts {
		d.wrote()
	}
	xd := x.host()
	for o := 0; o < outer; o++ {
		at := o * n * inner
		for _, d := range dsts {
			m := d.shape[ax] * inner
			copy(d.data[o*m:(o+1)*m], xd[at:at+m])
			at += m
		}
	}
}

// Concat returns a new tensor joining srcs along axis.
func Concat[T Float](axis int, srcs ...*Tensor[T]) *Tensor[T] {
	if len(srcs) == 0 {
		panic(&ShapeError{Op: "Concat", Msg: "no tensors to concatenate"})
	}
	_, _, _, ax := axisLayout("Concat", srcs[0].shape, axis)
	shape := cloneInts(srcs[0].shape)
	shape[ax] = 0
	for _, s := range srcs {
		for i := range shape {
			if len(s.shape) != len(shape) || i != ax && s.shape[i] != shape[i] {
				panic(&ShapeError{Op: "Concat", Msg: fmt.Sprintf("shapes %v and %v do not fit together along axis %d", srcs[0].shape, s.shape, ax)})
			}
		}
		shape[ax] += s.shape[ax]
	}
	return New[T](shape...).Concat(ax, srcs...)
}

// Split returns the pieces of x along axis with the given sizes, as new
// tensors.
func Split[T Float](x *Tensor[T], axis int, sizes ...int) []*Tensor[T] {
	_, _, _, ax := axisLayout("Split", x.shape, axis)
	out := make([]*Tensor[T], len(sizes))
	for i, s := range sizes {
		shape := cloneInts(x.shape)
		shape[ax] = s
		out[i] = New[T](shape...)
	}
	SplitInto(x, ax, out...)
	return out
}
