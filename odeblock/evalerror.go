package odeblock

import (
	"fmt"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// EvalError is the error of a solve whose dynamics failed: a field made by
// FieldFuncErr returned Err at time Time (an autograd.Grad inside it that
// met a node without a backward in ops, a check of the user's own). The
// Block's Forward, Trajectory or backward pass returns it, the solve
// ended there; errors.As finds it, errors.Is the field's own error.
type EvalError struct {
	Time float64
	Err  error
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("odeblock: the dynamics failed at t=%g: %v", e.Time, e.Err)
}

func (e *EvalError) Unwrap() error { return e.Err }

// FieldFuncErr adapts a function that may fail, and the parameters it
// reads, to a Field: what a field that takes derivatives of its own
// (autograd.GradOf, JVP, HVP, the traces, all of which return errors)
// writes instead of panicking on them. An error it returns ends the
// block's solve — forward or backward, in every gradient mode — with an
// *EvalError naming the time. (Underneath, ForwardT panics with the
// *EvalError and the Block recovers it where it evaluates: a FieldFuncErr's
// field evaluated outside a Block panics with it.)
func FieldFuncErr[T tensor.Float](params []*autograd.Param[T], f func(tp *autograd.Tape[T], t float64, h autograd.Var[T]) (autograd.Var[T], error)) Field[T] {
	return fieldFuncErr[T]{f: f, params: params}
}

type fieldFuncErr[T tensor.Float] struct {
	f      func(tp *autograd.Tape[T], t float64, h autograd.Var[T]) (autograd.Var[T], error)
	params []*autograd.Param[T]
}

func (f fieldFuncErr[T]) ForwardT(tp *autograd.Tape[T], t float64, h autograd.Var[T]) autograd.Var[T] {
	y, err := f.f(tp, t, h)
	if err != nil {
		panic(&EvalError{Time: t, Err: err})
	}
	return y
}

func (f fieldFuncErr[T]) Params() []*autograd.Param[T] { return f.params }

// recoverEval turns the panic of a failed evaluation (*EvalError) into
// *err; other panics go on. Call it deferred where a solve starts.
func recoverEval(err *error) {
	r := recover()
	if r == nil {
		return
	}
	e, ok := r.(*EvalError)
	if !ok {
		panic(r)
	}
	*err = e
}
