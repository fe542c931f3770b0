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
// # What is odeblock's
//
// Some exported names are the hooks package odeblock drives the solver
// with, not a user's API, and may change as the integrator's interface is
// reworked: the stage machinery (RKStages, RKStagesOn, RKSolution,
// RKSolutionOn, InterpolateStep, StepGeom, Combiner and Solver.Combiner),
// the dense log of the interpolating adjoint (DenseLog, DenseStep,
// NewDenseLog, Solver.SetDenseLog), the shared slab of NewShared and
// Solver.SlabLen, the device hook Solver.UseDevice, and the purpose-told
// evaluations (EvalFunc, TensorEvalFunc, EvalKind) a gradient mode uses to
// tell stages from probes.
package integrate
