package interp

import (
	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// NaturalCubic is the natural cubic spline through the observations: twice
// continuously differentiable, with zero second derivative at t_0 and
// t_{n−1}; SciPy's CubicSpline(bc_type="natural") and torchcde's
// natural_cubic_coeffs with NaturalCubicSpline. With h_i = t_{i+1} − t_i,
// Δ_i = (y_{i+1} − y_i)/h_i and the second derivatives M_k at the knots,
// M_0 = M_{n−1} = 0 and, for k = 1 … n−2,
//
//	h_{k−1}·M_{k−1} + 2(h_{k−1} + h_k)·M_k + h_k·M_{k+1} = 6(Δ_k − Δ_{k−1}),
//
// a symmetric, strictly diagonally dominant tridiagonal system A·M = r.
// On piece i with s = t − t_i,
//
//	X(t)  = y_i + b_i·s + c_i·s² + d_i·s³,
//	b_i   = Δ_i − h_i(2M_i + M_{i+1})/6,  c_i = M_i/2,  d_i = (M_{i+1} − M_i)/(6h_i),
//	dX/dt = b_i + 2c_i·s + 3d_i·s².
//
// Outside [t_0, t_{n−1}] the end cubics are extrapolated (SciPy's default
// extrapolate=True; torchcde does the same).
//
// The solve M = A⁻¹r is one node on the tape for all B·C channels: the
// Thomas algorithm, O(n) per channel, with A's elimination factors computed
// once by the constructor. M is linear in r, so its backward is Aᵀ⁻¹ = A⁻¹
// (A is symmetric) applied to the cotangent: the same solve. It is recorded
// with autograd.CustomDiff whose backward in ops is that very node again,
// so gradients of gradients (Grad with CreateGraph, JVPs, CheckHigherOrder)
// go through it to any order, at O(B·n·C) per level, without an n×n matrix.
type NaturalCubic[T tensor.Float] struct {
	p *pieces[T]
}

// NewNaturalCubic records the natural cubic spline of obs [B, n, C] at the
// strictly increasing knot times (n ≥ 2; for n = 2 it is the straight line)
// on obs's tape: the tridiagonal solve for the second derivatives, once,
// then the coefficients above, each a [B, C] Var per piece (a fixed number
// of ops, then a Narrow and a Reshape per piece and coefficient). Time and
// memory O(B·n·C). Its errors are NewLinear's.
func NewNaturalCubic[T tensor.Float](times []float64, obs autograd.Var[T]) (*NaturalCubic[T], error) {
	p, err := newPieces("NewNaturalCubic", times, obs)
	if err != nil {
		return nil, err
	}
	p.name = "NaturalCubic"
	n := len(times)
	tp := obs.Tape()
	y0, delta := p.slopes()
	var m autograd.Var[T] // M_0 … M_{n−1}, [B, n, C]
	if n == 2 {
		m = tp.Const(zeros(tp, p.b, 2, p.c))
	} else {
		r := autograd.Scale(autograd.Sub(autograd.Narrow(delta, 1, 1, n-2), autograd.Narrow(delta, 1, 0, n-2)), 6)
		inner := newTridiag[T](times).apply(r)
		zero := tp.Const(zeros(tp, p.b, 1, p.c))
		m = autograd.Concat(1, zero, inner, zero)
	}
	m0 := autograd.Narrow(m, 1, 0, n-1) // M_i
	m1 := autograd.Narrow(m, 1, 1, n-1) // M_{i+1}
	b := autograd.Sub(delta, autograd.Mul(autograd.LinComb([]T{2, 1}, m0, m1), p.steps(1.0/6)))
	c := autograd.Scale(m0, 0.5)
	d := autograd.Div(autograd.Sub(m1, m0), p.steps(6))
	p.setCoef(y0, b, c, d)
	return &NaturalCubic[T]{p}, nil
}

// Evaluate returns X(t) = y_i + b_i·s + c_i·s² + d_i·s³, [B, C], with
// s = t − t_i on the piece i of t (a knot's own piece to its right; the end
// pieces outside the knots). tp must be the observations' tape. One LinComb
// op.
func (s *NaturalCubic[T]) Evaluate(tp *autograd.Tape[T], t float64) autograd.Var[T] {
	return s.p.evaluate(tp, t)
}

// Derivative returns dX/dt = b_i + 2c_i·s + 3d_i·s², [B, C], continuous
// across the knots, as is the second derivative.
func (s *NaturalCubic[T]) Derivative(tp *autograd.Tape[T], t float64) autograd.Var[T] {
	return s.p.derivative(tp, t)
}

// Times returns the knot times (not to be modified).
func (s *NaturalCubic[T]) Times() []float64 { return s.p.times }

// tridiag is the interior system A of a natural spline on given knots,
// m = n−2 unknowns: diagonal 2(h_{k−1} + h_k), off-diagonal h_k, factored
// for the Thomas algorithm (no pivoting needed: A is strictly diagonally
// dominant).
type tridiag[T tensor.Float] struct {
	off []float64 // off[j] = A[j][j+1] = A[j+1][j], j < m−1
	cp  []float64 // the forward sweep's modified super-diagonal
	den []float64 // the forward sweep's pivots
}

func newTridiag[T tensor.Float](times []float64) *tridiag[T] {
	m := len(times) - 2
	s := &tridiag[T]{off: make([]float64, max(m-1, 0)), cp: make([]float64, m), den: make([]float64, m)}
	for j := range m {
		hl, hr := times[j+1]-times[j], times[j+2]-times[j+1]
		diag := 2 * (hl + hr)
		if j < m-1 {
			s.off[j] = hr
		}
		if j > 0 {
			diag -= s.off[j-1] * s.cp[j-1]
		}
		s.den[j] = diag
		if j < m-1 {
			s.cp[j] = s.off[j] / diag
		}
	}
	return s
}

// solve returns A⁻¹r for r [B, m, C], solving along axis 1 for every batch
// row and channel, in float64, into a tensor from tp's Scratch.
func (s *tridiag[T]) solve(tp *autograd.Tape[T], r *tensor.Tensor[T]) *tensor.Tensor[T] {
	bn, m, cn := r.Dim(0), r.Dim(1), r.Dim(2)
	out := tp.Scratch(bn, m, cn)
	in, od := r.ReadData(), out.Data()
	x := make([]float64, m*cn)
	for b := range bn {
		rb, ob := in[b*m*cn:(b+1)*m*cn], od[b*m*cn:(b+1)*m*cn]
		for j := range m {
			xj := x[j*cn : (j+1)*cn]
			rj := rb[j*cn : (j+1)*cn]
			for c := range cn {
				v := float64(rj[c])
				if j > 0 {
					v -= s.off[j-1] * x[(j-1)*cn+c]
				}
				xj[c] = v / s.den[j]
			}
		}
		for j := m - 2; j >= 0; j-- {
			for c := range cn {
				x[j*cn+c] -= s.cp[j] * x[(j+1)*cn+c]
			}
		}
		for k, v := range x {
			ob[k] = T(v)
		}
	}
	return out
}

// apply records M = A⁻¹r as one node: backward A⁻ᵀg = A⁻¹g, the same solve
// on tensors; its backward in ops is apply itself, so every order of
// derivative is this node again.
func (s *tridiag[T]) apply(r autograd.Var[T]) autograd.Var[T] {
	tp := r.Tape()
	return autograd.CustomDiff("interp.NaturalCubic tridiagonal solve", s.solve(tp, r.Value()),
		func(gy *tensor.Tensor[T]) ([]*tensor.Tensor[T], error) {
			return []*tensor.Tensor[T]{s.solve(tp, gy)}, nil
		},
		s.backwardOps, r)
}

func (s *tridiag[T]) backwardOps(gy autograd.Var[T], _ []autograd.Var[T]) ([]autograd.Var[T], error) {
	return []autograd.Var[T]{s.apply(gy)}, nil
}

// zeros returns a zero tensor from tp's Scratch.
func zeros[T tensor.Float](tp *autograd.Tape[T], dims ...int) *tensor.Tensor[T] {
	z := tp.Scratch(dims...)
	clear(z.Data())
	return z
}
