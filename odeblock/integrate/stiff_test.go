package integrate

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStiffVanDerPol: Van der Pol with μ = 1000 over [0, 3000] at
// rtol = atol = 1e-6: rosenbrock23, rodas4 and bdf solve it and match a
// reference (SciPy's Radau at 1e-12: y(3000) = (−1.51060693676,
// 0.00117838000069), computed with Debian's python3-scipy) to 1e-3, 1e-4
// and 1e-3 relative; rodas4 in fewer evaluations than rosenbrock23, bdf in
// fewer than 5,000 in all, its Jacobians' included (SciPy's BDF on the
// same problem: 3904 evaluations besides 85 Jacobians, 1258 steps);
// dopri5 runs out of its 10,000 steps.
func TestStiffVanDerPol(t *testing.T) {
	const mu = 1000
	vdp := func(_ float64, y, dy []float64) error {
		dy[0], dy[1] = y[1], mu*(1-y[0]*y[0])*y[1]-y[0]
		return nil
	}
	want := []float64{-1.5106069367599528, 0.0011783800006902542}
	nfe := map[string]int{}
	for _, c := range []struct {
		method string
		tol    float64
	}{{"rosenbrock23", 1e-3}, {"rodas4", 1e-4}, {"bdf", 1e-3}} {
		out, st, err := Solve(vdp, []float64{2, 0}, []float64{0, 3000}, Options{Method: c.method, RTol: 1e-6, ATol: 1e-6, StepControl: StepControl{MaxSteps: 100000}})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if math.Abs(out[1][i]-w) > c.tol*math.Abs(w) {
				t.Errorf("%s: y%d(3000) = %.10g, reference %.10g", c.method, i+1, out[1][i], w)
			}
		}
		nfe[c.method] = st.NFE
		perJac := 3 // n + 1 evaluations; the Rosenbrock methods' ∂f/∂t one more
		if c.method == "bdf" {
			perJac = 2 + 1
		}
		t.Logf("%s: %d accepted, %d rejected steps; %d evaluations of f (%d in steps, the rest in %d Jacobians); %d LU factorisations",
			c.method, st.Accepted, st.Rejected, st.NFE, st.NFE-perJac*st.Jacobians, st.Jacobians, st.LUs)
	}
	if nfe["bdf"] >= 5000 {
		t.Errorf("bdf took %d evaluations, want fewer than 5,000", nfe["bdf"])
	}
	if nfe["rodas4"] >= nfe["rosenbrock23"] {
		t.Errorf("rodas4 took %d evaluations, rosenbrock23 %d: the fourth-order method should take fewer", nfe["rodas4"], nfe["rosenbrock23"])
	}
	if _, _, err := Solve(vdp, []float64{2, 0}, []float64{0, 3000}, Options{RTol: 1e-6, ATol: 1e-6}); err == nil {
		t.Error("dopri5 solved the stiff problem within 10,000 steps")
	}
}

// TestRosenbrockNonAutonomous: on y' = t·y − 50·(y − e^{t²/2})·t² (whose
// solution from y(0) = 1 is e^{t²/2}; the stiff term and ∂f/∂t exercise
// the methods' time-derivative terms) the fixed-step error of rosenbrock23
// and rodas4 falls at their orders, and the adaptive solves meet the
// tolerance.
func TestRosenbrockNonAutonomous(t *testing.T) {
	f := func(tt float64, y, dy []float64) error {
		e := math.Exp(tt * tt / 2)
		dy[0] = tt*y[0] - 50*(y[0]-e)*tt*tt
		return nil
	}
	exact := math.Exp(0.5)
	for _, name := range []string{"rosenbrock23", "rodas4", "bdf"} {
		tb, _ := Method(name)
		if name == "bdf" {
			out, _, err := Solve(f, []float64{1}, []float64{0, 1}, Options{Method: name, RTol: 1e-8, ATol: 1e-8})
			if err != nil {
				t.Fatal(err)
			}
			if e := math.Abs(out[1][0] - exact); e > 1e-6 {
				t.Errorf("%s adaptive at 1e-8: y(1) %.12g, exact %.12g", name, out[1][0], exact)
			}
			continue
		}
		var errs []float64
		for _, h := range []float64{0.02, 0.01} {
			errs = append(errs, math.Abs(solveFixed(t, tb, f, []float64{1}, 1, h)[0]-exact))
		}
		if observed := math.Log2(errs[0] / errs[1]); math.Abs(observed-float64(tb.Order)) > 0.4 {
			t.Errorf("%s: observed order %.2f (errors %.3g, %.3g), want %d", name, observed, errs[0], errs[1], tb.Order)
		}
		out, _, err := Solve(f, []float64{1}, []float64{0, 1}, Options{Method: name, RTol: 1e-8, ATol: 1e-8})
		if err != nil {
			t.Fatal(err)
		}
		if e := math.Abs(out[1][0] - exact); e > 1e-6 {
			t.Errorf("%s adaptive at 1e-8: y(1) %.12g, exact %.12g", name, out[1][0], exact)
		}
	}
}

