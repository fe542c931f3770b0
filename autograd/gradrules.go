package autograd

import (
	"github.com/adamnode/adamnode/tensor"
)

// The backward rules written in the tape's own ops (gradRule), which Grad
// records: the same vector–Jacobian products as the rules' backward
// methods, differentiable again in the output gradient g and in the op's
// inputs. Factors that are constant almost everywhere (the masks of ReLU,
// Clamp, MaxAxis, the sign of Abs) enter as constants, as in PyTorch.

func (t *Tape[T]) v(e *entry[T]) Var[T] {
	if e == nil {
		return Var[T]{}
	}
	return t.varOf(e)
}

// ifWants returns f() when the innermost Grad wants x's gradient, else
// the zero Var (nothing recorded).
func (t *Tape[T]) ifWants(x *entry[T], f func() Var[T]) Var[T] {
	if !t.wants(x) {
		return Var[T]{}
	}
	return f()
}

func two[T tensor.Float](a, b Var[T]) ([]Var[T], error) { return []Var[T]{a, b}, nil }
func one[T tensor.Float](a Var[T]) ([]Var[T], error)    { return []Var[T]{a}, nil }

func (addRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) { return two(g, g) }
func (subRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return two(g, t.ifWants(e.in[1], func() Var[T] { return Neg(g) }))
}
func (mulRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return two(t.ifWants(e.in[0], func() Var[T] { return Mul(g, t.v(e.in[1])) }),
		t.ifWants(e.in[1], func() Var[T] { return Mul(g, t.v(e.in[0])) }))
}
func (divRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	y := t.v(e.in[1])
	return two(t.ifWants(e.in[0], func() Var[T] { return Div(g, y) }),
		t.ifWants(e.in[1], func() Var[T] { return Neg(Mul(g, Div(t.v(e), y))) }))
}

// bcastRule: the same-shape rules, then each gradient summed back to its
// operand's shape.
func (bcastRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	x, y := t.v(e.in[0]), t.v(e.in[1])
	var gx, gy Var[T]
	switch binKind(e.n[0]) {
	case binAdd:
		gx, gy = g, g
	case binSub:
		gx, gy = g, Neg(g)
	case binMul:
		gx, gy = Mul(g, y), Mul(g, x)
	case binDiv:
		gx, gy = Div(g, y), Neg(Mul(g, Div(t.v(e), y)))
	}
	if !t.wants(e.in[0]) {
		gx = Var[T]{}
	} else {
		gx = sumTo(gx, e.in[0].value.Shape())
	}
	if !t.wants(e.in[1]) {
		gy = Var[T]{}
	} else {
		gy = sumTo(gy, e.in[1].value.Shape())
	}
	return two(gx, gy)
}

func (linCombRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	gs := make([]Var[T], len(e.ins))
	for i, x := range e.ins {
		if t.wants(x) {
			gs[i] = Scale(g, e.fs[i])
		}
	}
	return gs, nil
}

// scalarGrad returns Σ g⊙x (Σ g when x is the zero Var) shaped like the
// one-element operand s.
func scalarGrad[T tensor.Float](g, x Var[T], s *entry[T]) Var[T] {
	if !x.IsZero() {
		g = Mul(g, x)
	}
	return Reshape(Sum(g), s.value.Shape()...)
}

func (addScalarRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return two(g, t.ifWants(e.in[1], func() Var[T] { return scalarGrad(g, Var[T]{}, e.in[1]) }))
}
func (subScalarRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return two(g, t.ifWants(e.in[1], func() Var[T] { return Neg(scalarGrad(g, Var[T]{}, e.in[1])) }))
}
func (mulScalarRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	s := t.v(e.in[1])
	return two(t.ifWants(e.in[0], func() Var[T] { return MulScalar(g, s) }),
		t.ifWants(e.in[1], func() Var[T] { return scalarGrad(g, t.v(e.in[0]), e.in[1]) }))
}
func (divScalarRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	s := t.v(e.in[1])
	return two(t.ifWants(e.in[0], func() Var[T] { return DivScalar(g, s) }),
		t.ifWants(e.in[1], func() Var[T] { return Neg(Div(scalarGrad(g, t.v(e.in[0]), e.in[1]), Square(s))) }))
}
func (scaleRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Scale(g, e.f[0]))
}

