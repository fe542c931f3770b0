package sde

import (
	"errors"
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock/integrate"
	"github.com/adamnode/adamnode/tensor"
)

// The methods, by name (Options.Method), with their calculus and strong
// order (the error in y(t1) against the exact solution on the same
// Brownian path, as the step h → 0; measured orders in solve_test.go).
const (
	// EulerMaruyama (Itô; any noise): y₁ = y + f(t, y) h + g(t, y) ΔW.
	// Strong order ½ (1 for additive noise), weak order 1. One f and one g
	// per step.
	EulerMaruyama = "euler"
	// Milstein (Itô; diagonal and scalar noise): Euler–Maruyama plus
	// ½ (∂g/∂y · g)(ΔW² − h), the derivative taken by autograd.JVP, or
	// with Options.DerivativeFree by the difference quotient
	// (g(t, ȳ) − g(t, y))/√h at ȳ = y + f h + g √h (Kloeden & Platen
	// 1992, §11.1). Strong order 1. One f and two g per step.
	Milstein = "milstein"
	// SRK is a stochastic Runge–Kutta method of strong order 1 for Itô
	// SDEs with diagonal or scalar noise, written in Rößler's (2010) SRI
	// form with three stages chosen here so that no Lévy area is needed:
	// c⁰ = (0, 1, 0), c¹ = (0, 1, 1), A⁰₂₁ = A¹₂₁ = A¹₃₁ = 1, B¹₂₁ = 1,
	// B¹₃₁ = −1, α = (½, ½, 0), β¹ = (1, 0, 0), β² = (0, ½, −½),
	// B⁰ = β³ = β⁴ = 0 (β²ᵀB¹e = 1, the order-1 condition of the
	// iterated integral); Heun's rule for the drift and a central
	// difference for Milstein's term:
	//
	//	y₁ = y + (h/2)(f(t, y) + f(t+h, y + f h)) + g(t, y) ΔW
	//	       + (g(t+h, y + f h + g√h) − g(t+h, y + f h − g√h)) (ΔW² − h)/(4√h)
	//
	// with f = f(t, y), g = g(t, y) inside the stages. Two f and three g
	// per step. torchsde's srk is another member of the family, of strong
	// order 1.5, which reads the space-time Lévy area: SRI2 here.
	SRK = "srk"
	// SRI2 (Itô; diagonal and scalar noise) is Rößler's (2010) SRI2, the
	// four-stage stochastic Runge–Kutta method of strong order 1.5 that
	// torchsde's srk uses for diagonal noise (its tableau: c⁰ = (0, 1, ½, 0),
	// c¹ = (0, ¼, 1, ¼), α = (⅙, ⅙, ⅔, 0), β¹ = (−1, 4/3, ⅔, 0),
	// β² = (1, −4/3, ⅓, 0), β³ = (2, −4/3, −⅔, 0), β⁴ = (−2, 5/3, −⅔, 1),
	// A⁰, A¹, B⁰, B¹ in sri.go). It reads the space-time Lévy area of each
	// step, so the path must be an AreaPath (Brownian is). Three f and
	// four g per step.
	SRI2 = "sri2"
	// SRA1 (additive noise: g(t) does not depend on y, so that Itô and
	// Stratonovich agree; any noise layout) is Rößler's (2010) SRA1, the
	// two-stage method of strong order 1.5 for additive noise that
	// torchsde's srk uses for noise_type "additive". With I₁₀/h = H + ΔW/2
	// (H the step's space-time Lévy area, per Brownian motion):
	//
	//	H₂ = y + ¾ f(t, y) h + (3/2) g(t + h) I₁₀/h
	//	y₁ = y + (⅓ f(t, y) + ⅔ f(t + ¾h, H₂)) h
	//	       + g(t + h) (ΔW − I₁₀/h) + g(t) I₁₀/h.
	//
	// g is evaluated at the step's start state y; a g that reads y makes
	// the result that of another SDE, not an error. The path must be an
	// AreaPath. Two f and two g per step.
	SRA1 = "sra1"
	// Heun (Stratonovich; any noise): the stochastic trapezoidal rule
	//
	//	ỹ = y + f(t, y) h + g(t, y) ΔW
	//	y₁ = y + ½(f(t, y) + f(t+h, ỹ)) h + ½(g(t, y) + g(t+h, ỹ)) ΔW.
	//
	// Strong order 1 for commutative noise (diagonal, scalar), ½ in
	// general. Two f and two g per step.
	Heun = "heun"
	// ReversibleHeun (Stratonovich; any noise) is Kidger et al.'s (2021,
	// "Efficient and accurate gradients for neural SDEs") reversible
	// solver. It carries a second state ŷ (ŷ₀ = y₀) and f and g at ŷ:
	//
	//	ŷ₁ = 2y − ŷ + f(t, ŷ) h + g(t, ŷ) ΔW
	//	y₁ = y + ½(f(t, ŷ) + f(t+h, ŷ₁)) h + ½(g(t, ŷ) + g(t+h, ŷ₁)) ΔW,
	//
	// one f and one g per step, and a step can be undone exactly in
	// algebra: ŷ = 2y₁ − ŷ₁ − f(t+h, ŷ₁) h − g(t+h, ŷ₁) ΔW, then y from
	// y₁. The Reversible gradient uses this. Strong order ½ in general
	// (Kidger et al.); on the diagonal-noise test problem here it
	// measures 1 (see solve_test.go).
	//
	// It is not A-stable, and is unstable on every dissipative drift. On
	// dy = λy dt its two modes are multiplied per step by z ± √(z² + 1),
	// z = λh, whose product is −1: for real λ < 0 (a drift that contracts,
	// ∂f/∂y < 0), at any step size, the spurious one grows by
	// |z| + √(1 + z²) ≈ e^{|λ|h} per step, alternating in sign — e^{|λ|t}
	// over time, the mirror of the decay it should follow — and its only
	// region of absolute stability is the imaginary segment −i < z < i
	// (undamped oscillation at ωh < 1, where it keeps the amplitude to
	// t = 500 and Heun's grows). The errors of the solve are amplified at the
	// rate the drift contracts: on dy = −y dt they grow e-fold per unit of
	// time at h = 0.1, 0.01 and 0.001 alike (a smaller step only makes
	// them start smaller, there as h⁴, and so delays the blow-up, by about
	// 9/|λ| per tenfold step), reaching 0.3 at t = 20 with h = 0.01
	// where y is 2e-9; on f = −½y³ − 0.1y with noise 0.5 dW (y kept near
	// 1, where ∂f/∂y ≈ −1.6) the solve overflows at t ≈ 5–6 with h = 0.01,
	// where Heun (stable for real z in (−2, 0)) is not troubled
	// (TestReversibleHeunDissipative). The overflow is an error wrapping
	// ErrNonFinite naming the time of the step (and this instability).
	// Use it where |∂f/∂y|·(t1 − t0) stays moderate, or use Heun.
	ReversibleHeun = "reversible_heun"
)

