package autograd

import (
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
	rep := GradCheckReport{AbsTol: opt.AbsTol, RelTol: opt.RelTol}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))

	// Keep the caller's gradients; compute ours from zero.
	saved := make([]*tensor.Tensor[float64], len(params))
	for i, p := range params {
		if p.Grad != nil && p.Grad.SameShape(p.Value) {
			saved[i] = p.Grad.Clone()
		}
		p.ZeroGrad()
	}
	defer func() {
		for i, p := range params {
			if saved[i] != nil {
				p.Grad.Copy(saved[i])
			} else {
				p.ZeroGrad()
			}
		}
	}()

	tp := NewTape(opt.Engine)
	y, err := f(tp)
	if err != nil {
		return rep, err
	}
	if y.Tape() != tp {
		return rep, fmt.Errorf("autograd: CheckGradients: f must return a Var recorded on the tape it is given")
	}
	var cot *tensor.Tensor[float64]
	if y.Len() == 1 {
		err = tp.Backward(y)
	} else {
		cot = tensor.RandN[float64](rng, 0, 1, y.Shape()...)
		err = tp.BackwardWith(y, cot)
	}
	if err != nil {
		return rep, err
	}
	analytic := make([]*tensor.Tensor[float64], len(params))
	for i, p := range params {
		analytic[i] = p.Grad.Clone()
	}
	tp.Release()

	eval := NewTape(opt.Engine)
	eval.SetNoGrad(true)
	var evalErr error
	loss := func() float64 {
		eval.Reset()
		y, err := f(eval)
		if err != nil {
			evalErr = err
			return math.NaN()
		}
		if cot == nil {
			return float64(y.Item())
		}
		return sumProd(y.Value(), cot)
	}

	floor := opt.AbsTol / opt.RelTol
	for i, p := range params {
		x := p.Value.Data()
		idx := make([]int, len(x))
		for k := range idx {
			idx[k] = k
		}
		if opt.MaxElems > 0 && len(idx) > opt.MaxElems {
			rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			idx = idx[:opt.MaxElems]
		}
		for _, k := range idx {
			orig := x[k]
			h := opt.Step * max(1, math.Abs(orig))
			x[k] = orig + h
			up := x[k]
			lp := loss()
			x[k] = orig - h
			down := x[k]
			lm := loss()
			x[k] = orig
			num := (lp - lm) / (up - down)
			a := analytic[i].Data()[k]
			abs := math.Abs(a - num)
			rel := abs / max(math.Abs(a), math.Abs(num), floor)
			if math.IsNaN(abs) {
				abs, rel = math.Inf(1), math.Inf(1)
			}
			el := GradElem{Param: p.Name, Analytic: a, Numeric: num, AbsErr: abs, RelErr: rel}
			if rep.Checked == 0 || abs > rep.WorstAbs.AbsErr {
				el.Index = unravel(k, p.Value)
				rep.WorstAbs = el
			}
			if rep.Checked == 0 || rel > rep.WorstRel.RelErr {
				el.Index = unravel(k, p.Value)
				rep.WorstRel = el
			}
			if rel > opt.RelTol {
				rep.Failed++
			}
			rep.Checked++
		}
	}
	if evalErr != nil {
		return rep, fmt.Errorf("autograd: CheckGradients: a perturbed evaluation failed: %w", evalErr)
	}
	if rep.Failed > 0 {
		return rep, fmt.Errorf("autograd: gradient check failed: %d of %d elements beyond tolerance (abs %.1g, rel %.1g); worst relative error %.3g at %v; worst absolute error %.3g at %v",
			rep.Failed, rep.Checked, opt.AbsTol, opt.RelTol, rep.WorstRel.RelErr, rep.WorstRel, rep.WorstAbs.AbsErr, rep.WorstAbs)
	}
	return rep, nil
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