// TestBDFConverges: bdf's error falls with the tolerance, within a small
// multiple of it, and tighter tolerances take more steps and higher
// orders' worth of accuracy per step (the global error at 1e-10 is below
// 1e-8 in fewer than 2,000 steps, which a fixed order 1 could not do),
// on a nonlinear, a non-autonomous and a stiff problem; outputs between
// steps come from its interpolant.
func TestBDFConverges(t *testing.T) {
	stiff := func(tt float64, y, dy []float64) error { dy[0] = -1000*(y[0]-math.Cos(tt)) - math.Sin(tt); return nil }
	for _, p := range []struct {
		name  string
		f     Func[float64]
		y0    float64
		t1    float64
		exact func(float64) float64
	}{
		{"nonlinear", nonlinear, 1, 3, func(float64) float64 { return 0.1 }},
		{"stiff cos", stiff, 1, 2, math.Cos},
	} {
		prevSteps := 0
		for _, tol := range []float64{1e-4, 1e-6, 1e-8, 1e-10} {
			ts := []float64{0, p.t1 / 3, p.t1}
			out, st, err := Solve(p.f, []float64{p.y0}, ts, Options{Method: "bdf", RTol: tol, ATol: tol, StepControl: StepControl{MaxSteps: 100000}})
			if err != nil {
				t.Fatalf("%s tol %g: %v", p.name, tol, err)
			}
			for i, tt := range ts {
				if p.name == "nonlinear" && i < 2 {
					continue // its exact value is known at t = 3 only
				}
				if e := math.Abs(out[i][0] - p.exact(tt)); e > 50*tol {
					t.Errorf("%s tol %g: y(%g) off by %.3g", p.name, tol, tt, e)
				}
			}
			if st.Accepted <= prevSteps {
				t.Errorf("%s tol %g: %d steps, no more than at the looser tolerance (%d)", p.name, tol, st.Accepted, prevSteps)
			}
			if tol == 1e-10 && st.Accepted >= 2000 {
				t.Errorf("%s tol %g: %d steps: the order does not rise", p.name, tol, st.Accepted)
			}
			prevSteps = st.Accepted
		}
	}
}

// TestStiffRobertson: Robertson's chemical kinetics over [0, 40] at
// rtol 1e-6, atol 1e-10, against the reference values (SciPy's Radau at
// 1e-12: 0.71582706872, 9.1855347646e-6, 0.28416374575).
func TestStiffRobertson(t *testing.T) {
	rob := func(_ float64, y, dy []float64) error {
		dy[0] = -0.04*y[0] + 1e4*y[1]*y[2]
		dy[1] = 0.04*y[0] - 1e4*y[1]*y[2] - 3e7*y[1]*y[1]
		dy[2] = 3e7 * y[1] * y[1]
		return nil
	}
	for _, m := range []string{"rosenbrock23", "rodas4", "bdf"} {
		out, st, err := Solve(rob, []float64{1, 0, 0}, []float64{0, 40}, Options{Method: m, RTol: 1e-6, ATol: 1e-10, StepControl: StepControl{MaxSteps: 100000}})
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{0.7158270687199094, 9.185534764578342e-06, 0.28416374574532854}
		for i, w := range want {
			if math.Abs(out[1][i]-w) > 1e-4*math.Abs(w) {
				t.Errorf("%s: y%d(40) = %.10g, reference %.10g", m, i+1, out[1][i], w)
			}
		}
		t.Logf("Robertson, %s: %+v", m, st)
	}
}

