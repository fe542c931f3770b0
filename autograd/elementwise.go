package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// mustSameShape panics with a *tensor.ShapeError naming op and both shapes
// unless x and y have the same shape.
func mustSameShape[T tensor.Float](op string, x, y *entry[T]) {
	if !x.value.SameShape(y.value) {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("shapes %v and %v do not match", x.value.Shape(), y.value.Shape())})
	}
}

// mustScalar panics unless s holds exactly one element.
func mustScalar[T tensor.Float](op string, x, s *entry[T]) {
	if s.value.Len() != 1 {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: fmt.Sprintf("scalar operand of shape %v has %d elements, want 1 (tensor operand of shape %v)", s.value.Shape(), s.value.Len(), x.value.Shape())})
	}
}

// addScaledGrad adds a·g into the gradient of v (if v needs one).
func (t *Tape[T]) addScaledGrad(v *entry[T], a T, g *tensor.Tensor[T]) {
	dst, acc := t.gradDst(v)
	if dst == nil {
		return
	}
	t.ewScaled(dst, acc, a, g)
}

// addMulGrad adds g ⊙ m into the gradient of v.
func (t *Tape[T]) addMulGrad(v *entry[T], g, m *tensor.Tensor[T]) {
	dst, acc := t.gradDst(v)
	if dst == nil {
		return
	}
	// Mul's gradient of its left operand (shaped like dst): g ⊙ m.
	t.ew.BinaryBackward(tensor.BinaryMul, 0, dst, g, dst, m, g, acc)
}

// chain adds gy ⊙ f'(x) into the gradient of e's first input, with the
// derivative given as deriv(x[i], y[i]) from the input and output values.
func chain[T tensor.Float](t *Tape[T], e *entry[T], deriv func(x, y T) T) {
	x := e.in[0]
	dst, acc := t.gradDst(x)
	if dst == nil {
		return
	}
	chainInto(dst.Data(), acc, e.grad.Data(), x.value.Data(), e.value.Data(), deriv)
}

// chainInto sets d = gy ⊙ deriv(x, y), or adds it with acc.
func chainInto[T tensor.Float](d []T, acc bool, gy, xs, ys []T, deriv func(x, y T) T) {
	gy, xs, ys = gy[:len(d)], xs[:len(d)], ys[:len(d)]
	if acc {
		for i := range d {
			d[i] += gy[i] * deriv(xs[i], ys[i])
		}
		return
	}
	for i := range d {
		d[i] = gy[i] * deriv(xs[i], ys[i])
	}
}

// sumProd returns Σ g[i]·m[i] (Σ g[i] when m is nil) accumulated in float64.
func sumProd[T tensor.Float](g, m *tensor.Tensor[T]) float64 {
	var s float64
	if m == nil {
		for _, v := range g.Data() {
			s += float64(v)
		}
		return s
	}
	ms := m.Data()
	for i, v := range g.Data() {
		s += float64(v) * float64(ms[i])
	}
	return s
}

// addScalarGrad adds a to the gradient of the one-element v.
func (t *Tape[T]) addScalarGrad(v *entry[T], a float64) {
	dst, acc := t.gradDst(v)
	if dst == nil {
		return
	}
	if acc {
		dst.Data()[0] += T(a)
	} else {
		dst.Data()[0] = T(a)
	}
}

// binKind names an elementwise binary op (binOps: the engine's).
type binKind int

const (
	binAdd binKind = iota
	binSub
	binMul
	binDiv
)

// binary records the elementwise op z = x ∘ y with the engine's Binary.
func binary[T tensor.Float](op string, k binKind, x, y Var[T], r rule[T]) Var[T] {
	t, xe, ye := use2(op, x, y)
	if !xe.value.SameShape(ye.value) {
		return broadcastBinary(t, op, k, xe, ye)
	}
	z := t.arena.like(xe.value)
	t.ew.Binary(binOps[k], z, xe.value, ye.value)
	return t.varOf(t.record(op, z, r, xe, ye, nil))
}

