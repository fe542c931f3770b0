package autograd

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/adamnode/adamnode/tensor"
)

// GradCheckOptions configures CheckGradients. The zero value selects the
// defaults given with each field.
type GradCheckOptions struct {
	// Step is the relative finite-difference step: element x is moved to
	// x ± Step·max(1, |x|). Default 1e-6.
	Step float64
	// AbsTol and RelTol are the tolerances: an element passes when its
	// absolute error |a − n| ≤ AbsTol or its relative error
	// |a − n| / max(|a|, |n|) ≤ RelTol, for the analytic gradient a and the
	// numeric one n. Defaults 1e-8 and 1e-6.
	AbsTol, RelTol float64
	// MaxElems, when positive, checks at most that many elements of each
	// parameter, chosen at random; by default every element is checked.
	MaxElems int
	// Seed seeds the choice of elements and the random output cotangent.
	Seed uint64
	// Engine computes the function; by default the engine of
	// tensor.Default().
	Engine tensor.Engine[float64]
}

// GradElem is one checked gradient element.
type GradElem struct {
	Param    string  // the parameter's name
	Index    []int   // the element's coordinates in the parameter
	Analytic float64 // the gradient from Backward
	Numeric  float64 // the central-difference estimate
	AbsErr   float64 // |Analytic − Numeric|
	// RelErr is AbsErr / max(|Analytic|, |Numeric|, AbsTol/RelTol): the
	// relative error, measured against a floor of AbsTol/RelTol so that an
	// element passes exactly when RelErr ≤ RelTol.
	RelErr float64
}

func (e GradElem) String() string {
	return fmt.Sprintf("%s%v (analytic %.10g, numeric %.10g)", e.Param, e.Index, e.Analytic, e.Numeric)
}

// GradCheckReport summarises a gradient check.
type GradCheckReport struct {
	Checked  int      // elements compared
	Failed   int      // elements beyond both tolerances
	WorstAbs GradElem // the element with the largest absolute error
	WorstRel GradElem // the element with the largest relative error
	AbsTol   float64  // the tolerances used
	RelTol   float64
}

func (r GradCheckReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checked %d elements, %d beyond tolerance (abs %.1g, rel %.1g)", r.Checked, r.Failed, r.AbsTol, r.RelTol)
	if r.Checked > 0 {
		fmt.Fprintf(&b, "; worst absolute error %.3g at %v; worst relative error %.3g at %v", r.WorstAbs.AbsErr, r.WorstAbs, r.WorstRel.RelErr, r.WorstRel)
	}
	return b.String()
}

// CheckGradients compares the gradients that Backward computes for f with
// central differences, in float64, for every element of every parameter in
// params (inputs to be checked are made Params too). f builds its output on
// the tape it is given, reading the parameters through tp.Param; it is
// called once with gradients on and twice per element in no-grad mode, and
// must compute the same function each time (no randomness).
//
// A scalar output L is differentiated directly. For an output y with more
// than one element, L = Σ r ⊙ y with a fixed random r (seeded by
// opt.Seed), which checks the whole Jacobian against one projection.
//
// The numeric derivative of element x is (L(x+h) − L(x−h)) / (2h) with
// h = Step·max(1, |x|). It returns a report with the worst absolute and
// relative errors, naming the parameter and element, and an error when any
// element fails both tolerances. Parameter values and gradients are left as
// they were. Call it from a test:
//
//	rep, err := autograd.CheckGradients(f, params, autograd.GradCheckOptions{})
//	if err != nil {
//		t.Fatal(err)
//	}
//
// f may also return an error with its output — a model whose forward pass
// can fail, as an ODE block's — func(tp) (Var, error); an error from it
// ends the check with that error.
func CheckGradients[F LossFunc](f F, params []*Param[float64], opt GradCheckOptions) (GradCheckReport, error) {
	return checkGradients(lossOf(f), params, opt)
}

// LossFunc is the function CheckGradients checks: its output recorded on
// the given tape, with or without an error.
type LossFunc interface {
	func(tp *Tape[float64]) Var[float64] | func(tp *Tape[float64]) (Var[float64], error)
}

