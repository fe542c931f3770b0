package autograd

import (
	"fmt"
	"math/rand/v2"

	"github.com/adamnode/adamnode/tensor"
)

// The helpers of this file take a function f of one Var and record it at x
// on x's tape with gradients on — also when the tape is in no-grad mode,
// as an ODE solve's forward pass records its field, since a trace needs
// ∂f/∂z whatever the outer pass keeps. Their results are differentiable
// (recorded with CreateGraph) when the tape records gradients, constants
// in no-grad mode. If x requires no gradient, f is recorded at a leaf
// holding x's value; the derivatives are with respect to that value, and
// the parameters f reads are differentiated through as usual.
//
// Forward mode is built from reverse mode (the double-VJP construction):
// u ↦ J(x)ᵀu is linear in u, so J(x)v is its VJP with cotangent v. Each
// JVP costs a forward pass, a reverse pass recorded as ops and a reverse
// pass of those: about twice a native tangent rule per op, but every op,
// fused kernel and CustomDiff node has a forward mode at once, and its
// result is differentiable again for free. A native forward mode would
// need a second rule for each of the package's ops; it is not there.

// scope turns gradients on for one helper and says how to finish it.
type scope[T tensor.Float] struct {
	t      *Tape[T]
	noGrad bool // the tape's mode on entry, restored by done
}

// enter records x's tape with gradients on and returns the leaf to record
// f at: x itself when it requires a gradient, else a leaf holding its
// value.
func enter[T tensor.Float](op string, x Var[T]) (scope[T], Var[T]) {
	t, xe := use1(op, x)
	s := scope[T]{t: t, noGrad: t.noGrad}
	t.noGrad = false
	if xe.requires {
		return s, x
	}
	return s, t.Input(xe.value)
}

// create reports whether the final gradients are to be recorded: whether
// the caller's pass records gradients.
func (s scope[T]) create() bool { return !s.noGrad }

// done restores the tape's mode and returns vs, detached in no-grad mode.
func (s scope[T]) done(vs ...*Var[T]) {
	if !s.noGrad {
		return
	}
	for _, v := range vs {
		if !v.IsZero() {
			*v = Detach(*v)
		}
	}
	s.t.noGrad = true
}

// mustLike panics unless v is on t and shaped like ref (what it is a
// tangent or probe of).
func mustLike[T tensor.Float](op, what string, t *Tape[T], v Var[T], ref *entry[T]) {
	ve := useOpt(op, t, v)
	if ve == nil {
		panic(usage("%s: zero Var %s", op, what))
	}
	if !ve.value.SameShape(ref.value) {
		panic(&tensor.ShapeError{Op: "autograd." + op, Msg: "the " + what + " of shape " + shapeString(ve.value) + " does not match x of shape " + shapeString(ref.value)})
	}
}

func shapeString[T tensor.Float](x *tensor.Tensor[T]) string { return fmt.Sprint(x.Shape()) }

// JVP returns y = f(x) and the Jacobian-vector product ∂f/∂x · v (shaped
// like y) for a tangent v shaped like x, recorded on x's tape as torch.func.jvp
// and jax.jvp compute them (built from two reverse passes: see above).
// Its error is Grad's (*CreateGraphError for a node without a backward in
// ops).
func JVP[T tensor.Float](f func(x Var[T]) Var[T], x, v Var[T]) (y, jv Var[T], err error) {
	s, xin := enter("JVP", x)
	defer s.done(&y, &jv)
	mustLike("JVP", "tangent", s.t, v, xin.use("JVP"))
	y = f(xin)
	if !y.RequiresGrad() {
		return y, s.t.gradOrZeros(Var[T]{}, y.use("JVP").value), nil
	}
	u, jt, err := transposed(s.t, y, xin)
	if err != nil {
		return y, Var[T]{}, err
	}
	gs, err := Grad([]Var[T]{jt}, []Var[T]{u}, GradOptions[T]{Cotangents: []Var[T]{v}, CreateGraph: s.create()})
	if err != nil {
		return y, Var[T]{}, err
	}
	return y, gs.Inputs[0], nil
}

