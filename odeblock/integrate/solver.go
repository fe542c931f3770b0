package integrate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/adamnode/adamnode/tensor"
)

// Func evaluates the dynamics dy = f(t, y) into dy. y and dy are flat
// buffers of the same length; f must not keep them. An error stops the solve.
type Func[T tensor.Float] func(t float64, y, dy []T) error

// Options configure a solve. The zero value asks for dopri5 with
// torchdiffeq's defaults (rtol 1e-7, atol 1e-9), which take the same accepted
// steps as torchdiffeq's dopri5 on the same problem.
type Options struct {
	// Method names a built-in tableau (see MethodNames); "" means "dopri5".
	Method string
	// Tableau, if set, is used instead of Method.
	Tableau *Tableau

	// RTol and ATol are the relative and absolute tolerances of adaptive
	// step control: a step is accepted when the RMS norm of
	// err / (ATol + RTol·max(|y0|, |y1|)) is at most 1. Zero means 1e-7 and
	// 1e-9.
	RTol, ATol float64

	// Step, if positive, is a fixed step size: no error control, for any
	// method. Fixed-step methods (euler, midpoint, rk4, rk38) require it.
	// The steps land on every output time, StepTo time and jump (package
	// doc, "Fixed steps and stops").
	Step float64

	// MaxOrder is the Adams methods' highest order, as torchdiffeq's
	// max_order: the predictor uses at most MaxOrder − 1 past values of f.
	// 0 means 12, torchdiffeq's default; otherwise 4 to 12. Other methods
	// ignore it.
	MaxOrder int

	// StepControl is the adaptive step-size controller's settings, as
	// diffrax's stepsize_controller (its fields are promoted: opt.MaxSteps).
	StepControl
	// ErrorNorm says which elements the error norm covers and how.
	ErrorNorm
	// Stops are the times every solve steps exactly to.
	Stops

	// Quadrature, if positive, says the state's last Quadrature elements
	// are quadratures: f never reads them, and their derivative depends on
	// the rest of the state only (as the parameters' gradients in an
	// adjoint state). The explicit Runge–Kutta steps then leave them out of
	// the stage inputs (f gets a y that many elements shorter, but at the
	// stage whose input is the step's solution), and at stages whose
	// weights in the solution and in the error estimate are both zero
	// (dopri5's second) hand f a dy that many elements shorter: f must
	// write what it is given and skip the rest. Not with an Event, nor
	// with output times between the first and the last (dense output
	// reads every stage): then f gets whole states. The results are the
	// same to the bit.
	Quadrature int

	// Phase names the solve in errors ("forward", "backward"); "" means
	// "forward".
	Phase string
}

// StepControl configures the adaptive step-size controller of Options
// (diffrax's stepsize_controller): the first step, the bounds on steps,
// the number of steps, and the I or PI controller's factors. The zero
// value asks for the defaults below.
type StepControl struct {
	// FirstStep, if positive, is the first step size; else it is selected
	// from f at t0 (one extra evaluation), as in Hairer–Nørsett–Wanner.
	FirstStep float64
	// MinStep and MaxStep bound the magnitude of adaptive steps (0: no bound).
	// A step that must be smaller than MinStep is an underflow error.
	MinStep, MaxStep float64
	// MaxSteps bounds the number of attempted steps (accepted and rejected);
	// 0 means 10000. Exceeding it is an error.
	MaxSteps int

	// Safety, IFactor and DFactor shape the step-size update
	// h_new = h·min(IFactor, max(DFactor, Safety·ratio^(−1/order))). After an
	// accepted step DFactor is 1: the step never shrinks. Zero means 0.9,
	// 10 and 0.2.
	Safety, IFactor, DFactor float64
	// PCoeff turns the I controller into a PI controller: the factor is
	// multiplied by (ratio_prev/ratio)^(PCoeff/order), ratio_prev being the
	// error ratio of the previous accepted step. 0 (the default) is the
	// plain I controller of torchdiffeq.
	PCoeff float64
}

// ErrorNorm configures the error norm of Options: which elements of the
// state it covers and whether it is one RMS, the largest of parts' or the
// largest of rows'. The zero value is the RMS over the whole state.
type ErrorNorm struct {
	// ErrorLen, if positive, restricts the error norm to the first ErrorLen
	// elements of the state (a seminorm, as for the parameter part of an
	// adjoint state).
	ErrorLen int

	// ErrorParts, if set, splits the error norm: the state's first
	// elements are cut into consecutive parts of these lengths (their sum
	// at most the state's length; elements after them are left out, as
	// with ErrorLen, which must then be 0), and the norm is the largest of
	// the parts' RMS norms: torchdiffeq's mixed norm. The Adjoint mode's
	// backward solve uses it for the state, its adjoint and each
	// parameter's gradient.
	ErrorParts []int

	// ErrorRows, if positive, controls the error of each row of a batch
	// separately: the state is read as segments of ErrorRows rows of
	// ErrorRowLen elements each (a family's parts h, m, v, each [B, D]:
	// ErrorRows B, ErrorRowLen D), row r being the r-th row of every
	// segment, and the norm is the largest of the rows' RMS norms. A step
	// is then accepted only when every row's error is within the
	// tolerances, as it would be if the row were solved alone; with the
	// whole state's RMS norm a row's error may be up to √ErrorRows times
	// the tolerance, hidden among quieter rows. The state's length must
	// be a multiple of ErrorRows·ErrorRowLen; ErrorLen and ErrorParts
	// must be unset. A solve with it runs on the host, never on a device.
	ErrorRows, ErrorRowLen int
}

// Stops are times a solve steps exactly to, besides the output times.
type Stops struct {
	// StepTo lists times the solver steps exactly to (instead of
	// interpolating there). Outputs at these times are exact step ends.
	StepTo []float64
	// Jumps lists times where the dynamics are discontinuous (knots of a
	// piecewise input). The solver steps exactly to each and restarts there,
	// evaluating f again just after the jump.
	Jumps []float64
}

