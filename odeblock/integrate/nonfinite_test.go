package integrate

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// nanPastStart is y' = −y at t = 0 and NaN everywhere after: no step can
// be taken, and at t = 0 no step is too small to try.
func nanPastStart(t float64, y, dy []float64) error {
	for i := range dy {
		dy[i] = -y[i]
		if t != 0 {
			dy[i] = math.NaN()
		}
	}
	return nil
}

// TestNonFiniteRejections: every method's loop rejects a step with NaN in
// it and retries smaller, and gives up with ErrNonFinite after 100 such
// rejections (the 101st ends the solve); with MinStep, the retries are
// clamped to it and a rejection at MinStep ends the solve.
func TestNonFiniteRejections(t *testing.T) {
	for _, c := range []struct {
		method string
		shrink float64 // the retry's factor after a NaN
	}{{"dopri5", 0.2}, {"rodas4", 0.2}, {"bdf", 0.5}} {
		s, err := NewSolver[float64](Options{Method: c.method, StepControl: StepControl{FirstStep: 0.1}})
		if err != nil {
			t.Fatal(err)
		}
		out := [][]float64{make([]float64, 2), make([]float64, 2)}
		st, err := s.Solve(nanPastStart, []float64{1, 2}, []float64{0, 1}, out)
		if !errors.Is(err, ErrNonFinite) || st.Rejected != maxNonFiniteRejections+1 {
			t.Errorf("%s: %v after %d rejections, want ErrNonFinite after %d", c.method, err, st.Rejected, maxNonFiniteRejections+1)
		}

		s, err = NewSolver[float64](Options{Method: c.method, StepControl: StepControl{FirstStep: 0.1, MinStep: 0.1 * c.shrink * 0.7}})
		if err != nil {
			t.Fatal(err)
		}
		var tried []float64
		s.OnStep = func(si StepInfo[float64]) error {
			tried = append(tried, si.H)
			return nil
		}
		_, err = s.Solve(nanPastStart, []float64{1, 2}, []float64{0, 1}, out)
		want := []float64{0.1, 0.1 * c.shrink, 0.1 * c.shrink * 0.7} // the third clamped up to MinStep
		if !errors.Is(err, ErrNonFinite) || !cmp.Equal(tried, want, cmpopts.EquateApprox(1e-12, 0)) {
			t.Errorf("%s with MinStep: steps tried %v and %v, want %v and ErrNonFinite at the minimum step", c.method, tried, err, want)
		}
	}
}

// TestNonFiniteJacobianSkipsStages: a Rosenbrock step whose Jacobian at
// the step's start is not finite (f is NaN just past y) is rejected
// before any stage is evaluated, for rosenbrock23 and the Rodas methods.
func TestNonFiniteJacobianSkipsStages(t *testing.T) {
	for _, method := range []string{"rosenbrock23", "rodas4"} {
		s, err := NewSolver[float64](Options{Method: method, StepControl: StepControl{FirstStep: 0.1}})
		if err != nil {
			t.Fatal(err)
		}
		stages := 0
		f := func(kind evalKind, _ int, _ float64, y, dy []float64) error {
			if kind == evalStage {
				stages++
			}
			dy[0], dy[1] = -y[1], y[0]
			if y[0] > 1 {
				dy[0] = math.NaN()
			}
			return nil
		}
		out := [][]float64{make([]float64, 2), make([]float64, 2)}
		st, err := s.solveEval(f, []float64{1, 0}, []float64{0, 1}, out)
		if !errors.Is(err, ErrNonFinite) || st.Jacobians == 0 || stages != 0 {
			t.Errorf("%s: %v after %d Jacobians and %d stage evaluations; want ErrNonFinite and no stage", method, err, st.Jacobians, stages)
		}
	}
}

// TestInfAtTheProbe: f finite at the start but infinite at the first
// step's probe point is ErrNonFinite, not a step underflow.
func TestInfAtTheProbe(t *testing.T) {
	f := func(t float64, y, dy []float64) error {
		dy[0], dy[1] = -y[0], 1
		if t > 0 {
			dy[1] = math.Inf(1)
		}
		return nil
	}
	_, _, err := Solve(f, []float64{1, 2}, []float64{0, 1}, Options{})
	if !errors.Is(err, ErrNonFinite) {
		t.Errorf("got %v, want ErrNonFinite", err)
	}
}
