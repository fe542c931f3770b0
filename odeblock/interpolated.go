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
// Zero options mean the forward solve's.
type Interpolated struct {
	RTol, ATol float64 // of the backward solve
	MaxSteps   int     // of the backward solve
}

func init() { registerMode(Interpolated{}) }

func (Interpolated) String() string { return "interpolated" }

func (m Interpolated) validate() error {
	switch {
	case m.RTol != 0 && (!(m.RTol > 0) || math.IsInf(m.RTol, 1)):
		return fmt.Errorf("odeblock: Interpolated.RTol must be positive and finite (or 0: the forward's), got %g", m.RTol)
	case m.ATol != 0 && (!(m.ATol > 0) || math.IsInf(m.ATol, 1)):
		return fmt.Errorf("odeblock: Interpolated.ATol must be positive and finite (or 0: the forward's), got %g", m.ATol)
	case m.MaxSteps < 0:
		return fmt.Errorf("odeblock: Interpolated.MaxSteps must not be negative (0: the forward's), got %d", m.MaxSteps)
	}
	return nil
}

// adjoint returns the Adjoint mode's machinery set to read the state from
// the forward's dense output: no reconstruction, so no drift to check.
func (m Interpolated) adjoint() Adjoint {
	return Adjoint{RTol: m.RTol, ATol: m.ATol, MaxSteps: m.MaxSteps, MaxDrift: -1, FailOnDrift: true}
}

func (m Interpolated) strategy32(p *pass[float32]) strategy[float32] {
	return &adjoint[float32]{p: p, opt: m.adjoint(), log: &denseLog[float32]{}}
}

func (m Interpolated) strategy64(p *pass[float64]) strategy[float64] {
	return &adjoint[float64]{p: p, opt: m.adjoint(), log: &denseLog[float64]{}}
}