// MethodNames lists the methods Solve knows.
func MethodNames() []string {
	return []string{EulerMaruyama, Milstein, SRK, SRI2, SRA1, Heun, ReversibleHeun}
}

// MethodCalculus returns the calculus a method solves in (Itô for sra1,
// whose additive-noise SDEs read the same in both; Options.Calculus accepts
// either for it).
func MethodCalculus(method string) (Calculus, error) {
	switch method {
	case EulerMaruyama, Milstein, SRK, SRI2, SRA1:
		return Ito, nil
	case Heun, ReversibleHeun:
		return Stratonovich, nil
	}
	return 0, fmt.Errorf("sde: unknown method %q (known: %v)", method, MethodNames())
}

// Options configure a solve. The zero value asks for Euler–Maruyama with
// diagonal noise; Step must be set.
type Options struct {
	// Method is one of MethodNames; "" means EulerMaruyama.
	Method string
	// Noise is the layout of the diffusion (Diagonal by default).
	Noise Noise
	// Calculus, if set, is the calculus the caller's SDE is written in;
	// a method of the other calculus is an error (as torchsde checks
	// sde_type), rather than a silently different solution. 0: no check.
	Calculus Calculus
	// Step is the largest step size. Each interval between output times is
	// cut into the fewest equal steps no longer than Step (to a relative
	// 1e-9), so a Step that divides it gives steps of exactly Step.
	Step float64
	// DerivativeFree makes Milstein use a difference quotient instead of
	// the Jacobian–vector product of g.
	DerivativeFree bool
	// Mode picks how the solve is differentiated when tp records
	// gradients (the word odeblock.Block uses): Backprop{}, Reversible{},
	// Adjoint{}, Checkpoint{…} or Recursive{…}; nil means Backprop{}.
	Mode GradMode

	// Adaptive turns on step-size control by step doubling (as torchsde's
	// adaptive mode): every attempt takes a step of h and two of h/2 on the
	// same Brownian path, whose difference estimates the error; accepted
	// attempts enter the solution by their two half steps. Step is then
	// the first step size. Any method; three times the work per step. The
	// Brownian path must answer queries at any time (a Brownian does).
	// Backprop records the rejected attempts too (they do not reach the
	// outputs, so the gradients are those of the accepted steps); the
	// Reversible gradient runs backward over the accepted half steps.
	Adaptive bool
	// RTol and ATol are the tolerances of adaptive steps: an attempt is
	// accepted when the RMS norm of the error over
	// ATol + RTol·max(|y|, |y₁|) is at most 1. 0 means torchsde's 1e-5 and
	// 1e-4.
	RTol, ATol float64
	// MinStep is the smallest adaptive step (0: 1e-10 of the span); a step
	// that must be smaller is an error wrapping ErrStepUnderflow. MaxSteps
	// bounds the attempted steps (0: 10000), an error wrapping ErrMaxSteps.
	//
	// With fixed steps, MaxSteps, if set, bounds the number of steps of
	// the whole solve, checked before the first (0: no bound); and a Step
	// that cuts an interval between output times into steps shorter than
	// float64 tells apart at those times (2⁻⁵² of the larger |t|, so that
	// the step times would repeat) is an error wrapping ErrStepUnderflow.
	MinStep  float64
	MaxSteps int
}