// StepInfo describes one attempted step to an OnStep hook. Y0 and Y1 are
// the solver's buffers, valid only during the call.
type StepInfo[T tensor.Float] struct {
	T, H     float64 // start time and (signed) step size
	End      float64 // end time: T+H, or exactly the stop the step lands on
	Accepted bool
	Ratio    float64 // error ratio (0 for fixed steps)
	Y0, Y1   []T     // state at T and at End
	// State0 and State1 are the same states as flat tensors in a solve
	// through SolveTensors: in a device solve (NewSolverOn) in the
	// engine's memory, else views of Y0 and Y1; nil in a Solve.
	// With Solver.StepStatesOnDevice set, a device solve leaves Y0 and Y1
	// nil and copies nothing to the host for the hook.
	State0, State1 *tensor.Tensor[T]
	// Phase is the solve's Options.Phase: "forward", or "backward" for an
	// ODE block's adjoint solve, whose state is [z, a, g_θ].
	Phase string

	geom stepGeom // where the step's stages were evaluated
}

// Stats counts the work of a solve.
type Stats struct {
	NFE      int // evaluations of f (a Rosenbrock method's Jacobians included)
	Accepted int // accepted steps
	Rejected int // rejected steps
	// Rosenbrock methods: Jacobians formed (each n + 1 evaluations of f,
	// by finite differences) and LU factorisations.
	Jacobians, LUs int
}

// Add returns the sum of two Stats.
func (s Stats) Add(o Stats) Stats {
	return Stats{NFE: s.NFE + o.NFE, Accepted: s.Accepted + o.Accepted, Rejected: s.Rejected + o.Rejected,
		Jacobians: s.Jacobians + o.Jacobians, LUs: s.LUs + o.LUs}
}

// Errors a solve can return, wrapped in a *SolveError. Test with errors.Is.
var (
	ErrStepUnderflow = errors.New("step size underflow")
	ErrMaxSteps      = errors.New("too many steps")
	ErrNonFinite     = errors.New("NaN or Inf in the state")
)

// SolveError is a failed solve: what went wrong, in which phase, and at what
// time.
type SolveError struct {
	Phase string  // "forward" or "backward" (Options.Phase)
	T     float64 // the time reached
	H     float64 // the last step size tried
	Err   error   // ErrStepUnderflow, ErrMaxSteps, ErrNonFinite or f's error
}

func (e *SolveError) Error() string {
	return fmt.Sprintf("odeblock: %s solve failed at t=%.9g (step %.3g): %v", e.Phase, e.T, e.H, e.Err)
}

func (e *SolveError) Unwrap() error { return e.Err }

// Solver integrates y' = f(t, y). It keeps its work buffers between solves,
// so reusing one Solver allocates nothing in steady state. A Solver is not
// safe for concurrent use.
type Solver[T tensor.Float] struct {
	// OnStep, if set, is called after every attempted step. Returning an
	// error stops the solve with it.
	OnStep func(StepInfo[T]) error
	// Event, if set, ends the solve where its function crosses zero (see
	// Event); EventTime then reports where.
	Event *Event[T]
	// StepStatesOnDevice, in a device solve, hands OnStep the step's states
	// only as tensors in the engine's memory (StepInfo.State0 and State1),
	// not copied to the host as Y0 and Y1.
	StepStatesOnDevice bool

	opt Options
	tb  *Tableau
	m   method[T] // tb's method, with its state
	ctl controller

	n          int
	k          [][]T   // stages
	kd         [][]T   // dense-output stages (Tableau.DenseC)
	kall       [][]T   // k then kd
	kdAt       float64 // the step start kd was formed for (NaN: none)
	y, y1, tmp []T
	fnext      []T  // f at the step end, for methods that are not FSAL
	own        []T  // the buffers' memory, when there is no shared slab
	shared     *[]T // a slab shared with other solvers used in turn
	base       *T   // the first element of the memory the buffers are in
	stops      []float64
	run        solveRun[T]  // the state of the solve under way
	counted    evalFunc[T]  // run.eval, which counts the evaluations
	comb       combiner[T]  // the stage sums, over an engine's workers when a block sets one
	keep       *denseLog[T] // if set, every accepted step's dense output is kept here
	dev        devMode[T]   // the device mode (useDevice, SolveTensors)
	onDev      bool         // the buffers are the device mode's
	// errBuf is the error norm's block of terms (a local array would
	// escape to the heap through the generic calls that fill it).
	errBuf [errBlock]T
	// rowSums are the rows' sums of squares of an ErrorRows norm.
	rowSums []float64
	// w are the dense output's weights; ks1 a combination of one vector
	// (arrays here: handed to the vector operations, they would escape).
	w   [16]float64
	ks1 [1][]T
}

// NewSolver returns a solver with the given options, or an error naming the
// option that is out of range.
func NewSolver[T tensor.Float](opt Options) (*Solver[T], error) {
	s := new(Solver[T])
	if err := s.Configure(opt); err != nil {
		return nil, err
	}
	return s, nil
}

// method returns the tableau opt names: Tableau, else Method's ("" is
// dopri5).
func (opt Options) MethodTableau() (*Tableau, error) {
	if opt.Tableau != nil {
		return opt.Tableau, nil
	}
	if opt.Method == "" {
		return Method("dopri5")
	}
	return Method(opt.Method)
}

