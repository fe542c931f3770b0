// Package odeblock solves ODEs with explicit Runge–Kutta methods and wraps
// the solve as an autograd op whose gradient comes from an adjoint solve,
// backpropagation through the solver's steps, or checkpointed recomputation.
//
// # Solvers
//
// One RK engine runs every method from its Butcher tableau (Tableau):
// euler, midpoint, rk4 (classic), rk38 (Kutta's 3/8 rule, torchdiffeq's
// "rk4") with a fixed step; heun-euler, bosh3, dopri5 (the default) and tsit5
// with adaptive steps. Adaptive control follows Hairer–Nørsett–Wanner and
// torchdiffeq: the error ratio is the RMS norm of
// err / (atol + rtol·max(|y0|, |y1|)); the first step is selected from f at
// t0 with one extra evaluation; the I controller
// h·min(10, max(0.2, 0.9·ratio^(−1/order))) never shrinks the step after an
// accepted one; FSAL methods reuse their last stage. So with default options
// dopri5 takes the same accepted steps as torchdiffeq's dopri5 — except that
// here the last step is cut to end exactly at t1, where torchdiffeq steps past
// the end and interpolates back: f is never evaluated outside the span of the
// requested times. Outputs between steps come from dense output (dopri5:
// Shampine's midpoint and a quartic; others: cubic Hermite), so asking for
// many outputs does not change the steps.
//
// Failures are returned, never a panic or a hang: a *SolveError names the
// phase (forward or backward), the time reached and the cause
// (ErrStepUnderflow, ErrMaxSteps, ErrNonFinite, or the dynamics' own error).
// A step whose state or error estimate is NaN or Inf is rejected and
// retried smaller; if that underflows, the error is ErrNonFinite.
package odeblock