// transposed records jt = J(x)ᵀu for a leaf u of zeros shaped like y,
// linear in u: the first half of a JVP. When nothing connects y to x, jt
// is zeros and u requires a gradient still.
func transposed[T tensor.Float](t *Tape[T], y, x Var[T]) (u, jt Var[T], err error) {
	z := t.arena.like(y.use("JVP").value)
	z.Zero()
	u = t.Input(z)
	gs, err := Grad([]Var[T]{y}, []Var[T]{x}, GradOptions[T]{Cotangents: []Var[T]{u}, CreateGraph: true})
	if err != nil {
		return u, Var[T]{}, err
	}
	jt = gs.Inputs[0]
	if !jt.RequiresGrad() {
		jt = MulScalar(jt, Sum(u)) // zeros that still depend on u
	}
	return u, jt, nil
}

// HVP returns the gradient ∇f(x) and the Hessian-vector product ∇²f(x)·v
// of a scalar f at x, for v shaped like x (reverse over reverse). v is a
// direction held fixed, also where it is computed from x: the product is
// ∇²f(x)·v, as torch.func's jvp(grad(f), (x,), (v,)).
func HVP[T tensor.Float](f func(x Var[T]) Var[T], x, v Var[T]) (g, hv Var[T], err error) {
	s, xin := enter("HVP", x)
	defer s.done(&g, &hv)
	mustLike("HVP", "direction", s.t, v, xin.use("HVP"))
	y := f(xin)
	if y.Len() != 1 {
		panic(&tensor.ShapeError{Op: "autograd.HVP", Msg: "f returned shape " + fmt.Sprint(y.Shape()) + ", want a scalar"})
	}
	if !y.RequiresGrad() {
		z := s.t.gradOrZeros(Var[T]{}, xin.use("HVP").value)
		return z, z, nil
	}
	gs, err := Grad([]Var[T]{y}, []Var[T]{xin}, GradOptions[T]{CreateGraph: true})
	if err != nil {
		return Var[T]{}, Var[T]{}, err
	}
	g = gs.Inputs[0]
	if !g.RequiresGrad() {
		return g, s.t.gradOrZeros(Var[T]{}, xin.use("HVP").value), nil
	}
	// v is held fixed: where it is computed from x (a direction along the
	// state), the derivative of gᵀv would add ∂v/∂xᵀ·g to the product.
	hs, err := Grad([]Var[T]{Sum(Mul(g, v))}, []Var[T]{xin}, GradOptions[T]{CreateGraph: s.create(), Stop: []Var[T]{v}})
	if err != nil {
		return g, Var[T]{}, err
	}
	return g, hs.Inputs[0], nil
}

// Jacobian returns y = f(x) and the Jacobian of f at x as a matrix [m, n]
// for y of m elements and x of n (both flattened, row-major): row i is
// ∂y_i/∂x. It takes m reverse passes when m ≤ n, else n forward-mode
// (JVP) passes sharing one recorded reverse pass. For small functions.
func Jacobian[T tensor.Float](f func(x Var[T]) Var[T], x Var[T]) (y, jac Var[T], err error) {
	s, xin := enter("Jacobian", x)
	defer s.done(&y, &jac)
	t := s.t
	y = f(xin)
	m, n := y.Len(), xin.Len()
	if !y.RequiresGrad() {
		z := t.arena.get(m, n)
		z.Zero()
		return y, t.Const(z), nil
	}
	oneHot := func(like Var[T], k int) Var[T] {
		e := t.arena.like(like.use("Jacobian").value)
		e.Zero()
		e.Data()[k] = 1
		return t.Const(e)
	}
	var parts []Var[T]
	if m <= n {
		for i := range m {
			gs, err := Grad([]Var[T]{y}, []Var[T]{xin}, GradOptions[T]{Cotangents: []Var[T]{oneHot(y, i)}, CreateGraph: s.create()})
			if err != nil {
				return y, Var[T]{}, err
			}
			parts = append(parts, Reshape(gs.Inputs[0], 1, n))
		}
		return y, Concat(0, parts...), nil
	}
	u, jt, err := transposed(t, y, xin)
	if err != nil {
		return y, Var[T]{}, err
	}
	for j := range n {
		gs, err := Grad([]Var[T]{jt}, []Var[T]{u}, GradOptions[T]{Cotangents: []Var[T]{oneHot(xin, j)}, CreateGraph: s.create()})
		if err != nil {
			return y, Var[T]{}, err
		}
		parts = append(parts, Reshape(gs.Inputs[0], m, 1))
	}
	return y, Concat(1, parts...), nil
}