// Stats counts the work of a solve. What an ODE solve counts too is the
// integrator's Stats, embedded: NFE counts the evaluations of the drift f
// of the forward pass (the f of an ODE, whose NFE counts the same), and
// Accepted and Rejected the steps the step-size control accepted and
// rejected (every fixed step is accepted, as in an ODE solve; an
// adaptive attempt counts one, its two half steps entering the solution).
// Jacobians and LUs stay 0: no SDE method here is implicit. The rest is
// the SDE's own (see the package documentation).
type Stats struct {
	integrate.Stats
	// Steps counts the steps that make up the solution; with adaptive
	// steps, two per accepted attempt.
	Steps int
	// DiffusionEvals counts the evaluations of g, forward pass (Milstein's
	// Jacobian–vector products included).
	DiffusionEvals int
	// BackwardEvals counts the evaluations of (f, g) of the Reversible
	// gradient's backward pass (N + 2 for N steps), the vector–Jacobian
	// products and reconstructing evaluations of the Adjoint gradient's,
	// and the evaluations of f in the Checkpoint and Recursive gradients'
	// replays; it is filled in when that pass runs.
	BackwardEvals int
	// Stored is the most states the Checkpoint or Recursive gradient kept
	// at once (y0 and the checkpoints), counted through its backward pass:
	// odeblock.BlockStats.Stored's count.
	Stored int
	// Drift is the largest error, elementwise, of the initial state that
	// the Reversible or Adjoint backward pass reconstructs, against y0:
	// rounding for Reversible; for Adjoint the error of solving the SDE
	// backward, a sign of how far its gradients can be trusted. Filled in
	// when that pass runs.
	Drift float64
}

