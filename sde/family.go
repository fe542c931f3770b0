package sde

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// Dynamics is the right-hand side of an ODE on a state whose parts are
// stacked along its first axis, [P·B, ...] for P parts of a batch of B:
// odeblock.Dynamics's Eval and Params, which odeblock's families (HBNODE,
// GHBNODE, AdamNODE, SONODE, ...) implement.
type Dynamics[T tensor.Float] interface {
	Eval(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T]
	Params() []*autograd.Param[T]
}

// Family is a stochastic member of an ODE family: the family's dynamics as
// the drift and additive noise on one part of the state,
//
//	dz = F(t, z) dt + σ dW on part Part,   σ = softplus(SigmaRaw),
//
// diagonal noise (one Brownian motion per element of z; the other parts'
// rows of g are zero). On odeblock's heavy-ball families with Part 1 this
// is momentum with noise: for HBNODE, dh = −m dt, dm = (f(h, t) − γ m) dt
// + σ dW, a damped Langevin equation whose force is the network f. The
// noise is additive, so Itô and Stratonovich read the same and every
// method applies, sra1 (strong order 1.5) included.
type Family[T tensor.Float] struct {
	// F is the deterministic dynamics, the drift.
	F Dynamics[T]
	// Parts is the number P of parts the state stacks along its first
	// axis (2 for HBNODE, 3 for AdamNODE); Part, in [0, P), the part that
	// receives the noise.
	Parts, Part int
	// SigmaRaw holds the noise scale before the softplus: shape [1] for
	// one σ, or a shape that broadcasts against the part ([features],
	// say) for a σ per feature.
	SigmaRaw *autograd.Param[T]
}

// NewFamily returns f with noise on part of parts, one σ = softplus(sigmaRaw).
func NewFamily[T tensor.Float](f Dynamics[T], parts, part int, sigmaRaw float64) *Family[T] {
	return &Family[T]{F: f, Parts: parts, Part: part, SigmaRaw: autograd.NewParam("σ_raw", tensor.FromSlice([]T{T(sigmaRaw)}, 1))}
}

// Drift is F's Eval.
func (s *Family[T]) Drift(tp *autograd.Tape[T], t float64, z autograd.Var[T]) autograd.Var[T] {
	return s.F.Eval(tp, t, z)
}

// Diffusion is σ on part Part's rows and zero elsewhere, shaped like z. A
// Part outside [0, Parts) or a state whose first axis does not split into
// Parts panics with a *tensor.ShapeError, which Solve returns as its error.
func (s *Family[T]) Diffusion(tp *autograd.Tape[T], _ float64, z autograd.Var[T]) autograd.Var[T] {
	shape := z.Shape()
	if s.Parts < 1 || s.Part < 0 || s.Part >= s.Parts || len(shape) == 0 || shape[0]%s.Parts != 0 {
		panic(&tensor.ShapeError{Op: "sde.Family", Msg: fmt.Sprintf("noise on part %d of %d of a state of shape %v", s.Part, s.Parts, shape)})
	}
	part := append([]int{shape[0] / s.Parts}, shape[1:]...)
	sigma := autograd.Mul(tp.Const(tensor.Full(T(1), part...)), autograd.Softplus(tp.Param(s.SigmaRaw)))
	if s.Parts == 1 {
		return sigma
	}
	pieces := make([]autograd.Var[T], s.Parts)
	for i := range pieces {
		if i == s.Part {
			pieces[i] = sigma
		} else {
			pieces[i] = tp.Const(tensor.New[T](part...))
		}
	}
	return autograd.Concat(0, pieces...)
}

// Params lists F's parameters and SigmaRaw.
func (s *Family[T]) Params() []*autograd.Param[T] {
	return append(append([]*autograd.Param[T](nil), s.F.Params()...), s.SigmaRaw)
}
