// Package sde solves stochastic differential equations
//
//	dY = f(t, Y) dt + g(t, Y) dW      (Itô)   or   dY = f dt + g ∘dW   (Stratonovich)
//
// on a Brownian path that is fixed by a seed, and differentiates the
// solutions: torchsde's role, in the project's terms (tapes, tensors,
// options structs, errors).
//
// # What there is
//
// Brownian motion: Brownian is a virtual Brownian tree (Li et al. 2020):
// W(s, t) for any t0 ≤ s ≤ t ≤ t1, one independent motion per element of a
// shape, found by Brownian-bridge bisection with a seed per node split from
// its parent's, so the same seed gives the same path whatever order it is
// queried in, forward or backward, in memory bounded by an LRU cache of
// nodes. The tree also carries the space-time Lévy area of every interval
// (IncrementArea), which sri2 reads, unless made with
// BrownianOptions.NoArea (half the work per node, for the other methods).
// With areas, each node holds its own interval's increment and area, which
// keep float64's relative precision however deep the tree
// (TestBrownianShortIntervalVariance: the variances of both are right to
// 5% over 1e-12 of the span).
// Path is the interface a solver reads increments through (a caller's own
// replay of given increments is one too, as TestTorchsdePaths's).
//
// Problems: an SDE is a drift f and a diffusion g written with autograd ops
// (Funcs adapts two functions), so a solve records on an autograd.Tape and
// Backward differentiates it. Noise says how g multiplies ΔW: Diagonal (g
// shaped like y, one motion per element), Scalar (one motion per row of a
// batch) or General (g a matrix per row, [B, d, m] against ΔW [B, m]).
//
// Methods (Options.Method), each for one calculus; the strong orders are
// those of the literature, with the fitted slopes on geometric Brownian
// motion of solve_test.go in brackets:
//
//	method           calculus      noise             strong order       f, g per step
//	euler            Itô           any               ½ (0.47–0.50)      1, 1
//	milstein         Itô           diagonal, scalar  1 (0.96–0.98)      1, 2
//	srk              Itô           diagonal, scalar  1 (0.95–0.96)      2, 3
//	sri2             Itô           diagonal, scalar  1.5 (1.45–1.46)    3, 4
//	sra1             either        additive, any     1.5 (1.65–1.66 on  2, 2
//	                               layout            a nonlinear drift)
//	heun             Stratonovich  any               1 if the noise     2, 2
//	                                                 commutes (0.95–0.97)
//	reversible_heun  Stratonovich  any               ½ in general;      1, 1
//	                                                 here 0.94–0.96
//
// reversible_heun is not A-stable: on a dissipative drift (∂f/∂y < 0) its
// errors grow like e^{|∂f/∂y|·t} whatever the step size, alternating in
// sign from step to step, so that a long span of a strongly contracting
// drift ends in overflow (an ErrNonFinite error naming the time) where
// heun is stable; see ReversibleHeun.
//
// Models: Block is a solve as one op of a model (odeblock.Block's
// counterpart), drawing a new Brownian path per call from its Seed, so
// that networks mix SDE blocks with ordinary layers. Family makes a
// stochastic member of one of odeblock's families (any Dynamics on a state
// of stacked parts): the family's dynamics as the drift and learnable
// additive noise on one part — on HBNODE's or AdamNODE's momentum, a
// heavy-ball network driven by noise.
//
// Options.Calculus, if set, must match the method's (sra1, for additive
// noise, takes either): a Stratonovich SDE handed to an Itô method is an
// error, not a different answer. Steps are
// fixed (the fewest equal steps of at most Options.Step between output
// times) or, with Options.Adaptive, controlled by step doubling on the same
// Brownian path (any method).
//
// Gradients (Options.Mode, a GradMode value as odeblock's, the same
// words for the same algorithms; ParseGradMode reads their names):
// Backprop{} records every step on the tape
// (exact gradients of the discrete solve, any method, memory growing with
// the steps). Reversible, for reversible_heun, records the solve as one node
// whose backward runs the steps in reverse, rebuilding each state from the
// next in algebra (Kidger et al. 2021, "Efficient and accurate gradients
// for neural SDEs"): the same gradients as Backprop to rounding, in memory
// flat in the number of steps. Both are checked against central differences
// in float64 on a fixed path. Adjoint, for the Stratonovich methods, is the
// stochastic adjoint (Li et al. 2020): the adjoint SDE solved backward on
// the same path, memory flat in the steps, gradients of the continuous
// solution that converge to Backprop's as the step shrinks (checked: the
// error against a fine solve falls with order about 1 for diagonal noise).
// Checkpoint{Every}, for the methods that carry nothing between steps,
// keeps the state every Every (by default √N) steps and replays one segment
// at a time in the backward pass: Backprop's gradients to rounding in
// O(√N) memory. Recursive{Budget} keeps at most Budget states on the
// binomial schedule (revolve, as odeblock's Recursive mode), recomputing
// each step at most r times, r the least with C(budget + r, r) ≥ N.
//
// Against torchsde (TestTorchsdePaths, on the Brownian increments Go wrote
// replayed to torchsde, float64): euler, milstein (with the JVP and
// derivative-free), sri2, heun and reversible_heun give the paths of
// torchsde's euler, milstein, srk, heun and reversible_heun to a relative
// 1e-15 for diagonal, scalar and general noise, and sra1 torchsde's srk for
// additive noise; the gradients of a loss of those paths (Backprop,
// Recursive, Reversible) equal torchsde's backpropagation and, for
// Reversible, its adjoint_reversible_heun, to a relative 5e-15
// (TestTorchsdeGradients). For scalar noise torchsde's
// Milstein term is (∂g/∂y)ᵀg where the correction (and this package) has
// (∂g/∂y)g: the two agree when ∂g/∂y is symmetric (as for a g whose
// elements read their own y_i) and differ otherwise.
//
// # Choices
//
//   - One code path: the methods are written once in autograd ops. A solve on
//     a no-grad tape runs on a scratch tape reset at every step and returns
//     its outputs as constants, so sampling keeps no history.
//   - The Brownian tree computes in float64 and rounds each increment once
//     to T, so W(s, u) = W(s, t) + W(t, u) holds to T's rounding for float32
//     too. Query times within BrownianOptions.Tol (2⁻⁴⁰ of the span by
//     default) of a node read that node, so times computed two ways read one
//     W; a step of (t1 − t0)/2^k reads exact dyadic values.
//   - Milstein's derivative term ∂g/∂y·g is a Jacobian–vector product
//     (autograd.JVP, differentiable again for Backprop), which is the
//     Milstein correction for scalar noise and, for diagonal noise, when each
//     g_i reads only y_i — the usual meaning of diagonal noise, and the
//     condition for it to commute.
//   - Milstein, srk and sri2 refuse general noise: a strong order 1 there
//     needs the space-space Lévy areas between components, which Brownian
//     does not provide (it has the space-time area only).
//   - srk is an order-1 tableau of Rößler's SRI form chosen here to need no
//     Lévy area; sri2 is Rößler's SRI2, the method torchsde calls srk.
//   - Errors, never panics, for bad input: options, a noise layout that does
//     not fit the state and the path (both shapes named), a drift or diffusion
//     of the wrong shape, a NaN or infinity in f, g or the state (ErrNonFinite,
//     with the element and the time), a path queried outside its span
//     (ErrOutsideSpan) or backward (ErrReversedInterval). A *SolveError names
//     the method, the phase and the start and size of the step that failed.
//   - One vocabulary with ODE solves: what means the same is the
//     integrator's (odeblock/integrate). The sentinels ErrMaxSteps,
//     ErrStepUnderflow and ErrNonFinite are its values; a *SolveError holds
//     an integrate.SolveError (Phase, T, H, Err), so errors.As finds the
//     integrator's type in an SDE failure as in an ODE one, with the method
//     named beside it; Stats embeds integrate.Stats (NFE the drift's
//     evaluations, Accepted and Rejected the steps the control accepted and
//     rejected); the gradient modes are values with odeblock's words. Kept
//     apart, because an ODE solve has no such thing: the diffusion's
//     evaluations (DiffusionEvals), the steps of the solution beside the
//     accepted attempts (Steps: an adaptive attempt enters the solution as
//     two half steps on the same Brownian path, where an ODE's accepted step
//     is one), the backward pass's evaluations in one count of (f, g)
//     (BackwardEvals; odeblock splits its backward solve's Stats, which has
//     no diffusion) and the error of the reconstructed y0 (Drift). Brownian
//     queries fail with the path's own errors (ErrOutsideSpan,
//     ErrReversedInterval), wrapped in the *SolveError of the step that made
//     them.
//
// # Not yet
//
// Space-space Lévy areas (for order-1 methods on non-commuting general
// noise); SRA methods beyond SRA1; noise on a family's state that depends
// on the state (Family's is additive).
package sde