// Solve integrates the SDE from y0 at ts[0] through the output times ts
// (finite, strictly increasing, inside the path's span) on the Brownian
// path, and returns y at each output time (ys[0] is y0) and the solve's
// counts.
//
// With gradients on, tp records the solve so that Backward differentiates
// the outputs with respect to y0 and the SDE's parameters: every step
// (Backprop), or one node whose backward runs reversible Heun backward
// (Reversible), the adjoint SDE (Adjoint) or the steps between
// checkpoints again (Checkpoint, Recursive); those fill in
// Stats.BackwardEvals when Backward runs. On a tape in no-grad mode only values are computed, on a
// scratch tape reset at every step, and the outputs are constants on tp.
//
// Errors — a bad option, a noise layout that does not fit the state and
// the path, a drift or diffusion of the wrong shape, a NaN or infinity in
// f, g or the state (ErrNonFinite), a path that cannot give an increment —
// are returned, as a *SolveError naming the method, the phase and the
// step once the solve has begun.
func Solve[T tensor.Float](tp *autograd.Tape[T], s SDE[T], y0 autograd.Var[T], ts []float64, path Path[T], opt Options) (ys []autograd.Var[T], st *Stats, err error) {
	defer tensor.Recover(&err)
	st = new(Stats)
	method := opt.Method
	if method == "" {
		method = EulerMaruyama
	}
	calc, err := MethodCalculus(method)
	if err != nil {
		return nil, st, err
	}
	if err := checkOptions(method, calc, ts, path, opt); err != nil {
		return nil, st, err
	}
	p, err := newProblem(s, opt.Noise, method, y0.Shape(), path.Shape(), st)
	if err != nil {
		return nil, st, err
	}
	if err := opt.adaptiveDefaults(); err != nil {
		return nil, st, err
	}
	if len(ts) == 1 {
		return []autograd.Var[T]{y0}, st, nil
	}
	if !tp.NoGrad() {
		switch m := opt.Mode.(type) {
		case Reversible:
			return solveReversible(tp, p, y0, ts, path, opt)
		case Adjoint:
			return solveAdjoint(tp, p, y0, ts, path, opt, method)
		case Checkpoint:
			return solveCheckpoint(tp, p, y0, ts, path, opt, method, m.Every)
		case Recursive:
			return solveBinomial(tp, p, y0, ts, path, opt, method, m.budget())
		}
	}
	l := &loop[T]{p: p, stp: newStepper(p, method, opt.DerivativeFree), path: path, opt: opt, tp: tp}
	ys = append(ys, y0)
	if tp.NoGrad() {
		// Values only: run on a scratch tape reset at every step, so that
		// memory does not grow with the steps.
		l.tp = autograd.NewTape(tp.Engine())
		l.tp.SetNoGrad(true)
		defer l.tp.Release()
		l.scratch = true
		l.out = func(_ int, y autograd.Var[T]) { ys = append(ys, tp.Const(y.Value().Clone())) }
		y0 = l.tp.Const(y0.Value())
	} else {
		l.out = func(_ int, y autograd.Var[T]) { ys = append(ys, y) }
	}
	if _, err := l.run(y0, ts); err != nil {
		return nil, st, err
	}
	return ys, st, nil
}