// TestImplicitStable: on the stiff y' = −1000·(y − cos t) with a step of
// 0.05 (fifty times past explicit Euler's stability limit) the L-stable
// implicit methods stay on the slow solution, which follows cos t within
// 1e-2 by t = 1 (the trapezoid, A-stable only, still rings there);
// explicit Euler blows up.
func TestImplicitStable(t *testing.T) {
	stiff := func(tt float64, y, dy []float64) error { dy[0] = -1000 * (y[0] - math.Cos(tt)); return nil }
	for _, m := range []string{"implicit_euler", "radauIIA3", "radauIIA5", "sdirk2", "trbdf2"} {
		out, _, err := Solve(stiff, []float64{0}, []float64{0, 1}, Options{Method: m, Step: 0.05})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if d := math.Abs(out[1][0] - math.Cos(1)); d > 1e-2 {
			t.Errorf("%s: y(1) = %g, the slow solution is near cos(1) = %g", m, out[1][0], math.Cos(1))
		}
	}
	out, _, err := Solve(stiff, []float64{0}, []float64{0, 1}, Options{Method: "euler", Step: 0.05})
	if err == nil && math.Abs(out[1][0]) < 1e3 {
		t.Errorf("explicit Euler stayed bounded (%g): the problem is not stiff at this step", out[1][0])
	}
}

// TestAdamsCoefficients: the computed Adams–Bashforth and Adams–Moulton
// coefficients are the textbook ones at order 5 (1901, −2774, 2616, −1274,
// 251 and 251, 646, −264, 106, −19, over 720), and at every order up to
// 12 each set sums to 1 (the methods are consistent).
func TestAdamsCoefficients(t *testing.T) {
	ab5 := []float64{1901, -2774, 2616, -1274, 251}
	am5 := []float64{251, 646, -264, 106, -19}
	for j := range 5 {
		if math.Abs(bashforth[5][j]-ab5[j]/720) > 1e-15 || math.Abs(moulton[5][j]-am5[j]/720) > 1e-15 {
			t.Errorf("order 5, coefficient %d: β %.17g (want %g/720), μ %.17g (want %g/720)", j, bashforth[5][j], ab5[j], moulton[5][j], am5[j])
		}
	}
	for k := 1; k <= adamsMaxOrder; k++ {
		var sb, sm float64
		for j := range k {
			sb += bashforth[k][j]
			sm += moulton[k][j]
		}
		if math.Abs(sb-1) > 1e-12 || math.Abs(sm-1) > 1e-12 {
			t.Errorf("order %d: Σβ = %.17g, Σμ = %.17g, want 1", k, sb, sm)
		}
	}
}

// TestLU: the LU the implicit and stiff methods use (gonum's Dgetrf and
// Dgetrs) solves a system needing pivoting to rounding, and a singular
// matrix or one with NaN in it is an error.
func TestLU(t *testing.T) {
	a := []float64{0, 2, 1, 1, 1, 0, 3, 0, 1} // a zero first pivot
	x := []float64{1, -2, 3}
	b := make([]float64, 3)
	for i := range 3 {
		for j := range 3 {
			b[i] += a[i*3+j] * x[j]
		}
	}
	lu, piv := slices.Clone(a), make([]int, 3)
	if err := luFactor(lu, 3, piv); err != nil {
		t.Fatal(err)
	}
	luSolve(lu, 3, piv, b)
	for i := range x {
		if math.Abs(b[i]-x[i]) > 1e-14 {
			t.Errorf("x%d = %.17g, want %g", i, b[i], x[i])
		}
	}
	for _, m := range [][]float64{{1, 2, 2, 4}, {1, math.NaN(), 0, 1}} {
		if err := luFactor(slices.Clone(m), 2, make([]int, 2)); err == nil {
			t.Errorf("%v: no error", m)
		}
	}
}

// TestBDFFailures: the stiff methods on dynamics that turn NaN stop with
// ErrNonFinite (after retrying smaller steps), and bdf on a problem it
// cannot meet within MinStep with ErrStepUnderflow — errors, not hangs.
func TestBDFFailures(t *testing.T) {
	nan := func(tt float64, y, dy []float64) error {
		dy[0] = -y[0]
		if tt > 0.5 {
			dy[0] = math.NaN()
		}
		return nil
	}
	for _, m := range []string{"bdf", "rodas4", "rosenbrock23"} {
		if _, _, err := Solve(nan, []float64{1}, []float64{0, 1}, Options{Method: m}); !errors.Is(err, ErrNonFinite) {
			t.Errorf("%s, NaN dynamics: %v, want ErrNonFinite", m, err)
		}
	}
	fast := func(tt float64, y, dy []float64) error { dy[0] = math.Cos(1e4 * tt); return nil }
	if _, _, err := Solve(fast, []float64{0}, []float64{0, 1}, Options{Method: "bdf", RTol: 1e-10, ATol: 1e-10, StepControl: StepControl{MinStep: 1e-2}}); !errors.Is(err, ErrStepUnderflow) {
		t.Errorf("MinStep too large for the tolerance: %v, want ErrStepUnderflow", err)
	}
}