// lossOf returns f as a function returning an error.
func lossOf[F LossFunc](f F) func(tp *Tape[float64]) (Var[float64], error) {
	switch f := any(f).(type) {
	case func(tp *Tape[float64]) Var[float64]:
		return func(tp *Tape[float64]) (Var[float64], error) { return f(tp), nil }
	case func(tp *Tape[float64]) (Var[float64], error):
		return f
	}
	panic("unreachable")
}

func checkGradients(f func(tp *Tape[float64]) (Var[float64], error), params []*Param[float64], opt GradCheckOptions) (GradCheckReport, error) {
	opt = opt.withDefaults()
	rep := GradCheckReport{AbsTol: opt.AbsTol, RelTol: opt.RelTol}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	defer keepGrads(params)()
	analytic, cot, err := analyticGrads(f, params, opt.Engine, rng)
	if err != nil {
		return rep, err
	}
	loss, evalErr := perturbedLoss(f, opt.Engine, cot)
	floor := opt.AbsTol / opt.RelTol
	for i, p := range params {
		x := p.Value.Data()
		for _, k := range elemsToCheck(len(x), opt.MaxElems, rng) {
			orig := x[k]
			h := opt.Step * max(1, math.Abs(orig))
			x[k] = orig + h
			up := x[k]
			lp := loss()
			x[k] = orig - h
			down := x[k]
			lm := loss()
			x[k] = orig
			rep.add(p, k, analytic[i].Data()[k], (lp-lm)/(up-down), floor)
		}
	}
	if *evalErr != nil {
		return rep, fmt.Errorf("autograd: CheckGradients: a perturbed evaluation failed: %w", *evalErr)
	}
	if rep.Failed > 0 {
		return rep, fmt.Errorf("autograd: gradient check failed: %d of %d elements beyond tolerance (abs %.1g, rel %.1g); worst relative error %.3g at %v; worst absolute error %.3g at %v",
			rep.Failed, rep.Checked, opt.AbsTol, opt.RelTol, rep.WorstRel.RelErr, rep.WorstRel, rep.WorstAbs.AbsErr, rep.WorstAbs)
	}
	return rep, nil
}

// keepGrads zeroes the parameters' gradients, for the check to compute its
// own from zero, and returns the function that puts the caller's back.
func keepGrads(params []*Param[float64]) (restore func()) {
	saved := make([]*tensor.Tensor[float64], len(params))
	for i, p := range params {
		if p.Grad != nil && p.Grad.SameShape(p.Value) {
			saved[i] = p.Grad.Clone()
		}
		p.ZeroGrad()
	}
	return func() {
		for i, p := range params {
			if saved[i] != nil {
				p.Grad.Copy(saved[i])
			} else {
				p.ZeroGrad()
			}
		}
	}
}

// analyticGrads records f once with gradients and returns Backward's
// gradient of every parameter, and the fixed random cotangent r of L =
// Σ r ⊙ y for an output y of more than one element (nil for a scalar).
func analyticGrads(f func(tp *Tape[float64]) (Var[float64], error), params []*Param[float64], eng tensor.Engine[float64], rng *rand.Rand) ([]*tensor.Tensor[float64], *tensor.Tensor[float64], error) {
	tp := NewTape(eng)
	defer tp.Release()
	y, err := f(tp)
	if err != nil {
		return nil, nil, err
	}
	if y.Tape() != tp {
		return nil, nil, fmt.Errorf("autograd: CheckGradients: f must return a Var recorded on the tape it is given")
	}
	var cot *tensor.Tensor[float64]
	if y.Len() != 1 {
		cot = tensor.RandN[float64](rng, 0, 1, y.Shape()...)
	}
	switch {
	case !y.RequiresGrad():
		// A constant (a derivative of a linear function): every analytic
		// gradient is zero, which the differences must confirm.
	case cot == nil:
		err = tp.Backward(y)
	default:
		err = tp.BackwardWith(y, cot)
	}
	if err != nil {
		return nil, nil, err
	}
	analytic := make([]*tensor.Tensor[float64], len(params))
	for i, p := range params {
		analytic[i] = p.Grad.Clone()
	}
	return analytic, cot, nil
}