func (expRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Mul(g, t.v(e)))
}
func (logRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Div(g, t.v(e.in[0])))
}
func (sqrtRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Div(g, Scale(t.v(e), 2)))
}
func (squareRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Mul(g, Scale(t.v(e.in[0]), 2)))
}
func (tanhRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(actGradVar(t, actTanh, 0, g, e))
}
func (sigmoidRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(actGradVar(t, actSigmoid, 0, g, e))
}
func (softplusRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Mul(g, Sigmoid(t.v(e.in[0]))))
}
func (reluRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(actGradVar(t, actReLU, 0, g, e))
}
func (leakyReLURule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	// The mask of the input x (as of the output, for a slope > 0).
	return one(actGradOp(g, t.v(e.in[0]), actLeakyReLU, e.f[0]))
}
func (hardtanhRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	lo, hi := e.f[0], e.f[1]
	return one(Mul(g, t.constMap(e.in[0].value, nil, func(x, _ T) T {
		if x > lo && x < hi {
			return 1
		}
		return 0
	})))
}
func (clampRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	lo, hi := e.f[0], e.f[1]
	return one(Mul(g, t.constMap(e.in[0].value, nil, func(x, _ T) T {
		if x >= lo && x <= hi {
			return 1
		}
		return 0
	})))
}
func (absRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Mul(g, t.constMap(e.in[0].value, nil, func(x, _ T) T {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	})))
}
func (powRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	p := e.f[0]
	return one(Mul(g, Scale(Pow(t.v(e.in[0]), p-1), p)))
}
func (sinRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Mul(g, Cos(t.v(e.in[0]))))
}
func (cosRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Neg(Mul(g, Sin(t.v(e.in[0])))))
}

// actGradVar returns g ⊙ act'(x) written in terms of the op's output
// y = act(x) (the Var of e), as the fused ops keep it.
func actGradVar[T tensor.Float](t *Tape[T], kind actKind, slope T, g Var[T], e *entry[T]) Var[T] {
	y := t.v(e)
	switch kind {
	case actTanh, actSigmoid, actSoftplus, actReLU, actLeakyReLU:
		return actGradOp(g, y, kind, slope)
	}
	return g
}

// actRule: the activation's factor, then the fused op's own rule.
func (actRule[T, R]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	inner, ok := any(*new(R)).(gradRule[T])
	if !ok {
		return nil, &CreateGraphError{Op: e.op}
	}
	return inner.gradVars(t, e, actGradVar(t, actKind(e.n[3]), e.f[1], g, e))
}

// sumOverChannels returns g [B, C, ...] summed over every axis but 1: the
// gradient of a per-channel bias.
func sumOverChannels[T tensor.Float](g Var[T]) Var[T] {
	for a := g.use("sumOverChannels").value.Rank() - 1; a >= 2; a-- {
		g = SumAxis(g, a, false)
	}
	return SumAxis(g, 0, false)
}

func (addBiasRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return two(g, t.ifWants(e.in[1], func() Var[T] { return sumOverChannels(g) }))
}
func (matMulRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return two(t.ifWants(e.in[0], func() Var[T] { return MatMul(g, Transpose(t.v(e.in[1]))) }),
		t.ifWants(e.in[1], func() Var[T] { return MatMul(Transpose(t.v(e.in[0])), g) }))
}
func (linearRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return []Var[T]{t.ifWants(e.in[0], func() Var[T] { return MatMul(g, t.v(e.in[1])) }),
		t.ifWants(e.in[1], func() Var[T] { return MatMul(Transpose(g), t.v(e.in[0])) }),
		t.ifWants(e.in[2], func() Var[T] { return SumAxis(g, 0, false) })}, nil
}
func (linearTimeRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	x := t.v(e.in[0])
	return []Var[T]{t.ifWants(e.in[0], func() Var[T] { return MatMul(g, Narrow(t.v(e.in[1]), 1, 0, x.Shape()[1])) }),
		t.ifWants(e.in[1], func() Var[T] { return MatMul(Transpose(g), ConcatTime(x, e.f[0])) }),
		t.ifWants(e.in[2], func() Var[T] { return SumAxis(g, 0, false) })}, nil
}

