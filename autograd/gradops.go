package autograd

import (
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// The ops that the backward rules of convolution and pooling are written
// in, for Grad. Each is linear in its gradient operand, and the transposes
// close up: Conv2D, its backward-data and its backward-filter are each
// other's VJPs, as are a pooling's scatter and gather.

// conv2DData records dx = Conv2DBackwardData(g, w): the input gradient of
// Conv2D for the output gradient g [B, Co, OH, OW], as an x of xshape.
//
// Backward (u = ∂L/∂dx): ∂L/∂g += Conv2D(u, w), ∂L/∂w += BackwardFilter(u, g).
func conv2DData[T tensor.Float](g, w Var[T], p tensor.ConvParams, xshape []int) Var[T] {
	t, ge, we := use2("Conv2DBackwardData", g, w)
	z := t.arena.get(xshape...)
	t.eng.Conv2DBackwardData(z, ge.value, we.value, p, false)
	e := t.record("Conv2DBackwardData", z, convDataRule[T]{}, ge, we, nil)
	e.n[0], e.n[1] = p.Stride, p.Pad
	return t.varOf(e)
}

// conv2DFilter records dw = Conv2DBackwardFilter(x, g): the filter
// gradient of Conv2D at the input x for the output gradient g, of wshape.
//
// Backward (U = ∂L/∂dw): ∂L/∂x += BackwardData(g, U), ∂L/∂g += Conv2D(x, U).
func conv2DFilter[T tensor.Float](x, g Var[T], p tensor.ConvParams, wshape []int) Var[T] {
	t, xe, ge := use2("Conv2DBackwardFilter", x, g)
	z := t.arena.get(wshape...)
	t.eng.Conv2DBackwardFilter(z, nil, ge.value, xe.value, p, false)
	e := t.record("Conv2DBackwardFilter", z, convFilterRule[T]{}, xe, ge, nil)
	e.n[0], e.n[1] = p.Stride, p.Pad
	return t.varOf(e)
}

func convParams[T tensor.Float](e *entry[T]) tensor.ConvParams {
	return tensor.ConvParams{Stride: e.n[0], Pad: e.n[1]}
}

// addConvInto adds Conv2D(x, w) (no bias) into dst, or sets it when !acc.
func (t *Tape[T]) addConvInto(dst *tensor.Tensor[T], acc bool, x, w *tensor.Tensor[T], p tensor.ConvParams) {
	if !acc {
		t.eng.Conv2D(dst, x, w, nil, p)
		return
	}
	tmp := t.arena.like(dst)
	t.eng.Conv2D(tmp, x, w, nil, p)
	dst.Add(dst, tmp)
	t.arena.put(tmp, -1)
}

type convDataRule[T tensor.Float] struct{}

func (convDataRule[T]) backward(t *Tape[T], e *entry[T]) {
	g, w, u, p := e.in[0], e.in[1], e.grad, convParams(e)
	if dst, acc := t.gradDst(g); dst != nil {
		t.addConvInto(dst, acc, u, w.value, p)
	}
	if dst, acc := t.gradDst(w); dst != nil {
		t.eng.Conv2DBackwardFilter(dst, nil, g.value, u, p, acc)
	}
}

func (convDataRule[T]) gradVars(t *Tape[T], e *entry[T], u Var[T]) ([]Var[T], error) {
	p := convParams(e)
	return two(t.ifWants(e.in[0], func() Var[T] { return Conv2D(u, t.v(e.in[1]), Var[T]{}, p) }),
		t.ifWants(e.in[1], func() Var[T] { return conv2DFilter(u, t.v(e.in[0]), p, e.in[1].value.Shape()) }))
}

type convFilterRule[T tensor.Float] struct{}

func (convFilterRule[T]) backward(t *Tape[T], e *entry[T]) {
	x, g, u, p := e.in[0], e.in[1], e.grad, convParams(e)
	if dst, acc := t.gradDst(x); dst != nil {
		t.eng.Conv2DBackwardData(dst, g.value, u, p, acc)
	}
	if dst, acc := t.gradDst(g); dst != nil {
		t.addConvInto(dst, acc, x.value, u, p)
	}
}

func (convFilterRule[T]) gradVars(t *Tape[T], e *entry[T], u Var[T]) ([]Var[T], error) {
	p := convParams(e)
	return two(t.ifWants(e.in[0], func() Var[T] { return conv2DData(t.v(e.in[1]), u, p, e.in[0].value.Shape()) }),
		t.ifWants(e.in[1], func() Var[T] { return Conv2D(t.v(e.in[0]), u, Var[T]{}, p) }))
}

func (conv2DRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	p := convParams(e)
	x, w := t.v(e.in[0]), t.v(e.in[1])
	return []Var[T]{t.ifWants(e.in[0], func() Var[T] { return conv2DData(g, w, p, e.in[0].value.Shape()) }),
		t.ifWants(e.in[1], func() Var[T] { return conv2DFilter(x, g, p, e.in[1].value.Shape()) }),
		t.ifWants(e.in[2], func() Var[T] { return sumOverChannels(g) })}, nil
}

// conv2DTimeRule: Conv2D's rule at the input with its time channel, the
// time channel's gradient dropped.
func (conv2DTimeRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	p := convParams(e)
	x, w := t.v(e.in[0]), t.v(e.in[1])
	cshape := append([]int(nil), e.in[0].value.Shape()...)
	cshape[1]++ // the input with its time channel
	return []Var[T]{t.ifWants(e.in[0], func() Var[T] { return Narrow(conv2DData(g, w, p, cshape), 1, 0, e.in[0].value.Dim(1)) }),
		t.ifWants(e.in[1], func() Var[T] { return conv2DFilter(ConcatTime(x, e.f[0]), g, p, e.in[1].value.Shape()) }),
		t.ifWants(e.in[2], func() Var[T] { return sumOverChannels(g) })}, nil
}

// geomOf returns the windows of the pooling e of x into z (kind, kernel,
// stride, pad in e.n).
func geomOf[T tensor.Float](n [4]int, x, z *tensor.Tensor[T]) poolGeom {
	sh, zs := x.Shape(), z.Shape()
	return poolGeom{kind: poolKind(n[0]), k: n[1], s: n[2], p: n[3], h: sh[2], w: sh[3], oh: zs[2], ow: zs[3], planes: sh[0] * sh[1]}
}

// poolScatter adds to d (shaped like x) each window's g: g / size to every
// element of an average's window, g to the first maximum of a max's.
func poolScatter[T tensor.Float](g poolGeom, xd, zd, gd, d []T) {
	hw, ohw := g.h*g.w, g.oh*g.ow
	for pl := range g.planes {
		in, dx := xd[pl*hw:(pl+1)*hw], d[pl*hw:(pl+1)*hw]
		for i := range g.oh {
			ylo, yhi := g.span(i, g.h, g.oh)
			for j := range g.ow {
				xlo, xhi := g.span(j, g.w, g.ow)
				o := pl*ohw + i*g.ow + j
				if g.kind == poolMax {
					poolMaxBack(g, in, dx, zd[o], gd[o], ylo, yhi, xlo, xhi)
					continue
				}
				share := gd[o] / T(g.divisor(ylo, yhi, xlo, xhi))
				for y := ylo; y < yhi; y++ {
					for x := xlo; x < xhi; x++ {
						dx[y*g.w+x] += share
					}
				}
			}
		}
	}
}

// poolGather adds to d (shaped like z) the transpose of poolScatter applied
// to u (shaped like x): each average window's mean of u, or u at each max
// window's first maximum of x.
func poolGather[T tensor.Float](g poolGeom, xd, zd, ud, d []T) {
	hw, ohw := g.h*g.w, g.oh*g.ow
	for pl := range g.planes {
		in, u := xd[pl*hw:(pl+1)*hw], ud[pl*hw:(pl+1)*hw]
		for i := range g.oh {
			ylo, yhi := g.span(i, g.h, g.oh)
			for j := range g.ow {
				xlo, xhi := g.span(j, g.w, g.ow)
				o := pl*ohw + i*g.ow + j
				if g.kind == poolMax {
					d[o] += poolMaxAt(g, in, u, zd[o], ylo, yhi, xlo, xhi)
					continue
				}
				var s float64
				for y := ylo; y < yhi; y++ {
					for _, v := range u[y*g.w+xlo : y*g.w+xhi] {
						s += float64(v)
					}
				}
				d[o] += T(s / g.divisor(ylo, yhi, xlo, xhi))
			}
		}
	}
}

// poolMaxAt returns u at the first element of the window equal to its
// maximum m (the element poolMaxBack sends the gradient to).
func poolMaxAt[T tensor.Float](g poolGeom, in, u []T, m T, ylo, yhi, xlo, xhi int) T {
	if i := poolArgMax(g, in, m, ylo, yhi, xlo, xhi); i >= 0 {
		return u[i]
	}
	return 0
}

// poolOp records the pooling's scatter (back: g shaped like z, result like
// x) or gather (u shaped like x, result like z) for the pooling node pe,
// whose input and output give the windows and the maxima (constants).
func poolOp[T tensor.Float](back bool, g Var[T], pe *entry[T]) Var[T] {
	op := "PoolGather"
	if back {
		op = "PoolScatter"
	}
	t, ge := use1(op, g)
	x, z := pe.in[0], pe
	var out *tensor.Tensor[T]
	geo := geomOf(pe.n, x.value, z.value)
	if back {
		out = t.arena.like(x.value)
		out.Zero()
		poolScatter(geo, x.value.Data(), z.value.Data(), ge.value.Data(), out.Data())
	} else {
		out = t.arena.like(z.value)
		out.Zero()
		poolGather(geo, x.value.Data(), z.value.Data(), ge.value.Data(), out.Data())
	}
	e := t.record(op, out, poolOpRule[T]{}, ge, nil, nil)
	if e.rule != nil {
		e.ins = append(e.ins[:0], ge, x, z) // ins[1:] are references, not inputs
		e.in[0] = nil
		e.n = pe.n
		if back {
			e.f[0] = 1
		}
	}
	return t.varOf(e)
}

// poolOpRule is the backward of poolOp: the scatter's is the gather and
// back. Its node keeps its operand, the pooling's input and its output in
// ins; only the first receives a gradient.
type poolOpRule[T tensor.Float] struct{}

func (poolOpRule[T]) backward(t *Tape[T], e *entry[T]) {
	ge, x, z := e.ins[0], e.ins[1], e.ins[2]
	dst, acc := t.gradDst(ge)
	if dst == nil {
		return
	}
	if !acc {
		dst.Zero()
	}
	geo := geomOf(e.n, x.value, z.value)
	if e.f[0] == 1 {
		poolGather(geo, x.value.Data(), z.value.Data(), e.grad.Data(), dst.Data())
	} else {
		poolScatter(geo, x.value.Data(), z.value.Data(), e.grad.Data(), dst.Data())
	}
}

func (poolOpRule[T]) gradVars(t *Tape[T], e *entry[T], u Var[T]) ([]Var[T], error) {
	pe := &entry[T]{in: [3]*entry[T]{e.ins[1]}, value: e.ins[2].value, n: e.n}
	return []Var[T]{poolOp(e.f[0] != 1, u, pe), {}, {}}, nil
}

func (poolRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(poolOp(true, g, e))
}

// actGradOp records g ⊙ act'(x) written in terms of the activation's
// output y = act(x), elementwise, for tanh (act' = 1 − y²), the logistic
// (y(1 − y)) and softplus (1 − e⁻ʸ), with the first-order backward's
// kernels (vectorized for float32): one pass where the same in ops takes
// three or four. For ReLU and LeakyReLU (act' = [y > 0], or slope where
// y ≤ 0) it is the backward's mask kernel, g selected where y > 0 (0, or
// slope·g, elsewhere, whatever g is, as PyTorch's threshold_backward); y
// enters as a constant: the mask is constant almost everywhere.
//
// Backward: ∂L/∂g += u ⊙ act'(y), ∂L/∂y += u ⊙ g ⊙ act′′(y), with act′′
// as a function of y: −2y, 1 − 2y and e⁻ʸ (none for ReLU and LeakyReLU).
func actGradOp[T tensor.Float](g, y Var[T], kind actKind, slope T) Var[T] {
	t, ge, ye := use2("ActGrad", g, y)
	if piecewiseLinear(kind) && ye.requires {
		y = t.Const(ye.value)
		t, ge, ye = use2("ActGrad", g, y)
	}
	z := t.arena.like(ye.value)
	t.ew.MapBackward(actOps[kind], z, ge.value, ye.value, slope, 0, false)
	e := t.record("ActGrad", z, actGradRule[T]{}, ge, ye, nil)
	e.n[0] = int(kind)
	e.f[0] = slope
	return t.varOf(e)
}

// piecewiseLinear reports whether the activation's derivative is constant
// almost everywhere: ReLU's and LeakyReLU's.
func piecewiseLinear(kind actKind) bool { return kind == actReLU || kind == actLeakyReLU }

type actGradRule[T tensor.Float] struct{}

func (actGradRule[T]) backward(t *Tape[T], e *entry[T]) {
	g, y, u, kind := e.in[0], e.in[1], e.grad, actKind(e.n[0])
	if dst, acc := t.gradDst(g); dst != nil {
		t.ew.MapBackward(actOps[kind], dst, u, y.value, e.f[0], 0, acc)
	}
	dst, acc := t.gradDst(y) // nil for ReLU's and LeakyReLU's y, a constant
	if dst == nil {
		return
	}
	d, gd, ud, yd := dst.Data(), g.value.Data(), u.Data(), y.value.Data()
	gd, ud = gd[:len(yd)], ud[:len(yd)]
	if !acc {
		clear(d)
	}
	d = d[:len(yd)]
	// One loop per kind, the switch outside: a call per element of a
	// generic function costs several times the arithmetic.
	switch kind {
	case actTanh:
		for i, v := range yd {
			d[i] -= 2 * ud[i] * gd[i] * v
		}
	case actSigmoid:
		for i, v := range yd {
			d[i] += ud[i] * gd[i] * (1 - 2*v)
		}
	default:
		for i, v := range yd {
			d[i] += ud[i] * gd[i] * T(math.Exp(-float64(v)))
		}
	}
}

func (actGradRule[T]) gradVars(t *Tape[T], e *entry[T], u Var[T]) ([]Var[T], error) {
	g, y, kind := t.v(e.in[0]), t.v(e.in[1]), actKind(e.n[0])
	return two(t.ifWants(e.in[0], func() Var[T] { return actGradOp(u, y, kind, e.f[0]) }),
		t.ifWants(e.in[1], func() Var[T] {
			var s Var[T]
			switch kind {
			case actTanh:
				s = Scale(y, -2)
			case actSigmoid:
				s = AddConst(Scale(y, -2), 1)
			default:
				s = Exp(Neg(y))
			}
			return Mul(Mul(u, g), s)
		}))
}
