package interp

import (
	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// HermiteBackward is the cubic Hermite interpolant whose slope at each knot
// is the backward difference: diffrax's backward_hermite_coefficients with
// CubicInterpolation (torchcde's hermite_cubic_coefficients_with_backward_
// differences). With h_i = t_{i+1} − t_i and Δ_i = (y_{i+1} − y_i)/h_i, the
// slope at knot k is m_k = Δ_{k−1} (k ≥ 1) and m_0 = Δ_0 (diffrax's default
// deriv0, the forward difference), and on piece i with s = t − t_i
//
//	X(t)  = y_i + m_i·s + c_i·s² + d_i·s³,
//	c_i   = (3Δ_i − 2m_i − m_{i+1})/h_i = 2(Δ_i − m_i)/h_i,
//	d_i   = (m_i + m_{i+1} − 2Δ_i)/h_i² = (m_i − Δ_i)/h_i²,
//	dX/dt = m_i + 2c_i·s + 3d_i·s²,
//
// since m_{i+1} = Δ_i. X interpolates the observations, is continuously
// differentiable, and on piece i depends on y_{i−1}, y_i, y_{i+1} only: the
// control up to time t uses no observation past the next knot (causal, for
// online prediction). The first piece is a straight line. Outside
// [t_0, t_{n−1}] the end cubics are extrapolated, as in diffrax.
type HermiteBackward[T tensor.Float] struct{ p *pieces[T] }

// NewHermiteBackward records the backward Hermite cubic of obs [B, n, C] at
// the strictly increasing knot times (n ≥ 2) on obs's tape: the four
// coefficients above, each a [B, C] Var per piece (a fixed number of ops,
// then a Narrow and a Reshape per piece and coefficient), O(B·n·C) time and
// memory. Its errors are NewLinear's.
func NewHermiteBackward[T tensor.Float](times []float64, obs autograd.Var[T]) (*HermiteBackward[T], error) {
	p, err := newPieces("NewHermiteBackward", times, obs)
	if err != nil {
		return nil, err
	}
	p.name = "HermiteBackward"
	n := len(times)
	y0, delta := p.slopes()
	// m_i for the pieces' left ends: Δ_0, Δ_0, Δ_1, …, Δ_{n−3}.
	m := autograd.Narrow(delta, 1, 0, 1)
	if n > 2 {
		m = autograd.Concat(1, m, autograd.Narrow(delta, 1, 0, n-2))
	}
	diff := autograd.Sub(delta, m) // Δ_i − m_i
	c := autograd.Div(diff, p.steps(0.5))
	h := p.steps(1)
	d := autograd.Neg(autograd.Div(diff, autograd.Mul(h, h)))
	p.setCoef(y0, m, c, d)
	return &HermiteBackward[T]{p}, nil
}

// Evaluate returns X(t) = y_i + m_i·s + c_i·s² + d_i·s³, [B, C], with
// s = t − t_i on the piece i of t (a knot's own piece to its right; the end
// pieces outside the knots). tp must be the observations' tape. One LinComb
// op.
func (h *HermiteBackward[T]) Evaluate(tp *autograd.Tape[T], t float64) autograd.Var[T] {
	return h.p.evaluate(tp, t)
}

// Derivative returns dX/dt = m_i + 2c_i·s + 3d_i·s², [B, C], continuous
// across the knots (m_k there).
func (h *HermiteBackward[T]) Derivative(tp *autograd.Tape[T], t float64) autograd.Var[T] {
	return h.p.derivative(tp, t)
}

// Times returns the knot times (not to be modified).
func (h *HermiteBackward[T]) Times() []float64 { return h.p.times }