func (sumRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(expandTo(Scale(g, e.f[0]), e.in[0].value.Shape()))
}
func (mseRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	x, y := t.v(e.in[0]), t.v(e.in[1])
	gx := MulScalar(Sub(x, y), Scale(g, T(2/float64(e.in[0].value.Len()))))
	return two(t.ifWants(e.in[0], func() Var[T] { return gx }), t.ifWants(e.in[1], func() Var[T] { return Neg(gx) }))
}

func (reshapeRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Reshape(g, e.in[0].value.Shape()...))
}
func (concatRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	ax, off := e.n[0], 0
	gs := make([]Var[T], len(e.ins))
	for i, x := range e.ins {
		n := x.value.Dim(ax)
		if t.wants(x) {
			gs[i] = Narrow(g, ax, off, n)
		}
		off += n
	}
	return gs, nil
}
func (narrowRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	ax, start := e.n[0], e.n[1]
	xs := e.in[0].value.Shape()
	length := e.value.Dim(ax)
	parts := make([]Var[T], 0, 3)
	zeros := func(n int) Var[T] {
		s := append([]int(nil), xs...)
		s[ax] = n
		z := t.arena.get(s...)
		t.ew.Fill(z, 0) // where the engine keeps the gradient's other parts
		return t.Const(z)
	}
	if start > 0 {
		parts = append(parts, zeros(start))
	}
	parts = append(parts, g)
	if rest := xs[ax] - start - length; rest > 0 {
		parts = append(parts, zeros(rest))
	}
	if len(parts) == 1 {
		return one(g)
	}
	return one(Concat(ax, parts...))
}
func (concatTimeRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	return one(Narrow(g, 1, 0, e.in[0].value.Dim(1)))
}

// axisRule: g with the reduced axis put back as size 1, broadcast along it
// (times a mask for MaxAxis, 1/n for MeanAxis).
func (axisRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	k, outer, n, inner := axisKind(e.n[0]), e.n[1], e.n[2], e.n[3]
	ge := expandTo(Reshape(g, outer, 1, inner), []int{outer, n, inner})
	switch k {
	case axisMean:
		ge = Scale(ge, T(1/float64(n)))
	case axisMax:
		mask := t.arena.get(outer, n, inner)
		md, xd, zd := mask.Data(), e.in[0].value.Data(), e.value.Data()
		clear(md)
		for o := range outer {
			for i := range inner {
				base, m := o*n*inner+i, zd[o*inner+i]
				for j := range n {
					if v := xd[base+j*inner]; v == m || (v != v && m != m) {
						md[base+j*inner] = 1
						break
					}
				}
			}
		}
		ge = Mul(ge, t.Const(mask))
	}
	return one(Reshape(ge, e.in[0].value.Shape()...))
}

// softmaxCERule: g·(softmax(z) − onehot)/B, with the softmax recorded as
// ops (shifted by the rows' maxima, a constant that cancels).
func (softmaxCERule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	z := t.v(e.in[0])
	zt := e.in[0].value
	b, k := zt.Dim(0), zt.Dim(1)
	m, hot := t.arena.get(b, 1), t.arena.get(b, k)
	md, hd, zd := m.Data(), hot.Data(), zt.Data()
	clear(hd)
	for n := range b {
		row := zd[n*k : (n+1)*k]
		md[n] = row[0]
		for _, v := range row {
			md[n] = max(md[n], v)
		}
		hd[n*k+int(e.fs[n])] = 1
	}
	ez := Exp(Sub(z, t.Const(m)))
	p := Div(ez, SumAxis(ez, 1, true))
	return one(MulScalar(Sub(p, t.Const(hot)), Scale(g, T(1/float64(b)))))
}

func (customRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	if e.customOps == nil {
		return nil, &CreateGraphError{Op: e.op}
	}
	gs, err := e.customOps(g, t.vars(e.ins...))
	if err != nil {
		return nil, err
	}
	if len(gs) != len(e.ins) {
		panic(&tensor.ShapeError{Op: "autograd." + e.op, Msg: "differentiable backward returned a wrong number of gradients; return one per input (the zero Var for none)"})
	}
	return gs, nil
}
