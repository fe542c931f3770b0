package odeblock_test

import (
	"errors"
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