// checkOptions returns the error of the first option of a solve by method
// (of calculus calc) at the output times ts on path that does not fit.
func checkOptions[T tensor.Float](method string, calc Calculus, ts []float64, path Path[T], opt Options) error {
	if opt.Calculus != 0 && opt.Calculus != calc && method != SRA1 {
		return fmt.Errorf("sde: method %q solves %v SDEs, the SDE is %v", method, calc, opt.Calculus)
	}
	if !(opt.Step > 0) || math.IsInf(opt.Step, 0) {
		return fmt.Errorf("sde: Step %g must be positive and finite", opt.Step)
	}
	if len(ts) < 1 {
		return errors.New("sde: no output times")
	}
	if err := checkTimes("ts", ts); err != nil {
		return err
	}
	if opt.MaxSteps < 0 {
		return fmt.Errorf("sde: MaxSteps %d must not be negative", opt.MaxSteps)
	}
	if !opt.Adaptive {
		if err := checkFixedSteps(ts, opt.Step, opt.MaxSteps); err != nil {
			return err
		}
	}
	if (method == Milstein || method == SRK || method == SRI2) && opt.Noise == General {
		return fmt.Errorf("sde: method %q takes diagonal or scalar noise, not general noise (it would need the space-space Lévy areas)", method)
	}
	if err := checkGradient(opt.Mode, method, calc); err != nil {
		return err
	}
	if _, ok := path.(AreaPath[T]); (method == SRI2 || method == SRA1) && !ok {
		return fmt.Errorf("sde: method %q needs a path with Lévy areas (an AreaPath, as Brownian); %T is not one", method, path)
	}
	return nil
}

// checkTimes returns the error of the first output time that is not
// finite or not later than the one before, named as what[k].
func checkTimes(what string, ts []float64) error {
	for k, t := range ts {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("sde: output time %s[%d] = %g is not finite", what, k, t)
		}
		if k > 0 && !(t > ts[k-1]) {
			return fmt.Errorf("sde: output times must increase strictly: %s[%d] = %g after %g", what, k, t, ts[k-1])
		}
	}
	return nil
}

// checkFixedSteps returns the error of a fixed step that cuts an interval
// of ts into steps too short for float64 to tell the step times apart, or
// the whole span into more than maxSteps steps (if positive). Past it,
// stepsIn's counts fit an int (at most 2⁵³ per interval).
func checkFixedSteps(ts []float64, step float64, maxSteps int) error {
	total := 0.0
	for k := 1; k < len(ts); k++ {
		a, b := ts[k-1], ts[k]
		n := math.Ceil((b - a) / step * (1 - 1e-9))
		if h := (b - a) / n; !(h >= 0x1p-52*max(math.Abs(a), math.Abs(b))) {
			return fmt.Errorf("sde: Step %g is too small for the span [%g, %g] of ts[%d] to ts[%d]: %.3g steps of %.3g, shorter than float64 resolves at those times: %w",
				step, a, b, k-1, k, n, h, ErrStepUnderflow)
		}
		total += n
	}
	if maxSteps > 0 && total > float64(maxSteps) {
		return fmt.Errorf("sde: Step %g takes %.0f steps over the span [%g, %g], more than MaxSteps %d: %w",
			step, total, ts[0], ts[len(ts)-1], maxSteps, ErrMaxSteps)
	}
	return nil
}

// adaptiveDefaults sets the tolerances of an adaptive solve left at 0 and
// checks them.
func (o *Options) adaptiveDefaults() error {
	if o.Adaptive {
		if o.RTol == 0 {
			o.RTol = 1e-5
		}
		if o.ATol == 0 {
			o.ATol = 1e-4
		}
		if !(o.RTol > 0) || !(o.ATol > 0) || o.MinStep < 0 || o.MaxSteps < 0 {
			return fmt.Errorf("sde: adaptive tolerances RTol %g, ATol %g must be positive and MinStep %g, MaxSteps %d not negative", o.RTol, o.ATol, o.MinStep, o.MaxSteps)
		}
	}
	return nil
}

// increment reads ΔW = W(t, t+h) from the path as a constant shaped to
// multiply the diffusion.
func increment[T tensor.Float](tp *autograd.Tape[T], p *problem[T], path Path[T], t, h float64) (autograd.Var[T], error) {
	dW := tensor.New[T](path.Shape()...)
	if err := path.Increment(dW, t, t+h); err != nil {
		return autograd.Var[T]{}, err
	}
	return tp.Const(dW.Reshape(p.wShape...)), nil
}