// configure validates opt, fills in its defaults and makes it the solver's,
// keeping the work buffers (they are remade when the method's stages change).
func (s *Solver[T]) Configure(opt Options) error {
	tb, err := opt.MethodTableau()
	if err != nil {
		return err
	}
	if err := tb.validate(); err != nil {
		return err
	}
	if opt.RTol == 0 {
		opt.RTol = 1e-7
	}
	if opt.ATol == 0 {
		opt.ATol = 1e-9
	}
	if opt.Safety == 0 {
		opt.Safety = 0.9
	}
	if opt.IFactor == 0 {
		opt.IFactor = 10
	}
	if opt.DFactor == 0 {
		opt.DFactor = 0.2
	}
	if opt.MaxSteps == 0 {
		opt.MaxSteps = 10000
	}
	if opt.Phase == "" {
		opt.Phase = "forward"
	}
	if err := opt.validate(tb); err != nil {
		return err
	}
	if s.tb != nil && s.tb.Stages() != tb.Stages() {
		s.k = nil // remade by ensure
	}
	if s.tb != tb || s.m == nil {
		s.m = newMethod[T](tb)
		s.m.bind(s)
	}
	s.opt, s.tb = opt, tb
	s.ctl = newController(opt, tb)
	return nil
}

// validate checks options whose defaults are filled in, naming the first
// one out of range. Every float option must be a number: NaN compares false
// with everything and would slip past a plain range test, so each test is
// written to fail on NaN.
func (opt *Options) validate(tb *Tableau) error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	nonNeg := func(name string, x float64) error {
		if !(x >= 0) || !finite(x) {
			return fmt.Errorf("odeblock: %s must be finite and not negative, got %g", name, x)
		}
		return nil
	}
	switch {
	case !(opt.RTol > 0) || !finite(opt.RTol):
		return fmt.Errorf("odeblock: RTol must be positive and finite, got %g", opt.RTol)
	case !(opt.ATol > 0) || !finite(opt.ATol):
		return fmt.Errorf("odeblock: ATol must be positive and finite, got %g", opt.ATol)
	case !(opt.Step >= 0) || !finite(opt.Step):
		return fmt.Errorf("odeblock: Step must be positive and finite (or 0: adaptive), got %g", opt.Step)
	case !tb.Adaptive() && opt.Step == 0:
		return fmt.Errorf("odeblock: method %q has no error estimate: set a fixed Step", tb.Name)
	case opt.MaxOrder != 0 && (opt.MaxOrder < 4 || opt.MaxOrder > adamsMaxOrder):
		return fmt.Errorf("odeblock: MaxOrder must be 0 (12) or from 4 to %d, got %d", adamsMaxOrder, opt.MaxOrder)
	case opt.MaxSteps < 0:
		return fmt.Errorf("odeblock: MaxSteps must not be negative, got %d", opt.MaxSteps)
	case opt.ErrorLen < 0:
		return fmt.Errorf("odeblock: ErrorLen must not be negative, got %d", opt.ErrorLen)
	case opt.Quadrature < 0:
		return fmt.Errorf("odeblock: Quadrature must not be negative, got %d", opt.Quadrature)
	case len(opt.ErrorParts) > 0 && opt.ErrorLen != 0:
		return fmt.Errorf("odeblock: ErrorLen %d and ErrorParts both set; ErrorParts alone says which elements count", opt.ErrorLen)
	case opt.ErrorRows < 0 || opt.ErrorRows > 0 && opt.ErrorRowLen <= 0:
		return fmt.Errorf("odeblock: ErrorRows %d and ErrorRowLen %d: both must be positive to control each row's error (ErrorRows 0 for the whole state's norm)", opt.ErrorRows, opt.ErrorRowLen)
	case opt.ErrorRows > 0 && (opt.ErrorLen != 0 || len(opt.ErrorParts) > 0):
		return fmt.Errorf("odeblock: ErrorRows %d with ErrorLen %d or ErrorParts %v: the rows' norm covers the whole state, so neither may be set", opt.ErrorRows, opt.ErrorLen, opt.ErrorParts)
	case !(opt.MaxStep >= 0): // +Inf is allowed: no bound, as 0
		return fmt.Errorf("odeblock: MaxStep must not be negative or NaN, got %g", opt.MaxStep)
	}
	for _, o := range []struct {
		name string
		x    float64
	}{{"FirstStep", opt.FirstStep}, {"MinStep", opt.MinStep}, {"PCoeff", opt.PCoeff}} {
		if err := nonNeg(o.name, o.x); err != nil {
			return err
		}
	}
	switch {
	case opt.MaxStep > 0 && opt.MinStep > opt.MaxStep:
		return fmt.Errorf("odeblock: MinStep %g above MaxStep %g", opt.MinStep, opt.MaxStep)
	case !(opt.Safety > 0 && opt.Safety <= 1):
		return fmt.Errorf("odeblock: need 0 < Safety ≤ 1, got %g", opt.Safety)
	case !(opt.IFactor >= 1) || !finite(opt.IFactor):
		return fmt.Errorf("odeblock: need a finite IFactor ≥ 1, got %g", opt.IFactor)
	case !(opt.DFactor > 0 && opt.DFactor <= 1):
		return fmt.Errorf("odeblock: need 0 < DFactor ≤ 1, got %g", opt.DFactor)
	}
	for i, t := range opt.StepTo {
		if !finite(t) {
			return fmt.Errorf("odeblock: StepTo[%d] = %g is not a finite time", i, t)
		}
	}
	for i, t := range opt.Jumps {
		if !finite(t) {
			return fmt.Errorf("odeblock: Jumps[%d] = %g is not a finite time", i, t)
		}
	}
	for i, l := range opt.ErrorParts {
		if l <= 0 {
			return fmt.Errorf("odeblock: ErrorParts[%d] = %d; every part needs at least one element", i, l)
		}
	}
	return nil
}

// Tableau returns the solver's method.
func (s *Solver[T]) Tableau() *Tableau { return s.tb }

// Options returns the solver's options with defaults filled in.
func (s *Solver[T]) Options() Options { return s.opt }

