package integrate

import (
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestOptionsOutOfRange: every option out of range is an error from
// NewSolver that names the option, and no solve starts.
func TestOptionsOutOfRange(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name string
		opt  Options
		want string
	}{
		{"rtol +Inf", Options{RTol: inf}, "RTol"},
		{"rtol NaN", Options{RTol: nan}, "RTol"},
		{"rtol negative", Options{RTol: -1}, "RTol"},
		{"atol +Inf", Options{ATol: inf}, "ATol"},
		{"atol NaN", Options{ATol: nan}, "ATol"},
		{"step NaN", Options{Step: nan}, "Step"},
		{"step +Inf", Options{Step: inf}, "Step"},
		{"maxstep NaN", Options{StepControl: StepControl{MaxStep: nan}}, "MaxStep"},
		{"maxstep negative", Options{StepControl: StepControl{MaxStep: -1}}, "MaxStep"},
		{"minstep NaN", Options{StepControl: StepControl{MinStep: nan}}, "MinStep"},
		{"minstep +Inf", Options{StepControl: StepControl{MinStep: inf}}, "MinStep"},
		{"firststep NaN", Options{StepControl: StepControl{FirstStep: nan}}, "FirstStep"},
		{"firststep +Inf", Options{StepControl: StepControl{FirstStep: inf}}, "FirstStep"},
		{"firststep negative", Options{StepControl: StepControl{FirstStep: -0.1}}, "FirstStep"},
		{"pcoeff NaN", Options{StepControl: StepControl{PCoeff: nan}}, "PCoeff"},
		{"pcoeff +Inf", Options{StepControl: StepControl{PCoeff: inf}}, "PCoeff"},
		{"safety NaN", Options{StepControl: StepControl{Safety: nan}}, "Safety"},
		{"ifactor +Inf", Options{StepControl: StepControl{IFactor: inf}}, "IFactor"},
		{"dfactor NaN", Options{StepControl: StepControl{DFactor: nan}}, "DFactor"},
		{"maxsteps negative", Options{StepControl: StepControl{MaxSteps: -5}}, "MaxSteps"},
		{"maxorder too low", Options{MaxOrder: 3}, "MaxOrder"},
		{"maxorder too high", Options{MaxOrder: 13}, "MaxOrder"},
		{"errorlen negative", Options{ErrorNorm: ErrorNorm{ErrorLen: -1}}, "ErrorLen"},
		{"jumps NaN", Options{Stops: Stops{Jumps: []float64{0.5, nan}}}, "Jumps[1]"},
		{"stepto +Inf", Options{Stops: Stops{StepTo: []float64{inf}}}, "StepTo[0]"},
		{"stepto -Inf", Options{Stops: Stops{StepTo: []float64{math.Inf(-1)}}}, "StepTo[0]"},
		{"minstep above maxstep", Options{StepControl: StepControl{MinStep: 1, MaxStep: 0.5}}, "MinStep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewSolver[float64](c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewSolver: got %v, want an error naming %s", err, c.want)
			}
			evals := 0
			f := func(t float64, y, dy []float64) error { evals++; return rotation(t, y, dy) }
			if _, _, err := Solve(f, []float64{1, 0}, []float64{0, 1}, c.opt); err == nil || evals != 0 {
				t.Errorf("Solve: error %v after %d evaluations, want an error and none", err, evals)
			}
		})
	}
	// An infinite MaxStep is "no bound", as 0 is.
	out, _, err := Solve(rotation, []float64{1, 0}, []float64{0, 1}, Options{StepControl: StepControl{MaxStep: inf}})
	if err != nil || math.Abs(out[1][0]-math.Cos(1)) > 1e-6 {
		t.Errorf("MaxStep +Inf: y(1) = %v, %v; want cos 1 and no error", out, err)
	}
}

// TestTimesCheckedBeforeEvaluating: non-finite or non-monotone times fail
// before f is called.
func TestTimesCheckedBeforeEvaluating(t *testing.T) {
	for _, ts := range [][]float64{
		{math.Inf(-1), 0},
		{0, math.Inf(1)},
		{math.NaN(), 1},
		{0, math.NaN()},
		{0, 1, math.NaN()},
		{1, 1},
		{0, 2, 1},
	} {
		evals := 0
		f := func(t float64, y, dy []float64) error { evals++; return rotation(t, y, dy) }
		_, _, err := Solve(f, []float64{1, 0}, ts, Options{})
		if err == nil || !strings.Contains(err.Error(), "times") || evals != 0 {
			t.Errorf("times %v: error %v after %d evaluations, want an error about the times and none", ts, err, evals)
		}
	}
}

// TestTinyTolerancesUnderflow: tolerances no step can meet are a step-size
// underflow, not "NaN or Inf in the state" (the error ratios' squares
// overflow, the state does not).
func TestTinyTolerancesUnderflow(t *testing.T) {
	decay := func(t float64, y, dy []float64) error { dy[0] = -y[0]; return nil }
	for _, c := range []struct {
		name string
		opt  Options
	}{
		{"selected first step", Options{RTol: 1e-300, ATol: 1e-300}},
		{"given first step", Options{RTol: 1e-300, ATol: 1e-300, StepControl: StepControl{FirstStep: 0.1}}},
		{"smallest tolerances", Options{RTol: 5e-324, ATol: 5e-324}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Solve(decay, []float64{1}, []float64{0, 1}, c.opt)
			if !errors.Is(err, ErrStepUnderflow) || errors.Is(err, ErrNonFinite) {
				t.Errorf("got %v, want a step-size underflow", err)
			}
		})
	}
}