// iterated returns (ΔW² − h)/2, the iterated Itô integral I_(j,j), as a
// constant shaped as ΔW.
func iterated[T tensor.Float](tp *autograd.Tape[T], dW autograd.Var[T], h float64) autograd.Var[T] {
	w := dW.Value().ReadData()
	out := tensor.New[T](dW.Shape()...)
	d := out.Data()
	for i, v := range w {
		d[i] = (v*v - T(h)) / 2
	}
	return tp.Const(out)
}

// stepper is one method. start is called at t0; step advances y by one
// step with the increment dW; snapshot and restore save and set back the
// values a method carries from step to step (reversible Heun's ŷ, f and g),
// for a rejected adaptive attempt or a scratch tape's reset.
type stepper[T tensor.Float] interface {
	start(tp *autograd.Tape[T], t0 float64, y0 autograd.Var[T]) error
	step(tp *autograd.Tape[T], t, h float64, y, dW autograd.Var[T]) (autograd.Var[T], error)
	snapshot() []autograd.Var[T]
	restore([]autograd.Var[T])
}

// stateless is the snapshot and restore of a method that carries nothing.
type stateless[T tensor.Float] struct{}

func (stateless[T]) snapshot() []autograd.Var[T] { return nil }
func (stateless[T]) restore([]autograd.Var[T])   {}

func newStepper[T tensor.Float](p *problem[T], method string, derivativeFree bool) stepper[T] {
	switch method {
	case Milstein:
		return &milstein[T]{p: p, derivativeFree: derivativeFree}
	case SRK:
		return &srk[T]{p: p}
	case SRI2:
		return &sri[T]{p: p, tb: &sri2}
	case SRA1:
		return &sra1[T]{p: p}
	case Heun:
		return &heun[T]{p: p}
	case ReversibleHeun:
		return &reversibleHeun[T]{p: p}
	}
	return &eulerMaruyama[T]{p: p}
}

type eulerMaruyama[T tensor.Float] struct {
	stateless[T]
	p *problem[T]
}

func (s *eulerMaruyama[T]) start(*autograd.Tape[T], float64, autograd.Var[T]) error { return nil }

func (s *eulerMaruyama[T]) step(tp *autograd.Tape[T], t, h float64, y, dW autograd.Var[T]) (autograd.Var[T], error) {
	f, err := s.p.drift(tp, t, y)
	if err != nil {
		return y, err
	}
	g, err := s.p.diffusion(tp, t, y)
	if err != nil {
		return y, err
	}
	return autograd.LinComb([]T{1, T(h), 1}, y, f, s.p.apply(g, dW)), nil
}

type milstein[T tensor.Float] struct {
	stateless[T]
	p              *problem[T]
	derivativeFree bool
}

func (s *milstein[T]) start(*autograd.Tape[T], float64, autograd.Var[T]) error { return nil }

func (s *milstein[T]) step(tp *autograd.Tape[T], t, h float64, y, dW autograd.Var[T]) (autograd.Var[T], error) {
	p := s.p
	f, g, err := p.fields(tp, t, y)
	if err != nil {
		return y, err
	}
	i11 := iterated(tp, dW, h)
	var lg autograd.Var[T] // ∂g/∂y · g, or its difference quotient times √h
	coef := T(1)
	if s.derivativeFree {
		sq := math.Sqrt(h)
		ybar := autograd.LinComb([]T{1, T(h), T(sq)}, y, f, g)
		gbar, err := p.diffusion(tp, t, ybar)
		if err != nil {
			return y, err
		}
		lg, coef = autograd.Sub(gbar, g), T(1/sq)
	} else {
		var jvpErr error
		p.stats.DiffusionEvals++
		_, lg, jvpErr = autograd.JVP(func(x autograd.Var[T]) autograd.Var[T] { return p.sde.Diffusion(tp, t, x) }, y, g)
		if jvpErr != nil {
			return y, fmt.Errorf("Milstein's ∂g/∂y·g: %w", jvpErr)
		}
	}
	return autograd.LinComb([]T{1, T(h), 1, coef}, y, f, p.apply(g, dW), p.apply(lg, i11)), nil
}