// ensure carves the work buffers for a state of n elements: the stages, y,
// y1, tmp, and f at the step end for methods that are not FSAL. They come
// from the shared slab when there is one (a Block's forward and adjoint
// solvers take turns with one slab), else from the solver's own.
func (s *Solver[T]) ensure(n int) {
	stages := s.tb.Stages()
	dense := len(s.tb.DenseC)
	bufs := s.slabLen(1)
	need := bufs * n
	mem := s.own
	if s.shared != nil {
		mem = *s.shared
	}
	if !s.onDev && s.n == n && len(s.k) == stages && len(s.kd) == dense && len(mem) >= need && (n == 0 || &mem[0] == s.base) && (s.fnext != nil) == (bufs > stages+3+dense) {
		return
	}
	if len(mem) < need {
		mem = make([]T, need)
		if s.shared != nil {
			*s.shared = mem
		} else {
			s.own = mem
		}
	}
	s.n, s.onDev = n, false
	if n > 0 {
		s.base = &mem[0]
	}
	clear(s.dev.host) // views of the buffers carved before
	s.assign(func() []T {
		b := mem[:n:n]
		mem = mem[n:]
		return b
	})
}

// assign points the work buffers, in ensure's order — the stages, the
// dense-output stages, y, y1, tmp and, for a method that does not reuse
// its last stage, f at the step's end — at successive buffers from next.
func (s *Solver[T]) assign(next func() []T) {
	stages, dense := s.tb.Stages(), len(s.tb.DenseC)
	if len(s.k) != stages {
		s.k = make([][]T, stages)
	}
	for i := range s.k {
		s.k[i] = next()
	}
	s.kd = s.kd[:0]
	for range dense {
		s.kd = append(s.kd, next())
	}
	s.kall = append(append(s.kall[:0], s.k...), s.kd...)
	s.kdAt = math.NaN()
	s.y, s.y1, s.tmp = next(), next(), next()
	s.fnext = nil
	if s.slabLen(1) > stages+3+dense {
		s.fnext = next()
	}
}

// slabLen returns the length of the memory ensure takes for states of n
// elements with the configured method: its stages, dense-output stages,
// y, y1 and a scratch state, and f at the step's end for a method that does
// not reuse its last stage.
func (s *Solver[T]) slabLen(n int) int {
	stages := s.tb.Stages()
	bufs := stages + 3 + len(s.tb.DenseC)
	if !s.tb.FSAL || stages == 1 {
		bufs++
	}
	return bufs * n
}

// Solve integrates from ts[0] to ts[len−1] starting at y0 and writes the
// state at each ts[i] into out[i] (out[0] gets a copy of y0). ts must be
// strictly increasing or strictly decreasing. Outputs between steps come
// from the method's dense output; f is never evaluated outside the span of
// ts.
func (s *Solver[T]) Solve(f Func[T], y0 []T, ts []float64, out [][]T) (Stats, error) {
	return s.solveEval(func(_ evalKind, _ int, t float64, y, dy []T) error { return f(t, y, dy) }, y0, ts, out)
}

// solve is Solve with f told the purpose of each evaluation.
func (s *Solver[T]) solveEval(f evalFunc[T], y0 []T, ts []float64, out [][]T) (Stats, error) {
	dir, err := s.checkSolve(len(y0), ts, len(out))
	if err != nil {
		return Stats{}, err
	}
	for i, o := range out {
		if err := outputLen(i, len(o), len(y0)); err != nil {
			return Stats{}, err
		}
	}
	if !allFinite(y0) {
		return Stats{}, &SolveError{Phase: s.opt.Phase, T: ts[0], Err: ErrNonFinite}
	}
	s.ensure(len(y0))
	copy(s.y, y0)
	copy(out[0], y0)
	return s.loop(f, ts, out, dir)
}

// loop runs the solve whose state is in s.y and first output written:
// solveEval's and solveTensorsEval's common part (out is nil on the
// device, whose outputs are s.dev.out).
func (s *Solver[T]) loop(f evalFunc[T], ts []float64, out [][]T, dir float64) (Stats, error) {
	var err error
	s.setStops(ts, dir)
	s.ctl.reset()
	s.kdAt = math.NaN() // the dense stages of an earlier solve (or of another solver on the slab) are stale
	r := &s.run
	*r = solveRun[T]{s: s, f: f, ts: ts, out: out, dir: dir, t: ts[0], t0: ts[0], tEnd: ts[len(ts)-1], nextOut: 1}
	if s.Event != nil {
		if len(ts) != 2 && !s.Event.NonTerminal {
			return Stats{}, fmt.Errorf("odeblock: a solve with an Event takes two times (start and the latest end), got %d", len(ts))
		}
		if r.gPrev, err = s.Event.at(ts[0], s.y); err != nil {
			return Stats{}, &SolveError{Phase: s.opt.Phase, T: ts[0], Err: err}
		}
	}
	if s.counted == nil {
		s.counted = r.eval // bound to s.run: made once (a method value handed to the method interface escapes)
	}
	defer func() { r.f, r.ts, r.out = nil, nil, nil }() // keep nothing of this solve alive
	err = r.start()
	for err == nil && !r.done {
		err = r.attempt()
	}
	return r.st, err
}

// solveRun is the state of one solve: where it is, the step it will try
// next, what it has counted.
type solveRun[T tensor.Float] struct {
	s       *Solver[T]
	f       evalFunc[T]
	ts      []float64
	out     [][]T
	dir     float64 // +1 or −1
	tEnd    float64
	t, h    float64 // the time reached, and the size of the next step to try
	t0      float64 // where the next step's first stage was evaluated
	stop    int     // the next of s.stops
	nextOut int     // the first output not yet written
	steps   int     // steps attempted
	st      Stats
	done    bool

	lastNonFinite bool // the last step tried had NaN or Inf in it
	nonFinite     int  // steps rejected for NaN or Inf

	gPrev  float64 // the event function at the last accepted state
	eventT float64 // where the event happened, if eventHit
	hit    bool

	eventTs []float64 // a NonTerminal event's crossings
	eventYs [][]T
}

