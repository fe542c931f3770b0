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
// Runge–Kutta), adams.go, bdf.go.
type method[T tensor.Float] interface {
	// begin starts the method's history at the start of a solve and again
	// after each jump, with f at the (re)start in s.k[0] and s.y the
	// state; h is the first step to be tried.
	begin(s *Solver[T], h float64)
	// step attempts the step g from s.y, f(g.t0, s.y) being in s.k[0],
	// and leaves its solution in s.y1. An error ends the solve; a step
	// to reject is not one (errorRatio above 1, or NaN in s.y1).
	step(s *Solver[T], eval evalFunc[T], g stepGeom) error
	// errorRatio returns the error ratio of the step just attempted, of
	// size h: at most 1 accepts it, NaN when it is not finite. Only
	// adaptive solves ask.
	errorRatio(s *Solver[T], h float64) float64
	// accept takes the accepted step g into the method's history, before
	// its outputs, events and log are formed (with the state at its
	// start in s.y and at its end in s.y1).
	accept(s *Solver[T], g stepGeom, ratio float64)
	// next returns the size of the step after the adaptive step of size h
	// (accepted, or rejected with a finite or NaN ratio), within MinStep
	// and MaxStep.
	next(s *Solver[T], h, ratio float64, accepted bool) float64
	// endSlope reports whether the next step starts from f at this one's
	// end in s.k[0] (the loop evaluates it unless the method is FSAL).
	endSlope() bool
	// interpolate writes into dst the dense output at tq inside the
	// accepted step g, f at its ends being f0 and f1.
	interpolate(s *Solver[T], dst []T, g stepGeom, tq float64, f0, f1 []T)
	// log keeps the accepted step g's dense output in l.
	log(s *Solver[T], l *denseLog[T], g stepGeom, f0, f1 []T)
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
		return explicitRK[T]{}
	}
	var m any
	if _, ok := any(T(0)).(float32); ok {
		m = tb.family.method32()
	} else {
		m = tb.family.method64()
	}
	return m.(method[T])
}