type srk[T tensor.Float] struct {
	stateless[T]
	p *problem[T]
}

func (s *srk[T]) start(*autograd.Tape[T], float64, autograd.Var[T]) error { return nil }

func (s *srk[T]) step(tp *autograd.Tape[T], t, h float64, y, dW autograd.Var[T]) (autograd.Var[T], error) {
	p := s.p
	f1, g1, err := p.fields(tp, t, y)
	if err != nil {
		return y, err
	}
	sq := math.Sqrt(h)
	h02 := autograd.LinComb([]T{1, T(h)}, y, f1) // H⁰₂ = y + f h
	h12 := autograd.LinComb([]T{1, T(sq)}, h02, g1)
	h13 := autograd.LinComb([]T{1, T(-sq)}, h02, g1)
	f2, err := p.drift(tp, t+h, h02)
	if err != nil {
		return y, err
	}
	g2, err := p.diffusion(tp, t+h, h12)
	if err != nil {
		return y, err
	}
	g3, err := p.diffusion(tp, t+h, h13)
	if err != nil {
		return y, err
	}
	i11 := iterated(tp, dW, h)
	return autograd.LinComb([]T{1, T(h / 2), T(h / 2), 1, T(1 / (2 * sq))},
		y, f1, f2, p.apply(g1, dW), p.apply(autograd.Sub(g2, g3), i11)), nil
}

type heun[T tensor.Float] struct {
	stateless[T]
	p *problem[T]
}

func (s *heun[T]) start(*autograd.Tape[T], float64, autograd.Var[T]) error { return nil }

func (s *heun[T]) step(tp *autograd.Tape[T], t, h float64, y, dW autograd.Var[T]) (autograd.Var[T], error) {
	p := s.p
	f1, g1, err := p.fields(tp, t, y)
	if err != nil {
		return y, err
	}
	gw1 := p.apply(g1, dW)
	yt := autograd.LinComb([]T{1, T(h), 1}, y, f1, gw1)
	f2, g2, err := p.fields(tp, t+h, yt)
	if err != nil {
		return y, err
	}
	return autograd.LinComb([]T{1, T(h / 2), T(h / 2), 0.5, 0.5}, y, f1, f2, gw1, p.apply(g2, dW)), nil
}

// reversibleHeun carries ŷ and f, g at ŷ from step to step.
type reversibleHeun[T tensor.Float] struct {
	p         *problem[T]
	yhat      autograd.Var[T]
	mu, sigma autograd.Var[T]
}

func (s *reversibleHeun[T]) snapshot() []autograd.Var[T] {
	return []autograd.Var[T]{s.yhat, s.mu, s.sigma}
}

func (s *reversibleHeun[T]) restore(v []autograd.Var[T]) { s.yhat, s.mu, s.sigma = v[0], v[1], v[2] }

func (s *reversibleHeun[T]) start(tp *autograd.Tape[T], t0 float64, y0 autograd.Var[T]) (err error) {
	s.yhat = y0
	if s.mu, err = s.p.drift(tp, t0, y0); err != nil {
		return err
	}
	s.sigma, err = s.p.diffusion(tp, t0, y0)
	return err
}

func (s *reversibleHeun[T]) step(tp *autograd.Tape[T], t, h float64, y, dW autograd.Var[T]) (autograd.Var[T], error) {
	p := s.p
	sw := p.apply(s.sigma, dW)
	yhat := autograd.LinComb([]T{2, -1, T(h), 1}, y, s.yhat, s.mu, sw)
	mu, sigma, err := p.fields(tp, t+h, yhat)
	if err != nil {
		return y, err
	}
	y1 := autograd.LinComb([]T{1, T(h / 2), T(h / 2), 0.5, 0.5}, y, s.mu, mu, sw, p.apply(sigma, dW))
	s.yhat, s.mu, s.sigma = yhat, mu, sigma
	return y1, nil
}