// eval evaluates f, counting it.
func (r *solveRun[T]) eval(kind evalKind, stage int, t float64, y, dy []T) error {
	r.st.NFE++
	return r.f(kind, stage, t, y, dy)
}

// fail returns err as a *SolveError at (t, h) (as it is, if it is one).
func (r *solveRun[T]) fail(t, h float64, err error) error {
	var se *SolveError
	if errors.As(err, &se) {
		return err
	}
	return &SolveError{Phase: r.s.opt.Phase, T: t, H: h, Err: err}
}

// start evaluates f at the start and picks the first step.
func (r *solveRun[T]) start() error {
	s := r.s
	if err := r.eval(evalStart, 0, r.t, s.y, s.k[0]); err != nil {
		return r.fail(r.t, 0, err)
	}
	h, err := s.firstStep(r.eval, r.t, r.tEnd, r.dir, s.k[0])
	if err != nil {
		return r.fail(r.t, 0, err)
	}
	r.h = h
	s.m.begin(s.bufs(), h)
	return nil
}

// attempt tries one step from r.t: taken to the next stop if it reaches
// it, then accepted or rejected (retried smaller).
func (r *solveRun[T]) attempt() error {
	s := r.s
	if r.steps >= s.opt.MaxSteps {
		return r.fail(r.t, r.h, fmt.Errorf("%w: %d steps did not reach t=%g", ErrMaxSteps, r.steps, r.tEnd))
	}
	r.steps++
	target := s.stops[r.stop]
	g := stepGeom{t: r.t, h: r.h, t0: r.t0}
	if rem := target - r.t; math.Abs(g.h) >= math.Abs(rem) || math.Abs(rem-g.h) <= 1e-9*math.Abs(g.h) {
		g.h = rem
	}
	g.end = r.t + g.h
	if tiny := 4 * eps * math.Max(math.Abs(r.t), math.Abs(r.t+g.h)); math.Abs(g.h) <= tiny {
		err := ErrStepUnderflow
		if r.lastNonFinite {
			err = ErrNonFinite
		}
		return r.fail(r.t, g.h, err)
	}
	reached := g.h == target-r.t
	if reached {
		g.end = target
		// A step that ends at a jump evaluates its end stages just
		// before it: the left limit of the dynamics.
		g.leftLimit = slices.Contains(s.opt.Jumps, target)
	}
	if err := s.m.step(s.bufs(), s.counted, g); err != nil {
		return r.fail(r.t, g.h, err)
	}
	ratio, accept := 0.0, true
	finite := s.ops().finite(s.y1)
	if s.opt.Step == 0 {
		ratio = s.m.errorRatio(s.bufs(), g.h)
		accept = ratio <= 1 && finite
	} else if !finite {
		// Named by the step's start, as adaptive methods name it.
		return r.fail(r.t, g.h, ErrNonFinite)
	}
	r.lastNonFinite = !finite || math.IsNaN(ratio)
	if s.OnStep != nil {
		si := StepInfo[T]{T: r.t, H: g.h, End: g.end, Accepted: accept, Ratio: ratio, Y0: s.y, Y1: s.y1, Phase: s.opt.Phase, geom: g}
		if s.dev.f != nil { // a solve through SolveTensors
			si.State0, si.State1 = s.dev.state(s.y), s.dev.state(s.y1)
		}
		if s.dev.on {
			if s.StepStatesOnDevice {
				si.Y0, si.Y1 = nil, nil
			} else {
				s.dev.hostRead(s.y, s.y1)
			}
		}
		if err := s.OnStep(si); err != nil {
			return r.fail(r.t, g.h, err)
		}
	}
	if !accept {
		r.st.Rejected++
		var err error
		if r.h, err = s.retryStep(r.t, g.h, ratio, r.lastNonFinite, &r.nonFinite); err != nil {
			return r.fail(r.t, g.h, err)
		}
		return nil
	}
	return r.accepted(g, ratio, reached)
}

// accepted moves the solve past the accepted step g: outputs, f at the
// step end, the next step's size, and the restart after a jump.
func (r *solveRun[T]) accepted(g stepGeom, ratio float64, reached bool) error {
	s := r.s
	r.st.Accepted++
	s.m.accept(s.bufs(), g, ratio)
	// f at the step end: the last stage (FSAL), else evaluated now when it
	// is needed next (another step, or dense output).
	f0, f1 := s.k[0], s.k[len(s.k)-1]
	needInterp := r.nextOut < len(r.ts) && (r.ts[r.nextOut]-g.end)*r.dir < 0 || s.Event != nil || s.keep != nil
	if !s.tb.FSAL && s.m.endSlope() {
		f1 = s.fnext
		if g.end != r.tEnd || needInterp {
			if err := r.eval(evalStepEnd, 0, g.end, s.y1, f1); err != nil {
				return r.fail(g.end, g.h, err)
			}
		}
	}
	if needInterp && len(s.kd) > 0 {
		if err := r.denseStages(g); err != nil {
			return r.fail(g.t, g.h, err)
		}
	}
	if s.Event != nil {
		if err := r.event(g, f0, f1); err != nil || r.hit {
			return err
		}
	}
	r.nextOut = r.emit(g, f0, f1)
	if s.keep != nil {
		s.m.log(s.bufs(), s.keep, g, f0, f1)
	}
	r.t, r.t0 = g.end, g.end
	s.y, s.y1 = s.y1, s.y
	if s.m.endSlope() {
		s.ops().copy(f0, f1)
	}
	if s.opt.Step == 0 {
		next := s.m.next(g.h, ratio, true)
		if g.h != r.h {
			// A step cut short to land on a stop does not shrink the next.
			next = math.Copysign(math.Max(math.Abs(next), math.Abs(r.h)), r.dir)
		}
		r.h = next
	}
	if !reached {
		return nil
	}
	if r.t == r.tEnd {
		r.done = true
		return nil
	}
	if slices.Contains(s.opt.Jumps, r.t) {
		r.t0 = math.Nextafter(r.t, r.t+r.dir)
		if err := r.eval(evalRestart, 0, r.t0, s.y, f0); err != nil {
			return r.fail(r.t, 0, err)
		}
		s.m.begin(s.bufs(), r.h)
	}
	r.stop++
	return nil
}

