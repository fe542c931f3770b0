package autograd

import (
	"fmt"
	"slices"

	"github.com/adamnode/adamnode/tensor"
)

// Reductions along one axis, as PyTorch's x.sum(dim, keepdim),
// x.mean(dim, keepdim) and x.amax(dim, keepdim). A negative axis counts
// from the end. The result drops the axis, or keeps it with size 1 when
// keepDim is set (so that it broadcasts back against x).

// axisKind names a reduction along an axis.
type axisKind int

const (
	axisSum axisKind = iota
	axisMean
	axisMax
)

// SumAxis returns the sum of x along axis:
//
//	z[o, i] = Σ_k x[o, k, i]    (x viewed as [outer, n, inner])
//
// Backward: ∂L/∂x[o, k, i] += g[o, i].
func SumAxis[T tensor.Float](x Var[T], axis int, keepDim bool) Var[T] {
	return reduceAxis("SumAxis", axisSum, x, axis, keepDim)
}

// MeanAxis returns the mean of x along axis: SumAxis / n.
//
// Backward: ∂L/∂x[o, k, i] += g[o, i] / n.
func MeanAxis[T tensor.Float](x Var[T], axis int, keepDim bool) Var[T] {
	return reduceAxis("MeanAxis", axisMean, x, axis, keepDim)
}

// MaxAxis returns the largest element of x along axis (a NaN, if any,
// propagates, as in PyTorch).
//
// Backward: the gradient goes to the first element that attains the
// maximum: ∂L/∂x[o, k*, i] += g[o, i].
func MaxAxis[T tensor.Float](x Var[T], axis int, keepDim bool) Var[T] {
	return reduceAxis("MaxAxis", axisMax, x, axis, keepDim)
}

// dimsOf returns x's shape, in buf when it fits (so that it need not be
// allocated).
func dimsOf[T tensor.Float](x *tensor.Tensor[T], buf *[maxPooledRank]int) []int {
	if x.Rank() > maxPooledRank {
		return x.Shape()
	}
	d := buf[:x.Rank()]
	for i := range d {
		d[i] = x.Dim(i)
	}
	return d
}

// reduceSplit returns outer, n and inner of x viewed as [outer, n, inner]
// around axis (negative: from the end), and the axis in range, panicking
// with a *tensor.ShapeError for an axis out of range.
func reduceSplit(op string, shape []int, axis int) (outer, n, inner, a int) {
	a = axis
	if a < 0 {
		a += len(shape)
	}
	if a < 0 || a >= len(shape) {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("axis %d out of range for shape %v", axis, slices.Clone(shape))})
	}
	outer, inner = 1, 1
	for _, d := range shape[:a] {
		outer *= d
	}
	for _, d := range shape[a+1:] {
		inner *= d
	}
	return outer, shape[a], inner, a
}

func reduceAxis[T tensor.Float](op string, k axisKind, x Var[T], axis int, keepDim bool) Var[T] {
	t, xe := use1(op, x)
	var sbuf, obuf [maxPooledRank]int
	shape := dimsOf(xe.value, &sbuf)
	outer, n, inner, a := reduceSplit(op, shape, axis)
	if k == axisMax && n == 0 {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("axis %d of shape %v is empty: no maximum", axis, xe.value.Shape())})
	}
	oshape := append(obuf[:0], shape[:a]...)
	if keepDim {
		oshape = append(oshape, 1)
	}
	oshape = append(oshape, shape[a+1:]...)
	z := t.arena.get(oshape...)
	if t.onDevice {
		t.ewReduceAxis(k, z, xe.value, a, keepDim)
		e := t.record(op, z, axisRule[T]{}, xe, nil, nil)
		e.n = [4]int{int(k), outer, n, inner}
		return t.varOf(e)
	}
	xd, zd := xe.value.Data(), z.Data()
	for o := range outer {
		for i := range inner {
			base := o*n*inner + i
			switch k {
			case axisMax:
				m := xd[base]
				for j := 1; j < n; j++ {
					if v := xd[base+j*inner]; v > m || v != v {
						m = v
						if v != v {
							break
						}
					}
				}
				zd[o*inner+i] = m
			default:
				var s float64
				for j := range n {
					s += float64(xd[base+j*inner])
				}
				if k == axisMean {
					s /= float64(n)
				}
				zd[o*inner+i] = T(s)
			}
		}
	}
	e := t.record(op, z, axisRule[T]{}, xe, nil, nil)
	e.n = [4]int{int(k), outer, n, inner}
	return t.varOf(e)
}

// axisRule is the backward of the reductions along an axis; n holds the
// kind, outer, n and inner.
type axisRule[T tensor.Float] struct{}

func (axisRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	k, outer, n, inner := axisKind(e.n[0]), e.n[1], e.n[2], e.n[3]
	if t.onDevice && k != axisMax {
		t.ewAxisGrad(k, dst, acc, e.grad, outer, n, inner)
		return
	}
	if !acc {
		dst.Zero()
	}
	d, g, xd, zd := dst.Data(), e.grad.Data(), e.in[0].value.Data(), e.value.Data()
	scale := T(1)
	if k == axisMean {
		scale = T(1 / float64(n))
	}
	for o := range outer {
		for i := range inner {
			base, gi := o*n*inner+i, g[o*inner+i]
			if k != axisMax {
				for j := range n {
					d[base+j*inner] += gi * scale
				}
				continue
			}
			m := zd[o*inner+i]
			for j := range n {
				if v := xd[base+j*inner]; v == m || (v != v && m != m) {
					d[base+j*inner] += gi
					break
				}
			}
		}
	}
}
