package odeblock

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// CNF is a continuous normalizing flow (FFJORD, Grathwohl et al. 2019):
// the dynamics of a sample z [B, D] under the field f together with the
// change of its log-density, on the augmented state s = [z, Δ] of shape
// [B, D+1]:
//
//	dz/dt = f(t, z),   dΔ/dt = −tr(∂f/∂z)
//
// so that log p₀(z(t₀)) = log p₁(z(t₁)) − Δ(t₁) for Δ(t₀) = 0 (see
// Augment and LogProb). f must map each row of z by itself (an MLP on a
// batch); the trace is each row's.
//
// The trace is exact, from D reverse passes through f
// (autograd.TraceExact), unless Probe is set: then it is Hutchinson's
// estimate εᵀ(∂f/∂z)ε with that probe (autograd.TraceHutchinson), one
// reverse pass. Both are recorded as ops, so every gradient mode
// differentiates through them: Backprop and Checkpoint tape them, and the
// adjoint's backward solve takes the second derivatives of f that the
// trace's VJP needs on its own tapes. Any field works whose ops have a
// backward in ops (every built-in op does); a Custom node without one
// inside f makes Eval panic with the *autograd.CreateGraphError naming it.
type CNF[T tensor.Float] struct {
	F Field[T]
	// Probe, when set, is the Hutchinson probe ε [B, D] (for instance
	// autograd.RademacherProbe), kept fixed over a solve and drawn afresh
	// for each, as FFJORD does. Nil: the exact trace.
	Probe *tensor.Tensor[T]
}

// Eval records the augmented dynamics [f(t, z), −tr(∂f/∂z)] at s = [z, Δ].
func (c *CNF[T]) Eval(tp *autograd.Tape[T], t float64, s autograd.Var[T]) autograd.Var[T] {
	sh := checkFlowState("odeblock.CNF", s)
	d := sh[1] - 1
	z := autograd.Narrow(s, 1, 0, d)
	f := func(z autograd.Var[T]) autograd.Var[T] { return c.F.ForwardT(tp, t, z) }
	var fz, tr autograd.Var[T]
	var err error
	if c.Probe == nil {
		fz, tr, err = autograd.TraceExact(f, z)
	} else {
		if !c.Probe.SameShape(z.Value()) {
			panic(&tensor.ShapeError{Op: "odeblock.CNF", Msg: fmt.Sprintf("probe of shape %v does not match the sample of shape [%d %d]", c.Probe.Shape(), sh[0], d)})
		}
		fz, tr, err = autograd.TraceHutchinson(f, z, tp.Const(c.Probe))
	}
	if err != nil {
		panic(err)
	}
	return autograd.Concat(1, fz, autograd.Neg(tr))
}

// Integrals implements IntegralParts: Δ, the last column of the state
// [B, D+1], is a pure integral (f reads only z), which the adjoint's drift
// check leaves out.
func (c *CNF[T]) Integrals(shape []int) []bool {
	if len(shape) != 2 || shape[1] < 2 {
		return nil
	}
	m := make([]bool, shape[0]*shape[1])
	for n := range shape[0] {
		m[n*shape[1]+shape[1]-1] = true
	}
	return m
}

// Params returns the field's parameters.
func (c *CNF[T]) Params() []*autograd.Param[T] { return c.F.Params() }

// checkFlowState returns the shape of the flow's state s, panicking with a
// *tensor.ShapeError of op unless it is [B, D+1] with D ≥ 1.
func checkFlowState[T tensor.Float](op string, s autograd.Var[T]) []int {
	sh := s.Shape()
	if len(sh) != 2 || sh[1] < 2 {
		panic(&tensor.ShapeError{Op: op, Msg: fmt.Sprintf("state of shape %v, want [B, D+1] (the sample and its log-density change)", sh)})
	}
	return sh
}

// Augment returns the initial state [x, 0] of shape [B, D+1] for samples x
// [B, D] (D ≥ 1); other shapes panic with a *tensor.ShapeError.
func (c *CNF[T]) Augment(x autograd.Var[T]) autograd.Var[T] {
	sh := x.Shape()
	if len(sh) != 2 || sh[1] < 1 {
		panic(&tensor.ShapeError{Op: "odeblock.CNF.Augment", Msg: fmt.Sprintf("samples of shape %v, want [B, D] with D ≥ 1", sh)})
	}
	z := tensor.New[T](sh[0], 1)
	return autograd.Concat(1, x, x.Tape().Const(z))
}

// LogProb returns, for the final state s = [z(t₁), Δ(t₁)] of a flow from
// the samples at t₀, their log-density log N(z(t₁); 0, I) − Δ(t₁) under a
// standard normal base at t₁, shaped [B, 1]. A state not of shape
// [B, D+1] (D ≥ 1) panics with a *tensor.ShapeError, as Augment's samples
// and Eval's states do.
func (c *CNF[T]) LogProb(s autograd.Var[T]) autograd.Var[T] {
	d := checkFlowState("odeblock.CNF.LogProb", s)[1] - 1
	z, delta := autograd.Narrow(s, 1, 0, d), autograd.Narrow(s, 1, d, 1)
	return autograd.Sub(StandardNormalLogProb(z), delta)
}

// StandardNormalLogProb returns log N(z_n; 0, I) = −½‖z_n‖² − (D/2)·log 2π
// for each row of z [B, D], shaped [B, 1]; z of another rank panics with a
// *tensor.ShapeError.
func StandardNormalLogProb[T tensor.Float](z autograd.Var[T]) autograd.Var[T] {
	sh := z.Shape()
	if len(sh) != 2 {
		panic(&tensor.ShapeError{Op: "odeblock.StandardNormalLogProb", Msg: fmt.Sprintf("samples of shape %v, want [B, D]", sh)})
	}
	d := sh[1]
	return autograd.AddConst(autograd.Scale(autograd.SumAxis(autograd.Square(z), 1, true), -0.5), T(-0.5*float64(d)*math.Log(2*math.Pi)))
}