// firstStep returns the first step: Step for fixed steps, else FirstStep
// or the Hairer–Nørsett–Wanner selection (one evaluation), clamped to
// MinStep and MaxStep.
func (s *Solver[T]) firstStep(eval evalFunc[T], t, tEnd, dir float64, f0 []T) (float64, error) {
	if s.opt.Step != 0 {
		return dir * s.opt.Step, nil
	}
	h := dir * s.opt.FirstStep
	if s.opt.FirstStep == 0 {
		var err error
		if h, err = s.initialStep(eval, t, tEnd, dir, f0); err != nil {
			return 0, err
		}
	}
	return s.clampStep(h, dir), nil
}

// emit writes the outputs that the accepted step g reached: those inside
// it from the dense output, the one at its end from the state; it returns
// the first output not yet written.
func (r *solveRun[T]) emit(g stepGeom, f0, f1 []T) int {
	s, next := r.s, r.nextOut
	for next < len(r.ts) && (r.ts[next]-g.end)*r.dir < 0 {
		if s.dev.on {
			s.dev.interpolate(s, s.dev.out[next], g, r.ts[next], f0, f1)
		} else {
			s.m.interpolate(s.bufs(), r.out[next], g, r.ts[next], f0, f1)
		}
		next++
	}
	if next < len(r.ts) && r.ts[next] == g.end {
		if s.dev.on {
			s.dev.ew.Copy(s.dev.out[next], s.dev.view(s.y1))
		} else {
			copy(r.out[next], s.y1)
		}
		next++
	}
	return next
}

// retryStep returns the size to retry a step with after the step hStep
// from t was rejected with error ratio ratio (NaN, or nonFinite set, when
// the state was not finite), or the error that ends the solve: at the
// minimum step, or after too many steps without a finite value.
// nonFinite counts the rejections for NaN or Inf.
func (s *Solver[T]) retryStep(t, hStep, ratio float64, nonFiniteState bool, nonFinite *int) (float64, error) {
	if s.opt.MinStep > 0 && math.Abs(hStep) <= s.opt.MinStep {
		err := ErrStepUnderflow
		if nonFiniteState {
			err = ErrNonFinite
		}
		return 0, fmt.Errorf("%w: rejected at the minimum step", err)
	}
	if !nonFiniteState {
		return s.m.next(hStep, ratio, false), nil
	}
	// The dynamics have no finite value a step ahead. Shrinking may get
	// past it (an overflow from too long a step), but a state creeping
	// towards where they are undefined would take tiny steps until
	// MaxSteps: give up after a while.
	*nonFinite++
	if *nonFinite > maxNonFiniteRejections {
		return 0, fmt.Errorf("%w: %d steps from t=%.9g or near it gave NaN or Inf", ErrNonFinite, *nonFinite, t)
	}
	return s.m.next(hStep, math.NaN(), false), nil
}

// checkSolve returns the direction of the times (+1 or −1) after checking
// Solve's arguments: two or more finite, strictly monotone times, an output
// buffer for each (their lengths checked by outputLen), and ErrorParts that
// fit the state.
func (s *Solver[T]) checkSolve(n int, ts []float64, nOut int) (dir float64, err error) {
	if len(ts) < 2 {
		return 0, fmt.Errorf("odeblock: need at least two times, got %d", len(ts))
	}
	if nOut != len(ts) {
		return 0, fmt.Errorf("odeblock: %d output buffers for %d times", nOut, len(ts))
	}
	for i, t := range ts {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return 0, fmt.Errorf("odeblock: times must be finite; ts[%d]=%g", i, t)
		}
	}
	dir = 1.0
	if ts[1] < ts[0] {
		dir = -1
	}
	for i := 1; i < len(ts); i++ {
		if !((ts[i]-ts[i-1])*dir > 0) {
			return 0, fmt.Errorf("odeblock: times must be strictly monotone; ts[%d]=%g after ts[%d]=%g", i, ts[i], i-1, ts[i-1])
		}
	}
	if sum := partsLen(s.opt.ErrorParts); sum > n {
		return 0, fmt.Errorf("odeblock: ErrorParts cover %d elements, the state has %d", sum, n)
	}
	if s.opt.Quadrature > n {
		return 0, fmt.Errorf("odeblock: Quadrature is %d elements, the state has %d", s.opt.Quadrature, n)
	}
	if r, w := s.opt.ErrorRows, s.opt.ErrorRowLen; r > 0 && n%(r*w) != 0 {
		return 0, fmt.Errorf("odeblock: ErrorRows %d of ErrorRowLen %d elements do not tile a state of %d elements (not a multiple of %d)", r, w, n, r*w)
	}
	return dir, nil
}

// outputLen returns the error for output buffer i of length l when the
// state has n elements, or nil when l is n.
func outputLen(i, l, n int) error {
	if l != n {
		return fmt.Errorf("odeblock: output buffer %d has length %d, state has %d", i, l, n)
	}
	return nil
}

