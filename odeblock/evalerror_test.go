package odeblock_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// TestFailedSolveCheckedOnce: a failed Forward or Trajectory returns NaNs
// shaped like its result beside the error, so that tp.Check can carry the
// error to Backward, which returns it and leaves the parameters' gradients
// alone, in every gradient mode.
func TestFailedSolveCheckedOnce(t *testing.T) {
	errField := errors.New("the field's own failure")
	w := autograd.NewParam("w", tensor.FromSlice([]float64{-0.5, 0.3, -0.2, -0.4}, 2, 2))
	field := odeblock.FieldFuncErr([]*autograd.Param[float64]{w}, func(tp *autograd.Tape[float64], t float64, h autograd.Var[float64]) (autograd.Var[float64], error) {
		if t > 0.5 {
			return autograd.Var[float64]{}, errField
		}
		return autograd.Tanh(autograd.Linear(h, tp.Param(w), autograd.Var[float64]{})), nil
	})
	z0 := tensor.FromSlice([]float64{1, 0.5, -1, 0.25, 0, 2}, 3, 2)
	for _, mode := range modes {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			b := &odeblock.Block[float64]{Dynamics: &odeblock.NODE[float64]{F: field}, Times: []float64{0, 0.25, 1}, Mode: mode}
			for _, traj := range []bool{false, true} {
				w.Grad = nil
				tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
				x := tp.Input(z0)
				solve := b.Forward
				want := []int{3, 2}
				if traj {
					solve, want = b.Trajectory, []int{3, 3, 2}
				}
				z := tp.Check(solve(tp, x))
				if !errors.Is(tp.Err(), errField) {
					t.Fatalf("traj %v: Err() = %v, want the field's error", traj, tp.Err())
				}
				if diff := cmp.Diff(want, z.Shape()); diff != "" {
					t.Errorf("traj %v: the failed result's shape (-want +got):\n%s", traj, diff)
				}
				loss := autograd.Add(autograd.Sum(z), autograd.Sum(autograd.Linear(x, tp.Param(w), autograd.Var[float64]{})))
				if !math.IsNaN(loss.Item()) {
					t.Errorf("traj %v: the loss is %g, want NaN", traj, loss.Item())
				}
				if err := tp.Backward(loss); !errors.Is(err, errField) {
					t.Errorf("traj %v: Backward = %v, want the field's error", traj, err)
				}
				if w.Grad != nil && w.Grad.Sum() != 0 {
					t.Errorf("traj %v: the failed pass reached w: %v", traj, w.Grad.Data())
				}
			}
		})
	}
}
