package odeblock

import (
	"github.com/adamnode/adamnode/odeblock/integrate"
	"github.com/adamnode/adamnode/odeblock/internal/hooks"
	"github.com/adamnode/adamnode/tensor"
)

// The integrator — the Solver, its methods, step-size controllers, dense
// output and events — is package odeblock/integrate, below the Block and
// its gradient modes; these aliases spell its user-facing names here. Their
// fields and methods are documented there: go doc
// github.com/adamnode/adamnode/odeblock/integrate Options (or Solver,
// Stats, …).

type (
	// Func is the right-hand side f(t, y) of an ODE, written into dy.
	Func[T tensor.Float] = integrate.Func[T]
	// Options configure a solve: the method, tolerances, step bounds, stops
	// and jumps, error norm and quadratures.
	Options = integrate.Options
	// StepControl is Options' step-size controller: first step, step
	// bounds, MaxSteps and the controller's factors.
	StepControl = integrate.StepControl
	// ErrorNorm is Options' error norm: ErrorLen, ErrorParts, ErrorRows.
	ErrorNorm = integrate.ErrorNorm
	// Stops are Options' StepTo times and Jumps.
	Stops = integrate.Stops
	// StepInfo describes one attempted step to an OnStep hook.
	StepInfo[T tensor.Float] = integrate.StepInfo[T]
	// Stats counts a solve's work.
	Stats = integrate.Stats
	// SolveError is a failed solve: where, and why.
	SolveError = integrate.SolveError
	// Solver integrates ODEs with a reusable set of work buffers.
	Solver[T tensor.Float] = integrate.Solver[T]
	// TensorFunc is f on tensors, for Solver.SolveTensors (which keeps an
	// explicit Runge–Kutta solve on a device on a solver of
	// integrate.NewSolverOn).
	TensorFunc[T tensor.Float] = integrate.TensorFunc[T]
	// Event ends (or marks) a solve where a function of the state crosses zero.
	Event[T tensor.Float] = integrate.Event[T]
	// Tableau is the Butcher tableau of an explicit Runge–Kutta method.
	Tableau = integrate.Tableau
)

// NewSolver returns a solver with the given options, or an error naming
// the option that is out of range.
func NewSolver[T tensor.Float](opt Options) (*Solver[T], error) { return integrate.NewSolver[T](opt) }

// Solve integrates f from ts[0] through every time of ts starting at y0
// and returns the state at each; see Solver.Solve.
func Solve[T tensor.Float](f Func[T], y0 []T, ts []float64, opt Options) ([][]T, Stats, error) {
	return integrate.Solve(f, y0, ts, opt)
}

// MethodNames returns the names Method accepts.
func MethodNames() []string { return integrate.MethodNames() }

// Method returns the tableau of the named built-in method, or an error
// naming the known ones.
func Method(name string) (*Tableau, error) { return integrate.Method(name) }

// Errors a solve can return, wrapped in a *SolveError. Test with errors.Is.
var (
	ErrStepUnderflow = integrate.ErrStepUnderflow
	ErrMaxSteps      = integrate.ErrMaxSteps
	ErrNonFinite     = integrate.ErrNonFinite
)

// hk returns the integrator's hooks for element type T: what the Block
// and its gradient modes do to a Solver beyond its exported API (package
// odeblock/internal/hooks).
func hk[T tensor.Float]() *hooks.Integrator[T, *Solver[T], *Tableau, Stats, StepInfo[T]] {
	return hooks.Of[T, *Solver[T], *Tableau, Stats, StepInfo[T]]()
}

// axpy sets dst += a·x.
func axpy[T tensor.Float](dst []T, a T, x []T) { tensor.AxpySlice(a, x, dst) }
