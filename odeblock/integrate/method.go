package integrate

import "github.com/adamnode/adamnode/tensor"

// method is one family of integration methods behind the Solver's one
// loop (solver.go): the loop picks each step's size and end (stops,
// jumps, MaxSteps, MinStep and MaxStep), calls OnStep, accepts or rejects,
// finds events and writes outputs for every family alike; the method owns
// its state and provides the step, its error, the next step's size (and
// order) and the dense output, as diffrax's solvers and torchdiffeq's
// steppers do. One file per family: rk.go (explicit Runge–Kutta, every
// plain Tableau), rosenbrock.go and rodas.go, irk.go (implicit
// Runge–Kutta), adams.go, bdf.go. A method sees the solve only through
// the step's buffers b, handed to each call, and the env it was bound to.
type method[T tensor.Float] interface {
	// bind gives the method the solve it runs in (once, when it is made).
	bind(e env[T])
	// begin starts the method's history at the start of a solve and again
	// after each jump, with the state in b.y0 and f there in b.k[0]; h is
	// the first step to be tried.
	begin(b stepBufs[T], h float64)
	// step attempts the step g from b.y0, f(g.t0, b.y0) being in b.k[0],
	// and leaves its solution in b.y1. An error ends the solve; a step to
	// reject is not one (errorRatio above 1, or NaN in b.y1).
	step(b stepBufs[T], eval evalFunc[T], g stepGeom) error
	// errorRatio returns the error ratio of the step of size h just
	// attempted in b: at most 1 accepts it, NaN when it is not finite.
	// Only adaptive solves ask.
	errorRatio(b stepBufs[T], h float64) float64
	// accept takes the accepted step g into the method's history, before
	// its outputs, events and log are formed (with the state at its start
	// in b.y0 and at its end in b.y1).
	accept(b stepBufs[T], g stepGeom, ratio float64)
	// next returns the size of the step after the adaptive step of size h
	// (accepted, or rejected with a finite or NaN ratio), within MinStep
	// and MaxStep.
	next(h, ratio float64, accepted bool) float64
	// endSlope reports whether the next step starts from f at this one's
	// end in b.k[0] (the loop evaluates it unless the method is FSAL).
	endSlope() bool
	// interpolate writes into dst the dense output at tq inside the
	// accepted step g of b, f at its ends being f0 and f1.
	interpolate(b stepBufs[T], dst []T, g stepGeom, tq float64, f0, f1 []T)
	// log keeps the accepted step g's dense output in l.
	log(b stepBufs[T], l *denseLog[T], g stepGeom, f0, f1 []T)
}

// stepBufs are a step's vectors, the solver's work buffers: the state at
// the step's start y0, the stages k (k[0] is f at the start), the
// dense-output stages kd (kall is k then kd), the solution y1, a scratch
// state tmp and, for a method that does not reuse its last stage, fnext
// for f at the step's end. n is the state's length.
type stepBufs[T tensor.Float] struct {
	n                  int
	y0, y1, tmp, fnext []T
	k, kd, kall        [][]T
}

// env is what a method asks of the solve it runs in, besides the step's
// buffers: the tableau and options, the counters, the vector operations,
// the error norm and the step-size controller of Options. *Solver is one.
type env[T tensor.Float] interface {
	// tableau returns the method's tableau.
	tableau() *Tableau
	// opts returns the options, their defaults filled in.
	opts() *Options
	// stats returns the solve's counters (Jacobians and LUs).
	stats() *Stats
	// ops returns the solve's vector operations (the host's or a device's).
	ops() solverOps[T]
	// mixed returns the error norm of norm(lo, hi), a range's RMS, over
	// the parts or rows of Options (the largest).
	mixed(norm func(lo, hi int) float64) float64
	// errorRatio returns the embedded error norm (E, and E3) of the
	// explicit Runge–Kutta step of size h in b.
	errorRatio(b stepBufs[T], h float64) float64
	// control returns the controller's next step after the step of size
	// h with the error ratio ratio (within MinStep and MaxStep).
	control(h, ratio float64, accepted bool) float64
	// quadrature returns how many trailing elements the stages may leave
	// out (Options.Quadrature), or 0 when the solve reads whole stages.
	quadrature() int
	// device returns the device mode of a device solve, else nil.
	device() *devMode[T]
}

// family marks a Tableau whose method is not an explicit Runge–Kutta
// method: a built-in stiff, implicit or multistep method, which the
// tableau only names and describes (its stage layout for the error norm
// and dense output where the family reuses the RK ones).
type family interface {
	// validate checks the tableau of this family.
	validate(tb *Tableau) error
	// stiff reports whether the family forms a dense Jacobian of the
	// state (a method for small stiff systems).
	stiff() bool
	// method32 and method64 return a fresh method of the family.
	method32() method[float32]
	method64() method[float64]
}

// newMethod returns the method that runs tableau tb, with fresh state.
func newMethod[T tensor.Float](tb *Tableau) method[T] {
	if tb.family == nil {
		return &explicitRK[T]{}
	}
	var m any
	if _, ok := any(T(0)).(float32); ok {
		m = tb.family.method32()
	} else {
		m = tb.family.method64()
	}
	return m.(method[T])
}
