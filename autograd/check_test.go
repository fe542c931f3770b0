package autograd_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/autograd"
	"github.com/adamnode/adamnode/tensor"
)

// TestCheck: Check passes a Var through, remembers the first error given,
// makes Backward and BackwardWith return it without running (no gradient
// reaches a parameter), and forgets it at Reset.
func TestCheck(t *testing.T) {
	w := autograd.NewParam("w", tensor.FromSlice([]float64{2, 3}, 2))
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	first, second := errors.New("first"), errors.New("second")

	v := tp.Param(w)
	if got := tp.Check(v, nil); got != v || tp.Err() != nil {
		t.Fatalf("Check(v, nil) = %v, Err() = %v; want v and no error", got, tp.Err())
	}
	bad := tp.NaNs(2)
	if got := tp.Check(bad, first); got != bad {
		t.Errorf("Check(v, err) did not return v")
	}
	tp.Check(bad, second)
	if tp.Err() != first {
		t.Errorf("Err() = %v, want the first error", tp.Err())
	}
	loss := autograd.Sum(autograd.Mul(v, autograd.Add(v, bad)))
	if !math.IsNaN(loss.Item()) {
		t.Errorf("a loss built on NaNs is %g, want NaN", loss.Item())
	}
	if err := tp.Backward(loss); err != first {
		t.Errorf("Backward = %v, want the first error", err)
	}
	if w.Grad != nil && w.Grad.Sum() != 0 {
		t.Errorf("a failed pass reached the parameter: grad %v", w.Grad.Data())
	}
	// The failed Backward spent the pass: a second one is misuse.
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "already ran Backward") {
				t.Errorf("a second Backward after a failed one panicked with %v, want the misuse named", r)
			}
		}()
		tp.Backward(loss)
	}()

	// Reset forgets it; the next pass runs.
	tp.Reset()
	if tp.Err() != nil {
		t.Fatalf("Err() after Reset = %v", tp.Err())
	}
	v = tp.Param(w)
	if err := tp.Backward(autograd.Sum(autograd.Mul(v, v))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{4, 6}, w.Grad.Data()); diff != "" {
		t.Errorf("gradient after Reset (-want +got):\n%s", diff)
	}

	// BackwardWith too.
	tp.Reset()
	v = tp.Check(tp.Param(w), first)
	if err := tp.BackwardWith(v, tensor.FromSlice([]float64{1, 1}, 2)); err != first {
		t.Errorf("BackwardWith = %v, want the first error", err)
	}
}

// TestCheckZeroVar: an error with the zero Var panics, naming the error.
func TestCheckZeroVar(t *testing.T) {
	tp := autograd.NewTape(tensor.EngineFor[float64](tensor.Default()))
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "the solver gave up") {
			t.Errorf("Check(zero Var, err) panicked with %v, want a message naming the error", r)
		}
	}()
	tp.Check(autograd.Var[float64]{}, errors.New("the solver gave up"))
}

// TestNaNs: a constant of the shape asked for, every element NaN.
func TestNaNs(t *testing.T) {
	tp := autograd.NewTape(tensor.EngineFor[float32](tensor.Default()))
	v := tp.NaNs(2, 3)
	if diff := cmp.Diff([]int{2, 3}, v.Shape()); diff != "" {
		t.Errorf("shape (-want +got):\n%s", diff)
	}
	if v.RequiresGrad() {
		t.Error("NaNs requires a gradient")
	}
	for i, x := range v.Value().Data() {
		if !math.IsNaN(float64(x)) {
			t.Errorf("element %d = %g, want NaN", i, x)
		}
	}
}
