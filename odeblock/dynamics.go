package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Field is a user's vector field f(h, t; θ): any module evaluated on a tape,
// an MLP on [B, D] or a conv net on [B, C, H, W]. Its output has the shape of
// h (SONODE's field maps [B, 2C, ...] to [B, C, ...]).
//
// It is layers.TimeModule's method set: a layers.Sequential (with
// TimeConcat children, say) is a Field as it is, its parameters listed
// once; FieldFunc makes one of a function.
type Field[T tensor.Float] interface {
	// ForwardT records f(h, t) on tp.
	ForwardT(tp *autograd.Tape[T], t float64, h autograd.Var[T]) autograd.Var[T]
	// Params lists the parameters f reads.
	Params() []*autograd.Param[T]
}

// FieldFunc adapts a function and the parameters it reads to a Field.
func FieldFunc[T tensor.Float](params []*autograd.Param[T], f func(tp *autograd.Tape[T], t float64, h autograd.Var[T]) autograd.Var[T]) Field[T] {
	return fieldFunc[T]{f: f, params: params}
}

type fieldFunc[T tensor.Float] struct {
	f      func(tp *autograd.Tape[T], t float64, h autograd.Var[T]) autograd.Var[T]
	params []*autograd.Param[T]
}

func (f fieldFunc[T]) ForwardT(tp *autograd.Tape[T], t float64, h autograd.Var[T]) autograd.Var[T] {
	return f.f(tp, t, h)
}
func (f fieldFunc[T]) Params() []*autograd.Param[T] { return f.params }

// Dynamics is the right-hand side dz/dt = F(t, z; θ) of an ODE on a batch
// state z, written with autograd ops so that a Block can differentiate it.
// The six model families are Dynamics; so is any user's own.
type Dynamics[T tensor.Float] interface {
	// Eval records F(t, z) on tp. The result has z's shape.
	Eval(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T]
	// Params lists every parameter F reads: its field's and its own scalars.
	Params() []*autograd.Param[T]
}

// IntegralParts is implemented by dynamics part of whose state no
// evaluation reads: elements that only accumulate an integral along the
// solve, as a continuous normalizing flow's log-density change Δ does.
// Integrals returns, for a state of the given shape, a mask over its
// elements in row-major order (true: such an element), or nil. The
// adjoint's drift check (Adjoint.MaxDrift) leaves them out: their
// reconstruction by the backward solve enters no derivative, so their
// error, which a flow that contracts some rows hard makes large, is no
// sign of a wrong gradient.
type IntegralParts interface {
	Integrals(shape []int) []bool
}

// Adjointer is implemented by dynamics with a hand-derived adjoint (HBNODE,
// AdamNODE): EvalAdjoint computes, at time t, state z and adjoint a (flat
// buffers of the state's length),
//
//	dz = F(t, z),  da = −aᵀ·∂F/∂z,  dg[j] = −aᵀ·∂F/∂θ_j
//
// for θ_j = Params()[j], writing into the given buffers (dg[j] shaped like
// θ_j; the package's own families also take a nil dg, at the stages whose
// parameter gradients nothing reads, and skip them). pb is a Pullback for
// the VJPs it needs. The generic adjoint computes the same quantities with
// one VJP of the whole of F.
type Adjointer[T tensor.Float] interface {
	EvalAdjoint(pb *autograd.Pullback[T], t float64, z, a *tensor.Tensor[T], dz, da *tensor.Tensor[T], dg []*tensor.Tensor[T]) error
}

// checkParts panics unless z's leading axis splits into the given number
// of parts, and returns its length.
func checkParts[T tensor.Float](z autograd.Var[T], parts int) int {
	n := z.Shape()[0]
	if n%parts != 0 {
		panic(&tensor.ShapeError{Op: "odeblock.Part", Msg: fmt.Sprintf("state of shape %v does not split into %d parts along axis 0", z.Shape(), parts)})
	}
	return n
}

// splitParts views the state z [P·B, ...] as its P parts [B, ...].
func splitParts[T tensor.Float](z autograd.Var[T], parts int) []autograd.Var[T] {
	n := checkParts(z, parts)
	sizes := make([]int, parts)
	for i := range sizes {
		sizes[i] = n / parts
	}
	return autograd.Split(z, 0, sizes...)
}

// partViews caches the part views of one tensor, so that an adjoint
// evaluation called again with the same buffers allocates nothing.
type partViews[T tensor.Float] struct {
	src   *tensor.Tensor[T]
	parts []*tensor.Tensor[T]
}

// of returns z's p parts (see partsOf), made once per tensor.
func (c *partViews[T]) of(z *tensor.Tensor[T], p int) []*tensor.Tensor[T] {
	if c.src != z || len(c.parts) != p {
		c.src, c.parts = z, partsOf(z, p)
	}
	return c.parts
}

// partsOf views the flat state tensor z [P·B, ...] as its P parts (views,
// sharing storage).
func partsOf[T tensor.Float](z *tensor.Tensor[T], parts int) []*tensor.Tensor[T] {
	n := z.Dim(0) / parts
	out := make([]*tensor.Tensor[T], parts)
	for i := range out {
		out[i] = z.Slice(i*n, (i+1)*n)
	}
	return out
}
