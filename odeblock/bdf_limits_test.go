package odeblock_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/adamnode/adamnode/odeblock"
)

// robertsonF is Robertson's stiff kinetics.
func robertsonF(_ float64, y, dy []float64) error {
	dy[0] = -0.04*y[0] + 1e4*y[1]*y[2]
	dy[1] = 0.04*y[0] - 1e4*y[1]*y[2] - 3e7*y[1]*y[1]
	dy[2] = 3e7 * y[1] * y[1]
	return nil
}

// bdfSolve solves Robertson's kinetics to t = 40 with bdf and opt.
func bdfSolve(t *testing.T, opt odeblock.Options, hook func(odeblock.StepInfo[float64]) error, f odeblock.Func[float64]) (odeblock.Stats, error) {
	t.Helper()
	opt.Method = "bdf"
	s, err := odeblock.NewSolver[float64](opt)
	if err != nil {
		t.Fatal(err)
	}
	s.OnStep = hook
	out := [][]float64{make([]float64, 3), make([]float64, 3)}
	return s.Solve(f, []float64{1, 0, 0}, []float64{0, 40}, out)
}

// TestBDFLimits: bdf's MaxSteps counts every attempted step exactly, and
// an OnStep error on an accepted step ends the solve with it.
func TestBDFLimits(t *testing.T) {
	opt := odeblock.Options{RTol: 1e-6, ATol: 1e-10}
	st, err := bdfSolve(t, opt, nil, robertsonF)
	if err != nil {
		t.Fatal(err)
	}
	steps := st.Accepted + st.Rejected
	opt.MaxSteps = steps
	if _, err := bdfSolve(t, opt, nil, robertsonF); err != nil {
		t.Errorf("MaxSteps %d, the steps the solve takes: %v", steps, err)
	}
	opt.MaxSteps = steps - 1
	if _, err := bdfSolve(t, opt, nil, robertsonF); !errors.Is(err, odeblock.ErrMaxSteps) {
		t.Errorf("MaxSteps %d, one short: %v, want ErrMaxSteps", steps-1, err)
	}
	opt.MaxSteps = 0

	stop := errors.New("stop")
	n := 0
	_, err = bdfSolve(t, opt, func(si odeblock.StepInfo[float64]) error {
		if si.Accepted {
			if n++; n == 5 {
				return stop
			}
		}
		return nil
	}, robertsonF)
	if !errors.Is(err, stop) || n != 5 {
		t.Errorf("an OnStep error on the fifth accepted step: %v after %d, want it", err, n)
	}

}

// TestBDFFixedStep: with a fixed Step, bdf takes every step at that size
// and still raises its order: on y' = λ(y − cos t) − sin t (λ = −50,
// y = cos t) halving the step divides the error at t = 1 by more than an
// order-1 method's 2.
func TestBDFFixedStep(t *testing.T) {
	f := func(tt float64, y, dy []float64) error {
		dy[0] = -50*(y[0]-math.Cos(tt)) - math.Sin(tt)
		return nil
	}
	var errs []float64
	for _, h := range []float64{0.02, 0.01} {
		s, err := odeblock.NewSolver[float64](odeblock.Options{Method: "bdf", Step: h})
		if err != nil {
			t.Fatal(err)
		}
		s.OnStep = func(si odeblock.StepInfo[float64]) error {
			if math.Abs(si.H-h) > 1e-12 || !si.Accepted {
				t.Errorf("step %g: a step of %g (accepted %v)", h, si.H, si.Accepted)
			}
			return nil
		}
		out := [][]float64{make([]float64, 1), make([]float64, 1)}
		if _, err := s.Solve(f, []float64{1}, []float64{0, 1}, out); err != nil {
			t.Fatal(err)
		}
		errs = append(errs, math.Abs(out[1][0]-math.Cos(1)))
	}
	if errs[0]/errs[1] < 3 {
		t.Errorf("errors %.3g at step 0.02 and %.3g at 0.01: a ratio of %.2f, the order does not rise", errs[0], errs[1], errs[0]/errs[1])
	}
}

// TestBDFStops: bdf takes Jumps, StepTo and MaxStep as every method does.
// y' = a(t)·y with a = −1 before t = 0.5 and −3 from it on, a jump there:
// y(1) = e^(−0.5)·e^(−1.5) to the tolerance (the step ending at the jump
// sees the left limit, the next starts from f just after it: f is never
// evaluated at the jump itself); a step ends
// exactly at the StepTo time; no step is longer than MaxStep.
func TestBDFStops(t *testing.T) {
	atJump := 0
	f := func(tt float64, y, dy []float64) error {
		if tt == 0.5 {
			atJump++ // neither the left limit nor the restart's right one
		}
		a := -1.0
		if tt >= 0.5 {
			a = -3
		}
		dy[0] = a * y[0]
		return nil
	}
	s, err := odeblock.NewSolver[float64](odeblock.Options{
		Method:      "bdf",
		RTol:        1e-9,
		ATol:        1e-12,
		StepControl: odeblock.StepControl{MaxStep: 0.05},
		Stops:       odeblock.Stops{Jumps: []float64{0.5}, StepTo: []float64{0.3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ends []float64
	s.OnStep = func(si odeblock.StepInfo[float64]) error {
		if math.Abs(si.H) > 0.05 {
			t.Errorf("a step of %g past MaxStep 0.05", si.H)
		}
		if si.Accepted {
			ends = append(ends, si.End)
		}
		return nil
	}
	out := [][]float64{make([]float64, 1), make([]float64, 1)}
	if _, err := s.Solve(f, []float64{1}, []float64{0, 1}, out); err != nil {
		t.Fatal(err)
	}
	if want := math.Exp(-2); math.Abs(out[1][0]-want) > 1e-7 {
		t.Errorf("y(1) = %.12g, want %.12g", out[1][0], want)
	}
	if atJump > 0 {
		t.Errorf("f evaluated %d times at the jump itself", atJump)
	}
	for _, stop := range []float64{0.3, 0.5} {
		if !slices.Contains(ends, stop) {
			t.Errorf("no accepted step ends at %g: %v", stop, ends)
		}
	}
}
