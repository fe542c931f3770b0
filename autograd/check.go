package autograd

import (
	"math"

	"github.com/adamnode/adamnode/tensor"
)

// Errors checked once. A pass that calls several functions returning a Var
// and an error — an ODE block's Forward, GradOf, a classifier — can check
// each error where it arises, or hand each pair to Check and look once, at
// the end: Backward returns the first error Check saw without running, and
// Err returns it. It is the rule of bufio.Scanner and encoding's Encoders,
// applied to a pass:
//
//	z := tp.Check(block.Forward(tp, z0))      // on error: NaNs, and tp remembers it
//	loss := ag.Mean(ag.Square(head.Forward(tp, z)))
//	if err := tp.Backward(loss); err != nil { // the block's error, if it failed
//		return err
//	}
//
// The functions of this module that return a Var and an error return, with
// an error, a constant of the shape their result would have had, filled
// with NaN (NaNs): the ops after it run, their values are NaN, and nothing
// is differentiated. A failed pass therefore never updates a parameter
// through Backward; a value read from it (Item, Value) is NaN, so a loss
// logged from a failed pass shows that it failed. Reset forgets the error.

// Check returns v. A non-nil err is remembered as the tape's error, unless
// it already has one (the first is kept): Backward and BackwardWith then
// return it without running, and Err reports it, until Reset. v is what
// the function returned with err — for this module's functions a constant
// of NaNs shaped like the result (NaNs) — so that the pass can go on
// recording. Check panics, naming err, when err is not nil and v is the
// zero Var: the function gave nothing to go on with, which this module's
// functions do only on misuse (a zero Var as their input).
func (t *Tape[T]) Check(v Var[T], err error) Var[T] {
	if err == nil {
		return v
	}
	if t.poison == nil {
		t.poison = err
	}
	if v.IsZero() {
		panic(usage("Check: %v (and the function returned the zero Var, which the pass cannot go on with)", err))
	}
	return v
}

// Err returns the tape's error since the last Reset: the first error Check
// was given, or a VJP taken at a value of this pass (ErrVJPOfRecorded).
// Nil when there is none.
func (t *Tape[T]) Err() error { return t.poison }

// NaNs returns a constant of the given shape whose elements are all NaN:
// what a function that records on the tape returns beside an error, so that
// a caller checking errors with Check can go on recording (see Check).
func (t *Tape[T]) NaNs(dims ...int) Var[T] {
	x := tensor.New[T](dims...)
	x.Fill(T(math.NaN()))
	return t.Const(x)
}

// failedBackward reports the tape's error for Backward and BackwardWith
// called after Check remembered one, leaving the tape spent, as a Backward
// that ran would (the recorded graph is released at Reset). Misuse (a
// second Backward, Backward while running) is left to startBackward to
// name.
func (t *Tape[T]) failedBackward() error {
	if t.poison == nil || t.running || t.spent {
		return nil
	}
	t.spent = true
	return t.poison
}
