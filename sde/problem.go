package sde

import (
	"fmt"
	"math"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock/integrate"
	"github.com/adamnode/adamnode/tensor"
)

// SDE is the right-hand side of a stochastic differential equation
//
//	dY = f(t, Y) dt + g(t, Y) ∘dW   (Stratonovich)   or   dY = f dt + g dW   (Itô)
//
// written with autograd ops, as odeblock.Dynamics is, so that a solve can
// be recorded on a tape and differentiated. Which calculus the equation is
// read in is the solver's (see the package documentation); the shape g
// returns is fixed by Options.Noise.
type SDE[T tensor.Float] interface {
	// Drift records f(t, y) on tp; the result has y's shape.
	Drift(tp *autograd.Tape[T], t float64, y autograd.Var[T]) autograd.Var[T]
	// Diffusion records g(t, y) on tp, shaped as Noise says.
	Diffusion(tp *autograd.Tape[T], t float64, y autograd.Var[T]) autograd.Var[T]
	// Params lists every parameter f and g read.
	Params() []*autograd.Param[T]
}

// Funcs adapts two functions and the parameters they read to an SDE.
type Funcs[T tensor.Float] struct {
	F, G       func(tp *autograd.Tape[T], t float64, y autograd.Var[T]) autograd.Var[T]
	Parameters []*autograd.Param[T]
}

// Drift calls F.
func (s Funcs[T]) Drift(tp *autograd.Tape[T], t float64, y autograd.Var[T]) autograd.Var[T] {
	return s.F(tp, t, y)
}

// Diffusion calls G.
func (s Funcs[T]) Diffusion(tp *autograd.Tape[T], t float64, y autograd.Var[T]) autograd.Var[T] {
	return s.G(tp, t, y)
}

// Params returns Parameters.
func (s Funcs[T]) Params() []*autograd.Param[T] { return s.Parameters }

// Noise says how the diffusion g(t, y) multiplies the Brownian increment
// ΔW, whose shape is the path's (Path.Shape), with n elements in y and m in
// ΔW.
type Noise int

const (
	// Diagonal noise: m = n and g has y's shape; every element has its own
	// Brownian motion, (g ΔW)_i = g_i ΔW_i. The Milstein-type methods
	// further assume that g_i depends on y_i alone (no other y_k), which
	// makes the noise commutative.
	Diagonal Noise = iota
	// Scalar noise: g has y's shape and m divides n; y, read as m
	// consecutive rows of n/m elements (a batch [B, ...] with a path of
	// shape [B] or [B, 1]), has one Brownian motion per row:
	// (g ΔW)_i = g_i ΔW_{row(i)}. Scalar noise is commutative.
	Scalar
	// General (matrix) noise: y is a batch [B, ...] (B = y's leading
	// dimension, or 1 for a vector y) of d = n/B elements per row, the path
	// holds m/B Brownian motions per row ([B, k] for k = m/B), and g has
	// shape [B, d, k] ([d, k] for a vector y):
	// (g ΔW)_{b,i} = Σ_j g_{b,i,j} ΔW_{b,j}.
	General
)

// String names the noise layout.
func (n Noise) String() string {
	switch n {
	case Diagonal:
		return "diagonal"
	case Scalar:
		return "scalar"
	case General:
		return "general"
	}
	return fmt.Sprintf("Noise(%d)", int(n))
}

// Calculus is the stochastic calculus an SDE is read in: Itô or
// Stratonovich. The two differ by the drift correction
// f_Strat = f_Itô − ½ Σ_j (∂g_{·j}/∂y) g_{·j}.
type Calculus int

const (
	// Ito: each step evaluates g at the step's start.
	Ito Calculus = iota + 1
	// Stratonovich: the midpoint rule; the calculus of ordinary chain rule.
	Stratonovich
)

// String names the calculus.
func (c Calculus) String() string {
	switch c {
	case Ito:
		return "Itô"
	case Stratonovich:
		return "Stratonovich"
	}
	return fmt.Sprintf("Calculus(%d)", int(c))
}

