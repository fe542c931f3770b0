package autograd

import (
	"errors"
	"fmt"

	"github.com/adamnode/adamnode/tensor"
)

// Func is a differentiable function of the Vars in, recorded on tp. It reads
// parameters through tp.Param. It must return a Var recorded on tp.
type Func[T tensor.Float] func(tp *Tape[T], in []Var[T]) Var[T]

// VJPDest says where Pullback.VJP puts the cotangents it computes.
type VJPDest[T tensor.Float] struct {
	// Inputs[i] receives the cotangent of input i, shaped like that input.
	// A nil slice or a nil entry treats the input as a constant (its
	// cotangent is not computed).
	Inputs []*tensor.Tensor[T]

	// When Params is non-nil, the gradient of Params[j] goes into
	// ParamGrads[j] (shaped like its value) and Param.Grad is left alone; a
	// parameter the function uses that is not listed panics, since silently
	// dropping it would be wrong. When Params is nil, the parameters are
	// constants and no gradient of theirs is computed — as
	// torch.autograd.grad leaves .grad alone — unless ParamGrad asks for
	// them in Param.Grad.
	Params     []*Param[T]
	ParamGrads []*tensor.Tensor[T]

	// ParamGrad, with Params nil, adds the gradients of the parameters the
	// function uses into their Param.Grad (accumulating, as Backward does):
	// what a custom node that computes its parameters' gradients itself,
	// outside any tape's redirection, asks for.
	ParamGrad bool

	// SkipParams leaves the gradients of Params out: f reads them as
	// constants and ParamGrads must be nil (a parameter f reads that is not
	// in Params still panics). What a caller that needs only the input
	// cotangents at this point asks for: the weight-gradient products are
	// not computed.
	SkipParams bool

	// Accumulate adds into Inputs and ParamGrads. Without it they are set
	// (zeroed first). Param.Grad (ParamGrad) is always accumulated into.
	Accumulate bool
}

// ErrVJPOfRecorded is the error of a VJP taken at the value of a Var that
// a tape is recording gradients for (Var.Value of a Var that requires a
// gradient, before that tape's Backward): the VJP's result can only enter
// that pass as a constant, so the pass's gradient would silently miss its
// derivative (a second derivative: what a continuous normalizing flow's
// trace of ∂f/∂z needs). Pullback.VJP returns it (wrapped, with the
// values computed all the same), and the recording tape's Backward returns
// it too, so the pass cannot yield a wrong gradient even if the VJP's error
// is ignored. Grad with CreateGraph records such a VJP on the same tape,
// differentiably; to use one as a constant on purpose (a diagnostic), take
// it at a copy of the value (Tensor.Clone).
var ErrVJPOfRecorded = errors.New("autograd: a VJP was taken at the value of a Var being recorded for gradients: its result would enter the pass as a constant and drop its own derivative; record it on the same tape with Grad (CreateGraph), JVP, HVP or TraceExact instead")

// Pullback evaluates functions on an inner tape of its own and pulls
// cotangents back through them (vector–Jacobian products). It reuses its
// tape and buffers from call to call, so repeated calls at the same shapes
// allocate nothing, and it never touches any other tape: it may be called
// from a custom node's backward while an outer tape's Backward is running.
// This is what an adjoint ODE solve calls at every backward function
// evaluation. A Pullback is not safe for concurrent use, nor for use by f
// itself (nest with another Pullback).
//
// f may differentiate part of itself: Grad inside f records the gradients
// it returns (as with CreateGraph) whenever the pullback's tape records
// (Tape.SetGradsRecorded), since the VJP differentiates them again, and
// works in Value too (see there).
type Pullback[T tensor.Float] struct {
	tape *Tape[T]
	in   []Var[T]
	busy bool
	// recordValues: Value records gradients (f called Grad).
	recordValues bool
}

// NewPullback returns a Pullback computing with eng.
func NewPullback[T tensor.Float](eng tensor.Engine[T]) *Pullback[T] {
	t := NewTape(eng)
	t.gradsRecorded = true
	return &Pullback[T]{tape: t}
}

// Engine returns the engine the pullback computes with.
func (pb *Pullback[T]) Engine() tensor.Engine[T] { return pb.tape.eng }