// perturbedLoss returns L of f's output at the parameters' current values
// (NaN when f fails, whose first error goes to *err). The evaluations
// record with gradients on (and never run Backward): f may take gradients
// inside (Grad), as a gradient penalty or CheckHigherOrder's levels do.
func perturbedLoss(f func(tp *Tape[float64]) (Var[float64], error), eng tensor.Engine[float64], cot *tensor.Tensor[float64]) (loss func() float64, err *error) {
	eval := NewTape(eng)
	err = new(error)
	return func() float64 {
		eval.Reset()
		y, ferr := f(eval)
		if ferr != nil {
			*err = ferr
			return math.NaN()
		}
		if cot == nil {
			return float64(y.Item())
		}
		return sumProd(y.Value(), cot)
	}, err
}

// elemsToCheck returns the indices of the n elements of a parameter to
// check: all, or maxElems of them drawn from rng when maxElems is set and
// smaller.
func elemsToCheck(n, maxElems int, rng *rand.Rand) []int {
	idx := make([]int, n)
	for k := range idx {
		idx[k] = k
	}
	if maxElems > 0 && n > maxElems {
		rng.Shuffle(n, func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		idx = idx[:maxElems]
	}
	return idx
}

// add records the check of element k of p, its analytic and numeric
// derivatives, in the report: its errors (the relative one against
// max(|analytic|, |numeric|, floor); NaN counts as infinite), the worst
// elements so far, and whether it failed.
func (r *GradCheckReport) add(p *Param[float64], k int, a, num, floor float64) {
	abs := math.Abs(a - num)
	rel := abs / max(math.Abs(a), math.Abs(num), floor)
	if math.IsNaN(abs) {
		abs, rel = math.Inf(1), math.Inf(1)
	}
	el := GradElem{Param: p.Name, Analytic: a, Numeric: num, AbsErr: abs, RelErr: rel}
	if r.Checked == 0 || abs > r.WorstAbs.AbsErr {
		el.Index = unravel(k, p.Value)
		r.WorstAbs = el
	}
	if r.Checked == 0 || rel > r.WorstRel.RelErr {
		el.Index = unravel(k, p.Value)
		r.WorstRel = el
	}
	if rel > r.RelTol {
		r.Failed++
	}
	r.Checked++
}

// CheckHigherOrder checks the derivatives of f up to the given order (at
// least 1) against central differences of the derivatives one order below,
// in float64: order 1 is CheckGradients(f); order k+1 checks, by
// CheckGradients, the function θ ↦ Σ_j r_jᵀ·∂(cᵀ·D_k)/∂θ_j built with
// Grad(…, CreateGraph: true), where D_k is the k-th level (f itself for
// k = 1) and c and r_j are fixed random projections seeded by opt.Seed. So
// Backward through the recorded gradients — second derivatives, and third
// at order 3 — is compared with differences of the recorded gradients'
// values, which order k has already checked.
//
// It returns one report per order, and the error of the first order that
// fails (naming it). f is as for CheckGradients and may use Grad itself.
// Tolerances apply at every order; finite differences of a derivative lose
// accuracy with each order, so check third derivatives of smooth, well
// scaled functions.
func CheckHigherOrder[F LossFunc](f F, params []*Param[float64], order int, opt GradCheckOptions) ([]GradCheckReport, error) {
	if order < 1 {
		panic(usage("CheckHigherOrder: order %d, want at least 1", order))
	}
	opt = opt.withDefaults()
	level := lossOf(f)
	var reps []GradCheckReport
	for k := 1; ; k++ {
		rep, err := checkGradients(level, params, opt)
		reps = append(reps, rep)
		if err != nil {
			return reps, fmt.Errorf("order %d: %w", k, err)
		}
		if k == order {
			return reps, nil
		}
		next, err := gradLevel(level, params, opt, opt.Seed+uint64(k))
		if err != nil {
			return reps, fmt.Errorf("order %d: %w", k+1, err)
		}
		level = next
	}
}

// withDefaults fills in the zero fields of opt.
func (opt GradCheckOptions) withDefaults() GradCheckOptions {
	if opt.Step <= 0 {
		opt.Step = 1e-6
	}
	if opt.AbsTol <= 0 {
		opt.AbsTol = 1e-8
	}
	if opt.RelTol <= 0 {
		opt.RelTol = 1e-6
	}
	if opt.Engine == nil {
		opt.Engine = tensor.EngineFor[float64](tensor.Default())
	}
	return opt
}

// gradLevel returns next(θ) = Σ_j r_jᵀ·∂(cᵀ·f)/∂θ_j with fixed random c
// and r_j drawn from seed, recorded with CreateGraph, after checking its
// value at θ — the derivative of cᵀ·f along r — against a central
// difference of cᵀ·f (Backward through next is then checked against
// differences of these values).
func gradLevel(f func(tp *Tape[float64]) (Var[float64], error), params []*Param[float64], opt GradCheckOptions, seed uint64) (func(tp *Tape[float64]) (Var[float64], error), error) {
	rng := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	tp := NewTape(opt.Engine)
	y, err := f(tp)
	if err != nil {
		return nil, err
	}
	c := tensor.RandN[float64](rng, 0, 1, y.Shape()...)
	var r []*tensor.Tensor[float64]
	for _, p := range params {
		r = append(r, tensor.RandN[float64](rng, 0, 1, p.Value.Shape()...))
	}
	next := func(tp *Tape[float64]) (Var[float64], error) {
		y, err := f(tp)
		if err != nil {
			return Var[float64]{}, err
		}
		if !y.RequiresGrad() {
			return tp.Scalar(0), nil // a constant: every derivative is zero
		}
		gs, err := Grad([]Var[float64]{y}, nil, GradOptions[float64]{Cotangents: []Var[float64]{tp.Const(c)}, Params: params, CreateGraph: true})
		if err != nil {
			return Var[float64]{}, err
		}
		var s Var[float64]
		for j, g := range gs.Params {
			s = accumulateVar(s, Sum(Mul(g, tp.Const(r[j]))))
		}
		return s, nil
	}

	if err := checkAlong(tp, f, next, params, c, r, opt); err != nil {
		return nil, err
	}
	return next, nil
}

// checkAlong returns an error unless next's value at θ, the derivative of
// cᵀf along r that Grad recorded, is the central difference
// (cᵀf(θ + h·r) − cᵀf(θ − h·r)) / 2h within opt's tolerances; the
// parameters are restored.
func checkAlong(tp *Tape[float64], f, next func(tp *Tape[float64]) (Var[float64], error), params []*Param[float64], c *tensor.Tensor[float64], r []*tensor.Tensor[float64], opt GradCheckOptions) error {
	eval := func(fn func(tp *Tape[float64]) (Var[float64], error), proj *tensor.Tensor[float64]) (float64, error) {
		tp.Reset()
		v, err := fn(tp)
		if err != nil {
			return 0, err
		}
		if proj == nil {
			return float64(v.Item()), nil
		}
		return sumProd(v.use("CheckHigherOrder").value, proj), nil
	}
	tp.Reset()
	got, err := eval(next, nil)
	if err != nil {
		return err
	}
	scale := 1.0
	for _, p := range params {
		for _, v := range p.Value.Data() {
			scale = max(scale, math.Abs(v))
		}
	}
	h := opt.Step * scale
	shift := func(a float64) {
		for j, p := range params {
			d, rd := p.Value.Data(), r[j].Data()
			for i := range d {
				d[i] += a * rd[i]
			}
		}
	}
	orig := make([]*tensor.Tensor[float64], len(params))
	for j, p := range params {
		orig[j] = p.Value.Clone()
	}
	restore := func() {
		for j, p := range params {
			p.Value.Copy(orig[j])
		}
	}
	shift(h)
	up, err1 := eval(f, c)
	restore()
	shift(-h)
	down, err2 := eval(f, c)
	restore()
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	num := (up - down) / (2 * h)
	if abs := math.Abs(got - num); abs > opt.AbsTol && abs > opt.RelTol*max(math.Abs(got), math.Abs(num)) {
		return fmt.Errorf("autograd: the gradient recorded by Grad is wrong: along a random direction it is %.10g, central differences give %.10g", got, num)
	}
	return nil
}

// unravel returns the coordinates of flat index k in x's shape.
func unravel[T tensor.Float](k int, x *tensor.Tensor[T]) []int {
	idx := make([]int, x.Rank())
	for d := x.Rank() - 1; d >= 0; d-- {
		n := x.Dim(d)
		idx[d] = k % n
		k /= n
	}
	return idx
}