// TestRMSScaled: the scaled norm agrees with the plain one where that does
// not overflow, and stays finite where its squares would.
func TestRMSScaled(t *testing.T) {
	for _, c := range []struct {
		r    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0, 0}, 0},
		{[]float64{3, 4}, math.Sqrt(12.5)},
		{[]float64{3e300, 4e300}, math.Sqrt(12.5) * 1e300},
		{[]float64{3e-300, -4e-300}, math.Sqrt(12.5) * 1e-300},
		{[]float64{1, math.Inf(-1)}, math.Inf(1)},
		{[]float64{math.Inf(1), math.NaN()}, math.NaN()},
	} {
		got := rms(len(c.r), func(i int) float64 { return c.r[i] })
		ok := got == c.want || math.Abs(got-c.want) <= 1e-15*c.want || (math.IsNaN(got) && math.IsNaN(c.want))
		if !ok {
			t.Errorf("rms(%v) = %g, want %g", c.r, got, c.want)
		}
	}
}

// TestNonFiniteNamesStepStart: a step that produces Inf is reported at the
// step's start, by fixed-step and adaptive methods alike.
func TestNonFiniteNamesStepStart(t *testing.T) {
	inf := func(t float64, y, dy []float64) error { dy[0] = math.Inf(1); return nil }
	for _, opt := range []Options{
		{Method: "rk4", Step: 0.1},
		{Method: "euler", Step: 0.1},
		{Method: "dopri5"},
		{Method: "bosh3", StepControl: StepControl{FirstStep: 0.1}},
	} {
		_, _, err := Solve(inf, []float64{0}, []float64{0, 1}, opt)
		var se *SolveError
		if !errors.As(err, &se) || !errors.Is(err, ErrNonFinite) || se.T != 0 {
			t.Errorf("%s: got %v, want ErrNonFinite at t=0", opt.Method, err)
		}
	}
}

// TestTableauOutOfRange: a custom tableau with a coefficient that is not a
// number, a node outside the step or weights that do not sum as every
// consistent method's do is an error naming the coefficient.
func TestTableauOutOfRange(t *testing.T) {
	heun := func() *Tableau { // Heun–Euler, adaptive, order 2
		return &Tableau{Name: "custom", C: []float64{0, 1}, A: [][]float64{{}, {1}},
			B: []float64{0.5, 0.5}, E: []float64{-0.5, 0.5}, Order: 2}
	}
	if _, err := NewSolver[float64](Options{Tableau: heun()}); err != nil {
		t.Fatalf("the valid tableau: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(tb *Tableau)
		want   string
	}{
		{"NaN in A", func(tb *Tableau) { tb.A[1][0] = math.NaN() }, "A[1][0]"},
		{"Inf in B", func(tb *Tableau) { tb.B[0] = math.Inf(1) }, "B[0]"},
		{"NaN in E", func(tb *Tableau) { tb.E[1] = math.NaN() }, "E[1]"},
		{"node past the step", func(tb *Tableau) { tb.C[1], tb.A[1][0] = 2, 2 }, "C[1]"},
		{"negative node", func(tb *Tableau) { tb.C[1], tb.A[1][0] = -1, -1 }, "C[1]"},
		{"first node not 0", func(tb *Tableau) { tb.C[0] = 0.5 }, "C[0]"},
		{"row sum not the node", func(tb *Tableau) { tb.A[1][0] = 0.5 }, "row 1"},
		{"weights not summing to 1", func(tb *Tableau) { tb.B[1] = 0.6 }, "B sums"},
		{"error weights not summing to 0", func(tb *Tableau) { tb.E[1] = 0.6 }, "E sums"},
		{"order 0", func(tb *Tableau) { tb.Order = 0 }, "order"},
		{"ragged A", func(tb *Tableau) { tb.A[1] = []float64{0.5, 0.5} }, "row 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := heun()
			c.change(tb)
			_, err := NewSolver[float64](Options{Tableau: tb})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming %s", err, c.want)
			}
		})
	}
}