// ErrNonFinite is wrapped by the error of a solve in which the drift, the
// diffusion or the state took a NaN or an infinite value. It is
// odeblock.ErrNonFinite, the same value.
var ErrNonFinite = integrate.ErrNonFinite

// SolveError is a failed solve. It is the integrator's error (the
// phase, the start and size of the step that failed, and what went
// wrong: integrate.SolveError, which ODE solves return) with the SDE
// method named, so that errors.As finds a *integrate.SolveError in an SDE
// failure as in an ODE one, and a *SolveError for the method.
type SolveError struct {
	// SolveError's Phase is "forward", or "backward" for a failure in a
	// gradient's backward pass (Reversible, Adjoint, Checkpoint,
	// Recursive); T is the start of the step that failed and H its size
	// (0 where none was under way: a method's start, a whole backward
	// evaluation); Err what went wrong.
	integrate.SolveError
	Method string
}

// Error says "sde: <method> <phase> solve failed at t=<time> (step
// <size>): <what>".
func (e *SolveError) Error() string {
	return fmt.Sprintf("sde: %s %s solve failed at t=%g (step %.3g): %v", e.Method, e.Phase, e.T, e.H, e.Err)
}

// Unwrap returns the integrator's error, whose Unwrap returns what went
// wrong: errors.As finds a *integrate.SolveError, errors.Is the cause.
func (e *SolveError) Unwrap() error { return &e.SolveError }

// The phases of a solve, as in integrate.SolveError.Phase.
const (
	forward  = "forward"
	backward = "backward"
)

// problem is an SDE with its shapes checked: the noise's layout, and the
// reshapes that combine g with ΔW.
type problem[T tensor.Float] struct {
	sde    SDE[T]
	noise  Noise
	method string
	yShape []int
	n, m   int
	gShape []int // the diffusion's shape
	wShape []int // ΔW's shape as it multiplies g
	gView  []int // g's shape as it multiplies ΔW
	stats  *Stats
}

func newProblem[T tensor.Float](s SDE[T], noise Noise, method string, yShape, pathShape []int, st *Stats) (*problem[T], error) {
	p := &problem[T]{sde: s, noise: noise, method: method, yShape: yShape, n: numel(yShape), m: numel(pathShape), stats: st}
	bad := func(why string) error {
		return fmt.Errorf("sde: %s noise with state %v and Brownian path %v: %s", noise, yShape, pathShape, why)
	}
	switch noise {
	case Diagonal:
		if p.m != p.n {
			return nil, bad("diagonal noise needs one Brownian motion per element of the state")
		}
		p.gShape, p.gView, p.wShape = yShape, yShape, yShape
	case Scalar:
		if p.m == 0 || p.n%p.m != 0 {
			return nil, bad("scalar noise needs the path's number of elements to divide the state's")
		}
		p.gShape, p.gView, p.wShape = yShape, []int{p.m, p.n / p.m}, []int{p.m, 1}
	case General:
		b := 1
		if len(yShape) >= 2 {
			b = yShape[0]
		}
		if b == 0 || p.m%b != 0 {
			return nil, bad(fmt.Sprintf("general noise needs the path's elements to split into the batch's %d rows", b))
		}
		d, k := p.n/b, p.m/b
		if len(yShape) >= 2 {
			p.gShape = []int{b, d, k}
		} else {
			p.gShape = []int{d, k}
		}
		p.gView, p.wShape = []int{b, d, k}, []int{b, 1, k}
	default:
		return nil, fmt.Errorf("sde: unknown noise type %v", noise)
	}
	return p, nil
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// firstNonFinite returns the index of the first NaN or infinite element of
// x, or −1.
func firstNonFinite[T tensor.Float](x []T) int {
	// v·0 is 0 for a finite v and NaN for an infinity or a NaN, so the sum
	// of the products is 0 exactly when every element is finite: a loop
	// without branches, four sums at a time; the element is looked for
	// only when one is not.
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * 0
		s1 += x[i+1] * 0
		s2 += x[i+2] * 0
		s3 += x[i+3] * 0
	}
	for ; i < len(x); i++ {
		s0 += x[i] * 0
	}
	if s0+s1+s2+s3 == 0 {
		return -1
	}
	for i, v := range x {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return i
		}
	}
	return -1
}