// setStops sets the stops of a solve over ts: the output times, StepTo and
// Jumps strictly inside the span, and the end, in the direction dir. A
// step never crosses a stop in fixed-step mode; in adaptive mode it never
// crosses StepTo, Jumps or the end (output times come from dense output).
func (s *Solver[T]) setStops(ts []float64, dir float64) {
	t0, tEnd := ts[0], ts[len(ts)-1]
	s.stops = s.stops[:0]
	inside := func(t float64) bool { return (t-t0)*dir > 0 && (tEnd-t)*dir > 0 }
	for _, t := range s.opt.StepTo {
		if inside(t) {
			s.stops = append(s.stops, t)
		}
	}
	for _, t := range s.opt.Jumps {
		if inside(t) {
			s.stops = append(s.stops, t)
		}
	}
	if s.opt.Step > 0 {
		s.stops = append(s.stops, ts[1:len(ts)-1]...)
	}
	s.stops = append(s.stops, tEnd)
	slices.SortFunc(s.stops, func(a, b float64) int {
		switch {
		case (a-b)*dir < 0:
			return -1
		case a == b:
			return 0
		}
		return 1
	})
	s.stops = slices.Compact(s.stops)
}

const eps = 0x1p-52

// maxNonFiniteRejections is how many steps a solve may reject for NaN or Inf
// before it fails with ErrNonFinite.
const maxNonFiniteRejections = 100

// partsLen returns the sum of the part lengths.
func partsLen(parts []int) int {
	n := 0
	for _, l := range parts {
		n += l
	}
	return n
}

// mixed returns norm(lo, hi) for the one range the error norm covers, or
// the largest over the ErrorParts (NaN if any is NaN).
func (s *Solver[T]) mixed(norm func(lo, hi int) float64) float64 {
	if s.opt.ErrorRows > 0 {
		return s.rowsNorm(norm)
	}
	if len(s.opt.ErrorParts) == 0 {
		n := s.n
		if s.opt.ErrorLen > 0 && s.opt.ErrorLen < n {
			n = s.opt.ErrorLen
		}
		return norm(0, n)
	}
	var m float64
	lo := 0
	for _, l := range s.opt.ErrorParts {
		r := norm(lo, lo+l)
		if math.IsNaN(r) {
			return r
		}
		m = math.Max(m, r)
		lo += l
	}
	return m
}

// rowsNorm returns the largest over the ErrorRows rows of the row's RMS
// norm (NaN if any is NaN): row r is the r-th run of ErrorRowLen elements
// of every segment, and its RMS the RMS of its runs' RMS norms, the runs
// being of one length.
func (s *Solver[T]) rowsNorm(norm func(lo, hi int) float64) float64 {
	rows, w := s.opt.ErrorRows, s.opt.ErrorRowLen
	segs := s.n / (rows * w)
	var m float64
	for r := range rows {
		q := rms(segs, func(p int) float64 {
			lo := (p*rows + r) * w
			return norm(lo, lo+w)
		})
		if math.IsNaN(q) {
			return q
		}
		m = math.Max(m, q)
	}
	return m
}