// VJP evaluates y = f(x) at x = at on the pullback's tape and pulls the
// cotangent cot (shaped like y) back through it:
//
//	dst.Inputs[i]     (+)= cotᵀ · ∂y/∂x_i
//	gradient of θ     (+)= cotᵀ · ∂y/∂θ   for each parameter θ that f uses
//
// with the destinations chosen by dst (see VJPDest). It returns y's value,
// owned by the pullback and valid until its next call. at and cot are only
// read. f's parameters are read through tp.Param as usual.
//
// It returns the error of a custom node inside f that failed (Custom); the
// cotangents are then incomplete. MustVJP panics instead. An input that is
// the value of a Var another tape is recording gradients for makes it
// return ErrVJPOfRecorded, and that tape's Backward fail with it.
func (pb *Pullback[T]) VJP(f Func[T], at []*tensor.Tensor[T], cot *tensor.Tensor[T], dst VJPDest[T]) (*tensor.Tensor[T], error) {
	if pb.busy {
		panic(usage("Pullback.VJP called from within its own function; use a separate Pullback for a nested VJP"))
	}
	pb.busy = true
	defer func() { pb.busy = false }()
	dst.prepare(at, pb.tape.ew)
	recorded := pb.recordedInput(at)

	t := pb.tape
	t.Reset()
	switch {
	case dst.SkipParams:
		t.redirect(dst.Params, nil, true)
	case dst.Params != nil:
		t.RedirectParams(dst.Params, dst.ParamGrads)
	case !dst.ParamGrad:
		t.constParams = true
	}
	pb.in = pb.in[:0]
	for i, x := range at {
		var v Var[T]
		if dst.Inputs != nil && dst.Inputs[i] != nil {
			v = t.inputInto(x, dst.Inputs[i])
		} else {
			v = t.Const(x)
		}
		pb.in = append(pb.in, v)
	}
	y := f(t, pb.in)
	clear(pb.in)
	if y.t != t {
		panic(usage("VJP: the function must return a Var recorded on the tape it was given"))
	}
	ye := y.use("VJP")
	if cot == nil || !cot.SameShape(ye.value) {
		var cs []int
		if cot != nil {
			cs = cot.Shape()
		}
		panic(&tensor.ShapeError{Op: "autograd.VJP", Msg: fmt.Sprintf("cotangent of shape %v does not match output shape %v", cs, ye.value.Shape())})
	}
	err := t.backward(ye, cot)
	t.clearRedirect()
	if err == nil {
		err = recorded
	}
	return ye.value, err
}

// recordedInput returns nil, or an error wrapping ErrVJPOfRecorded after
// poisoning the recording tape, if an input is the value of a Var that
// another tape is recording gradients for (marked by Var.Value). The mark
// names the tape, not its pass: a tensor handed out in an earlier pass of
// a tape that records again counts as recorded (a tape's values are not to
// be kept past its Reset; a leaf's tensor is usually its leaf again).
func (pb *Pullback[T]) recordedInput(at []*tensor.Tensor[T]) error {
	for i, x := range at {
		if x == nil {
			continue
		}
		rt, ok := x.Marked().(*Tape[T])
		if !ok || rt == pb.tape || rt.noGrad || rt.spent || rt.running {
			continue
		}
		err := fmt.Errorf("%w: input %d of shape %v; take the VJP at a copy (Clone) to use its result as a constant on purpose", ErrVJPOfRecorded, i, x.Shape())
		if rt.poison == nil {
			rt.poison = err
		}
		return err
	}
	return nil
}

// prepare checks the destinations against the inputs at (misuse panics,
// naming what is wrong) and zeroes them unless Accumulate: where their
// values are, with the engine's Elementwise (ew) for a destination whose
// newer values are in its memory (not copied to the host to be zeroed
// there), on the host for one that is there (which a host pass, as a
// filter gradient's scatter, may then write without a copy).
func (dst VJPDest[T]) prepare(at []*tensor.Tensor[T], ew tensor.Elementwise[T]) {
	zero := func(g *tensor.Tensor[T]) {
		if ew != nil && g.Storage().DeviceNewer() {
			ew.Fill(g, 0)
		} else {
			g.Zero()
		}
	}
	if dst.Inputs != nil && len(dst.Inputs) != len(at) {
		panic(usage("VJP: %d input destinations for %d inputs", len(dst.Inputs), len(at)))
	}
	if dst.SkipParams {
		if dst.ParamGrads != nil {
			panic(usage("VJP: SkipParams with parameter destinations"))
		}
	} else if len(dst.Params) != len(dst.ParamGrads) {
		panic(usage("VJP: %d parameters but %d parameter destinations", len(dst.Params), len(dst.ParamGrads)))
	}
	if dst.ParamGrad && dst.Params != nil {
		panic(usage("VJP: ParamGrad with a list of Params (their gradients go to ParamGrads)"))
	}
	for i, g := range dst.Inputs {
		if g != nil && !g.SameShape(at[i]) {
			panic(&tensor.ShapeError{Op: "autograd.VJP", Msg: fmt.Sprintf("destination of shape %v for input %d of shape %v", g.Shape(), i, at[i].Shape())})
		}
		if g != nil && !dst.Accumulate {
			zero(g)
		}
	}
	for j, p := range dst.Params {
		if dst.SkipParams {
			if p == nil {
				panic(usage("VJP: parameter %d is nil", j))
			}
			continue
		}
		g := dst.ParamGrads[j]
		if p == nil || g == nil || !g.SameShape(p.Value) {
			panic(usage("VJP: parameter %d (%v) has no destination shaped like its value", j, paramName(p)))
		}
		if !dst.Accumulate {
			zero(g)
		}
	}
}

