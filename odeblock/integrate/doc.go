// Package integrate solves initial value problems dy/dt = f(t, y) on flat
// slices (or, for explicit Runge–Kutta methods, on tensors kept on a
// device): the integrator under package odeblock's Block and its gradient
// modes, usable on its own for an ODE that needs no gradients.
//
//	ys, stats, err := integrate.Solve(f, y0, []float64{0, 0.5, 1}, integrate.Options{Method: "dopri5", RTol: 1e-6, ATol: 1e-8})
//
// # What it offers
//
//   - Methods, named as torchdiffeq's (Method, MethodNames): explicit
//     Runge–Kutta from Butcher tableaus (euler to dopri8 and dop853, with
//     their interpolants; tsit5), the Adams methods of variable order,
//     Rosenbrock 2(3) and Rodas4 for stiff problems, and variable-order
//     BDF/NDF as SciPy's.
//   - Adaptive step control (torchdiffeq's controller, with an optional
//     PI term; the error norm over a chosen part of the state), fixed
//     steps, step bounds, stops and jumps (times the solver steps onto),
//     dense output, terminal and non-terminal events (Event), and
//     quadratures solved beside the state.
//   - A reusable Solver (NewSolver), whose work buffers a training loop
//     keeps from one solve to the next; Stats counting a solve's work;
//     failures as a *SolveError naming the time and the cause, wrapping
//     ErrStepUnderflow, ErrMaxSteps or ErrNonFinite.
//
// Package odeblock re-exports the user-facing names (odeblock.Options is
// Options, odeblock.Solver is Solver, …): the two spell the same types.
//
// # Solving on a device
//
// NewSolverOn returns a solver whose explicit Runge–Kutta solves through
// SolveTensors keep the state in the memory of a device engine (one with
// an Elementwise, package cuda's); Solver.OnDevice, StepInfo.State0 and
// State1 and Solver.StepStatesOnDevice say what such a solve hands f and
// OnStep.
//
// # How odeblock drives the solver
//
// Package odeblock's Block and gradient modes need more of the solver than
// a user does: recomputing a step's stages on tapes, the dense log of the
// interpolating adjoint, one slab of work memory shared by a Block's
// solvers, switching a solver onto a device per pass, and evaluations told
// their purpose (stage or probe). None of that is exported here. The types
// odeblock names (the evaluation kinds and functions, a step's geometry,
// the dense log) live in package odeblock/internal/hooks, which this
// package imports; the operations on a Solver are this package's
// unexported functions, which it registers there at init (hooks.Register)
// and odeblock looks up (hooks.Of). Every solve of odeblock's goes through
// one of them, SolveTensors told the purpose of each evaluation, on every
// engine: its dynamics see tensors, the device's buffers or views of the
// solver's slices (see "Solving on a device"). Go's internal rule keeps that package
// to odeblock's tree, so a user of this package sees, and needs, only
// what go doc shows; the package solves on its own, without odeblock.
package integrate