// FuzzSolverOptions: whatever the options, the tableau's coefficients and
// the problem, a solve returns an error or finite outputs — never a panic, a
// hang or a NaN without an error. The work is bounded by MaxSteps (kept
// small here) and the rejections of non-finite steps.
func FuzzSolverOptions(f *testing.F) {
	f.Add(uint8(0), 1e-6, 1e-8, 0.0, 0.0, 0.0, 0.0, uint16(100), 0.9, 10.0, 0.2, 0.0, 0.5, 0.25, 1.0, 1.0, -1.0, uint8(0), 0.0)
	f.Add(uint8(2), 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, uint16(50), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 2.0, 3.0, uint8(1), 0.3)
	f.Add(uint8(5), 1e-300, 1e-300, 0.0, 1e-3, 1e-9, 0.5, uint16(200), 0.5, 2.0, 0.1, 0.4, 0.7, 0.1, 3.0, 1e300, 50.0, uint8(3), math.Inf(1))
	f.Add(uint8(6), 1e-3, 1e-3, 0.0, 0.0, 0.0, math.Inf(1), uint16(10), 1.0, 1.0, 1.0, math.NaN(), math.NaN(), math.Inf(-1), 1e-300, 0.0, 1e308, uint8(9), -1.0)
	methods := MethodNames()
	f.Fuzz(func(t *testing.T, method uint8, rtol, atol, step, first, minStep, maxStep float64, maxSteps uint16,
		safety, ifactor, dfactor, pcoeff, jump, stepTo, t1, y0, k float64, coef uint8, value float64) {
		tb, err := Method(methods[int(method)%len(methods)])
		if err != nil {
			t.Fatal(err)
		}
		if coef != 0 {
			// Change one coefficient of a copy of the tableau.
			cp := *tb
			cp.C, cp.B, cp.E = slices.Clone(tb.C), slices.Clone(tb.B), slices.Clone(tb.E)
			cp.A = make([][]float64, len(tb.A))
			for i := range tb.A {
				cp.A[i] = slices.Clone(tb.A[i])
			}
			var all []*float64
			for i := range cp.A {
				for j := range cp.A[i] {
					all = append(all, &cp.A[i][j])
				}
			}
			for i := range cp.B {
				all = append(all, &cp.B[i])
			}
			for i := range cp.E {
				all = append(all, &cp.E[i])
			}
			for i := range cp.C {
				all = append(all, &cp.C[i])
			}
			*all[int(coef)%len(all)] = value
			tb = &cp
		}
		opt := Options{
			Tableau:     tb,
			RTol:        rtol,
			ATol:        atol,
			Step:        step,
			StepControl: StepControl{FirstStep: first, MinStep: minStep, MaxStep: maxStep, MaxSteps: 1 + int(maxSteps)%500, Safety: safety, IFactor: ifactor, DFactor: dfactor, PCoeff: pcoeff},
			Stops:       Stops{Jumps: []float64{jump}, StepTo: []float64{stepTo}},
		}
		evals := 0
		fn := func(tt float64, y, dy []float64) error {
			evals++
			if math.IsNaN(tt) || math.IsInf(tt, 0) || (tt-0)*(tt-t1) > 0 {
				t.Fatalf("f evaluated at t=%g outside [0, %g]", tt, t1)
			}
			dy[0] = k*y[0] + math.Sin(tt)
			return nil
		}
		out, _, err := Solve(fn, []float64{y0}, []float64{0, t1}, opt)
		if max := (1 + int(maxSteps)%500 + 1) * 17; evals > max {
			t.Errorf("%d evaluations, more than the bound %d", evals, max)
		}
		if err != nil {
			return
		}
		for i, o := range out {
			if !allFinite(o) {
				t.Fatalf("no error but out[%d] = %v", i, o)
			}
		}
	})
}

// TestDiscontinuousInput checks the package doc's claim: dopri5 steps over a
// sign-switching input with steps longer than its period and returns a wrong
// y(3) with no error; declaring the switches in Jumps makes it exact, and a
// MaxStep below the half period makes it accurate.
func TestDiscontinuousInput(t *testing.T) {
	const half = 0.05 // y(3) = 0: thirty whole periods
	var jumps []float64
	for k := 1; k < 60; k++ {
		jumps = append(jumps, float64(k)*half)
	}
	f := squareWave(jumps)
	var longest float64
	out, _, err := solveSteps(f, []float64{0}, []float64{0, 3}, Options{}, func(s StepInfo[float64]) error {
		if s.Accepted {
			longest = math.Max(longest, math.Abs(s.H))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(out[1][0]) < 0.05 || longest < 2*half {
		t.Errorf("no options: y(3) = %g with steps up to %g; the doc says dopri5 steps past the period to a wrong answer", out[1][0], longest)
	}

	out, _, err = Solve(f, []float64{0}, []float64{0, 3}, Options{Stops: Stops{Jumps: jumps}})
	if err != nil || math.Abs(out[1][0]) > 1e-12 {
		t.Errorf("Jumps: y(3) = %g, %v; want 0", out[1][0], err)
	}
	out, _, err = Solve(f, []float64{0}, []float64{0, 3}, Options{StepControl: StepControl{MaxStep: half / 2}})
	if err != nil || math.Abs(out[1][0]) > 1e-4 {
		t.Errorf("MaxStep: y(3) = %g, %v; want 0 within 1e-4", out[1][0], err)
	}
}

// squareWave is y' = ±1: +1 before knots[0], switching sign at each knot
// (right-continuous: at a knot the new sign holds).
func squareWave(knots []float64) Func[float64] {
	return func(t float64, y, dy []float64) error {
		dy[0] = 1
		if sort.SearchFloat64s(knots, math.Nextafter(t, math.Inf(1)))%2 == 1 {
			dy[0] = -1
		}
		return nil
	}
}
