package integrate_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adamnode/adamnode/odeblock/integrate"
)

// TestSolverReuseDenseStages solves twice with one Solver, from nearby
// states over the same times with an output inside the first step, and
// checks the second solve's outputs against a fresh solver's, bit for
// bit: a method with dense-output stages (dop853's three) must form them
// anew in each solve, not take the earlier solve's for a step that starts
// at the same time.
func TestSolverReuseDenseStages(t *testing.T) {
	f := func(_ float64, y, dy []float64) error {
		for i := range y {
			dy[i] = math.Tanh(0.8*y[(i+1)%len(y)] - 0.3*y[i])
		}
		return nil
	}
	ts := []float64{0, 0.01, 0.7}
	for _, opt := range []integrate.Options{
		{Method: "dop853", RTol: 1e-6, ATol: 1e-7},
		{Method: "dop853", RTol: 1e-3, ATol: 1e-4},
		{Method: "dopri5", RTol: 1e-6, ATol: 1e-7},
	} {
		t.Run(opt.Method, func(t *testing.T) {
			s, err := integrate.NewSolver[float64](opt)
			if err != nil {
				t.Fatal(err)
			}
			solve := func(s *integrate.Solver[float64], y0 []float64) [][]float64 {
				out := [][]float64{make([]float64, 4), make([]float64, 4), make([]float64, 4)}
				if _, err := s.Solve(f, y0, ts, out); err != nil {
					t.Fatal(err)
				}
				return out
			}
			solve(s, []float64{1, -0.5, 0.3, 2})
			got := solve(s, []float64{1.01, -0.5, 0.3, 2})
			fresh, err := integrate.NewSolver[float64](opt)
			if err != nil {
				t.Fatal(err)
			}
			want := solve(fresh, []float64{1.01, -0.5, 0.3, 2})
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("second solve of a reused solver against a fresh one's (-want +got):\n%s", d)
			}
		})
	}
}