// MustVJP is VJP for functions whose custom nodes cannot fail: it panics
// with the error if one does.
func (pb *Pullback[T]) MustVJP(f Func[T], at []*tensor.Tensor[T], cot *tensor.Tensor[T], dst VJPDest[T]) *tensor.Tensor[T] {
	y, err := pb.VJP(f, at, cot, dst)
	if err != nil {
		panic(err)
	}
	return y
}

// Value evaluates y = f(x) at x = at on the pullback's tape in no-grad
// mode and returns y's value, owned by the pullback and valid until its
// next call. Nothing is recorded for a backward pass; the point is the
// buffers: evaluations and VJPs of the same f share them, where a separate
// no-grad tape would keep a second set (an ODE solve evaluates f forward,
// then pulls back through it in the adjoint solve).
//
// A function that differentiates part of itself with Grad (a Hamiltonian
// field's ∇H) needs its ops recorded: the first time f calls Grad, Value
// evaluates it again with gradients recorded (the inputs as leaves that
// require gradients, the parameters as constants), and from then on
// records every evaluation of the pullback's. Such an f runs twice on that
// first call.
func (pb *Pullback[T]) Value(f Func[T], at []*tensor.Tensor[T]) *tensor.Tensor[T] {
	if pb.busy {
		panic(usage("Pullback.Value called from within its own function; use a separate Pullback for nesting"))
	}
	pb.busy = true
	defer func() { pb.busy = false }()
	if !pb.recordValues {
		if y, ok := pb.valueNoGrad(f, at); ok {
			return y
		}
		pb.recordValues = true
	}
	return pb.valueRecorded(f, at)
}

// valueNoGrad is Value in no-grad mode; ok is false when f called Grad.
func (pb *Pullback[T]) valueNoGrad(f Func[T], at []*tensor.Tensor[T]) (y *tensor.Tensor[T], ok bool) {
	t := pb.tape
	t.Reset()
	defer t.SetNoGrad(t.SetNoGrad(true))
	t.retryGrad = true
	defer func() {
		t.retryGrad = false
		clear(pb.in)
		if r := recover(); r != nil {
			if _, is := r.(wantsRecording); !is {
				panic(r)
			}
			y, ok = nil, false
		}
	}()
	pb.in = pb.in[:0]
	for _, x := range at {
		pb.in = append(pb.in, t.Const(x))
	}
	return pb.result(f(t, pb.in)), true
}

// valueRecorded is Value recording gradients, for an f that calls Grad.
func (pb *Pullback[T]) valueRecorded(f Func[T], at []*tensor.Tensor[T]) *tensor.Tensor[T] {
	t := pb.tape
	t.Reset()
	defer t.SetNoGrad(t.SetNoGrad(false))
	t.valueOnly, t.constParams = true, true
	defer func() { t.valueOnly = false }()
	pb.in = pb.in[:0]
	for _, x := range at {
		pb.in = append(pb.in, t.Input(x))
	}
	defer clear(pb.in)
	return pb.result(f(t, pb.in))
}

// result checks that y is on the pullback's tape and returns its value.
func (pb *Pullback[T]) result(y Var[T]) *tensor.Tensor[T] {
	if y.t != pb.tape {
		panic(usage("Pullback.Value: the function must return a Var recorded on the tape it was given"))
	}
	return y.use("Pullback.Value").value
}

func paramName[T tensor.Float](p *Param[T]) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", p.Name)
}

// VJP evaluates y = f(x) at x = at on a fresh tape computing with eng and
// returns y's value and the input cotangents dx[i] = cotᵀ·∂y/∂x_i, newly
// allocated. The parameters f uses are constants: their Param.Grad is left
// alone, as torch.autograd.grad leaves .grad. It returns the error of a
// custom node inside f that failed, or ErrVJPOfRecorded (see Pullback.VJP).
// For repeated calls without allocation, or for the parameters' gradients,
// use a Pullback.
func VJP[T tensor.Float](eng tensor.Engine[T], f Func[T], at []*tensor.Tensor[T], cot *tensor.Tensor[T]) (y *tensor.Tensor[T], dx []*tensor.Tensor[T], err error) {
	dx = make([]*tensor.Tensor[T], len(at))
	for i, x := range at {
		dx[i] = tensor.New[T](x.Shape()...)
	}
	y, err = NewPullback(eng).VJP(f, at, cot, VJPDest[T]{Inputs: dx})
	return y, dx, err
}
