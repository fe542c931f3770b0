package integrate_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/adamnode/adamnode/odeblock/integrate"
)

// TestImplicitFloat32 solves a small linear system in float32 with every
// kind of method that forms a Jacobian by finite differences (the adaptive
// Rosenbrock and BDF methods, the fixed-step implicit Runge–Kutta ones)
// and checks the result against the same solve in float64. The
// Jacobian's difference step must be one float32 can take: float64's
// √ε·|y| rounds away in float32, and the Jacobian became Inf.
func TestImplicitFloat32(t *testing.T) {
	f32 := func(_ float64, y, dy []float32) error {
		for i := range y {
			dy[i] = -y[i] + 0.5*y[(i+1)%len(y)]
		}
		return nil
	}
	f64 := func(_ float64, y, dy []float64) error {
		for i := range y {
			dy[i] = -y[i] + 0.5*y[(i+1)%len(y)]
		}
		return nil
	}
	for _, opt := range []integrate.Options{
		{Method: "bdf", RTol: 1e-4, ATol: 1e-5},
		{Method: "rosenbrock23", RTol: 1e-4, ATol: 1e-5},
		{Method: "rodas4", RTol: 1e-4, ATol: 1e-5},
		{Method: "implicit_euler", Step: 0.01},
		{Method: "implicit_midpoint", Step: 0.05},
		{Method: "trapezoid", Step: 0.05},
		{Method: "radauIIA3", Step: 0.1},
		{Method: "radauIIA5", Step: 0.1},
		{Method: "gl4", Step: 0.1},
		{Method: "gl6", Step: 0.1},
		{Method: "sdirk2", Step: 0.05},
		{Method: "trbdf2", Step: 0.05},
		{Method: "implicit_adams", Step: 0.05},
	} {
		t.Run(opt.Method, func(t *testing.T) {
			got, st, err := integrate.Solve(f32, []float32{1, 2, 3}, []float64{0, 1}, opt)
			if err != nil {
				t.Fatalf("float32: %v", err)
			}
			if st.Jacobians == 0 && opt.Method != "implicit_adams" { // a fixed-point iteration
				t.Errorf("float32 solve formed no Jacobian: %+v", st)
			}
			want, _, err := integrate.Solve(f64, []float64{1, 2, 3}, []float64{0, 1}, opt)
			if err != nil {
				t.Fatalf("float64: %v", err)
			}
			g := make([]float64, len(got[1]))
			for i, v := range got[1] {
				g[i] = float64(v)
			}
			if d := cmp.Diff(want[1], g, cmpopts.EquateApprox(1e-3, 0)); d != "" {
				t.Errorf("float32 solve against float64 (-want +got):\n%s", d)
			}
		})
	}
}