// Add returns x + y elementwise; shapes broadcast as in PyTorch (see
// broadcast.go: an operand broadcast along an axis gets its gradient summed
// over it).
//
// Backward: ∂L/∂x += g, ∂L/∂y += g, with g = ∂L/∂z.
func Add[T tensor.Float](x, y Var[T]) Var[T] {
	return binary("Add", binAdd, x, y, addRule[T]{})
}

type addRule[T tensor.Float] struct{}

func (addRule[T]) backward(t *Tape[T], e *entry[T]) {
	t.addScaledGrad(e.in[0], 1, e.grad)
	t.addScaledGrad(e.in[1], 1, e.grad)
}

// Sub returns x − y elementwise, shapes broadcasting as Add's.
//
// Backward: ∂L/∂x += g, ∂L/∂y −= g.
func Sub[T tensor.Float](x, y Var[T]) Var[T] {
	return binary("Sub", binSub, x, y, subRule[T]{})
}

type subRule[T tensor.Float] struct{}

func (subRule[T]) backward(t *Tape[T], e *entry[T]) {
	t.addScaledGrad(e.in[0], 1, e.grad)
	t.addScaledGrad(e.in[1], -1, e.grad)
}

// Mul returns the elementwise product x ⊙ y, shapes broadcasting as Add's.
//
// Backward: ∂L/∂x += g ⊙ y, ∂L/∂y += g ⊙ x.
func Mul[T tensor.Float](x, y Var[T]) Var[T] {
	return binary("Mul", binMul, x, y, mulRule[T]{})
}

type mulRule[T tensor.Float] struct{}

func (mulRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewBinaryGrad(binMul, e) }

// Div returns the elementwise quotient x ⊘ y, shapes broadcasting as
// Add's.
//
// Backward: ∂L/∂x += g ⊘ y, ∂L/∂y −= g ⊙ z ⊘ y, with z = x ⊘ y.
func Div[T tensor.Float](x, y Var[T]) Var[T] {
	return binary("Div", binDiv, x, y, divRule[T]{})
}

type divRule[T tensor.Float] struct{}

func (divRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewBinaryGrad(binDiv, e) }

// LinComb returns the linear combination Σ_i coef[i]·xs[i] of same-shaped
// operands with constant coefficients, in one pass and one node: the stage
// sums of a Runge–Kutta step, y + h·Σ b_i k_i, recorded in backprop mode.
//
// Backward: ∂L/∂xs[i] += coef[i]·g.
func LinComb[T tensor.Float](coef []T, xs ...Var[T]) Var[T] {
	if len(xs) == 0 || len(coef) != len(xs) {
		panic(usage("LinComb: %d coefficients for %d operands (want as many, at least one)", len(coef), len(xs)))
	}
	t, first := use1("LinComb", xs[0])
	for _, xv := range xs[1:] {
		x := useOpt("LinComb", t, xv)
		if x == nil {
			panic(usage("LinComb: zero Var operand"))
		}
		mustSameShape("LinComb", first, x)
	}
	z := t.arena.like(first.value)
	t.ewLinCombVars(z, coef, xs)
	e := t.newEntry("LinComb")
	t.setValue(e, z)
	if t.recordVariadic(e, linCombRule[T]{}, xs) {
		e.fs = append(e.fs[:0], coef...)
	}
	return t.varOf(e)
}

// recordVariadic records e as the op r of the inputs xs if gradients are on
// and any input needs one, and reports whether it did.
func (t *Tape[T]) recordVariadic(e *entry[T], r rule[T], xs []Var[T]) bool {
	if t.noGrad {
		return false
	}
	for _, xv := range xs {
		if t.entryAt(int(xv.i)).requires {
			e.requires = true
			e.rule = r
			e.ins = e.ins[:0]
			for _, xv := range xs {
				e.ins = append(e.ins, t.entryAt(int(xv.i)))
			}
			t.ops++
			return true
		}
	}
	return false
}

type linCombRule[T tensor.Float] struct{}

func (linCombRule[T]) backward(t *Tape[T], e *entry[T]) {
	for i, x := range e.ins {
		t.addScaledGrad(x, e.fs[i], e.grad)
	}
}

