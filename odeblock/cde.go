package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Control is the path X(t) that drives a neural CDE: data, read as
// constants. The interpolants of package interp (NaturalCubic, Linear,
// HermiteBackward) are Controls.
type Control[T tensor.Float] interface {
	// DerivativeAt returns dX/dt at t, [B, C], as a tensor the caller may
	// keep (a new one each call, or one not modified afterwards). It is
	// called at the solver's times, on whatever tape the solver is
	// recording, and enters that tape as a constant.
	DerivativeAt(t float64) *tensor.Tensor[T]
	// Times returns the knot times t_0 < … < t_{n−1} of the path.
	Times() []float64
}

// CDE is a neural controlled differential equation (Kidger et al. 2020,
// torchcde's cdeint): a hidden state z [B, H] driven by a control path
// X(t) [B, C],
//
//	dz = f(z, t)·dX(t),  solved as the ODE  z'(t) = f(z, t)·X'(t),
//
// where f(z, t) is an H×C matrix per batch row: the field F maps z [B, H]
// to [B, H·C], read as [B, H, C] in row-major order (element (h, c) at
// column h·C + c, torchcde's func output .view(B, H, C)), and the product
// with X'(t) [B, C] sums over the channels. H is the state's width and C
// the control's derivative's; F's output must be [B, H·C] (Eval panics
// otherwise, naming the three shapes).
//
// The control is data: its derivative enters every evaluation as a
// constant (Control.DerivativeAt), in every gradient mode, and no gradient
// reaches the observations it interpolates through the dynamics —
// torchcde's usual use, with gradients for f's parameters and the initial
// state (a z_0 made with the interpolant's Evaluate, on the observations'
// tape, passes its gradient on to them as usual). Give the Block
// the control's knot range as Times, Span() = [t_0, t_{n−1}] (or any
// times inside it: z at each), and the initial state z_0 [B, H], typically
// a learned map of X(t_0), as torchcde's example does:
//
//	x, _ := interp.NewNaturalCubic(times, tp.Const(obs))        // obs [B, n, C]
//	cde := &odeblock.CDE[float64]{F: f, X: x}
//	z0 := autograd.Linear(x.Evaluate(tp, times[0]), tp.Param(w0), tp.Param(b0))
//	blk := &odeblock.Block[float64]{Dynamics: cde, Times: cde.Span()}
//	zT, err := blk.Forward(tp, z0)                              // z(t_{n−1}) [B, H]
//
// The solver's time t is the control's time. A control whose derivative
// jumps at the knots (interp.Linear) is smooth only between them: list
// the knots in Options.Jumps so that the adaptive steps land on them
// (torchcde's jump_t). The cubic splines' derivatives are continuous and
// need none, but their second derivatives jump at the knots, which the
// step control sees late: at tight tolerances listing the knots as jumps
// makes the solve more accurate (on a scalar CDE at rtol 1e-10, an error
// of 4e-8 becomes one below 1e-8).
//
// CDE is not ShardableDynamics (the control's rows would have to be split
// with the state's): a Block with Shards ≥ 2 returns an error.
//
// Both fields are required: a Block's Forward of a CDE without either
// returns an error naming it.
type CDE[T tensor.Float] struct {
	F Field[T]   // f: z [B, H] → [B, H·C]
	X Control[T] // the driving path, data
}

// Eval records f(z, t)·X'(t), [B, H]: F's output reshaped to [B, H, C],
// multiplied by X'(t) as [B, 1, C] (broadcast over H), summed over C.
func (c *CDE[T]) Eval(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T] {
	zs := z.Shape()
	if len(zs) != 2 {
		panic(&tensor.ShapeError{Op: "odeblock.CDE", Msg: fmt.Sprintf("state of shape %v, want [B, H]", zs)})
	}
	dx := c.X.DerivativeAt(t)
	if dx == nil {
		panic(&tensor.ShapeError{Op: "odeblock.CDE", Msg: fmt.Sprintf("the control's DerivativeAt(%v) returned nil, want [B, C] = [%d, C] for the state of shape %v", t, zs[0], zs)})
	}
	ds := dx.Shape()
	if len(ds) != 2 || ds[0] != zs[0] {
		panic(&tensor.ShapeError{Op: "odeblock.CDE", Msg: fmt.Sprintf("control derivative of shape %v at t = %v, want [B, C] = [%d, C] for the state of shape %v", ds, t, zs[0], zs)})
	}
	b, h, ch := zs[0], zs[1], ds[1]
	f := c.F.ForwardT(tp, t, z)
	if fs := f.Shape(); len(fs) != 2 || fs[0] != b || fs[1] != h*ch {
		panic(&tensor.ShapeError{Op: "odeblock.CDE", Msg: fmt.Sprintf("field output of shape %v, want [B, H·C] = [%d %d] for the state of shape %v and the control derivative of shape %v (H = %d hidden, C = %d channels)", fs, b, h*ch, zs, ds, h, ch)})
	}
	dX := autograd.Reshape(tp.Const(dx), b, 1, ch)
	return autograd.SumAxis(autograd.Mul(autograd.Reshape(f, b, h, ch), dX), 2, false)
}

// Params returns the field's parameters (the control has none).
func (c *CDE[T]) Params() []*autograd.Param[T] { return c.F.Params() }

// Span returns the control's knot range [t_0, t_{n−1}], the Times of a
// Block solving the CDE over the whole path; nil without a control (X nil:
// a Block's Forward then says so) or for one with no knots.
func (c *CDE[T]) Span() []float64 {
	if c.X == nil {
		return nil
	}
	ts := c.X.Times()
	if len(ts) == 0 {
		return nil
	}
	return []float64{ts[0], ts[len(ts)-1]}
}
