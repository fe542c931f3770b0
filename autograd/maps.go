package autograd

import (
	"github.com/adamnode/adamnode/tensor"
)

// Abs returns |x| elementwise.
//
// Backward: ∂L/∂x += g ⊙ sign(x) (0 at 0, as PyTorch).
func Abs[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Abs", x, absRule[T]{}, tensor.MapAbs, 0, 0))
}

type absRule[T tensor.Float] struct{}

func (absRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapAbs, 0, 0) }

// Pow returns x^p elementwise for a constant exponent p (math.Pow: a
// negative x to a non-integer p is NaN).
//
// Backward: ∂L/∂x += g ⊙ p·x^(p−1).
func Pow[T tensor.Float](x Var[T], p T) Var[T] {
	t, e := unaryMap("Pow", x, powRule[T]{}, tensor.MapPow, p, 0)
	e.f[0] = p
	return t.varOf(e)
}

type powRule[T tensor.Float] struct{}

func (powRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapPow, e.f[0], 0) }

// Sin returns sin x elementwise.
//
// Backward: ∂L/∂x += g ⊙ cos x.
func Sin[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Sin", x, sinRule[T]{}, tensor.MapSin, 0, 0))
}

type sinRule[T tensor.Float] struct{}

func (sinRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapSin, 0, 0) }

// Cos returns cos x elementwise.
//
// Backward: ∂L/∂x −= g ⊙ sin x.
func Cos[T tensor.Float](x Var[T]) Var[T] {
	return t2v(unaryMap("Cos", x, cosRule[T]{}, tensor.MapCos, 0, 0))
}

type cosRule[T tensor.Float] struct{}

func (cosRule[T]) backward(t *Tape[T], e *entry[T]) { t.ewMapGrad(e, tensor.MapCos, 0, 0) }

// Clamp returns min(max(x, lo), hi) elementwise, as PyTorch's clamp: the
// gradient passes where lo ≤ x ≤ hi (bounds included; Hardtanh excludes
// them).
//
// Backward: ∂L/∂x += g ⊙ [lo ≤ x ≤ hi].
func Clamp[T tensor.Float](x Var[T], lo, hi T) Var[T] {
	if lo > hi {
		panic(usage("Clamp: lower bound %v above upper bound %v", lo, hi))
	}
	t, e := unaryMap("Clamp", x, clampRule[T]{}, tensor.MapClamp, lo, hi)
	e.f = [2]T{lo, hi}
	return t.varOf(e)
}

type clampRule[T tensor.Float] struct{}

func (clampRule[T]) backward(t *Tape[T], e *entry[T]) {
	t.ewMapGrad(e, tensor.MapClamp, e.f[0], e.f[1])
}

// ELU returns the exponential linear unit, elementwise (PyTorch's F.elu):
//
//	y = x where x > 0, α·(eˣ − 1) elsewhere
//
// Backward: ∂L/∂x += g ⊙ (1 where x > 0, y + α elsewhere), the derivative
// written in terms of the output (αeˣ = y + α).
func ELU[T tensor.Float](x Var[T], alpha T) Var[T] {
	t, e := unaryMap("ELU", x, eluRule[T]{}, tensor.MapELU, alpha, 0)
	e.f[0] = alpha
	return t.varOf(e)
}

type eluRule[T tensor.Float] struct{}

func (eluRule[T]) backward(t *Tape[T], e *entry[T]) {
	alpha := e.f[0]
	if alpha >= 0 {
		// From the output, whose sign is the input's for an α ≥ 0.
		t.ewMapGrad(e, tensor.MapELU, alpha, 0)
		return
	}
	// A negative α: the output does not tell the input's sign, which
	// MapBackward would need; from the input on the host.
	chain(t, e, func(x, y T) T {
		if x > 0 {
			return 1
		}
		return y + alpha
	})
}

// gradVars: g ⊙ (1 on x > 0, y + α elsewhere), with the mask a constant and
// y + α differentiable (its derivative is y + α again on x ≤ 0).
func (eluRule[T]) gradVars(t *Tape[T], e *entry[T], g Var[T]) ([]Var[T], error) {
	alpha := e.f[0]
	pos := t.constMap(e.in[0].value, nil, func(x, _ T) T {
		if x > 0 {
			return 1
		}
		return 0
	})
	neg := RSub(1, pos)
	return one(Mul(g, Add(pos, Mul(neg, AddConst(t.v(e), alpha)))))
}
