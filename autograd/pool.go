package autograd

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// Pooling over the last two axes of x [N, C, H, W], as PyTorch's
// avg_pool2d, max_pool2d and adaptive_avg_pool2d.

// poolKind names a pooling.
type poolKind int

const (
	poolAvg poolKind = iota
	poolMax
	poolAdaptive
)

// AvgPool2D returns the mean over each kernel × kernel window, windows
// stride apart, of x [N, C, H, W] zero-padded by pad on each side: output
// [N, C, (H+2·pad−kernel)/stride+1, (W+2·pad−kernel)/stride+1]. Padding
// counts in the mean (PyTorch's count_include_pad, its default).
//
// Backward: each window's g / kernel² to each element of it.
func AvgPool2D[T tensor.Float](x Var[T], kernel, stride, pad int) Var[T] {
	return pool2D("AvgPool2D", poolAvg, x, [4]int{kernel, stride, pad}, 0, 0)
}

// MaxPool2D returns the largest element of each kernel × kernel window,
// windows stride apart, of x [N, C, H, W] padded by pad (the padding never
// wins): shapes as AvgPool2D's.
//
// Backward: each window's g to its first largest element.
func MaxPool2D[T tensor.Float](x Var[T], kernel, stride, pad int) Var[T] {
	return pool2D("MaxPool2D", poolMax, x, [4]int{kernel, stride, pad}, 0, 0)
}

// AdaptiveAvgPool2D returns x [N, C, H, W] averaged down to [N, C, oh, ow]:
// output (i, j) is the mean over rows ⌊i·H/oh⌋ … ⌈(i+1)·H/oh⌉−1 and the
// columns likewise.
//
// Backward: each window's g / its size to each element of it.
func AdaptiveAvgPool2D[T tensor.Float](x Var[T], oh, ow int) Var[T] {
	return pool2D("AdaptiveAvgPool2D", poolAdaptive, x, [4]int{}, oh, ow)
}

// poolGeom is where the windows of a pooling lie.
type poolGeom struct {
	kind                 poolKind
	k, s, p              int
	h, w, oh, ow, planes int
}

// span returns the input range [lo, hi) of output index i along an axis
// of input size in and output size out, clipped to the input.
func (g poolGeom) span(i, in, out int) (lo, hi int) {
	if g.kind == poolAdaptive {
		return i * in / out, ((i+1)*in + out - 1) / out
	}
	lo = i*g.s - g.p
	return max(lo, 0), min(lo+g.k, in)
}

// divisor returns what the sum of the window [ylo, yhi) × [xlo, xhi) is
// divided by.
func (g poolGeom) divisor(ylo, yhi, xlo, xhi int) float64 {
	if g.kind == poolAdaptive {
		return float64((yhi - ylo) * (xhi - xlo))
	}
	return float64(g.k * g.k)
}

func pool2D[T tensor.Float](op string, kind poolKind, x Var[T], ksp [4]int, oh, ow int) Var[T] {
	t, xe := use1(op, x)
	sh := xe.value.Shape()
	if len(sh) != 4 {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("input of shape %v, want [N, C, H, W]", sh)})
	}
	g := poolGeom{kind: kind, k: ksp[0], s: ksp[1], p: ksp[2], h: sh[2], w: sh[3], oh: oh, ow: ow, planes: sh[0] * sh[1]}
	if kind != poolAdaptive {
		if g.k < 1 || g.s < 1 || g.p < 0 || 2*g.p > g.k {
			panic(usage("%s: kernel %d, stride %d, pad %d: want kernel, stride ≥ 1 and 0 ≤ pad ≤ kernel/2", op, g.k, g.s, g.p))
		}
		g.oh, g.ow = (g.h+2*g.p-g.k)/g.s+1, (g.w+2*g.p-g.k)/g.s+1
	}
	if g.oh < 1 || g.ow < 1 {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("input of shape %v gives no output (%d × %d)", sh, g.oh, g.ow)})
	}
	z := t.arena.get(sh[0], sh[1], g.oh, g.ow)
	xd, zd := xe.value.Data(), z.Data()
	for pl := range g.planes {
		in, out := xd[pl*g.h*g.w:(pl+1)*g.h*g.w], zd[pl*g.oh*g.ow:(pl+1)*g.oh*g.ow]
		for i := range g.oh {
			ylo, yhi := g.span(i, g.h, g.oh)
			for j := range g.ow {
				xlo, xhi := g.span(j, g.w, g.ow)
				out[i*g.ow+j] = poolReduce(g, in, ylo, yhi, xlo, xhi)
			}
		}
	}
	e := t.record(op, z, poolRule[T]{}, xe, nil, nil)
	e.n = [4]int{int(kind), g.k, g.s, g.p}
	return t.varOf(e)
}

// poolReduce returns the window's mean or maximum (a NaN propagates).
func poolReduce[T tensor.Float](g poolGeom, in []T, ylo, yhi, xlo, xhi int) T {
	if g.kind == poolMax {
		m := T(math.Inf(-1))
		for y := ylo; y < yhi; y++ {
			for _, v := range in[y*g.w+xlo : y*g.w+xhi] {
				if v > m || v != v {
					m = v
				}
			}
		}
		return m
	}
	var s float64
	for y := ylo; y < yhi; y++ {
		for _, v := range in[y*g.w+xlo : y*g.w+xhi] {
			s += float64(v)
		}
	}
	return T(s / g.divisor(ylo, yhi, xlo, xhi))
}

// poolRule is the backward of the poolings (kind, kernel, stride, pad in
// n).
type poolRule[T tensor.Float] struct{}

func (poolRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	if !acc {
		dst.Zero()
	}
	poolScatter(geomOf(e.n, e.in[0].value, e.value), e.in[0].value.Data(), e.value.Data(), e.grad.Data(), dst.Data())
}

// poolMaxBack adds gi to the first element of the window equal to its
// maximum m.
func poolMaxBack[T tensor.Float](g poolGeom, in, dx []T, m, gi T, ylo, yhi, xlo, xhi int) {
	if i := poolArgMax(g, in, m, ylo, yhi, xlo, xhi); i >= 0 {
		dx[i] += gi
	}
}

// poolArgMax returns the index in the plane of the first element of the
// window equal to its maximum m (a NaN maximum: the first NaN), or −1.
func poolArgMax[T tensor.Float](g poolGeom, in []T, m T, ylo, yhi, xlo, xhi int) int {
	for y := ylo; y < yhi; y++ {
		for x := xlo; x < xhi; x++ {
			if v := in[y*g.w+x]; v == m || (v != v && m != m) {
				return y*g.w + x
			}
		}
	}
	return -1
}