// sumSquares returns Σ x[i]² in T, in four interleaved sums (a single
// chain of additions would be bound by their latency).
func sumSquares[T tensor.Float](x []T) T {
	var s0, s1, s2, s3 T
	i := 0
	// Each square rounded (T(…)): Go fuses x*x + s into one rounding on
	// arm64 (and amd64 with GOAMD64=v3) unless the product is converted.
	for ; i+4 <= len(x); i += 4 {
		s0 += T(x[i] * x[i])
		s1 += T(x[i+1] * x[i+1])
		s2 += T(x[i+2] * x[i+2])
		s3 += T(x[i+3] * x[i+3])
	}
	for ; i < len(x); i++ {
		s0 += T(x[i] * x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// scaleError sets e[i] = e[i] / (atol + rtol·max(|y0[i]|, |y1[i]|)), in
// assembly for float32 and float64 on the avx512 and avx2 kernel paths (the
// same operations, rounded alike: TestScaleError).
func scaleError[T tensor.Float](e, y0, y1 []T, atol, rtol T) {
	y0, y1 = y0[:len(e)], y1[:len(e)]
	if len(e) == 0 {
		return
	}
	var z T
	if errScaleKernels != "go" {
		switch any(z).(type) {
		case float32:
			errScaleAsm((*float32)(unsafe.Pointer(&e[0])), (*float32)(unsafe.Pointer(&y0[0])), (*float32)(unsafe.Pointer(&y1[0])), len(e), float32(atol), float32(rtol))
			return
		case float64:
			errScale64Asm((*float64)(unsafe.Pointer(&e[0])), (*float64)(unsafe.Pointer(&y0[0])), (*float64)(unsafe.Pointer(&y1[0])), len(e), float64(atol), float64(rtol))
			return
		}
	}
	for i, ei := range e {
		e[i] = ei / (atol + T(rtol*max(absT(y0[i]), absT(y1[i])))) // the product rounded, on every GOARCH
	}
}

// absT returns |x|.
func absT[T tensor.Float](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// errBlock is the length of the blocks errorRatio forms the error in.
const errBlock = 256

// rms returns √(Σ r(i)² / n) without overflow or underflow in the squares:
// the terms are scaled by the largest |r(i)|. It is NaN when a term is NaN,
// +Inf when one is infinite.
func rms(n int, r func(int) float64) float64 {
	if n == 0 {
		return 0
	}
	// One plain pass first; the scaled two passes only when the squares
	// overflowed or may have underflowed.
	var sum float64
	for i := 0; i < n; i++ {
		q := r(i)
		sum += q * q
	}
	if sum >= 0x1p-900 && sum <= math.MaxFloat64 {
		return math.Sqrt(sum / float64(n))
	}
	if sum != sum {
		return sum
	}
	var big float64
	for i := 0; i < n; i++ {
		a := math.Abs(r(i))
		if a != a {
			return a
		}
		big = math.Max(big, a)
	}
	if big == 0 || math.IsInf(big, 1) {
		return big
	}
	sum = 0
	for i := 0; i < n; i++ {
		q := r(i) / big
		sum += q * q
	}
	return big * math.Sqrt(sum/float64(n))
}

// control returns the next step size after a step of size h with the
// given error ratio: the controller's factor (after an accepted step it
// notes the ratio, the PI controller's history), or DFactor after a step
// rejected for NaN or Inf; within MinStep and MaxStep.
func (s *Solver[T]) control(h, ratio float64, accepted bool) float64 {
	f := s.opt.DFactor
	if accepted || !math.IsNaN(ratio) {
		f = s.ctl.factor(ratio, accepted)
	}
	if accepted {
		s.ctl.accept(ratio)
	}
	return s.clampStep(h*f, math.Copysign(1, h))
}

// bufs returns the solver's work buffers as a method sees them.
func (s *Solver[T]) bufs() stepBufs[T] {
	return stepBufs[T]{n: s.n, y0: s.y, y1: s.y1, tmp: s.tmp, fnext: s.fnext, k: s.k, kd: s.kd, kall: s.kall}
}

// The Solver is its methods' env.

func (s *Solver[T]) tableau() *Tableau { return s.tb }
func (s *Solver[T]) opts() *Options    { return &s.opt }
func (s *Solver[T]) stats() *Stats     { return &s.run.st }

func (s *Solver[T]) device() *devMode[T] {
	if s.dev.on {
		return &s.dev
	}
	return nil
}

// clampStep bounds |h| by MaxStep and MinStep, keeping the sign dir.
func (s *Solver[T]) clampStep(h, dir float64) float64 {
	a := math.Abs(h)
	if s.opt.MaxStep > 0 {
		a = math.Min(a, s.opt.MaxStep)
	}
	if s.opt.MinStep > 0 {
		a = math.Max(a, s.opt.MinStep)
	}
	return math.Copysign(a, dir)
}

// initialStep selects the first step as in Hairer–Nørsett–Wanner (II.4) and
// torchdiffeq, with one evaluation of f. The probe point is kept inside
// [t0, tEnd] (torchdiffeq's may lie past tEnd when the span is short).
// The norms are scaled by atol + rtol·|y0| (and scaled again, rms, where
// their squares would overflow although everything is finite).
func (s *Solver[T]) initialStep(eval evalFunc[T], t0, tEnd, dir float64, f0 []T) (float64, error) {
	ops := s.ops()
	m, _ := s.normSpan()
	d0, _ := ops.scaledNorm(s.y, s.y)
	d1, f0ok := ops.scaledNorm(f0, s.y)
	h0 := 0.01 * d0 / d1
	if d0 < 1e-5 || d1 < 1e-5 {
		h0 = 1e-6
	}
	if math.IsNaN(h0) {
		// ‖y‖ and ‖f‖ both overflow relative to the tolerances: finite
		// dynamics the tolerances cannot be met on, or a non-finite f.
		if !f0ok {
			return 0, ErrNonFinite
		}
		return 0, ErrStepUnderflow
	}
	h0 = math.Min(h0, math.Abs(tEnd-t0))
	ops.axpy(s.tmp, s.y, dir*h0, f0)
	f1 := s.k[1%len(s.k)]
	if len(s.k) == 1 {
		f1 = s.fnext
	}
	tProbe := t0 + dir*h0
	if (tProbe-tEnd)*dir > 0 { // rounded past the end
		tProbe = tEnd
	}
	if err := eval(evalProbe, 0, tProbe, s.tmp, f1); err != nil {
		return 0, err
	}
	f1ok := m == 0 || ops.finite(f1[:m])
	s.ks1[0] = f0
	ops.linComb(s.tmp, f1, -1, one[:], s.ks1[:])
	s.ks1[0] = nil
	d2, _ := ops.scaledNorm(s.tmp, s.y)
	d2 /= h0
	var h1 float64
	if d1 <= 1e-15 && d2 <= 1e-15 {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		// torchdiffeq passes order−1 here, so the exponent is 1/order.
		h1 = math.Pow(0.01/math.Max(d1, d2), 1/float64(s.tb.estimateOrder()))
	}
	h := math.Min(100*h0, h1)
	switch {
	case math.IsNaN(h) || !f0ok || !f1ok:
		return 0, ErrNonFinite
	case h <= 0:
		// Finite dynamics, but the step the tolerances ask for is below
		// what float64 holds.
		return 0, ErrStepUnderflow
	}
	return dir * h, nil
}

// axpy sets dst += a·x.
func axpy[T tensor.Float](dst []T, a T, x []T) { tensor.AxpySlice(a, x, dst) }

func allFinite[T tensor.Float](x []T) bool {
	if errScaleKernels != "go" && len(x) > 0 {
		switch f := any(x).(type) {
		case []float32:
			return allFiniteAsm(&f[0], len(f))
		case []float64:
			return allFinite64Asm(&f[0], len(f))
		}
	}
	// v − v is 0 for a finite v and NaN for ±Inf and NaN, so a block is
	// finite when the sum of its v − v is 0: four independent sums, no
	// branch per element.
	const block = 1024
	for lo := 0; lo < len(x); lo += block {
		b := x[lo:min(lo+block, len(x))]
		var s0, s1, s2, s3 T
		i := 0
		for ; i+4 <= len(b); i += 4 {
			s0 += b[i] - b[i]
			s1 += b[i+1] - b[i+1]
			s2 += b[i+2] - b[i+2]
			s3 += b[i+3] - b[i+3]
		}
		for ; i < len(b); i++ {
			s0 += b[i] - b[i]
		}
		if s0+s1+s2+s3 != 0 {
			return false
		}
	}
	return true
}

// Solve integrates y' = f(t, y) from ts[0] with y(ts[0]) = y0 and returns the
// state at every time of ts (see Solver.Solve).
func Solve[T tensor.Float](f Func[T], y0 []T, ts []float64, opt Options) ([][]T, Stats, error) {
	s, err := NewSolver[T](opt)
	if err != nil {
		return nil, Stats{}, err
	}
	out := make([][]T, len(ts))
	for i := range out {
		out[i] = make([]T, len(y0))
	}
	st, err := s.Solve(f, y0, ts, out)
	return out, st, err
}
