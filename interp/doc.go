// Package interp turns observations at knot times into a continuous,
// differentiable control path X(t), the input of a neural controlled
// differential equation (dz = f(z)·dX(t), driven by dX/dt): what torchcde's
// coefficient functions with its interpolation classes, and diffrax's
// interpolations, provide.
//
// The observations are an autograd Var of shape [B, n, C] (batch, time,
// channels) at knot times t_0 < t_1 < … < t_{n−1} (float64, strictly
// increasing, n ≥ 2). A constructor records, once, on the observations'
// tape, every piece's polynomial coefficients as [B, C] Vars; then
// Evaluate(tp, t) and Derivative(tp, t) return X(t) and dX/dt as [B, C]
// Vars, one LinComb op each, differentiable with respect to the
// observations (to any order: they are built from tape ops and, for the
// spline's solve, a CustomDiff node). t is a constant, not differentiated.
//
//	Linear          piecewise linear        torchcde linear_interpolation_coeffs + LinearInterpolation; diffrax LinearInterpolation
//	NaturalCubic    natural cubic spline    SciPy CubicSpline(bc_type="natural"); torchcde natural_cubic_coeffs + NaturalCubicSpline
//	HermiteBackward backward Hermite cubic  diffrax backward_hermite_coefficients + CubicInterpolation; torchcde hermite_cubic_coefficients_with_backward_differences
//
// # Pieces, knots and the ends
//
// On piece i, [t_i, t_{i+1}], with s = t − t_i, X(t) = a_i + b_i·s +
// c_i·s² + d_i·s³ (Linear stops at b_i). A time t is on the piece i, the
// largest with t_i ≤ t, clamped to 0 … n−2: a knot t_k belongs to the
// piece to its right (the last knot to the last piece), which matters only
// for the derivative of Linear, discontinuous at the knots: it is the right
// derivative there (diffrax's left=False; diffrax's default and torchcde
// take the left one). The two cubics are continuously differentiable at
// the knots, so the choice changes nothing but rounding for them. Outside [t_0, t_{n−1}] the end
// pieces are extrapolated, as torchcde, diffrax and SciPy do; nothing is
// clamped.
//
// # Missing values
//
// Every observation must be finite: a constructor refuses a NaN or an
// infinity with an error naming the series (the batch row), the channel
// and the time (its index and value), instead of spreading it into the
// pieces of that channel around it (into every one for NaturalCubic,
// whose solve couples them). torchcde reads a NaN as a missing value and
// fills it in its coefficient functions; this package has no notion of
// missing values (one set of knot times serves the whole batch), so fill
// them before interpolating, as the caller sees fit: carry the last value
// forward, or interpolate each series on the knots it was observed at
// (Linear's ValueAt) at the batch's knots, adding a channel of
// observation counts if the model should know, as torchcde advises for
// irregular series. The check reads the observations once on the host,
// O(B·n·C).
//
// # The spline's solve
//
// The natural spline's second derivatives at the knots solve a symmetric
// tridiagonal system A·M = r (see NaturalCubic), r the second divided
// differences of the observations. The constructor solves it once per set
// of observations, for all B·C channels, by the Thomas algorithm, and
// records the solve as one autograd.CustomDiff node: since M = A⁻¹r is
// linear and A symmetric, its backward is the same solve applied to the
// cotangent, and its backward in ops is the node itself, so Grad with
// CreateGraph (gradients of gradients, JVPs) differentiates through it to
// any order. Everything else is ordinary ops (Narrow, Sub, Div, Mul,
// Concat, LinComb, Split, Reshape) on [B, n−1, C] tensors; the constants
// (spacings, zeros) and the solve's values come from the tape's Scratch.
//
// # Complexity
//
// A constructor takes O(B·n·C) time and memory and records O(n) ops (the
// split of each coefficient into its pieces); the natural spline's
// factorisation of A is O(n). Evaluate and Derivative take O(log n) to find
// the piece and O(B·C) to combine at most four coefficients: one op each.
//
// # Tapes
//
// An interpolant belongs to the pass that recorded its observations: pass
// that tape to Evaluate and Derivative (another panics, as a NaN time does,
// with an error value naming the interpolant and the method: a misuse that
// tensor.Recover, which recovers bad shapes, lets through), and build a new
// interpolant after the tape's Reset. Build it in the gradient mode wanted:
// coefficients recorded in no-grad mode are constants.
package interp
