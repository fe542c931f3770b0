package odeblock

import (
	"fmt"
	"math"
)

// Interpolated computes gradients by the interpolating adjoint (as
// DiffEqSensitivity's InterpolatingAdjoint): the forward solve keeps its
// dense output — every accepted step's interpolant, about (stages + 4)·n
// numbers a step — and the backward solve integrates the adjoint and the
// parameter gradients,
//
//	a' = −aᵀ·∂F/∂z(t, z(t)),  g_θ' = −aᵀ·∂F/∂θ(t, z(t)),
//
// with z(t) read from that dense output instead of reconstructed by
// solving the dynamics backward. So it has none of the Adjoint mode's
// failures on dissipative or stiff dynamics, whose reverse-time
// reconstruction explodes, at the memory of the forward's steps, and its
// gradients are exact to the tolerances of both solves. It works with
// every method, the stiff, implicit and Adams ones included (the backward
// solve uses the forward's method); the Backprop and Checkpoint modes use
// it for those methods, whose steps are not explicit RK stages.
//
// Zero options mean the forward solve's. With Budget k > 0 the forward
// keeps at most k of its states instead of every step's dense output (the
// states every s steps, s doubling whenever more than k would be kept),
// and the backward re-solves each stretch between two of them, logging its
// dense output, before solving the adjoint over it: memory of k states and
// one stretch's steps (at most about 2·steps/k), for one more forward
// solve. Recursive runs as Interpolated with its Budget for the methods
// whose steps are not explicit RK stages.
type Interpolated struct {
	RTol, ATol float64 // of the backward solve
	MaxSteps   int     // of the backward solve
	Budget     int     // states kept (0: every step's dense output)
}

func init() { registerMode(Interpolated{}) }

func (m Interpolated) stepsOnly() GradMode { return m }

func (Interpolated) String() string { return "interpolated" }

func (m Interpolated) validate() error {
	switch {
	case m.RTol != 0 && (!(m.RTol > 0) || math.IsInf(m.RTol, 1)):
		return fmt.Errorf("odeblock: Interpolated.RTol must be positive and finite (or 0: the forward's), got %g", m.RTol)
	case m.ATol != 0 && (!(m.ATol > 0) || math.IsInf(m.ATol, 1)):
		return fmt.Errorf("odeblock: Interpolated.ATol must be positive and finite (or 0: the forward's), got %g", m.ATol)
	case m.MaxSteps < 0:
		return fmt.Errorf("odeblock: Interpolated.MaxSteps must not be negative (0: the forward's), got %d", m.MaxSteps)
	case m.Budget < 0:
		return fmt.Errorf("odeblock: Interpolated.Budget must not be negative (0: every step's dense output), got %d", m.Budget)
	}
	return nil
}

// adjoint returns the Adjoint mode's machinery set to read the state from
// the forward's dense output: no reconstruction, so no drift to check.
func (m Interpolated) adjoint() Adjoint {
	return Adjoint{RTol: m.RTol, ATol: m.ATol, MaxSteps: m.MaxSteps, MaxDrift: -1, FailOnDrift: true}
}

func (m Interpolated) strategy32(p *pass[float32]) strategy[float32] {
	return &adjoint[float32]{p: p, opt: m.adjoint(), log: p.b.pools.takeLog(), budget: m.Budget}
}

func (m Interpolated) strategy64(p *pass[float64]) strategy[float64] {
	return &adjoint[float64]{p: p, opt: m.adjoint(), log: p.b.pools.takeLog(), budget: m.Budget}
}
