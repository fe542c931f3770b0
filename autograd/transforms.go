package autograd

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// Function transforms, as torch.func and JAX have them: the gradient, the
// value and gradient, and the vector–Jacobian product of a function of one
// Var, recorded on the input's tape. Like JVP, HVP and the traces (see
// jvp.go), each records f with gradients on whatever the tape's mode — so
// they work inside an ODE field in every gradient mode and in a no-grad
// solve — and returns results that are differentiable when the tape records
// gradients (so they compose: the gradient of a gradient, the JVP of a
// gradient) and constants in no-grad mode. An input that requires no
// gradient is differentiated at a leaf holding its value.

// GradOf returns the gradient ∇f(x), shaped like x, of a function f whose
// value is a scalar (one element): torch.func.grad(f)(x), jax.grad(f)(x).
// Its error is Grad's (*CreateGraphError for a node without a backward in
// ops), returned with NaNs shaped like x (see Tape.Check). f returning more
// than one element, or a Var of another tape, panics naming its shape.
func GradOf[T tensor.Float](f func(x Var[T]) Var[T], x Var[T]) (Var[T], error) {
	_, g, err := ValueAndGrad(f, x)
	return g, err
}

// ValueAndGrad returns f(x) and its gradient ∇f(x) for a scalar f, from one
// evaluation of f: jax.value_and_grad(f)(x).
func ValueAndGrad[T tensor.Float](f func(x Var[T]) Var[T], x Var[T]) (y, g Var[T], err error) {
	s, xin := enter("ValueAndGrad", x)
	defer s.done(&y, &g)
	y = callOn("ValueAndGrad", s.t, f, xin)
	if y.Len() != 1 {
		panic(&tensor.ShapeError{Op: "autograd.ValueAndGrad", Msg: fmt.Sprintf("f returned shape %v for x of shape %v; a gradient needs a scalar (one element): use VJPOf for a vector", y.Shape(), xin.Shape())})
	}
	g, err = s.pull(y, xin, Var[T]{})
	return y, g, err
}

// VJPOf returns y = f(x) and the vector–Jacobian product uᵀ·∂f/∂x (shaped
// like x) for a cotangent u shaped like y: torch.func.vjp(f, x) with its
// function applied to u, jax.vjp. u is a Var of x's tape; it may itself
// depend on what is being differentiated (the product is linear in it).
// A u of another shape than f(x) panics naming both.
func VJPOf[T tensor.Float](f func(x Var[T]) Var[T], x, u Var[T]) (y, vjp Var[T], err error) {
	s, xin := enter("VJPOf", x)
	defer s.done(&y, &vjp)
	y = callOn("VJPOf", s.t, f, xin)
	mustLike("VJPOf", "cotangent", s.t, u, y.use("VJPOf"))
	vjp, err = s.pull(y, xin, u)
	return y, vjp, err
}

// callOn calls f at x and panics unless it returned a Var of t.
func callOn[T tensor.Float](op string, t *Tape[T], f func(x Var[T]) Var[T], x Var[T]) Var[T] {
	y := f(x)
	if y.IsZero() {
		panic(usage("%s: f returned the zero Var", op))
	}
	if y.t != t {
		panic(usage("%s: f returned a Var of another tape (shape %v) than x's: record it on the tape x is on", op, y.Shape()))
	}
	return y
}

// pull returns uᵀ·∂y/∂x (u the zero Var for a scalar y's ones), recorded
// when the scope's caller records gradients; zeros when y does not depend
// on x.
func (s scope[T]) pull(y, x Var[T], u Var[T]) (Var[T], error) {
	if !y.RequiresGrad() {
		return s.t.gradOrZeros(Var[T]{}, x.use("pull").value), nil
	}
	var cot []Var[T]
	if !u.IsZero() {
		cot = []Var[T]{u}
	}
	gs, err := Grad([]Var[T]{y}, []Var[T]{x}, GradOptions[T]{Cotangents: cot, CreateGraph: s.create()})
	if err != nil {
		return s.t.NaNs(x.Shape()...), err
	}
	return gs.Inputs[0], nil
}
