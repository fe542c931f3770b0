// Package odeblock solves ODEs — explicit and implicit Runge–Kutta,
// Rosenbrock, Adams and BDF methods — and wraps the solve as an autograd op
// whose gradient comes from an adjoint solve, backpropagation through the
// solver's steps, checkpointed recomputation, or the interpolating adjoint.
//
// # Rules that cost or change results
//
//   - A field may differentiate part of itself — autograd.Grad (with or
//     without CreateGraph), GradOf, ValueAndGrad, VJPOf, JVP, HVP, the
//     traces — in every gradient mode and in solves without gradients: the
//     block records such gradients wherever it differentiates the field
//     (Tape.SetGradsRecorded), and an evaluation without gradients whose
//     field calls Grad is recorded instead, from its first call on (that
//     first call runs the field twice).
//   - A field made by FieldFuncErr returns errors; one ends the solve with
//     an *EvalError naming the time.
//   - The Adjoint mode checks that its backward reconstruction of the
//     state stays near the forward solution, and re-solves a stretch that
//     drifts (Adjoint.MaxDrift, BlockStats.Recovered): evaluations paid for
//     a correct gradient. Columns that only accumulate an integral no
//     evaluation reads (a log-density) drift harmlessly; a re-solve names
//     the drifting columns (Block.DriftColumns) and says so once in the log
//     (log/slog), and dynamics that list such columns (IntegralParts) are
//     not re-solved for them.
//   - A Block is not safe for concurrent use: a pass that finds another
//     under way returns an error saying so.
//
// # Solvers
//
// One loop runs every method: it picks each step's size and end (output
// times with fixed steps, StepTo, Jumps, the end, MinStep and MaxStep),
// calls OnStep, accepts or rejects, finds events and writes outputs alike
// for all; each method family (explicit Runge–Kutta from its Butcher
// tableau, Rosenbrock, implicit Runge–Kutta, Adams, BDF) owns its state
// and provides the step, its error, the next step's size and order and
// its dense output (one file each in odeblock/integrate: rk.go,
// rosenbrock.go, irk.go, adams.go, bdf.go). A Tableau is an explicit RK
// method's; the other built-in methods are named by Method, which returns
// their description.
//
// The package is in two layers. The integrator — Solver, the methods,
// step-size controllers, dense output, events and the error norms' kernels
// — is package odeblock/integrate, which imports only tensor and
// odeblock/internal/hooks; odeblock, above it, holds the Block, the
// gradient modes and the families (and their fused kernels), and
// re-exports the integrator's API as aliases (Solver, Options, Tableau,
// Event, StepInfo, Stats, SolveError, Func, NewSolver, Solve, Method,
// MethodNames and the Err values), so code written against odeblock is
// unchanged. The gradient modes reach into the solver (its stages, the
// stage evaluation's kinds, the dense log) through the internal package
// odeblock/internal/hooks, where integrate registers those operations:
// they are not an API to promise, and integrate exports none of them.
// The built-in methods (Method, MethodNames):
//
//	name           order  steps     dense output               torchdiffeq    diffrax
//	euler          1      fixed     cubic Hermite              euler          Euler
//	midpoint       2      fixed     cubic Hermite              midpoint       Midpoint
//	heun2          2      fixed     cubic Hermite              heun2          Heun
//	heun3          3      fixed     cubic Hermite              heun3          —
//	rk4            4      fixed     cubic Hermite              —              —  (classic RK4)
//	rk38           4      fixed     cubic Hermite              rk4            —  (3/8 rule)
//	heun-euler     2(1)   adaptive  cubic Hermite              —              —
//	adaptive_heun  2(1)   adaptive  quartic through midpoint   adaptive_heun  —
//	fehlberg2      2(1)   adaptive  quartic through midpoint   fehlberg2      —
//	bosh3          3(2)   adaptive  cubic Hermite              bosh3          Bosh3
//	dopri5         5(4)   adaptive  Shampine's, quartic        dopri5         Dopri5
//	tsit5          5(4)   adaptive  Tsitouras' own, 4th order  tsit5          Tsit5
//	dopri8         8(7)   adaptive  quartic through y(h/2)     dopri8         Dopri8
//	dop853         8(5,3) adaptive  its own, 7th order         —              —  (SciPy's and Hairer's DOP853)
//	rosenbrock23   2(3)   adaptive  its own (stiff, L-stable)  —              —  (MATLAB's ode23s)
//	rodas4         4(3)   adaptive  its own, 3rd order (stiff) —              —  (Hairer–Wanner's RODAS)
//	bdf            1–5    adaptive  its own polynomial (stiff) —              —  (SciPy's BDF, MATLAB's ode15s)
//	explicit_adams ≤ 4    fixed     cubic Hermite              explicit_adams —  (Adams–Bashforth; MaxOrder 5)
//	implicit_adams ≤ 5    fixed     cubic Hermite              implicit_adams —  (with Adams–Moulton)
//	fixed_adams    ≤ 5    fixed     cubic Hermite              fixed_adams    —  (= implicit_adams)
//	implicit_euler 1      fixed     cubic Hermite              implicit_euler ImplicitEuler
//	implicit_midpoint 2   fixed     cubic Hermite              implicit_midpoint —
//	trapezoid      2      fixed     cubic Hermite              trapezoid      —
//	radauIIA3      3      fixed     cubic Hermite              radauIIA3      —
//	radauIIA5      5      fixed     cubic Hermite              radauIIA5      —  (Kvaerno5 is diffrax's)
//	gl4, gl6       4, 6   fixed     cubic Hermite              gl4, gl6       —  (Gauss–Legendre)
//	sdirk2, trbdf2 2      fixed     cubic Hermite              sdirk2, trbdf2 —
//
// rosenbrock23 and rodas4 are linearly implicit, for stiff problems: each
// step forms the Jacobian by finite differences (n + 1 evaluations of f)
// and factorises I − h·γ·J, so they suit small systems; rodas4 (six
// stages, L-stable, stiffly accurate) is the one for tight tolerances: on
// Van der Pol μ = 1000 at 1e-6 it takes a third of rosenbrock23's steps
// and is fifty times more accurate. Their step controller, unlike the
// explicit methods', lets an accepted step shrink the next (Hairer and
// Wanner's rule: fewer rejections where a stiff transient starts);
// bdf is the variable-order (1–5) numerical differentiation formulas of
// MATLAB's ode15s and SciPy's BDF, with a Jacobian formed only when its
// Newton iteration stops converging: on Van der Pol μ = 1000 at 1e-6 it
// takes 4095 evaluations of f in all (84 Jacobians), where rodas4 takes
// 8843 — the choice for long stiff solves at moderate accuracy. It takes
// Step, Jumps, StepTo, MaxStep and events as every method does: a step
// cut to land on a stop rescales its differences, a jump restarts it at
// order 1 from f just after it, and with a fixed Step it keeps the step
// and still moves its order (a Newton iteration that does not converge at
// that step is then an error). In a Block the stiff, implicit
// and Adams methods, whose steps are not explicit RK stages, work with the
// Adjoint and Interpolated modes, and Backprop and Checkpoint run as
// Interpolated with them, and Recursive as Interpolated with its Budget
// (few states kept, each stretch re-solved for its dense output). With very stiff
// dynamics use Interpolated: Adjoint's reverse-time reconstruction of the
// state then fails (with an error, never a wrong gradient). Stats counts
// the stiff methods' Jacobians and LU factorisations (Tableau.Stiff). The Adams methods start with two rk38 steps (as torchdiffeq's) and then
// use the f of past steps, the order growing with the history up to
// Options.MaxOrder (12 by default, as torchdiffeq's max_order: where the
// outputs lie on the step grid, the same values as torchdiffeq's, to 1e-12
// for explicit_adams and to the corrector's tolerance for the others).
// The start-up (two rk38 steps, then one of order 3, or 4 with the
// corrector) bounds the global order to 4 for explicit_adams and to 5 for
// the others whatever MaxOrder is, while high explicit orders are
// unstable at all but tiny steps, there as here: Adams–Bashforth of order
// k is stable on y' = λy only for h·|λ| up to 0.3 at k = 4 (MaxOrder 5),
// the interval about halving with each order, to 0.0034 at k = 11
// (MaxOrder 12). So explicit_adams at its default MaxOrder diverges on
// y' = −y, over a span long enough, at every Step above 0.0034, and over
// [0, 1] its error grows as the step shrinks (0.46 at Step 0.0125) until
// the step is inside that interval. Give explicit_adams MaxOrder 5 (order
// 4, stable to h·|λ| ≤ 0.3, the smallest errors). Where the history is
// unevenly spaced —
// after a step cut short to land on an output time, StepTo or the end —
// the next steps use the coefficients of that uneven history (variable-step
// Adams: the integrals of the Lagrange polynomials through the past times),
// so output times off the step grid cost no accuracy; torchdiffeq keeps the
// equal-step coefficients there (it steps on its grid and interpolates the
// outputs, linearly by default, and its last step, if shorter, uses them
// too). A step that starts at a jump (Options.Jumps) forgets the history
// from before it and starts again with rk38.
// The implicit methods from implicit_euler to trbdf2 solve their stages by
// simplified Newton iterations (Jacobian by finite differences, one LU of
// I − h·(A ⊗ J) per step): fixed steps, small systems.
// adaptive_heun and fehlberg2 evaluate f at the step's end, where
// torchdiffeq reuses a last stage taken elsewhere: their steps differ from
// torchdiffeq's. dopri8's quartic is torchdiffeq's; between long 8th-order
// steps it is far less accurate than the steps themselves (1.1e-5 against
// 9.5e-9 on a rotation at 1e-8). dop853 is the 8th-order method with an
// interpolant of 7th order (3.7e-8 there): three more evaluations of f,
// made only for the steps an output or an event falls inside; its error
// ratio is Hairer's combination of a 5th- and a 3rd-order estimate.
//
// Adaptive control follows Hairer–Nørsett–Wanner and
// torchdiffeq: the error ratio is the RMS norm of
// err / (atol + rtol·max(|y0|, |y1|)); the first step is selected from f at
// t0 with one extra evaluation; the I controller
// h·min(10, max(0.2, 0.9·ratio^(−1/order))) never shrinks the step after an
// accepted one (except for the Rosenbrock methods; PCoeff makes it a PI
// controller); FSAL methods reuse their
// last stage. So with default options dopri5, bosh3 and dopri8 take the
// accepted steps of torchdiffeq's (tests against torchdiffeq's own code) —
// except that here the last step is cut to end exactly at t1, where
// torchdiffeq steps past the end and interpolates back: f is never
// evaluated outside the span of the requested times. Outputs between steps
// come from dense output, so asking for many outputs does not change the
// steps.
//
// Events: Solver.Event ends a solve where a function of the state
// crosses zero (found on the dense output, no extra evaluations of f);
// Block.ForwardEvent returns the event time and state as Vars,
// differentiable in every gradient mode by the implicit function theorem
// (torchdiffeq's odeint_event).
//
// Failures are returned, never a panic or a hang: a *SolveError names the
// phase (forward or backward), the time reached and the cause
// (ErrStepUnderflow, ErrMaxSteps, ErrNonFinite, or the dynamics' own error).
// A step whose state or error estimate is NaN or Inf is rejected and
// retried smaller; if that underflows, the error is ErrNonFinite. Options
// out of range (a negative or NaN tolerance, an infinite MinStep, a NaN in
// Jumps, ...) are an error from NewSolver naming the option, before f is
// ever evaluated.
//
// # Fixed steps and stops
//
// With a fixed Step the solve steps from t0 by Step and lands exactly on
// every output time, StepTo time, jump and the end: a step that would cross
// one is cut short to end on it (a step within 1e-9·Step of it is stretched
// to it), and the steps after it are Step again, counted from there. So the
// outputs carry the method's own accuracy, not an interpolant's, and the
// steps depend on the output times. torchdiffeq instead steps on the grid
// t0 + k·step_size (its last step cut to end at t1) and interpolates the
// outputs between grid points (linearly unless interp="cubic"); its steps do
// not depend on the output times.
//
// An adaptive solve lands on StepTo times, jumps and the end (never on
// output times, which come from dense output). A step cut short to land on
// one does not shrink the next: that one is as long as the step the
// controller had proposed before the cut (or longer, if the cut step's
// error allows). torchdiffeq's next step is computed from the cut step's
// size, so there it shrinks after every grid point of step_t and jump_t.
//
// # Discontinuous dynamics
//
// Embedded error control assumes the dynamics are smooth between steps; it
// only sees f at a step's stages. A right-hand side that jumps — a
// piecewise-constant or sign-switching input, a lookup table without
// interpolation — can be stepped over without the error estimate noticing:
// on y' = u(t) with u switching between +1 and −1 every 0.05 over [0, 3],
// dopri5 at the default tolerances grows its steps past the period and
// returns y(3) = 0.1 instead of 0, with no error (torchdiffeq does the same).
// Tell the solver where the jumps are: list them in Jumps (the solver steps
// exactly to each, evaluates the left limit there and restarts just after
// it: exact for a piecewise-smooth input), or, when they are too many or
// unknown, bound the step with MaxStep below the shortest piece (the error
// control then sees every switch, at the cost of many rejected steps).
//
// # The ODE block
//
// Block records a solve on an autograd tape as one op: Forward maps the
// initial state z0 to z(t1), Trajectory to z at every time of Times. The
// dynamics are any Dynamics — one of the six families or the user's own —
// written with autograd ops. Mode picks how the gradient is computed — a
// value of its own type, each complete in its own file, all sharing one
// Runge–Kutta stepper; the model code is the same in every mode:
//
//   - Adjoint{…} (the default) solves the adjoint system [z, a, g_θ]
//     backward (memory flat in the number of steps; accurate to the
//     backward solve's tolerance). The backward solve takes the forward's
//     options; its error norm is torchdiffeq's mixed norm (the largest RMS
//     of z, of a and of each parameter's gradient); its fields set its
//     tolerances, a seminorm or the flat norm, anchors and the drift check.
//     HBNODE and AdamNODE supply a specialised adjoint (Adjointer) with one
//     VJP of f per evaluation; the generic adjoint takes one VJP of the
//     whole dynamics.
//   - Backprop{} keeps every stage of every accepted step on tapes and
//     pulls the output gradient back through them: the exact gradient of
//     the discrete solve, memory growing with the evaluations.
//   - Checkpoint{} keeps the state at each accepted step and re-records one
//     step at a time in backward: Backprop's gradients, memory growing with
//     the steps only.
//   - Recursive{Budget: k} keeps at most k states and recomputes the rest
//     by binomial checkpointing (revolve): Backprop's gradients again, in
//     memory that does not grow with the steps, for a number of recomputed
//     steps that grows slowly with them.
//   - Interpolated{…} keeps the forward's dense output (every step's
//     interpolant) and solves the adjoint system [a, g_θ] backward with z
//     read from it (the interpolating adjoint): no reconstruction of z, so
//     none of the failures below on dissipative or stiff dynamics, at the
//     memory of the forward's steps; accurate to the tolerances and to the
//     method's dense output (dop853 rather than dopri8, whose quartic is
//     poor). Backprop and Checkpoint run as Interpolated for the methods
//     whose steps are not explicit RK stages.
//
// A failed backward solve (a NaN, a step size underflow) is returned by
// the tape's Backward as a *SolveError of the "backward" phase; gradients
// are never silently NaN. The reverse solve of a dissipative system
// amplifies its errors, and its reconstruction of z can drift far from the
// forward solution while every step meets its tolerance (torchdiffeq then
// returns wrong gradients without a word): Adjoint compares the
// reconstruction with the forward solution at every output time and, when
// they differ by more than Adjoint.MaxDrift (or the backward solve fails
// with a step size underflow or NaN), re-solves the forward over that
// stretch, keeping every step's state, and re-runs the backward through
// them; with Adjoint.FailOnDrift it returns ErrAdjointDrift instead.
// Adjoint.AnchorEvery keeps every k-th forward step's state and re-anchors
// the reconstruction there from the start: an adjoint with checkpoints
// that survives such horizons (AdamNODE over [0, 16] fails without it or
// the recovery). Dynamics that read a parameter their
// Params() does not list fail in every mode (its gradient would be wrong
// or lost); every mode returns the parameters' gradients through the
// block's node, so a block nested in a Pullback or in other dynamics puts
// them where that VJP asks.
//
// # Gradients of gradients
//
// Dynamics may take derivatives of their own field — a continuous
// normalizing flow's −tr(∂f/∂z) (CNF), a Jacobian regulariser — with the
// autograd package's Grad, JVP, TraceExact or TraceHutchinson: they record
// the derivative as ops on the evaluation's tape, so every mode
// differentiates through it; the adjoint's backward solve then takes the
// field's second derivatives on its own tapes. (A Pullback.VJP at the
// state instead is an error, autograd.ErrVJPOfRecorded.)
//
// A gradient recorded through a block (autograd.Grad with CreateGraph: a
// gradient penalty on the block's input, a Hessian-vector product through
// a solve) works in the modes that differentiate the discrete solve —
// Backprop, Checkpoint and Recursive with an explicit Runge–Kutta method:
// the block's node replays the logged steps as ops from z0 (step sizes
// held as in the forward pass) and records its VJP. The adjoint and
// interpolated modes, whose backward is a solve choosing its own steps,
// have no backward in ops: such a Grad returns an error naming the mode.
// Sharded solves (Shards ≥ 2) and events have none either (a
// *autograd.CreateGraphError naming the node). HBNODE's and AdamNODE's
// fused right-hand sides are differentiated through their op-by-op
// recordings.
//
// # Neural CDEs
//
// CDE is a neural controlled differential equation (Kidger et al. 2020,
// torchcde): dz = f(z, t)·dX(t) on a hidden state z [B, H], solved as the
// ODE z' = f(z, t)·X'(t), the field's output [B, H·C] read as an H×C
// matrix per row and multiplied by the derivative [B, C] of a control X,
// an interpolant of observations (package interp: NaturalCubic, Linear,
// HermiteBackward). The control is data: its derivative enters each
// evaluation, on whatever tape, as a constant (Control.DerivativeAt), so
// every gradient mode gives the gradients of f's parameters and of the
// initial state z_0 (a learned map of X(t_0), say), and none of the
// observations. The block's Times are the control's knot range
// (CDE.Span); with interp.Linear, whose derivative jumps at the knots,
// list them in Options.Jumps.
//
// # The families
//
// A family's state stacks its parts along the leading axis: a batch of B
// feature maps [B, ...] gives a state [P·B, ...] (Stack, Part,
// AdamInitialState). With f(h, t) a user Field:
//
//	NODE      h' = f(h, t)                        (ANODE: AugmentChannels first)
//	SONODE    h' = u, u' = f([h, u], t)
//	HBNODE    h' = −m, m' = f(h, t) − γm,          γ = σ(γ_raw)
//	GHBNODE   h' = φ(−m), m' = f(h, t) − γm + ξh,  ξ = softplus(ξ_raw)
//	AdamNODE  h' = −m/s(v), m' = a1(−f − m), v' = a2(f² − v),  a1 = σ(r1), a2 = σ(r2)
//
// # Sharded fields
//
// ShardedField(f, 0) evaluates a field whose rows are independent (an MLP
// on the batch) on one shard of the batch per worker of the engine at
// once, where the batch's size makes that pay (see ShardedField); the
// gradients are f's to rounding in every mode. On 2 cores the MLP fields
// it shards trained 11–24% faster a step than with the engine splitting
// each product (bench/benchstat/shard-ab.txt). It is not the default: a field that
// couples the rows (BatchNorm) would be evaluated wrongly.
//
// The Runge–Kutta stage sums of states of 2¹⁶ values or more are formed
// over the engine's workers too, with the bits of the serial sums.
//
// # Sharded solves
//
// Block.Shards = k solves the batch as k separate ODEs at once, one per
// worker, each on a shard of the rows of every part of the state, on a
// tape of its own with the kernels on one core, each taking its own steps;
// the parameters' gradients are summed over the shards. Each core then
// runs a whole solve — the field, the family's elementwise work, the step
// control — with nothing to hand off. It needs dynamics whose rows evolve
// independently (ShardableDynamics: the six families, over a field without
// BatchNorm or Dropout), and is asked for, as ShardedField is. The result
// agrees with one solve of the whole batch to the tolerances, not to
// rounding: there every row shares the step sizes the worst row needs
// (torchdiffeq's one solve of the batch), here each shard has its own (as
// vmap over diffrax's solve gives each element its own). Only Forward is
// sharded; Trajectory solves the whole batch.
//
// # On a device
//
// Every engine runs the same code: the gradient modes are written once
// over tensors and the engine's tensor.Elementwise (the CPU's for an
// engine without one). Host and device part at the integrator's entry
// only: on an engine whose Elementwise keeps tensors in device memory
// (package cuda's GPU engine) the explicit Runge–Kutta solvers run there
// (integrate.NewSolverOn, Solver.SolveTensors): stage sums, error norm,
// dense output, dense logs and first step by the engine, two numbers a
// step read by the host for the step-size control; elsewhere they run on
// the host's slices, which the dynamics see as tensors without a copy.
// So a Block solves on the device in every gradient mode: the Adjoint
// mode's forward and backward solves (the augmented state there, one VJP
// of the dynamics per evaluation, the drift check and its recovery; a
// user's own Adjointer runs the backward on the host), Backprop's stage
// tapes, Checkpoint's and Recursive's states and recomputed steps (the
// forward's stage sums, to the bit) and the step adjoint's sums, and
// Interpolated's dense output (with a Budget that mode stays on the
// host). AdamNODE's, HBNODE's and GHBNODE's (φ = tanh) right-hand sides
// are one fused node there when the engine's Elementwise has AdamRHS,
// HBRHS and GHBRHS (cuda's does); the other families are recorded op by
// op. Events and the implicit, Rosenbrock, BDF and Adams methods stay on
// the host. On the CPU engines nothing changes.
package odeblock