// TestJacobiansForwardDifference: the Rosenbrock and bdf Jacobians are
// forward differences (f(y + d·e_j) − f(y))/d, d the step taken in T, on
// f(y) = (y0², y0·y1), where a backward difference differs.
func TestJacobiansForwardDifference(t *testing.T) {
	f := func(y, dy []float64) { dy[0], dy[1] = y[0]*y[0], y[0]*y[1] }
	eval := func(_ evalKind, _ int, _ float64, y, dy []float64) error { f(y, dy); return nil }
	at := []float64{1.5, -2}
	want := make([]float64, 4) // row-major, by forward differences
	f0, f1 := make([]float64, 2), make([]float64, 2)
	f(at, f0)
	for j := range 2 {
		d := math.Sqrt(eps) * math.Max(math.Abs(at[j]), 1e-3)
		y := slices.Clone(at)
		y[j] += d
		d = y[j] - at[j]
		f(y, f1)
		for i := range 2 {
			want[i*2+j] = (f1[i] - f0[i]) / d
		}
	}
	for _, method := range []string{"rosenbrock23", "bdf"} {
		s, err := NewSolver[float64](Options{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		s.ensure(2)
		copy(s.y, at)
		f(s.y, s.k[0])
		var got []float64
		switch m := s.m.(type) {
		case *rosenbrock[float64]:
			m.w.ensure(2)
			if err := m.jacobian(s.bufs(), eval, stepGeom{h: 0.1, end: 0.1}); err != nil {
				t.Fatal(err)
			}
			got = m.w.jac
		case *bdfMethod[float64]:
			m.w.ensure(2)
			copy(m.w.pred, at)
			if err := m.jacobian(s.bufs(), eval, 0); err != nil {
				t.Fatal(err)
			}
			got = m.la.jac
		}
		if diff := cmp.Diff(want, got[:4]); diff != "" {
			t.Errorf("%s: Jacobian (-forward differences +got):\n%s", method, diff)
		}
	}
}

// TestBDFMaxStep: bdf's steps grow only up to MaxStep.
func TestBDFMaxStep(t *testing.T) {
	const maxStep = 0.05
	decay := func(_ float64, y, dy []float64) error { dy[0] = -y[0]; return nil }
	s, err := NewSolver[float64](Options{Method: "bdf", RTol: 1e-2, ATol: 1e-2, StepControl: StepControl{MaxStep: maxStep}})
	if err != nil {
		t.Fatal(err)
	}
	var longest float64
	s.OnStep = func(si StepInfo[float64]) error {
		longest = math.Max(longest, math.Abs(si.H))
		return nil
	}
	out := [][]float64{make([]float64, 1), make([]float64, 1)}
	if _, err := s.Solve(decay, []float64{1}, []float64{0, 5}, out); err != nil {
		t.Fatal(err)
	}
	if longest > maxStep*(1+1e-12) || longest < maxStep*(1-1e-12) {
		t.Errorf("longest step %g, want MaxStep %g (reached, not passed)", longest, maxStep)
	}
}

// TestImplicitNewtonRelativeScale: the implicit Runge–Kutta methods'
// Newton iteration measures its corrections against atol + rtol·|y|, so
// a state of 10⁶ takes the evaluations a unit one takes.
func TestImplicitNewtonRelativeScale(t *testing.T) {
	decay := func(_ float64, y, dy []float64) error { dy[0] = -y[0]; return nil }
	for _, method := range []string{"radauIIA5", "implicit_midpoint"} {
		var nfe []int
		for _, y0 := range []float64{1, 1e6} {
			_, st, err := Solve(decay, []float64{y0}, []float64{0, 1}, Options{Method: method, Step: 0.1, RTol: 1e-3, ATol: 1e-300})
			if err != nil {
				t.Fatalf("%s, y0 = %g: %v", method, y0, err)
			}
			nfe = append(nfe, st.NFE)
		}
		if nfe[0] != nfe[1] {
			t.Errorf("%s: evaluations from y0 = 1 and 1e6: %v, want the same", method, nfe)
		}
	}
}