// TraceExact returns f(z) and the trace of each row's Jacobian,
// tr_n = Σ_i ∂f(z)[n, i]/∂z[n, i], shaped [B, 1], for z [B, D] and f
// mapping it to [B, D] row by row (row n of f(z) depends on row n of z
// only: an MLP on a batch). It takes D reverse passes, one per column,
// each giving that column of every row's Jacobian at once: the exact
// divergence of a continuous normalizing flow. For f that mixes rows
// (a batch norm) the result is not a trace.
func TraceExact[T tensor.Float](f func(z Var[T]) Var[T], z Var[T]) (fz, tr Var[T], err error) {
	s, zin := enter("TraceExact", z)
	defer s.done(&fz, &tr)
	t := s.t
	ze := zin.use("TraceExact")
	if ze.value.Rank() != 2 {
		panic(&tensor.ShapeError{Op: "autograd.TraceExact", Msg: "z of shape " + shapeString(ze.value) + ", want [B, D]"})
	}
	fz = f(zin)
	if !fz.use("TraceExact").value.SameShape(ze.value) {
		panic(&tensor.ShapeError{Op: "autograd.TraceExact", Msg: "f returned shape " + fmt.Sprint(fz.Shape()) + " for z of shape " + shapeString(ze.value) + "; a trace needs a square Jacobian"})
	}
	b, d := ze.value.Dim(0), ze.value.Dim(1)
	if !fz.RequiresGrad() {
		z := t.arena.get(b, 1)
		z.Zero()
		return fz, t.Const(z), nil
	}
	for i := range d {
		e := t.arena.get(b, d)
		e.Zero()
		for n := range b {
			e.Data()[n*d+i] = 1
		}
		gs, err := Grad([]Var[T]{fz}, []Var[T]{zin}, GradOptions[T]{Cotangents: []Var[T]{t.Const(e)}, CreateGraph: s.create()})
		if err != nil {
			return fz, Var[T]{}, err
		}
		tr = accumulateVar(tr, Narrow(gs.Inputs[0], 1, i, 1))
	}
	return fz, tr, nil
}

// TraceHutchinson returns f(z) and Hutchinson's estimate of each row's
// Jacobian trace, εₙᵀ·(∂f/∂z)ₙ·εₙ shaped [B, 1], for a probe ε shaped like
// z [B, D] (f row by row, as for TraceExact): one reverse pass. With
// probes of mean zero and identity covariance (RademacherProbe,
// GaussianProbe) its expectation is the trace; a flow keeps one probe for
// a whole solve, as FFJORD does.
func TraceHutchinson[T tensor.Float](f func(z Var[T]) Var[T], z, eps Var[T]) (fz, tr Var[T], err error) {
	s, zin := enter("TraceHutchinson", z)
	defer s.done(&fz, &tr)
	t := s.t
	ze := zin.use("TraceHutchinson")
	mustLike("TraceHutchinson", "probe", t, eps, ze)
	if ze.value.Rank() != 2 {
		panic(&tensor.ShapeError{Op: "autograd.TraceHutchinson", Msg: "z of shape " + shapeString(ze.value) + ", want [B, D]"})
	}
	fz = f(zin)
	if !fz.use("TraceHutchinson").value.SameShape(ze.value) {
		panic(&tensor.ShapeError{Op: "autograd.TraceHutchinson", Msg: "f returned shape " + fmt.Sprint(fz.Shape()) + " for z of shape " + shapeString(ze.value) + "; a trace needs a square Jacobian"})
	}
	if !fz.RequiresGrad() {
		z := t.arena.get(ze.value.Dim(0), 1)
		z.Zero()
		return fz, t.Const(z), nil
	}
	gs, err := Grad([]Var[T]{fz}, []Var[T]{zin}, GradOptions[T]{Cotangents: []Var[T]{eps}, CreateGraph: s.create()})
	if err != nil {
		return fz, Var[T]{}, err
	}
	return fz, SumAxis(Mul(gs.Inputs[0], eps), 1, true), nil
}

// RademacherProbe returns a tensor of the given shape whose elements are
// −1 or +1 with equal probability, drawn from rng.
func RademacherProbe[T tensor.Float](rng *rand.Rand, shape ...int) *tensor.Tensor[T] {
	x := tensor.New[T](shape...)
	for i := range x.Data() {
		x.Data()[i] = T(2*rng.IntN(2) - 1)
	}
	return x
}

// GaussianProbe returns a tensor of the given shape of independent
// standard normal elements drawn from rng.
func GaussianProbe[T tensor.Float](rng *rand.Rand, shape ...int) *tensor.Tensor[T] {
	return tensor.RandN[T](rng, 0, 1, shape...)
}
