package autograd

import (
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// smKind names an op of the softmax family.
type smKind int

const (
	smLogSumExp smKind = iota
	smSoftmax
	smLogSoftmax
)

// LogSumExp returns log Σ_k exp(x[…, k, …]) along axis (torch.logsumexp),
// computed stably: shifted by the maximum m along the axis (a constant),
//
//	z = m + log Σ_k exp(x_k − m)
//
// (−∞ for an empty axis or one of −∞ only). The axis is dropped, or kept
// with size 1 with keepDim.
//
// Backward: ∂L/∂x_k += g · exp(x_k − z) (g times the softmax).
func LogSumExp[T tensor.Float](x Var[T], axis int, keepDim bool) Var[T] {
	t, xe := use1("LogSumExp", x)
	var sbuf, buf [maxPooledRank]int
	shape := dimsOf(xe.value, &sbuf)
	outer, n, inner, a := reduceSplit("LogSumExp", shape, axis)
	oshape := append(buf[:0], shape[:a]...)
	if keepDim {
		oshape = append(oshape, 1)
	}
	oshape = append(oshape, shape[a+1:]...)
	z := t.arena.get(oshape...)
	softmaxForward(t, smLogSumExp, z.Data(), xe.value.Data(), outer, n, inner)
	return t.varOf(recordSoftmax(t, "LogSumExp", smLogSumExp, z, xe, outer, n, inner))
}

// Softmax returns exp(x_k) / Σ_j exp(x_j) along axis (torch.softmax),
// computed stably (shifted by the maximum along the axis, a constant):
//
//	y_k = exp(x_k − m) / Σ_j exp(x_j − m)
//
// Backward: ∂L/∂x_k += y_k · (g_k − Σ_j g_j y_j).
func Softmax[T tensor.Float](x Var[T], axis int) Var[T] {
	return softmaxOp("Softmax", smSoftmax, x, axis)
}

// LogSoftmax returns x_k − LogSumExp(x) along axis (torch.log_softmax),
// computed stably.
//
// Backward: ∂L/∂x_k += g_k − exp(y_k) · Σ_j g_j.
func LogSoftmax[T tensor.Float](x Var[T], axis int) Var[T] {
	return softmaxOp("LogSoftmax", smLogSoftmax, x, axis)
}

func softmaxOp[T tensor.Float](op string, k smKind, x Var[T], axis int) Var[T] {
	t, xe := use1(op, x)
	outer, n, inner, _ := axisSplitN(op, xe.value, axis)
	z := t.arena.like(xe.value)
	softmaxForward(t, k, z.Data(), xe.value.Data(), outer, n, inner)
	return t.varOf(recordSoftmax(t, op, k, z, xe, outer, n, inner))
}

// axisSplitN is reduceSplit for a tensor.
func axisSplitN[T tensor.Float](op string, x *tensor.Tensor[T], axis int) (outer, n, inner, a int) {
	o, i, a := axisSplit(op, x, axis)
	return o, x.Dim(a), i, a
}

func recordSoftmax[T tensor.Float](t *Tape[T], op string, k smKind, z *tensor.Tensor[T], xe *entry[T], outer, n, inner int) *entry[T] {
	e := t.record(op, z, softmaxRule[T]{}, xe, nil, nil)
	e.n = [4]int{int(k), outer, n, inner}
	return e
}

// softmaxForward computes the op k of x viewed as [outer, n, inner] along
// its middle axis into z ([outer, inner] for LogSumExp, else like x), in
// float64.
func softmaxForward[T tensor.Float](t *Tape[T], k smKind, zd, xd []T, outer, n, inner int) {
	if len(xd) >= parallelMin && outer > 1 {
		t.eng.Parallel(outer, func(lo, hi int) { softmaxRows(k, zd, xd, n, inner, lo, hi) })
		return
	}
	softmaxRows(k, zd, xd, n, inner, 0, outer)
}

// softmaxRows is softmaxForward for the outer indices [lo, hi).
func softmaxRows[T tensor.Float](k smKind, zd, xd []T, n, inner, lo, hi int) {
	for o := lo; o < hi; o++ {
		for i := range inner {
			base := o*n*inner + i
			m := math.Inf(-1)
			for j := range n {
				m = max(m, float64(xd[base+j*inner]))
			}
			if math.IsInf(m, 0) {
				m = 0 // all −∞ (or an empty axis), or a +∞: no shift
			}
			var s float64
			for j := range n {
				s += math.Exp(float64(xd[base+j*inner]) - m)
			}
			lse := m + math.Log(s)
			switch k {
			case smLogSumExp:
				zd[o*inner+i] = T(lse)
			case smSoftmax:
				for j := range n {
					zd[base+j*inner] = T(math.Exp(float64(xd[base+j*inner]) - lse))
				}
			case smLogSoftmax:
				for j := range n {
					zd[base+j*inner] = T(float64(xd[base+j*inner]) - lse)
				}
			}
		}
	}
}

// softmaxRule is the backward of LogSumExp, Softmax and LogSoftmax; n holds
// the kind, outer, n and inner.
type softmaxRule[T tensor.Float] struct{}

func (softmaxRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	k, outer, n, inner := smKind(e.n[0]), e.n[1], e.n[2], e.n[3]
	d, g, xd, zd := dst.Data(), e.grad.Data(), e.in[0].value.Data(), e.value.Data()
	if !acc {
		clear(d)
	}
	if len(d) >= parallelMin && outer > 1 {
		t.eng.Parallel(outer, func(lo, hi int) { softmaxGradRows(k, d, g, xd, zd, n, inner, lo, hi) })
		return
	}
	softmaxGradRows(k, d, g, xd, zd, n, inner, 0, outer)
}

// softmaxGradRows adds the input gradient of the softmax family's op k
// for the outer indices [lo, hi) into d.
func softmaxGradRows[T tensor.Float](k smKind, d, g, xd, zd []T, n, inner, lo, hi int) {
	for o := lo; o < hi; o++ {
		for i := range inner {
			base := o*n*inner + i
			switch k {
			case smLogSumExp:
				gi, zi := float64(g[o*inner+i]), float64(zd[o*inner+i])
				for j := range n {
					p := base + j*inner
					d[p] += T(gi * math.Exp(float64(xd[p])-zi))
				}
			case smSoftmax:
				var s float64
				for j := range n {
					p := base + j*inner
					s += float64(g[p]) * float64(zd[p])
				}
				for j := range n {
					p := base + j*inner
					d[p] += T(float64(zd[p]) * (float64(g[p]) - s))
				}
			case smLogSoftmax:
				var s float64
				for j := range n {
					s += float64(g[base+j*inner])
				}
				for j := range n {
					p := base + j*inner
					d[p] += T(float64(g[p]) - math.Exp(float64(zd[p]))*s)
				}
			}
		}
	}
}

func (softmaxRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	k, outer, n, inner := smKind(e.n[0]), e.n[1], e.n[2], e.n[3]
	xs := e.in[0].value.Shape()
	var gx Var[T]
	switch k {
	case smLogSumExp:
		x3 := Reshape(t.v(e.in[0]), outer, n, inner)
		z3 := Reshape(t.v(e), outer, 1, inner)
		gx = Mul(Reshape(g, outer, 1, inner), Exp(Sub(x3, z3)))
	case smSoftmax:
		y3, g3 := Reshape(t.v(e), outer, n, inner), Reshape(g, outer, n, inner)
		gx = Mul(y3, Sub(g3, SumAxis(Mul(g3, y3), 1, true)))
	case smLogSoftmax:
		y3, g3 := Reshape(t.v(e), outer, n, inner), Reshape(g, outer, n, inner)
		gx = Sub(g3, Mul(Exp(y3), SumAxis(g3, 1, true)))
	}
	return one(Reshape(gx, xs...))
}

// Cumsum returns the cumulative sum of x along axis (torch.cumsum):
//
//	z[o, k, i] = Σ_{j ≤ k} x[o, j, i]    (x viewed as [outer, n, inner])
//
// Backward: ∂L/∂x[o, k, i] += Σ_{j ≥ k} g[o, j, i] (the reversed
// cumulative sum of g).
func Cumsum[T tensor.Float](x Var[T], axis int) Var[T] {
	return cumsumOp(x, axis, false)
}

// cumsumOp records the cumulative sum along axis, from the end when rev.
func cumsumOp[T tensor.Float](x Var[T], axis int, rev bool) Var[T] {
	t, xe := use1("Cumsum", x)
	outer, n, inner, _ := axisSplitN("Cumsum", xe.value, axis)
	z := t.arena.like(xe.value)
	cumsumInto(z.Data(), xe.value.Data(), outer, n, inner, rev, false)
	e := t.record("Cumsum", z, cumsumRule[T]{}, xe, nil, nil)
	r := 0
	if rev {
		r = 1
	}
	e.n = [4]int{r, outer, n, inner}
	return t.varOf(e)
}

// cumsumInto sets (or with acc adds) d = the cumulative sum of s viewed as
// [outer, n, inner] along the middle axis, from the end when rev.
func cumsumInto[T tensor.Float](d, s []T, outer, n, inner int, rev, acc bool) {
	for o := range outer {
		for i := range inner {
			base := o*n*inner + i
			var c T
			for jj := range n {
				j := jj
				if rev {
					j = n - 1 - jj
				}
				p := base + j*inner
				c += s[p]
				if acc {
					d[p] += c
				} else {
					d[p] = c
				}
			}
		}
	}
}

// cumsumRule: n holds rev, outer, n and inner.
type cumsumRule[T tensor.Float] struct{}

func (cumsumRule[T]) backward(t *Tape[T], e *entry[T]) {
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	cumsumInto(dst.Data(), e.grad.Data(), e.n[1], e.n[2], e.n[3], e.n[0] == 0, acc)
}

func (cumsumRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	outer, n, inner := e.n[1], e.n[2], e.n[3]
	gr := cumsumOp(Reshape(g, outer, n, inner), 1, e.n[0] == 0)
	return one(Reshape(gr, e.in[0].value.Shape()...))
}