// fail returns err as a *SolveError of phase for the step of size h
// from t.
func (p *problem[T]) fail(phase string, t, h float64, err error) error {
	return &SolveError{Method: p.method, SolveError: integrate.SolveError{Phase: phase, T: t, H: h, Err: err}}
}

// drift evaluates f(t, y) and checks its shape and values.
func (p *problem[T]) drift(tp *autograd.Tape[T], t float64, y autograd.Var[T]) (autograd.Var[T], error) {
	p.stats.NFE++
	f := p.sde.Drift(tp, t, y)
	if !sameShape(f.Shape(), p.yShape) {
		return f, fmt.Errorf("drift f(%g, y) has shape %v, want the state's %v", t, f.Shape(), p.yShape)
	}
	if i := firstNonFinite(f.Value().ReadData()); i >= 0 {
		return f, fmt.Errorf("drift f(%g, y) element %d is %v: %w", t, i, f.Value().ReadData()[i], ErrNonFinite)
	}
	return f, nil
}

// diffusion evaluates g(t, y) and checks its shape and values.
func (p *problem[T]) diffusion(tp *autograd.Tape[T], t float64, y autograd.Var[T]) (autograd.Var[T], error) {
	p.stats.DiffusionEvals++
	g := p.sde.Diffusion(tp, t, y)
	if !sameShape(g.Shape(), p.gShape) {
		return g, fmt.Errorf("diffusion g(%g, y) has shape %v, want %v for %s noise with state %v and %d Brownian motions", t, g.Shape(), p.gShape, p.noise, p.yShape, p.m)
	}
	if i := firstNonFinite(g.Value().ReadData()); i >= 0 {
		return g, fmt.Errorf("diffusion g(%g, y) element %d is %v: %w", t, i, g.Value().ReadData()[i], ErrNonFinite)
	}
	return g, nil
}

// fields evaluates and checks f(t, y), then g(t, y), as drift and
// diffusion do.
func (p *problem[T]) fields(tp *autograd.Tape[T], t float64, y autograd.Var[T]) (f, g autograd.Var[T], err error) {
	if f, err = p.drift(tp, t, y); err != nil {
		return f, g, err
	}
	g, err = p.diffusion(tp, t, y)
	return f, g, err
}

// apply returns g·w for a diffusion g and a Var w shaped as p.wShape
// (ΔW, or another quantity per Brownian motion such as (ΔW² − h)/2).
func (p *problem[T]) apply(g, w autograd.Var[T]) autograd.Var[T] {
	switch p.noise {
	case Diagonal:
		return autograd.Mul(g, w)
	case Scalar:
		return autograd.Reshape(autograd.Mul(autograd.Reshape(g, p.gView...), w), p.yShape...)
	default:
		return autograd.Reshape(autograd.SumAxis(autograd.Mul(autograd.Reshape(g, p.gView...), w), 2, false), p.yShape...)
	}
}

// applyT is apply's transpose on tensors: the cotangent of g given the
// cotangent a of g·w, a ⊗ w reduced to g's shape, written into dst.
func (p *problem[T]) applyT(dst, a, w *tensor.Tensor[T]) {
	d, av, wv := dst.Data(), a.ReadData(), w.ReadData()
	switch p.noise {
	case Diagonal:
		for i := range d {
			d[i] = av[i] * wv[i]
		}
	case Scalar:
		per := p.n / p.m
		for i := range d {
			d[i] = av[i] * wv[i/per]
		}
	default:
		b, dd, k := p.gView[0], p.gView[1], p.gView[2]
		for r := range b {
			for i := range dd {
				for j := range k {
					d[(r*dd+i)*k+j] = av[r*dd+i] * wv[r*k+j]
				}
			}
		}
	}
}

// finite checks a state after a step.
func (p *problem[T]) finite(y autograd.Var[T]) error {
	if i := firstNonFinite(y.Value().ReadData()); i >= 0 {
		return fmt.Errorf("state element %d is %v after the step: %w", i, y.Value().ReadData()[i], ErrNonFinite)
	}
	return nil
}