// scalarOp records z = x ∘ s for a one-element s with the engine's Binary
// k, s broadcast.
func scalarOp[T tensor.Float](op string, k binKind, x, s Var[T], r rule[T]) Var[T] {
	t, xe, se := use2(op, x, s)
	mustScalar(op, xe, se)
	z := t.arena.like(xe.value)
	sv := se.value
	if sv.Rank() > xe.value.Rank() {
		sv = sv.Reshape() // a scalar that broadcasts to x's shape
	}
	t.ew.Binary(binOps[k], z, xe.value, sv)
	return t.varOf(t.record(op, z, r, xe, se, nil))
}

// scalarOpGrad adds the gradients of x ∘ s (AddScalar, SubScalar, MulScalar
// or DivScalar, the binary op k) recorded as e into those of x and s. On a
// device the engine's BinaryBackward forms them without reading s on the
// host (ewScalarGrad); on the CPU, s is read and x's gradient is a·g (a =
// 1, ±1, s or 1/s) and s's the float64 sum Σ g (or Σ g ⊙ x), as these
// ops always had it, where BinaryBackward sums in T.
func scalarOpGrad[T tensor.Float](t *Tape[T], k binKind, e *entry[T]) {
	if t.onDevice {
		t.ewScalarGrad(k, e)
		return
	}
	x, s := e.in[0], e.in[1]
	sv := s.value.Data()[0]
	a := [...]T{binAdd: 1, binSub: 1, binMul: sv, binDiv: 1 / sv}[k]
	t.addScaledGrad(x, a, e.grad)
	if !needs(s) {
		return
	}
	switch k {
	case binAdd:
		t.addScalarGrad(s, sumProd(e.grad, nil))
	case binSub:
		t.addScalarGrad(s, -sumProd(e.grad, nil))
	case binMul:
		t.addScalarGrad(s, sumProd(e.grad, x.value))
	default:
		t.addScalarGrad(s, -sumProd(e.grad, x.value)/(float64(sv)*float64(sv)))
	}
}

// AddScalar returns x + s, adding the one-element s to every element of x.
//
// Backward: ∂L/∂x += g, ∂L/∂s += Σ g.
func AddScalar[T tensor.Float](x, s Var[T]) Var[T] {
	return scalarOp("AddScalar", binAdd, x, s, addScalarRule[T]{})
}

type addScalarRule[T tensor.Float] struct{}

func (addScalarRule[T]) backward(t *Tape[T], e *entry[T]) { scalarOpGrad(t, binAdd, e) }

// SubScalar returns x − s, subtracting the one-element s from every element.
//
// Backward: ∂L/∂x += g, ∂L/∂s −= Σ g.
func SubScalar[T tensor.Float](x, s Var[T]) Var[T] {
	return scalarOp("SubScalar", binSub, x, s, subScalarRule[T]{})
}

type subScalarRule[T tensor.Float] struct{}

func (subScalarRule[T]) backward(t *Tape[T], e *entry[T]) { scalarOpGrad(t, binSub, e) }

// MulScalar returns s·x for the one-element s.
//
// Backward: ∂L/∂x += s·g, ∂L/∂s += Σ g ⊙ x.
func MulScalar[T tensor.Float](x, s Var[T]) Var[T] {
	return scalarOp("MulScalar", binMul, x, s, mulScalarRule[T]{})
}

type mulScalarRule[T tensor.Float] struct{}

func (mulScalarRule[T]) backward(t *Tape[T], e *entry[T]) { scalarOpGrad(t, binMul, e) }

// DivScalar returns x / s for the one-element s.
//
// Backward: ∂L/∂x += g / s, ∂L/∂s −= Σ g ⊙ x / s².
func DivScalar[T tensor.Float](x, s Var[T]) Var[T] {
	return scalarOp("DivScalar", binDiv, x, s, divScalarRule[T]{})
}

type divScalarRule[T tensor.Float] struct{}

func (divScalarRule[T]) backward(t *Tape[T], e *entry[T]) { scalarOpGrad(t, binDiv, e) }

