package interp

import (
	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Linear is piecewise linear interpolation of observations, torchcde's
// LinearInterpolation (linear_interpolation_coeffs) and diffrax's
// LinearInterpolation. On piece i, [t_i, t_{i+1}], with h_i = t_{i+1} − t_i,
// s = t − t_i and the divided difference Δ_i = (y_{i+1} − y_i)/h_i,
//
//	X(t) = y_i + Δ_i·s,   dX/dt = Δ_i.
//
// The derivative is piecewise constant and jumps at the knots: at a knot t_k
// it is the slope of the piece to its right, Δ_k (at the last knot, of the
// last piece, Δ_{n−2}): the right derivative, diffrax's
// derivative(t, left=False); diffrax's default left=True and torchcde take
// the left piece there instead. Outside [t_0, t_{n−1}] the end pieces'
// lines are extrapolated, as torchcde and diffrax do (numpy.interp would
// clamp).
type Linear[T tensor.Float] struct{ p *pieces[T] }

// NewLinear records the linear interpolant of obs [B, n, C] at the strictly
// increasing knot times (n ≥ 2) on obs's tape: y_i and Δ_i, each a [B, C]
// Var per piece (a fixed number of ops, then a Narrow and a Reshape per
// piece and coefficient), O(B·n·C) time and memory. It
// returns an error naming the index and values of a time out of order or
// repeated, the shapes when obs's time axis does not have n entries, and
// the series, channel and time of an observation that is NaN or infinite
// (see Missing values in the package documentation).
func NewLinear[T tensor.Float](times []float64, obs autograd.Var[T]) (*Linear[T], error) {
	p, err := newPieces("NewLinear", times, obs)
	if err != nil {
		return nil, err
	}
	p.name = "Linear"
	y0, delta := p.slopes()
	p.setCoef(y0, delta)
	return &Linear[T]{p}, nil
}

// Evaluate returns X(t) = y_i + Δ_i·(t − t_i), [B, C], for the piece i of
// t (a knot's own piece to its right; the end pieces outside the knots).
// tp must be the observations' tape. One LinComb op.
func (l *Linear[T]) Evaluate(tp *autograd.Tape[T], t float64) autograd.Var[T] {
	return l.p.evaluate(tp, t)
}

// Derivative returns dX/dt = Δ_i = (y_{i+1} − y_i)/(t_{i+1} − t_i), [B, C],
// for the piece i of t: at a knot the right piece's slope (the last
// piece's at t_{n−1}).
func (l *Linear[T]) Derivative(tp *autograd.Tape[T], t float64) autograd.Var[T] {
	return l.p.derivative(tp, t)
}

// Times returns the knot times (not to be modified).
func (l *Linear[T]) Times() []float64 { return l.p.times }
