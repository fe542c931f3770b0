package odeblock_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/odeblock"
	"github.com/adamnode/adamnode/tensor"
)

// TestFieldReturnsError: a field's error (FieldFuncErr) ends the solve
// with an *EvalError naming the time, the field's own error within, in
// every gradient mode: in Forward (recorded or without gradients), in the
// backward pass, and through ForwardEvent; the Block is usable afterwards.
func TestFieldReturnsError(t *testing.T) {
	errField := errors.New("the field's own failure")
	w := autograd.NewParam("w", tensor.FromSlice([]float64{-0.5, 0.3, -0.2, -0.4}, 2, 2))
	failAfter := 0.5
	var backward bool // fail only while the block's backward pass runs
	field := odeblock.FieldFuncErr([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) (autograd.Var[float64], error) {
		if t > failAfter && (!backward || h.RequiresGrad()) {
			return autograd.Var[float64]{}, errField
		}
		return autograd.Tanh(autograd.Linear(h, tp.Param(w), autograd.Var[float64]{})), nil
	})
	z0 := tensor.FromSlice([]float64{1, 0.5}, 1, 2)
	check := func(t *testing.T, what string, err error) {
		t.Helper()
		var ee *odeblock.EvalError
		if !errors.As(err, &ee) || !errors.Is(err, errField) || !(ee.Time > failAfter) {
			t.Fatalf("%s: %v; want an *EvalError after t=%g wrapping the field's error", what, err, failAfter)
		}
	}
	for _, mode := range modes {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 1}, Mode: mode}
			// Forward, recorded and without gradients.
			backward = false
			tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			_, err := b.Forward(tp, tp.Input(z0))
			check(t, "Forward", err)
			tp = autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			tp.SetNoGrad(true)
			_, err = b.Forward(tp, tp.Const(z0))
			check(t, "Forward without gradients", err)
			// The backward pass: the forward succeeds; the evaluations
			// that record (or the adjoint's VJPs) fail.
			failAfter = 0.5
			backward = true
			tp = autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			out, err := b.Forward(tp, tp.Input(z0))
			if err == nil {
				err = tp.Backward(autograd.Sum(out))
				check(t, "Backward", err)
			} else if mode == (odeblock.Backprop{}) {
				check(t, "Forward of the backward case", err) // Backprop records in its forward
			} else {
				t.Fatalf("the forward without gradients failed: %v", err)
			}
			// Usable afterwards.
			failAfter = 2
			tp = autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
			out, err = b.Forward(tp, tp.Input(z0))
			if err == nil {
				err = tp.Backward(autograd.Sum(out))
			}
			if err != nil {
				t.Fatalf("after the failures: %v", err)
			}
			failAfter = 0.5
		})
	}
}