// unaryOp records z = f(x) elementwise, f on the host (an op the engine's
// Elementwise has no map for), and returns its tape and slot.
func unaryOp[T tensor.Float](op string, x Var[T], r rule[T], f func(z, x *tensor.Tensor[T])) (*Tape[T], *entry[T]) {
	t, xe := use1(op, x)
	z := t.arena.like(xe.value)
	f(z, xe.value)
	return t, t.record(op, z, r, xe, nil, nil)
}

// unaryMap records z = m(x) with parameters a and b (zero where m takes
// none) with the engine's Map, and returns its tape and slot.
func unaryMap[T tensor.Float](op string, x Var[T], r rule[T], m tensor.MapOp, a, b T) (*Tape[T], *entry[T]) {
	t, xe := use1(op, x)
	z := t.arena.like(xe.value)
	t.ew.Map(m, z, xe.value, a, b)
	return t, t.record(op, z, r, xe, nil, nil)
}

// Scale returns a·x for a constant a.
//
// Backward: ∂L/∂x += a·g.
func Scale[T tensor.Float](x Var[T], a T) Var[T] {
	t, e := unaryMap("Scale", x, scaleRule[T]{}, tensor.MapScale, a, 0)
	e.f[0] = a
	return t.varOf(e)
}

type scaleRule[T tensor.Float] struct{}

func (scaleRule[T]) backward(t *Tape[T], e *entry[T]) { t.addScaledGrad(e.in[0], e.f[0], e.grad) }

// AddConst returns x + a for a constant a.
//
// Backward: ∂L/∂x += g.
func AddConst[T tensor.Float](x Var[T], a T) Var[T] {
	t, e := unaryMap("AddConst", x, scaleRule[T]{}, tensor.MapAddScalar, a, 0)
	e.f[0] = 1
	return t.varOf(e)
}

// Neg returns −x.
//
// Backward: ∂L/∂x −= g.
func Neg[T tensor.Float](x Var[T]) Var[T] {
	t, e := unaryMap("Neg", x, scaleRule[T]{}, tensor.MapNeg, 0, 0)
	e.f[0] = -1
	return t.varOf(e)
}

// Exp returns eˣ elementwise.
//
// Backward: ∂L/∂x += g ⊙ eˣ.
func Exp[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Exp", x, expRule[T]{}, tensor.MapExp, 0, 0))
}

type expRule[T tensor.Float] struct{}

func (expRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapExp, 0, 0) }

// Log returns ln x elementwise.
//
// Backward: ∂L/∂x += g ⊘ x.
func Log[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Log", x, logRule[T]{}, tensor.MapLog, 0, 0))
}

type logRule[T tensor.Float] struct{}

func (logRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapLog, 0, 0) }

// Sqrt returns √x elementwise.
//
// Backward: ∂L/∂x += g ⊘ (2√x).
func Sqrt[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Sqrt", x, sqrtRule[T]{}, tensor.MapSqrt, 0, 0))
}

type sqrtRule[T tensor.Float] struct{}

func (sqrtRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapSqrt, 0, 0) }

// Square returns x² elementwise.
//
// Backward: ∂L/∂x += 2 g ⊙ x.
func Square[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Square", x, squareRule[T]{}, tensor.MapSquare, 0, 0))
}

type squareRule[T tensor.Float] struct{}

func (squareRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapSquare, 0, 0) }

// Tanh returns tanh x elementwise.
//
// Backward: ∂L/∂x += g ⊙ (1 − tanh² x).
func Tanh[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Tanh", x, tanhRule[T]{}, tensor.MapTanh, 0, 0))
}

type tanhRule[T tensor.Float] struct{}

func (tanhRule[T]) backward(t *Tape[T], e *entry[T]) { t.actBackward(actTanh, e) }

// Sigmoid returns the logistic σ(x) = 1/(1 + e⁻ˣ) elementwise.
//
// Backward: ∂L/∂x += g ⊙ σ(x)(1 − σ(x)).
func Sigmoid[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Sigmoid", x, sigmoidRule[T]{}, tensor.MapSigmoid, 0, 0))
}

