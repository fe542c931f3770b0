package interp

import (
	"github.com/adamnode/adamnode/tensor"
)

// Values on any tape.
//
// Evaluate and Derivative record on the observations' tape, differentiable
// with respect to the observations. ValueAt and DerivativeAt instead
// return X(t) and dX/dt as plain [B, C] tensors computed from the
// coefficients' current values: constants, to be put on any tape with
// tp.Const, with no gradient flowing back to the observations. That is
// what a neural CDE (odeblock.CDE) needs, whose solver evaluates the
// control's derivative on tapes of its own (the adjoint's backward solve,
// a VJP) and treats the control as data, as torchcde's usual use does.
//
// They read the coefficients recorded on the observations' tape, so they
// are valid while that tape is: after its Reset or Release they panic
// (the coefficients' Vars are stale), as Evaluate does. Building the
// interpolant on a tape of its own (in no-grad mode, say) and never
// resetting it keeps it usable across passes. Each call allocates its
// result, the caller's to keep or modify; it takes O(log n) to find the
// piece and O(B·C) to combine the coefficients, in float64.

// ValueAt returns X(t), [B, C], as a new tensor computed from the
// coefficients' values (Evaluate's value, on the same piece): a constant
// for any tape (tp.Const), through which no gradient reaches the
// observations. It is valid while the observations' tape is (it panics
// after that tape's Reset), and records nothing.
func (l *Linear[T]) ValueAt(t float64) *tensor.Tensor[T] { return l.p.valueAt(t) }

// DerivativeAt returns dX/dt at t, [B, C], as a new tensor of constants
// (Derivative's value: the slope of the piece of t, the right derivative
// at a knot); see ValueAt.
func (l *Linear[T]) DerivativeAt(t float64) *tensor.Tensor[T] { return l.p.derivativeAt(t) }

// ValueAt returns X(t), [B, C], as a new tensor computed from the
// coefficients' values (Evaluate's value): a constant for any tape
// (tp.Const), through which no gradient reaches the observations. It is
// valid while the observations' tape is (it panics after that tape's
// Reset), and records nothing.
func (s *NaturalCubic[T]) ValueAt(t float64) *tensor.Tensor[T] { return s.p.valueAt(t) }

// DerivativeAt returns dX/dt at t, [B, C], as a new tensor of constants
// (Derivative's value); see ValueAt. It makes the spline an
// odeblock.Control.
func (s *NaturalCubic[T]) DerivativeAt(t float64) *tensor.Tensor[T] { return s.p.derivativeAt(t) }

// ValueAt returns X(t), [B, C], as a new tensor computed from the
// coefficients' values (Evaluate's value): a constant for any tape
// (tp.Const), through which no gradient reaches the observations. It is
// valid while the observations' tape is (it panics after that tape's
// Reset), and records nothing.
func (h *HermiteBackward[T]) ValueAt(t float64) *tensor.Tensor[T] { return h.p.valueAt(t) }

// DerivativeAt returns dX/dt at t, [B, C], as a new tensor of constants
// (Derivative's value); see ValueAt.
func (h *HermiteBackward[T]) DerivativeAt(t float64) *tensor.Tensor[T] {
	return h.p.derivativeAt(t)
}

// valueAt returns Σ_k coef[k][i]·s^k from the coefficients' values.
func (p *pieces[T]) valueAt(t float64) *tensor.Tensor[T] {
	i, s := p.locate(p.obs.Tape(), "ValueAt", t)
	w := make([]float64, len(p.coef))
	pow := 1.0
	for k := range w {
		w[k] = pow
		pow *= s
	}
	return p.combine(i, 0, w)
}

// derivativeAt returns Σ_{k≥1} k·coef[k][i]·s^{k−1} from the values.
func (p *pieces[T]) derivativeAt(t float64) *tensor.Tensor[T] {
	i, s := p.locate(p.obs.Tape(), "DerivativeAt", t)
	w := make([]float64, len(p.coef)-1)
	pow := 1.0
	for k := range w {
		w[k] = float64(k+1) * pow
		pow *= s
	}
	return p.combine(i, 1, w)
}

// combine returns Σ_j w[j]·coef[from+j][i] as a new [B, C] tensor,
// accumulated in float64.
func (p *pieces[T]) combine(i, from int, w []float64) *tensor.Tensor[T] {
	acc := make([]float64, p.b*p.c)
	for j, wj := range w {
		for k, v := range p.coef[from+j][i].Value().ReadData() {
			acc[k] += wj * float64(v)
		}
	}
	out := tensor.New[T](p.b, p.c)
	d := out.Data()
	for k, v := range acc {
		d[k] = T(v)
	}
	return out
}
