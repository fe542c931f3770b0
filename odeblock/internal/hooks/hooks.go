// Package hooks is how package odeblock drives the integrator of package
// odeblock/integrate past its public API: the gradient modes recompute a
// step's stages on tapes, keep a forward solve's dense output, share one
// slab of work memory between a Block's solvers, move a solve onto a
// device and tell stage evaluations from probes. None of that is a user's
// API, and Go's internal rule keeps this package to odeblock's tree.
//
// The types odeblock has to name (EvalKind, TensorEvalFunc, StepGeom,
// DenseLog) are declared here; integrate uses them. The
// operations that reach into an integrate.Solver are integrate's
// unexported code: integrate registers them at init as an Integrator,
// which odeblock looks up with Of.
package hooks

import (
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// EvalKind is the purpose of one evaluation of f, which the solver passes
// to a TensorEvalFunc (Backprop files its stage tapes by it).
type EvalKind int

const (
	EvalStart   EvalKind = iota // f(t0, y0), the first stage of the first step
	EvalProbe                   // the initial step selection's probe
	EvalStage                   // stage i ≥ 1 of an attempted step
	EvalStepEnd                 // f at an accepted step's end (methods that are not FSAL)
	EvalRestart                 // f just after a jump: the next step's first stage
)

// TensorEvalFunc is f told the purpose of each evaluation (kind, and
// stage i of a step), on tensors: y and dy are views of the solver's
// buffers, in y0's shape (flat, and shorter, where Quadrature leaves the
// quadratures out). f must not keep them.
type TensorEvalFunc[T tensor.Float] func(kind EvalKind, stage int, t float64, y, dy *tensor.Tensor[T]) error

// StepGeom is where one Runge–Kutta step lies: from T, of signed size H,
// to End (T+H, or exactly the stop it lands on). Its first stage is
// evaluated at T0: T itself, or just past it when the step restarts after
// a jump. LeftLimit says the step ends at a jump: its end stages are
// evaluated just before it.
type StepGeom struct {
	T, H, End, T0 float64
	LeftLimit     bool
}

// Start returns the step's start time.
func (g StepGeom) Start() float64 { return g.T }

// Size returns the step's signed size.
func (g StepGeom) Size() float64 { return g.H }

// DenseLog keeps the dense output of every accepted step of a solve
// (Integrator.SetDenseLog), so that the solution can be evaluated anywhere
// in its span afterwards (the Interpolated gradient mode reads the state
// from it).
type DenseLog[T tensor.Float] interface {
	// At writes the solution at tq into dst (host memory).
	At(tq float64, dst []T)
	// AtTensor writes the solution at tq into dst, in the device's memory
	// for the steps of a device solve.
	AtTensor(tq float64, dst *tensor.Tensor[T])
	// Len returns the number of steps kept.
	Len() int
	// Reset empties the log, keeping its steps' buffers.
	Reset()
}

// Integrator is integrate's side of the hooks for element type T, its
// Solver (S), Tableau (Tb), Stats (St) and StepInfo (SI) types.
type Integrator[T tensor.Float, S, Tb, St, SI any] struct {
	// NewShared returns an unconfigured solver whose work buffers are
	// carved from *slab, which other solvers used in turn share.
	NewShared func(slab *[]T) S
	// SlabLen returns the length of the slab s needs for states of n
	// values.
	SlabLen func(s S, n int) int
	// SetDenseLog makes s keep every accepted step's dense output in l
	// (nil: keep nothing).
	SetDenseLog func(s S, l DenseLog[T])
	// NewDenseLog returns an empty log that reuses the steps, and their
	// buffers, of from (nil: none), and empties from.
	NewDenseLog func(from DenseLog[T]) DenseLog[T]
	// UseWorkers sets the engine whose workers s's stage sums split over.
	UseWorkers func(s S, eng tensor.Engine[T])
	// UseDevice makes s's explicit Runge–Kutta solves through
	// SolveTensorsEval run in the memory of eng's Elementwise, when it has
	// one, and reports whether they do.
	UseDevice func(s S, eng tensor.Engine[T]) bool
	// SolveTensorsEval is Solver.SolveTensors with f told the purpose of
	// each evaluation.
	SolveTensorsEval func(s S, f TensorEvalFunc[T], y0 *tensor.Tensor[T], ts []float64, out []*tensor.Tensor[T]) (St, error)
	// Geom returns where a step's stages were evaluated.
	Geom func(si SI) StepGeom
	// StageTime returns the time of stage i of the step g with tableau tb.
	StageTime func(g StepGeom, tb Tb, i int) float64
	// RKStagesOn evaluates the stages from, …, to−1 of the step g from y0
	// with the tableau tb, in the memory of ew: stage i's input is formed
	// in in(i) and handed to eval(i, t_i, y_i), which leaves its value in
	// k[i]. It may be called from several goroutines at once and, once
	// called before, allocates nothing a call (its stage sums' work is
	// lent from a pool).
	RKStagesOn func(ew tensor.Elementwise[T], tb Tb, g StepGeom, y0 *tensor.Tensor[T], k []*tensor.Tensor[T], from, to int, in func(i int) *tensor.Tensor[T], eval func(i int, t float64, y *tensor.Tensor[T]) error) error
	// RKSolutionOn writes the step's solution y0 + h·Σ b_i·k_i into y1
	// with the tableau tb (FSAL: a copy of lastIn), in the memory of ew;
	// as RKStagesOn, safe for concurrent use and allocating nothing a
	// call.
	RKSolutionOn func(ew tensor.Elementwise[T], tb Tb, h float64, y0, y1, lastIn *tensor.Tensor[T], k []*tensor.Tensor[T])
	// InterpolateStep writes into dst the dense output of method tb at tq
	// in the step from t of size h (y0 to y1, stages ks, f0 and f1 the
	// slopes at its ends).
	InterpolateStep func(tb Tb, dst, y0, y1 []T, ks [][]T, t, h, tq float64, f0, f1 []T)
}

// registered holds the *Integrator of each element type integrate
// registered.
var registered []any

// Register records in for Of; integrate calls it at init, once per
// element type.
func Register[T tensor.Float, S, Tb, St, SI any](in *Integrator[T, S, Tb, St, SI]) {
	registered = append(registered, in)
}

// Of returns the Integrator registered for these types. It panics, naming
// them, when there is none: integrate registers float32 and float64.
func Of[T tensor.Float, S, Tb, St, SI any]() *Integrator[T, S, Tb, St, SI] {
	for _, r := range registered {
		if in, ok := r.(*Integrator[T, S, Tb, St, SI]); ok {
			return in
		}
	}
	panic(fmt.Sprintf("hooks: no integrator registered for %T", (*Integrator[T, S, Tb, St, SI])(nil)))
}