type sigmoidRule[T tensor.Float] struct{}

func (sigmoidRule[T]) backward(t *Tape[T], e *entry[T]) { t.actBackward(actSigmoid, e) }

// Softplus returns ln(1 + eˣ) elementwise.
//
// Backward: ∂L/∂x += g ⊙ σ(x).
func Softplus[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Softplus", x, softplusRule[T]{}, tensor.MapSoftplus, 0, 0))
}

type softplusRule[T tensor.Float] struct{}

func (softplusRule[T]) backward(t *Tape[T], e *entry[T]) { t.actBackward(actSoftplus, e) }

// ReLU returns max(x, 0) elementwise.
//
// Backward: ∂L/∂x += g ⊙ [x > 0] (the derivative at 0 is taken as 0).
func ReLU[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("ReLU", x, reluRule[T]{}, tensor.MapReLU, 0, 0))
}

type reluRule[T tensor.Float] struct{}

func (reluRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapReLU, 0, 0) }

// LeakyReLU returns x where x > 0 and slope·x elsewhere.
//
// Backward: ∂L/∂x += g ⊙ (1 where x > 0, slope elsewhere).
func LeakyReLU[T tensor.Float](x Var[T], slope T) Var[T] {
	t, e := unaryMap("LeakyReLU", x, leakyReLURule[T]{}, tensor.MapLeakyReLU, slope, 0)
	e.f[0] = slope
	return t.varOf(e)
}

type leakyReLURule[T tensor.Float] struct{}

func (leakyReLURule[T]) backward(t *Tape[T], e *entry[T]) {
	if e.f[0] >= 0 {
		// From the output, whose sign is the input's for a slope ≥ 0.
		t.ewMapGrad(e, tensor.MapLeakyReLU, e.f[0], 0)
		return
	}
	// A negative slope: the output does not tell the input's sign, which
	// MapBackward would need; from the input on the host.
	dst, acc := t.gradDst(e.in[0])
	if dst == nil {
		return
	}
	dst.LeakyReLUBackward(e.grad, e.in[0].value, e.f[0], acc)
}

// Hardtanh returns min(max(x, lo), hi) elementwise.
//
// Backward: ∂L/∂x += g ⊙ [lo < x < hi].
func Hardtanh[T tensor.Float](x Var[T], lo, hi T) Var[T] {
	if lo > hi {
		panic(usage("Hardtanh: lower bound %v above upper bound %v", lo, hi))
	}
	t, e := unaryMap("Hardtanh", x, hardtanhRule[T]{}, tensor.MapHardtanh, lo, hi)
	e.f = [2]T{lo, hi}
	return t.varOf(e)
}

type hardtanhRule[T tensor.Float] struct{}

func (hardtanhRule[T]) backward(t *Tape[T], e *entry[T]) {
	t.ewMapGrad(e, tensor.MapHardtanh, e.f[0], e.f[1])
}

// t2v returns the handle of slot e on t.
func t2v[T tensor.Float](t *Tape[T], e *entry[T]) Var[T] { return t.varOf(e) }

// parallelMin is the number of elements from which elementwise work is
// split across the engine's workers (tensor.Engine.Parallel); below it, the
// split costs more than it saves. The hand-off itself takes about a
// microsecond while the pool's workers poll, but a map is bound by memory,
// and the other core has to fetch its half of operands the calling core
// just wrote: at 2¹⁴, MLP fields of width 32 at batch 512 (16384-element
// maps) trained 19% slower (mlpbench, 7 alternating runs). The split
// allocates its closure, so small ops, which dominate overhead-bound
// models, allocate nothing.
const parallelMin = 1 << 16

// flat returns elements [lo, hi) of x as a one-dimensional view; the whole
// of x when the range covers it.
func flat[T tensor.Float](x *tensor.Tensor[T], lo, hi int) *tensor.Tensor[T] {
	if lo == 0 && hi == x.Len() {
		return x
	}
	return x.Reshape(-1).Slice(lo, hi)
}
